"""Oracle group ops_broadcast: JAX's answers for NumPy broadcasting in stablehlo's binary
and ternary elementwise ops (elementwise.go, math.go) and for package jnp (and nn.OneHot):
jnp.where, jnp.tril/triu, jax.nn.one_hot, jnp.take_along_axis, jnp.clip, jnp.arange and
jnp.linspace.

Same format as ops_data.py (whose case() it uses). A case whose JAX call fails carries
"error" (the exception's type and message) and no outputs:
internal/oracletest/ops_broadcast_test.go then expects the builder to fail with an error
wrapping stablehlo.ErrShape that contains JAX's message.
"""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from opsutil import case, tensor

GROUP = "ops_broadcast"

BF16 = ml_dtypes.bfloat16


def grid(*shape, scale=0.25, offset=None, dtype=np.float32):
    """Exact small values: (i - offset) * scale over the flat index, reshaped."""
    n = int(np.prod(shape))
    if offset is None:
        offset = n // 2
    return ((np.arange(n, dtype=np.float64) - offset) * scale).reshape(shape).astype(dtype)


def ints(*shape, lo=-4, dtype=np.int32):
    n = int(np.prod(shape))
    return (np.arange(n) % 9 + lo).reshape(shape).astype(dtype)


def error_case(name, jax_expr, fn, *inputs):
    """A case JAX refuses: its inputs and JAX's exception."""
    try:
        jax.jit(fn)(*inputs)
    except (ValueError, TypeError) as e:
        return {"name": name, "jax": jax_expr, "inputs": [tensor(x) for x in inputs], "outputs": [],
                "error": {"type": type(e).__name__, "message": str(e)}}
    raise ValueError("ops_broadcast: %s: JAX accepted it" % name)


def binaries():
    out = []
    b = lambda name, expr, fn, x, y: out.append(case(name, expr + ", %s and %s" % (x.shape, y.shape), fn, x, y))
    b("add_bias", "x + b", lambda x, y: x + y, grid(2, 3, 4), grid(4, scale=2))
    b("add_rank_promote", "x + y", lambda x, y: x + y, grid(3), grid(2, 2, 3, scale=0.5))
    b("add_stretch_both", "x + y", lambda x, y: x + y, grid(4, 1, 3), grid(5, 1))
    b("add_stretch_same_rank", "x + y", lambda x, y: x + y, grid(1, 3), grid(2, 1, scale=4))
    b("add_scalar_array", "x + y", lambda x, y: x + y, np.float32(1.5), grid(2, 3))
    b("sub_column", "x - y", lambda x, y: x - y, grid(3, 4), grid(3, 1, scale=3))
    b("mul_int", "x * y", lambda x, y: x * y, ints(2, 1, 3), ints(4, 1))
    b("div_row", "x / y", lambda x, y: x / y, grid(2, 3), np.array([0.5, 2, -4], np.float32))
    b("max_stretch", "jnp.maximum(x, y)", jnp.maximum, grid(3, 1), grid(1, 4, scale=0.5))
    b("min_stretch", "jnp.minimum(x, y)", jnp.minimum, grid(3, 1), grid(1, 4, scale=0.5))
    b("pow_bcast", "jnp.power(x, y)", jnp.power, np.array([[1.0], [2.0], [0.5]], np.float32), np.array([0, 1, 2, 3], np.float32))
    b("rem_int", "jnp.fmod(x, y) on int32 (lax.rem)", jnp.fmod, ints(2, 4, lo=-3), np.array([3, -2, 5, 7], np.int32))
    b("atan2_bcast", "jnp.arctan2(y, x)", jnp.arctan2, grid(2, 1), grid(3, scale=0.5))
    b("and_bool", "x & y on bool", lambda x, y: x & y, np.array([[True], [False]]), np.array([True, False, True]))
    b("or_int", "x | y on int32", lambda x, y: x | y, ints(3, 1, lo=0), ints(4, lo=0))
    b("xor_int", "x ^ y on uint8", lambda x, y: x ^ y, ints(2, 3, lo=0, dtype=np.uint8), np.array([5], np.uint8))
    b("shift_left_bcast", "jnp.left_shift(x, y) on int32", jnp.left_shift,
      ints(2, 3, lo=0), np.array([[1], [2]], np.int32) * np.ones((1, 1), np.int32))
    b("compare_lt", "x < y", lambda x, y: x < y, grid(3, 1), grid(4, scale=0.5))
    b("compare_eq_int", "x == y on int32", lambda x, y: x == y, ints(2, 1, 3), ints(4, 1))
    b("add_bf16", "x + b on bf16", lambda x, y: x + y, grid(2, 3).astype(BF16), grid(3, scale=2).astype(BF16))
    out.append(error_case("add_incompatible", "jnp.add(x, y), (2, 3) and (4,)", jnp.add, grid(2, 3), grid(4)))
    out.append(error_case("mul_incompatible", "jnp.multiply(x, y), (2, 3, 4) and (2, 1)", jnp.multiply, grid(2, 3, 4), grid(2, 1)))
    out.append(error_case("compare_incompatible", "x < y, (4, 2) and (2, 4)", lambda x, y: x < y, grid(4, 2), grid(2, 4)))
    return out


