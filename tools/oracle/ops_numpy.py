"""Oracle group ops_numpy: JAX's answers for stablehlo's NumPy-style ops (numpy.go,
einsum.go) and packages jnp and nn: broadcasting, keepdims reductions, jnp.mean and jnp.var,
jax.nn.softmax/log_softmax/logsumexp/relu/gelu, flax.linen.LayerNorm, jnp.einsum and
jnp.matmul.

Same format as ops_data.py (whose tensor() and case() it uses): each case runs one JAX
function under jax.jit on fixed inputs; internal/oracletest/ops_numpy_test.go builds the
same computation with packages stablehlo, jnp and nn and compares.
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from opsutil import case

GROUP = "ops_numpy"


def grid(*shape, scale=0.25, offset=None, dtype=np.float32):
    """Exact small values: (i - offset) * scale over the flat index, reshaped."""
    n = int(np.prod(shape))
    if offset is None:
        offset = n // 2
    return ((np.arange(n, dtype=np.float64) - offset) * scale).reshape(shape).astype(dtype)


def normal(*shape, seed=0, step=1.0 / 64, dtype=np.float32):
    """Normal draws from a fixed seed, rounded to multiples of step (exact in bf16 too)."""
    x = np.random.default_rng(seed).standard_normal(shape) * 2
    return (np.round(x / step) * step).astype(dtype)


BF16 = ml_dtypes.bfloat16


def broadcasting():
    out = []
    out.append(case("broadcast2_add", "x + y, f32[4,1,3] + f32[5,1]", lambda x, y: x + y, grid(4, 1, 3), grid(5, 1, scale=2)))
    out.append(case("broadcast2_mul_int", "x * y, s32[2,1] * s32[3]", lambda x, y: x * y,
                    np.array([[2], [-3]], np.int32), np.array([1, 5, 7], np.int32)))
    out.append(case("broadcast_arrays", "jnp.broadcast_arrays(a, b, c)", lambda a, b, c: jnp.broadcast_arrays(a, b, c),
                    grid(2, 1), grid(1, 3, scale=1), grid(3, scale=4)))
    return out


def reductions():
    out = []
    x = normal(2, 3, 4, seed=1)
    out.append(case("sum_keepdims", "jnp.sum(x, axis=(0, 2), keepdims=True)", lambda x: jnp.sum(x, axis=(0, 2), keepdims=True), x))
    out.append(case("sum_keepdims_all", "jnp.sum(x, keepdims=True)", lambda x: jnp.sum(x, keepdims=True), x))
    out.append(case("max_keepdims", "jnp.max(x, axis=-1, keepdims=True)", lambda x: jnp.max(x, axis=-1, keepdims=True), x))
    out.append(case("min_keepdims", "jnp.min(x, axis=1, keepdims=True)", lambda x: jnp.min(x, axis=1, keepdims=True), x))
    out.append(case("mean_axis", "jnp.mean(x, axis=1)", lambda x: jnp.mean(x, axis=1), x))
    out.append(case("mean_all", "jnp.mean(x)", lambda x: jnp.mean(x), x))
    out.append(case("mean_keepdims", "jnp.mean(x, axis=(0, -1), keepdims=True)", lambda x: jnp.mean(x, axis=(0, -1), keepdims=True), x))
    out.append(case("mean_bf16", "jnp.mean(x, axis=-1) on bf16", lambda x: jnp.mean(x, axis=-1), x.astype(BF16)))
    out.append(case("var_axis", "jnp.var(x, axis=0)", lambda x: jnp.var(x, axis=0), x))
    out.append(case("var_all", "jnp.var(x)", lambda x: jnp.var(x), x))
    out.append(case("var_keepdims", "jnp.var(x, axis=-1, keepdims=True)", lambda x: jnp.var(x, axis=-1, keepdims=True), x))
    out.append(case("var_bf16", "jnp.var(x, axis=1) on bf16", lambda x: jnp.var(x, axis=1), x.astype(BF16)))
    return out


def nn_ops():
    out = []
    x = normal(3, 5, seed=2)
    x3 = normal(2, 3, 4, seed=3)
    out.append(case("softmax", "jax.nn.softmax(x)", lambda x: jax.nn.softmax(x), x))
    out.append(case("softmax_axis0", "jax.nn.softmax(x, axis=0)", lambda x: jax.nn.softmax(x, axis=0), x))
    out.append(case("softmax_axes", "jax.nn.softmax(x, axis=(0, 2))", lambda x: jax.nn.softmax(x, axis=(0, 2)), x3))
    out.append(case("softmax_large", "jax.nn.softmax(x) with |x| ~ 1000", lambda x: jax.nn.softmax(x), x * 500))
    out.append(case("softmax_bf16", "jax.nn.softmax(x) on bf16", lambda x: jax.nn.softmax(x), x.astype(BF16)))
    out.append(case("log_softmax", "jax.nn.log_softmax(x)", lambda x: jax.nn.log_softmax(x), x))
    out.append(case("log_softmax_axis1", "jax.nn.log_softmax(x, axis=1)", lambda x: jax.nn.log_softmax(x, axis=1), x3))
    out.append(case("logsumexp_all", "jax.nn.logsumexp(x)", lambda x: jax.nn.logsumexp(x), x))
    out.append(case("logsumexp_axis", "jax.nn.logsumexp(x, axis=1)", lambda x: jax.nn.logsumexp(x, axis=1), x * 300))
    out.append(case("logsumexp_keepdims", "jax.nn.logsumexp(x, axis=0, keepdims=True)",
                    lambda x: jax.nn.logsumexp(x, axis=0, keepdims=True), x))
    xinf = x.copy()
    xinf[1, :] = -np.inf
    xinf[2, 3] = np.inf
    out.append(case("logsumexp_inf", "jax.nn.logsumexp(x, axis=1), a row of -inf and a +inf",
                    lambda x: jax.nn.logsumexp(x, axis=1), xinf))
    out.append(case("relu", "jax.nn.relu(x)", lambda x: jax.nn.relu(x), x))
    out.append(case("relu_int", "jax.nn.relu(x) on int32", lambda x: jax.nn.relu(x), np.arange(-3, 4, dtype=np.int32)))
    g = grid(24, scale=0.375)
    out.append(case("gelu_tanh", "jax.nn.gelu(x)", lambda x: jax.nn.gelu(x), g))
    out.append(case("gelu_exact", "jax.nn.gelu(x, approximate=False)", lambda x: jax.nn.gelu(x, approximate=False), g))
    out.append(case("gelu_bf16", "jax.nn.gelu(x) on bf16", lambda x: jax.nn.gelu(x), g.astype(BF16)))
    return out


def layer_norms():
    out = []
    x = normal(3, 8, seed=4) + 3
    scale = normal(8, seed=5)
    bias = normal(8, seed=6)

    def ln(**kw):
        m = nn.LayerNorm(**kw)

        def f(x, *ps):
            params = {}
            names = [n for n in ("scale", "bias") if kw.get("use_" + n, True)]
            for n, p in zip(names, ps):
                params[n] = p
            return m.apply({"params": params} if params else {}, x)
        return f

    out.append(case("layer_norm_plain", "nn.LayerNorm(use_scale=False, use_bias=False)",
                    ln(use_scale=False, use_bias=False), x))
    out.append(case("layer_norm", "nn.LayerNorm() with scale and bias", ln(), x, scale, bias))
    out.append(case("layer_norm_eps", "nn.LayerNorm(epsilon=0.5, use_bias=False)", ln(epsilon=0.5, use_bias=False), x, scale))
    x3 = normal(2, 3, 4, seed=7)
    out.append(case("layer_norm_axes", "nn.LayerNorm(reduction_axes=(1, 2), feature_axes=(1, 2))",
                    ln(reduction_axes=(1, 2), feature_axes=(1, 2)), x3, normal(3, 4, seed=8), normal(3, 4, seed=9)))
    out.append(case("layer_norm_bf16", "nn.LayerNorm() on bf16 x, f32 params (result f32)", ln(), x.astype(BF16), scale, bias))
    out.append(case("layer_norm_bf16_plain", "nn.LayerNorm(use_scale=False, use_bias=False) on bf16",
                    ln(use_scale=False, use_bias=False), x.astype(BF16)))
    return out


def einsums():
    out = []

    def e(name, spec, *shapes, seed=10):
        xs = [normal(*s, seed=seed + i, step=0.25) for i, s in enumerate(shapes)]
        out.append(case(name, "jnp.einsum(%r, ...)" % spec, lambda *a: jnp.einsum(spec, *a), *xs))

    e("einsum_bmm", "bij,bjk->bik", (2, 3, 4), (2, 4, 5))
    e("einsum_implicit", "ij,jk", (2, 3), (3, 4))
    e("einsum_implicit_order", "Ba,ac", (2, 3), (3, 4))
    e("einsum_transpose", "ij->ji", (2, 3))
    e("einsum_sum_all", "ij->", (3, 4))
    e("einsum_sum_axis", "ij->j", (3, 4))
    e("einsum_trace", "ii", (4, 4))
    e("einsum_diagonal", "ii->i", (4, 4))
    e("einsum_diag3", "iij->ji", (3, 3, 2))
    e("einsum_outer", "i,j", (3,), (2,))
    e("einsum_dot", "i,i", (5,), (5,))
    e("einsum_chain", "ij,jk,kl->il", (2, 3), (3, 4), (4, 5))
    e("einsum_ellipsis", "...ij,...jk", (5, 1, 2, 3), (4, 3, 4))
    e("einsum_ellipsis_sum", "...ij->ij", (5, 2, 3))
    e("einsum_ellipsis_out", "i...->...i", (5, 2, 3))
    e("einsum_broadcast1", "ij,jk", (2, 1), (3, 4))
    e("einsum_attention", "bqhd,bkhd->bhqk", (2, 3, 2, 4), (2, 5, 2, 4))
    e("einsum_elementwise", "ij,ij->ij", (2, 3), (2, 3))
    return out


def matmuls():
    out = []

    def m(name, a, b, seed=30):
        x, y = normal(*a, seed=seed, step=0.25), normal(*b, seed=seed + 1, step=0.25)
        out.append(case(name, "jnp.matmul(a, b), %s @ %s" % (a, b), lambda x, y: jnp.matmul(x, y), x, y))

    m("matmul_2d", (3, 4), (4, 2))
    m("matmul_batch", (2, 3, 4), (2, 4, 5))
    m("matmul_batch_broadcast", (2, 1, 3, 4), (5, 4, 2))
    m("matmul_vec_mat", (4,), (3, 4, 2))
    m("matmul_mat_vec", (3, 2, 4), (4,))
    m("matmul_vec_vec", (4,), (4,))
    # Batch dimensions one side lacks or has as 1: free dimensions of the other, no broadcast.
    m("matmul_rank3_mat", (2, 3, 4), (4, 5))
    m("matmul_one_batch", (1, 3, 4), (2, 4, 5))
    m("matmul_ones_crossed", (2, 1, 3, 4), (1, 5, 4, 2))
    m("matmul_ones_both", (1, 1, 3, 4), (1, 1, 4, 2))
    xi = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    out.append(case("matmul_int", "jnp.matmul(a, b) on int32", lambda x, y: jnp.matmul(x, y), xi, xi.T.copy()))
    return out


def generate():
    out = []
    for group in (broadcasting, reductions, nn_ops, layer_norms, einsums, matmuls):
        out.extend(group())
    names = [c["name"] for c in out]
    if len(set(names)) != len(names):
        raise ValueError("ops_numpy: duplicate case names")
    return out