def ternaries():
    out = []
    c = lambda name, expr, fn, *xs: out.append(case(name, expr + ", " + " and ".join(str(x.shape) for x in xs), fn, *xs))
    c("select_bcast", "jnp.where(p, x, y)", jnp.where, np.array([[True], [False], [True]]), grid(4), grid(3, 1, scale=2))
    c("select_scalar_pred", "jnp.where(p, x, y)", jnp.where, np.bool_(False), grid(2, 3), grid(3, scale=3))
    c("select_rank_promote", "jnp.where(p, x, y)", jnp.where, np.array([True, False, False, True]), grid(2, 1, 4), np.float32(7))
    c("where_int_cond", "jnp.where(c, x, y), c int32", jnp.where, ints(2, 3, lo=-1), grid(3), grid(2, 1, scale=3))
    c("where_float_cond", "jnp.where(c, x, y), c float32", jnp.where, grid(3, 1), ints(4), ints(1, 4, lo=10))
    c("clamp_bcast", "lax.clamp(lo, x, hi) broadcast (jnp.clip(x, lo, hi) order max then min)",
      lambda lo, x, hi: jnp.minimum(hi, jnp.maximum(lo, x)), grid(3, 1, scale=0.1), grid(3, 4), grid(4, scale=0.05, offset=-2))
    c("clamp_scalar_bounds", "lax.clamp(lo, x, hi)", jax.lax.clamp, np.float32(-0.5), grid(2, 3), np.float32(0.25))
    c("clamp_bound_bigger", "jnp.minimum(hi, jnp.maximum(lo, x))", lambda lo, x, hi: jnp.minimum(hi, jnp.maximum(lo, x)),
      grid(2, 3, scale=0.1), grid(3), np.float32(0.2))
    out.append(error_case("where_incompatible", "jnp.where(p, x, 1.0), (2, 3), (4,) and ()",
                          lambda p, x: jnp.where(p, x, 1.0), np.ones((2, 3), bool), grid(4)))
    out.append(error_case("where_incompatible_xy", "jnp.where(p, x, y), (), (2, 3) and (2,)",
                          jnp.where, np.bool_(True), grid(2, 3), grid(2)))
    return out


def helpers():
    out = []
    x = grid(4, 5)
    xb = grid(2, 3, 4, scale=1)
    for k in (0, 1, -1, 3, -4):
        out.append(case("tril_k%d" % k if k >= 0 else "tril_km%d" % -k, "jnp.tril(x, k=%d), x (4, 5)" % k, lambda x, k=k: jnp.tril(x, k=k), x))
        out.append(case("triu_k%d" % k if k >= 0 else "triu_km%d" % -k, "jnp.triu(x, k=%d), x (4, 5)" % k, lambda x, k=k: jnp.triu(x, k=k), x))
    out.append(case("tril_batched", "jnp.tril(x), x (2, 3, 4)", jnp.tril, xb))
    out.append(case("triu_batched_int", "jnp.triu(x, k=1), x int32 (2, 3, 4)", lambda x: jnp.triu(x, k=1), ints(2, 3, 4)))
    out.append(case("tril_bool", "jnp.tril(x), x bool (3, 3)", jnp.tril, np.ones((3, 3), bool)))

    idx = np.array([0, 2, -1, 3, 5, 1], np.int32)
    out.append(case("one_hot", "jax.nn.one_hot(i, 4), out of range -> zeros", lambda i: jax.nn.one_hot(i, 4), idx))
    out.append(case("one_hot_2d_int", "jax.nn.one_hot(i, 3, dtype=jnp.int32)", lambda i: jax.nn.one_hot(i, 3, dtype=jnp.int32),
                    np.array([[0, 1], [2, 3]], np.int32)))
    out.append(case("one_hot_uint8_bf16", "jax.nn.one_hot(i, 5, dtype=jnp.bfloat16), i uint8",
                    lambda i: jax.nn.one_hot(i, 5, dtype=jnp.bfloat16), np.array([4, 0, 7], np.uint8)))
    out.append(case("one_hot_scalar", "jax.nn.one_hot(i, 3), i scalar", lambda i: jax.nn.one_hot(i, 3), np.int32(1)))

    x = grid(3, 4)
    out.append(case("take_along_axis1", "jnp.take_along_axis(x, i, axis=1)", lambda x, i: jnp.take_along_axis(x, i, axis=1),
                    x, np.array([[0, 3], [-1, 1], [2, -4]], np.int32)))
    out.append(case("take_along_axis0", "jnp.take_along_axis(x, i, axis=0)", lambda x, i: jnp.take_along_axis(x, i, axis=0),
                    x, np.array([[2, 0, 1, -1]], np.int32)))
    out.append(case("take_along_neg_axis", "jnp.take_along_axis(x, i, axis=-1), broadcast (2,1,4) with (1,3,2)",
                    lambda x, i: jnp.take_along_axis(x, i, axis=-1), grid(2, 1, 4), ints(1, 3, 2, lo=-3) % 4))
    out.append(case("take_along_argsort", "jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1)",
                    lambda x: jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1), np.array([[3, 1, 2], [0, -5, 4]], np.float32)))
    out.append(case("take_along_fill", "jnp.take_along_axis(x, i, axis=1), out-of-range -> NaN",
                    lambda x, i: jnp.take_along_axis(x, i, axis=1), x, np.array([[4, -5, 0]], np.int32)))
    out.append(case("take_along_fill_int", "jnp.take_along_axis(x, i, axis=0) on int32, out-of-range -> INT_MIN",
                    lambda x, i: jnp.take_along_axis(x, i, axis=0), ints(3, 2), np.array([[3], [-1], [-4]], np.int32)))
    out.append(case("take_along_fill_uint8", "jnp.take_along_axis(x, i, axis=0) on uint8, out-of-range -> 255",
                    lambda x, i: jnp.take_along_axis(x, i, axis=0), ints(3, 2, lo=0, dtype=np.uint8), np.array([[3, 1]], np.int8)))

    x = grid(3, 4, scale=0.5)
    out.append(case("clip_both", "jnp.clip(x, -1, 2)", lambda x: jnp.clip(x, -1, 2), x))
    out.append(case("clip_lo", "jnp.clip(x, min=0)", lambda x: jnp.clip(x, min=0), x))
    out.append(case("clip_hi", "jnp.clip(x, max=0.5)", lambda x: jnp.clip(x, max=0.5), x))
    out.append(case("clip_arrays", "jnp.clip(x, lo, hi), lo (4,), hi (3, 1)", lambda x, lo, hi: jnp.clip(x, lo, hi),
                    x, grid(4, scale=0.5), grid(3, 1, scale=1, offset=-1)))
    out.append(case("clip_nan", "jnp.clip(x, 0, 1), x with NaN", lambda x: jnp.clip(x, 0, 1),
                    np.array([np.nan, -1, 0.5, 3], np.float32)))
    out.append(case("clip_int", "jnp.clip(x, -2, 3) on int32", lambda x: jnp.clip(x, -2, 3), ints(2, 5)))
    return out


def ranges():
    out = []
    a = lambda name, expr, fn: out.append(case(name, expr, fn))
    a("arange_int", "jnp.arange(0, 7, 1, dtype=jnp.int32)", lambda: jnp.arange(0, 7, 1, dtype=jnp.int32))
    a("arange_int_step", "jnp.arange(-3, 10, 4, dtype=jnp.int32)", lambda: jnp.arange(-3, 10, 4, dtype=jnp.int32))
    a("arange_int_neg_step", "jnp.arange(5, -6, -2, dtype=jnp.int32)", lambda: jnp.arange(5, -6, -2, dtype=jnp.int32))
    a("arange_f32", "jnp.arange(0.1, 1.0, 0.1, dtype=jnp.float32)", lambda: jnp.arange(0.1, 1.0, 0.1, dtype=jnp.float32))
    a("arange_f32_neg", "jnp.arange(2.5, -1.0, -0.75, dtype=jnp.float32)", lambda: jnp.arange(2.5, -1.0, -0.75, dtype=jnp.float32))
    a("arange_bf16", "jnp.arange(0.0, 3.0, 0.3, dtype=jnp.bfloat16)", lambda: jnp.arange(0.0, 3.0, 0.3, dtype=jnp.bfloat16))
    a("arange_uint8", "jnp.arange(2, 250, 37, dtype=jnp.uint8)", lambda: jnp.arange(2, 250, 37, dtype=jnp.uint8))
    a("arange_empty", "jnp.arange(3.0, 1.0, 0.5, dtype=jnp.float32)", lambda: jnp.arange(3.0, 1.0, 0.5, dtype=jnp.float32))
    a("linspace_f32", "jnp.linspace(0.0, 1.0, 7, dtype=jnp.float32)", lambda: jnp.linspace(0.0, 1.0, 7, dtype=jnp.float32))
    a("linspace_f32_noend", "jnp.linspace(-2.0, 3.0, 6, endpoint=False, dtype=jnp.float32)",
      lambda: jnp.linspace(-2.0, 3.0, 6, endpoint=False, dtype=jnp.float32))
    a("linspace_f32_odd", "jnp.linspace(0.1, 0.7, 13, dtype=jnp.float32)", lambda: jnp.linspace(0.1, 0.7, 13, dtype=jnp.float32))
    a("linspace_bf16", "jnp.linspace(-1.0, 1.0, 9, dtype=jnp.bfloat16)", lambda: jnp.linspace(-1.0, 1.0, 9, dtype=jnp.bfloat16))
    a("linspace_int", "jnp.linspace(0, 10, 7, dtype=jnp.int32)", lambda: jnp.linspace(0, 10, 7, dtype=jnp.int32))
    a("linspace_one", "jnp.linspace(2.0, 5.0, 1, dtype=jnp.float32)", lambda: jnp.linspace(2.0, 5.0, 1, dtype=jnp.float32))
    a("linspace_zero", "jnp.linspace(2.0, 5.0, 0, dtype=jnp.float32)", lambda: jnp.linspace(2.0, 5.0, 0, dtype=jnp.float32))
    return out


def generate():
    out = []
    for group in (binaries, ternaries, helpers, ranges):
        out.extend(group())
    names = [c["name"] for c in out]
    if len(set(names)) != len(names):
        raise ValueError("ops_broadcast: duplicate case names")
    return out
