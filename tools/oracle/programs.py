"""The programs corpus: real JAX programs, exported by JAX, with JAX's outputs.

Each program is a JAX function jitted with NamedShardings on a mesh of the 8
CPU devices, exported with jax.export (the serialize() bytes, base64, and the
StableHLO text of exported.mlir_module()), and run by JAX on fixed inputs.
Each also has variants: the same function re-jitted by JAX on another mesh
shape, device order, device subset or spec set, with JAX's outputs for each.
The format is described in tools/oracle/README.md; generate.py writes it to
OUTDIR/programs.json.

Meshes here use the contract's encoding, {"shape", "axes", "device_ids"};
specs are lists of None, "axis" or ["a", "b"] (no P.UNCONSTRAINED: a jit's
in/out shardings cannot be unconstrained).

Determinism: exports drop Python source locations
(jax_traceback_in_locations_limit=0), which would otherwise put absolute file
paths into both the serialized module and its text; inputs are np.arange or a
fixed np.random.default_rng seed, rounded to a few binary digits so they are
exact in every float type used.

Every program must lower to StableHLO that a plain XLA CPU PJRT plugin runs:
no custom calls that only jaxlib registers (LAPACK, ducc FFT, cu_threefry...).
generate() stops when an exported module names a custom call outside
ALLOWED_CUSTOM_CALLS.
"""

import base64
import contextlib
import math
import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


class ProgramError(Exception):
    pass


# Custom calls XLA itself implements: the GSPMD partitioner's markers, and
# mhlo.topk (lax.top_k), which XLA's StableHLO-to-HLO translation turns into
# its TopK instruction (checked: the xla-cpu-pjrt plugin compiles top_k). Any
# other target would need jaxlib's registrations and is refused.
ALLOWED_CUSTOM_CALLS = {"mhlo.topk", "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"}

BF16 = ml_dtypes.bfloat16


# ---------------------------------------------------------------------------
# Meshes, specs and inputs.

def M(shape, axes, ids=None):
    if ids is None:
        ids = range(math.prod(shape))
    return {"shape": list(shape), "axes": list(axes), "device_ids": list(ids)}


DM = M([4, 2], ["data", "model"])
XY = M([4, 2], ["x", "y"])
X8 = M([8], ["x"])
X4 = M([4], ["x"])


def mesh_2x4(m):
    return M([2, 4], m["axes"])


def reversed_ids(m):
    return M(m["shape"], m["axes"], reversed(m["device_ids"]))


def interleaved_ids(m):
    n = len(m["device_ids"])
    return M(m["shape"], m["axes"], list(range(0, n, 2)) + list(range(1, n, 2)))


def subset_2x2(m):
    return M([2, 2], m["axes"], [4, 5, 6, 7])


def V(name, mesh, in_specs=None, out_specs=None):
    """A variant; specs left None are the program's own."""
    return {"name": name, "mesh": mesh, "in_specs": in_specs, "out_specs": out_specs}


def std_variants(m):
    """The usual three for a 4x2 mesh: another shape, the devices reversed, a
    4-device subset (the devices 4..7 as 2x2)."""
    return [V("mesh_2x4", mesh_2x4(m)), V("devices_reversed", reversed_ids(m)),
            V("subset_2x2", subset_2x2(m))]


def make_mesh(m):
    devs = jax.devices()
    arr = np.array([devs[i] for i in m["device_ids"]], dtype=object).reshape(m["shape"])
    return Mesh(arr, tuple(m["axes"]))


def to_p(spec):
    return P(*[tuple(e) if isinstance(e, list) else e for e in spec])


def grid(shape, dtype=np.float32, scale=1.0 / 8, offset=0):
    """np.arange over shape, shifted and scaled: exact small values."""
    n = math.prod(shape)
    x = (np.arange(n, dtype=np.float64) - offset) * scale
    return x.reshape(shape).astype(dtype)


def normal(shape, seed, dtype=np.float32, step=1.0 / 32):
    """Standard normal draws from a fixed seed, rounded to multiples of step."""
    x = np.random.default_rng(seed).standard_normal(shape)
    return (np.round(x / step) * step).astype(dtype)


def ints(shape, seed, lo, hi, dtype=np.int32):
    return np.random.default_rng(seed).integers(lo, hi, size=shape).astype(dtype)


def key_data(seed):
    return np.asarray(jax.random.key_data(jax.random.key(seed)), dtype=np.uint32)


# ---------------------------------------------------------------------------
# The programs. Each make_* takes the jax Mesh (for shard_map and sharding
# constraints) and returns the function to jit.

def make_mlp(mesh):
    def mlp(x, w1, b1, w2, b2):
        h = jax.nn.gelu(x @ w1 + b1)
        return h @ w2 + b2
    return mlp


def make_attention(mesh):
    def attention(x, wq, wk, wv, wo):
        q = jnp.einsum("btd,dhk->bhtk", x, wq)
        k = jnp.einsum("btd,dhk->bhtk", x, wk)
        v = jnp.einsum("btd,dhk->bhtk", x, wv)
        s = jnp.einsum("bhtk,bhsk->bhts", q, k) / jnp.sqrt(jnp.float32(q.shape[-1]))
        t = x.shape[1]
        causal = jnp.tril(jnp.ones((t, t), dtype=bool))
        s = jnp.where(causal, s, -1e9)
        p = jax.nn.softmax(s, axis=-1)
        o = jnp.einsum("bhts,bhsk->bhtk", p, v)
        return jnp.einsum("bhtk,hkd->btd", o, wo)
    return attention


def _layer_norm(x, gamma, beta, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + eps) * gamma + beta


def make_layer_norm(mesh):
    def layer_norm(x, gamma, beta):
        return _layer_norm(x, gamma, beta)
    return layer_norm


def make_conv2d_nhwc(mesh):
    def conv2d_nhwc(x, w, b):
        y = lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return y + b
    return conv2d_nhwc


def make_conv2d_nchw(mesh):
    def conv2d_nchw(x, w):
        return lax.conv_general_dilated(x, w, window_strides=(2, 2), padding=((1, 1), (1, 1)),
                                        rhs_dilation=(2, 1),
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return conv2d_nchw


def make_scan_rnn(mesh):
    def scan_rnn(xs, h0, wx, wh):
        def step(h, x):
            h = jnp.tanh(x @ wx + h @ wh)
            return h, h
        return lax.scan(step, h0, xs)
    return scan_rnn


def make_while_loop(mesh):
    def while_loop(x, n):
        def cond(c):
            return c[0] < n

        def body(c):
            i, y = c
            return i + 1, 0.5 * y + jnp.sin(y)
        i, y = lax.while_loop(cond, body, (jnp.int32(0), x))
        return y, i
    return while_loop


def make_fori_loop(mesh):
    def fori_loop(x):
        return lax.fori_loop(0, 4, lambda i, y: y * 0.5 + i.astype(y.dtype), x)
    return fori_loop


def make_cumsum(mesh):
    def cumsum(x, n):
        return jnp.cumsum(x, axis=1), jnp.cumsum(n, axis=0), lax.cummax(x, axis=0)
    return cumsum


def make_sort(mesh):
    def sort(x):
        return jnp.sort(x, axis=1), jnp.argsort(x, axis=1), jnp.sort(x, axis=0, descending=True)
    return sort


def make_top_k(mesh):
    def top_k(x):
        values, indices = lax.top_k(x, 3)
        return values, indices
    return top_k


def make_gather(mesh):
    def gather(x, idx, col):
        rows = jnp.broadcast_to(col, (x.shape[0], col.shape[0]))
        return x[idx], x[:, col], jnp.take_along_axis(x, rows, axis=1)
    return gather


def make_scatter(mesh):
    def scatter(x, idx, v):
        return x.at[idx].add(v), x.at[idx].max(v)
    return scatter


def make_random(mesh):
    def random(kd):
        key = jax.random.wrap_key_data(kd)
        k1, k2, k3, k4 = jax.random.split(key, 4)
        return (jax.random.normal(k1, (8, 8)), jax.random.uniform(k2, (8, 4)),
                jax.random.randint(k3, (8, 4), 0, 100), jax.random.bits(k4, (8, 4)))
    return random


def make_dropout(mesh):
    def dropout(kd, x):
        keep = jax.random.bernoulli(jax.random.wrap_key_data(kd), 0.75, x.shape)
        return jnp.where(keep, x / 0.75, 0.0), keep
    return dropout


def make_bf16_math(mesh):
    def bf16_math(x, w):
        y = jnp.dot(x, w, preferred_element_type=jnp.float32)
        z = jnp.tanh(y.astype(jnp.bfloat16)) * jnp.bfloat16(1.5) + jnp.exp(x[:, :8])
        return z, y, jnp.sum(x, axis=1)
    return bf16_math


def _transformer_block(mesh, x, g1, b1, wq, wk, wv, wo, g2, b2, w1, w2):
    def wsc(v, *spec):
        return lax.with_sharding_constraint(v, NamedSharding(mesh, P(*spec)))
    h = _layer_norm(x, g1, b1)
    a = make_attention(mesh)(h, wq, wk, wv, wo)
    x = wsc(x + a, "data", None, None)
    h = _layer_norm(x, g2, b2)
    h = wsc(jax.nn.relu(h @ w1), "data", None, "model")
    return wsc(x + h @ w2, "data", None, None)


def make_transformer_block(mesh):
    def transformer_block(x, g1, b1, wq, wk, wv, wo, g2, b2, w1, w2):
        return _transformer_block(mesh, x, g1, b1, wq, wk, wv, wo, g2, b2, w1, w2)
    return transformer_block


def make_convnet(mesh):
    def convnet(x, wc, bc, wd, bd):
        y = lax.conv_general_dilated(x, wc, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = jax.nn.relu(y + bc)
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        avg = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME") / 4
        y = (y + avg).reshape(y.shape[0], -1)
        return jax.nn.log_softmax(y @ wd + bd)
    return convnet


def make_adam_step(mesh):
    def adam_step(p, g, m, v, step):
        b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8
        step = step + 1
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        t = step.astype(jnp.float32)
        mhat = m / (1 - b1 ** t)
        vhat = v / (1 - b2 ** t)
        return p - lr * mhat / (jnp.sqrt(vhat) + eps), m, v, step
    return adam_step


def make_while_wsc(mesh):
    def while_wsc(x, w):
        def body(c):
            i, y = c
            y = lax.with_sharding_constraint(jnp.tanh(y @ w), NamedSharding(mesh, P("x", "y")))
            return i + 1, y
        _, y = lax.while_loop(lambda c: c[0] < 3, body, (jnp.int32(0), x))
        return lax.with_sharding_constraint(y, NamedSharding(mesh, P("x", None)))
    return while_wsc


def make_donate(mesh):
    def donate(x, y):
        return x * 2 + y, jnp.sum(y, axis=0)
    return donate


def make_int8_matmul(mesh):
    def int8_matmul(a, b, scale):
        acc = lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
        return acc, acc.astype(jnp.float32) * scale
    return int8_matmul


def make_f16_ops(mesh):
    def f16_ops(x, y):
        z = x * y + x / (jnp.abs(y) + jnp.float16(1))
        return z, jnp.exp(x), jnp.max(z, axis=1), jnp.sum(z.astype(jnp.float32), axis=0)
    return f16_ops


def make_quantize(mesh):
    def quantize(x, wq, wscale):
        scale = jnp.max(jnp.abs(x)) / 127
        q = jnp.clip(jnp.round(x / scale), -127, 127).astype(jnp.int8)
        acc = lax.dot_general(q, wq, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32)
        y = acc.astype(jnp.float32) * (scale * wscale)
        return q, y.astype(jnp.bfloat16), y.astype(jnp.float16)
    return quantize


def make_cross_entropy(mesh):
    def cross_entropy(logits, labels):
        logp = jax.nn.log_softmax(logits, axis=-1)
        nll = -jnp.take_along_axis(logp, labels[:, None], axis=-1)[:, 0]
        acc = jnp.mean((jnp.argmax(logits, axis=-1) == labels).astype(jnp.float32))
        return jnp.mean(nll), acc, jax.nn.logsumexp(logits, axis=-1)
    return cross_entropy


def make_train_step(mesh):
    def loss(params, x, y):
        w1, w2 = params
        pred = jnp.tanh(x @ w1) @ w2
        return jnp.mean(jnp.square(pred - y))

    def train_step(w1, w2, x, y):
        l, (g1, g2) = jax.value_and_grad(loss)((w1, w2), x, y)
        return l, w1 - 0.1 * g1, w2 - 0.1 * g2
    return train_step


def make_kv_cache(mesh):
    def kv_cache(cache, new, q, pos):
        cache = lax.dynamic_update_slice(cache, new, (0, pos, 0))
        s = jnp.einsum("bd,btd->bt", q, cache)
        s = jnp.where(jnp.arange(cache.shape[1])[None, :] <= pos, s, -jnp.inf)
        w = jax.nn.softmax(s, axis=-1)
        window = lax.dynamic_slice_in_dim(cache, pos, 2, axis=1)
        return cache, jnp.einsum("bt,btd->bd", w, cache), window
    return kv_cache


def make_cond_switch(mesh):
    def cond_switch(x, branch):
        y = lax.switch(branch, [lambda v: v * 2, lambda v: jnp.sin(v), lambda v: v - 1], x)
        return lax.cond(jnp.sum(y) > 0, lambda v: v + 100, lambda v: -v, y)
    return cond_switch


def make_embedding(mesh):
    def embedding(table, ids):
        return jnp.take(table, ids, axis=0), jax.nn.one_hot(ids, table.shape[0]) @ table
    return embedding


def make_special_values(mesh):
    def special_values(x, y):
        return jnp.log(x), jnp.sqrt(x), x / y, jnp.maximum(x, y), jnp.isnan(x / y), jnp.nansum(x / y, axis=1)
    return special_values


def make_layout_ops(mesh):
    def layout_ops(x, y):
        a = jnp.concatenate([x, y], axis=1)
        b = jnp.pad(x, ((1, 1), (0, 2)), constant_values=-1)
        c = jnp.flip(x.T, axis=0)[::2, 1:5]
        d = jnp.broadcast_to(y[:, :1], (8, 8)).reshape(4, 16)
        return a, b, c, d
    return layout_ops


def make_int_ops(mesh):
    def int_ops(a, b, u):
        return (a & b, a | b, a ^ b, a << 2, a >> 1, lax.rem(a, b), a // b, jnp.clip(a, -5, 5),
                jnp.sign(a), u >> 3, u * jnp.uint32(2654435761), a > b)
    return int_ops


# shard_map programs. The manual axes' sizes are fixed by the body's local
# shapes, so their variants change device order, the device subset, or the
# jit's own (non-manual) in/out specs.

def make_smap_psum(mesh):
    def body(b):
        return lax.psum(b, "x"), lax.pmax(b, "x"), b - lax.pmean(b, "x")

    def smap_psum(x):
        return jax.shard_map(body, mesh=mesh, in_specs=P("x", None),
                             out_specs=(P(), P(), P("x", None)))(x)
    return smap_psum


def make_smap_all_gather(mesh):
    def smap_all_gather(x):
        return jax.shard_map(lambda b: lax.all_gather(b, "x", axis=0, tiled=True) * 2, mesh=mesh,
                             in_specs=P("x", None), out_specs=P(), check_vma=False)(x)
    return smap_all_gather


def make_smap_psum_scatter(mesh):
    def body(xb, wb):
        return lax.psum_scatter(xb @ wb, "x", scatter_dimension=0, tiled=True)

    def smap_psum_scatter(x, w):
        return jax.shard_map(body, mesh=mesh, in_specs=(P(None, "x"), P("x", None)),
                             out_specs=P("x", None))(x, w)
    return smap_psum_scatter


def make_smap_ppermute(mesh):
    n = mesh.shape["x"]

    def body(b):
        right = lax.ppermute(b, "x", [(i, (i + 1) % n) for i in range(n)])
        left = lax.ppermute(b, "x", [(i, (i - 1) % n) for i in range(n)])
        return right - left

    def smap_ppermute(x):
        return jax.shard_map(body, mesh=mesh, in_specs=P("x", None), out_specs=P("x", None))(x)
    return smap_ppermute


def make_smap_all_to_all(mesh):
    def smap_all_to_all(x):
        return jax.shard_map(lambda b: lax.all_to_all(b, "x", 1, 0, tiled=True), mesh=mesh,
                             in_specs=P("x", None), out_specs=P(None, "x"))(x)
    return smap_all_to_all


def make_smap_axis_index(mesh):
    def body(b):
        return b * 10 + (lax.axis_index("x") * 2 + lax.axis_index("y")).astype(b.dtype)

    def smap_axis_index(x):
        return jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))(x)
    return smap_axis_index


def make_smap_partial(mesh):
    def body(xb, w):
        return lax.psum(xb @ w, "x")

    def smap_partial(x, w):
        return jax.shard_map(body, mesh=mesh, axis_names={"x"}, in_specs=(P(None, "x"), P("x", None)),
                             out_specs=P())(x, w)
    return smap_partial


# ---------------------------------------------------------------------------
# The corpus.

def program(name, about, make, mesh, in_specs, out_specs, inputs, variants, donate=(), partitioner="shardy"):
    return {"name": name, "about": about, "make": make, "mesh": mesh, "in_specs": in_specs,
            "out_specs": out_specs, "inputs": inputs, "variants": variants, "donate": list(donate),
            "partitioner": partitioner}


def _mlp(name, partitioner):
    return program(
        name, "2-layer MLP (gelu), data x model parallel" + (", GSPMD" if partitioner == "gspmd" else ""),
        make_mlp, DM,
        [["data", None], [None, "model"], ["model"], ["model", None], [None]], [["data", None]],
        [normal((8, 16), 1), normal((16, 32), 2, step=1 / 64), normal((32,), 3), normal((32, 8), 4, step=1 / 64),
         normal((8,), 5)],
        std_variants(DM) + [V("specs_fsdp", DM, [[["data", "model"], None], ["data", "model"], [None], [None, "data"],
                                                  [None]], [[None, "model"]])],
        partitioner=partitioner)


def _transformer(name, partitioner):
    d, h, k, f = 16, 4, 4, 32
    return program(
        name, "pre-LN transformer block (causal attention, heads over model, relu MLP) with "
        "with_sharding_constraint" + (", GSPMD" if partitioner == "gspmd" else ""),
        make_transformer_block, DM,
        [["data", None, None], [None], [None], [None, "model", None], [None, "model", None], [None, "model", None],
         ["model", None, None], [None], [None], [None, "model"], ["model", None]],
        [["data", None, None]],
        [normal((4, 8, d), 10), 1 + normal((d,), 11, step=1 / 8) / 4, normal((d,), 12) / 4,
         normal((d, h, k), 13) / 4, normal((d, h, k), 14) / 4, normal((d, h, k), 15) / 4, normal((h, k, d), 16) / 4,
         1 + normal((d,), 17, step=1 / 8) / 4, normal((d,), 18) / 4, normal((d, f), 19) / 4, normal((f, d), 20) / 4],
        std_variants(DM)[:2] + [V("specs_replicated_params", DM,
                                  [["data", None, None]] + [[None]] * 2 + [[None, None, None]] * 4 + [[None]] * 2 +
                                  [[None, None]] * 2, [[None, None, None]])],
        partitioner=partitioner)


def _smap_psum(name, partitioner):
    return program(
        name, "shard_map: psum, pmax and pmean over x" + (", GSPMD" if partitioner == "gspmd" else ""),
        make_smap_psum, X8, [["x", None]], [[None, None], [None, None], ["x", None]],
        [grid((16, 4), offset=20)],
        [V("devices_reversed", reversed_ids(X8)), V("devices_interleaved", interleaved_ids(X8)),
         V("specs_replicated", X8, [[None, None]], [[None, None], [None, None], [None, None]])],
        partitioner=partitioner)


PROGRAMS = [
    _mlp("mlp", "shardy"),
    _mlp("mlp_gspmd", "gspmd"),
    program("attention", "multi-head causal self-attention, heads over model (softmax)", make_attention, DM,
            [["data", None, None], [None, "model", None], [None, "model", None], [None, "model", None],
             ["model", None, None]], [["data", None, None]],
            [normal((4, 8, 16), 30), normal((16, 4, 4), 31) / 4, normal((16, 4, 4), 32) / 4,
             normal((16, 4, 4), 33) / 4, normal((4, 4, 16), 34) / 4],
            std_variants(DM)),
    program("layer_norm", "layer norm over the last axis", make_layer_norm, DM,
            [["data", None], [None], [None]], [["data", None]],
            [normal((16, 32), 40), 1 + normal((32,), 41) / 4, normal((32,), 42) / 4],
            std_variants(DM)[:2] + [V("specs_norm_axis_sharded", DM, [["data", "model"], ["model"], [None]],
                                      [[None, "model"]])]),
    program("conv2d_nhwc", "lax.conv_general_dilated NHWC/HWIO, SAME padding, bias", make_conv2d_nhwc, DM,
            [["data", None, None, None], [None, None, None, "model"], ["model"]], [["data", None, None, "model"]],
            [normal((8, 8, 8, 3), 50), normal((3, 3, 3, 8), 51) / 4, normal((8,), 52)],
            std_variants(DM)),
    program("conv2d_nchw", "lax.conv_general_dilated NCHW/OIHW, stride 2, explicit padding, rhs dilation",
            make_conv2d_nchw, DM, [["data", None, None, None], ["model", None, None, None]],
            [["data", "model", None, None]],
            [normal((8, 3, 8, 8), 55), normal((8, 3, 3, 3), 56) / 4],
            std_variants(DM)[:2] + [V("specs_spatial", DM, [[None, None, "data", None], [None, None, None, None]],
                                      [["data", None, None, None]])]),
    program("scan_rnn", "lax.scan: a tanh RNN over 6 steps, final state and all states", make_scan_rnn, XY,
            [[None, "x", None], ["x", None], [None, None], [None, "y"]], [["x", None], [None, "x", None]],
            [normal((6, 8, 4), 60), normal((8, 16), 61), normal((4, 16), 62) / 4, normal((16, 16), 63) / 4],
            std_variants(XY)),
    program("while_loop", "lax.while_loop with a trip count taken from an int32 argument", make_while_loop, XY,
            [["x", "y"], []], [["x", "y"], []],
            [normal((8, 8), 70), np.int32(5)],
            std_variants(XY)),
    program("fori_loop", "lax.fori_loop with static bounds", make_fori_loop, XY,
            [["x", None]], [["x", None]], [grid((8, 4))],
            [V("devices_reversed", reversed_ids(XY)), V("subset_2x2", subset_2x2(XY))]),
    program("cumsum", "jnp.cumsum (float32 along an unsharded axis, int32) and lax.cummax", make_cumsum, XY,
            [["x", None], [None, "y"]], [["x", None], [None, "y"], ["x", None]],
            [normal((8, 16), 80), ints((8, 16), 81, -50, 50)],
            std_variants(XY)[:2] + [V("specs_scan_axis_sharded", XY, [[None, "x"], ["x", None]],
                                      [[None, "x"], ["x", None], [None, "x"]])]),
    program("sort", "jnp.sort (both ways), jnp.argsort (stable, with ties)", make_sort, XY,
            [["x", None]], [["x", None], ["x", None], [None, "y"]],
            [ints((8, 16), 90, 0, 10).astype(np.float32)],
            std_variants(XY)[:2] + [V("specs_sort_axis_sharded", XY, [[None, "x"]],
                                      [[None, "x"], [None, None], ["y", None]])]),
    program("top_k", "lax.top_k, k=3", make_top_k, XY, [["x", None]], [["x", None], ["x", None]],
            [normal((8, 16), 95)], std_variants(XY)[:2]),
    program("gather", "gathers: x[idx] with a negative index, x[:, col], take_along_axis", make_gather, XY,
            [["x", None], [None], [None]], [[None, None], ["x", None], ["x", None]],
            [grid((16, 8)), np.array([3, 0, 15, -1, 3, 7], dtype=np.int32), np.array([7, 0, 2, 2], dtype=np.int32)],
            std_variants(XY)[:2] + [V("specs_indices_sharded", XY, [[None, "y"], ["y"], ["x"]],
                                      [[None, "y"], ["x", None], [None, None]])]),
    program("scatter", "scatters with duplicate indices: x.at[idx].add(v), x.at[idx].max(v)", make_scatter, XY,
            [["x", None], [None], [None, None]], [["x", None], ["x", None]],
            [grid((16, 8)), np.array([1, 5, 1, 14, 5, 1], dtype=np.int32), normal((6, 8), 100, step=1 / 4) * 8],
            std_variants(XY)[:2] + [V("specs_updates_sharded", XY, [[None, "y"], ["y"], ["y", None]],
                                      [[None, None], [None, "y"]])]),
    program("random", "jax.random (threefry) from uint32 key data: split, normal, uniform, randint, raw bits; "
            "outputs sharded", make_random, XY, [[None]], [["x", "y"], ["x", None], [None, "y"], ["y", "x"]],
            [key_data(42)], std_variants(XY)),
    program("dropout", "dropout with jax.random.bernoulli from uint32 key data", make_dropout, XY,
            [[None], ["x", "y"]], [["x", "y"], ["x", "y"]],
            [key_data(7), normal((8, 16), 110)],
            std_variants(XY)[:2] + [V("specs_replicated", XY, [[None], [None, None]], [[None, None], ["y", "x"]])]),
    program("bf16_math", "bfloat16 matmul accumulating to float32, bf16 tanh/exp/sum", make_bf16_math, XY,
            [["x", None], [None, "y"]], [["x", "y"], ["x", "y"], ["x"]],
            [normal((8, 16), 120, dtype=BF16), normal((16, 8), 121, dtype=BF16)],
            std_variants(XY)),
    _transformer("transformer_block", "shardy"),
    _transformer("transformer_block_gspmd", "gspmd"),
    program("convnet", "conv + relu + max pool (reduce_window) + avg (reduce_window, SAME) + dense + log_softmax",
            make_convnet, DM, [["data", None, None, None], [None, None, None, None], [None], [None, "model"],
                               ["model"]], [["data", "model"]],
            [normal((8, 8, 8, 1), 130), normal((3, 3, 1, 4), 131) / 2, normal((4,), 132) / 4,
             normal((64, 8), 133) / 8, normal((8,), 134)],
            std_variants(DM)),
    program("adam_step", "one Adam update; params and moments donated", make_adam_step, XY,
            [["x", "y"], ["x", "y"], ["x", "y"], ["x", "y"], []], [["x", "y"], ["x", "y"], ["x", "y"], []],
            [normal((16, 8), 140), normal((16, 8), 141), normal((16, 8), 142) / 16,
             np.abs(normal((16, 8), 143)) / 64, np.int32(3)],
            std_variants(XY), donate=[0, 2, 3]),
    program("while_wsc", "lax.while_loop whose body has a with_sharding_constraint", make_while_wsc, XY,
            [["x", None], [None, "y"]], [["x", None]],
            [normal((8, 16), 150), normal((16, 16), 151) / 4],
            std_variants(XY)),
    program("donate", "donated argument 0 (donate_argnums)", make_donate, XY,
            [["x", "y"], ["x", "y"]], [["x", "y"], ["y"]],
            [grid((8, 8)), grid((8, 8), offset=32)],
            std_variants(XY)[:2] + [V("specs_replicated", XY, [[None, None], [None, None]], [[None, None], [None]])],
            donate=[0]),
    program("int8_matmul", "int8 x int8 matmul accumulating to int32, then scaled to float32", make_int8_matmul,
            XY, [["x", None], [None, "y"], []], [["x", "y"], ["x", "y"]],
            [ints((8, 16), 160, -128, 128, np.int8), ints((16, 8), 161, -128, 128, np.int8), np.float32(0.125)],
            std_variants(XY)),
    program("f16_ops", "float16 arithmetic, exp, max; a float32 sum of float16 values", make_f16_ops, XY,
            [["x", None], ["x", None]], [["x", None], ["x", None], ["x"], [None]],
            [normal((8, 16), 170, dtype=np.float16), normal((8, 16), 171, dtype=np.float16)],
            std_variants(XY)),
    program("quantize", "float32 -> int8 quantization, int8 matmul to int32, dequantized to bf16 and f16",
            make_quantize, XY, [["x", None], [None, "y"], []], [["x", None], ["x", "y"], ["x", "y"]],
            [normal((8, 16), 180), ints((16, 8), 181, -127, 128, np.int8), np.float32(0.015625)],
            std_variants(XY)),
    program("cross_entropy", "softmax cross-entropy with int labels, accuracy, logsumexp", make_cross_entropy, XY,
            [["x", "y"], ["x"]], [[], [], ["x"]],
            [normal((8, 16), 190), ints((8,), 191, 0, 16)],
            std_variants(XY)),
    program("train_step", "value_and_grad of an MSE loss through a tanh MLP, one SGD step", make_train_step, DM,
            [[None, "model"], ["model", None], ["data", None], ["data", None]], [[], [None, "model"], ["model", None]],
            [normal((8, 16), 200) / 4, normal((16, 4), 201) / 4, normal((8, 8), 202), normal((8, 4), 203)],
            std_variants(DM)),
    program("kv_cache", "KV-cache decode step: dynamic_update_slice at an int32 position, masked softmax, "
            "dynamic_slice", make_kv_cache, DM,
            [["data", None, "model"], ["data", None, "model"], ["data", "model"], []],
            [["data", None, "model"], ["data", "model"], ["data", None, None]],
            [normal((4, 8, 8), 210), normal((4, 1, 8), 211), normal((4, 8), 212), np.int32(3)],
            std_variants(DM)),
    program("cond_switch", "lax.switch on an int32 argument, then lax.cond on a data-dependent predicate",
            make_cond_switch, XY, [["x", "y"], []], [["x", "y"]],
            [normal((8, 8), 220), np.int32(1)],
            std_variants(XY)),
    program("embedding", "embedding lookup: jnp.take over a vocab-sharded table, and one_hot @ table",
            make_embedding, DM, [["model", None], ["data", None]], [["data", None, None], ["data", None, None]],
            [normal((32, 16), 230), ints((8, 4), 231, 0, 32)],
            std_variants(DM)),
    program("special_values", "log/sqrt/division giving nan and inf; nan and inf inputs; isnan; nansum",
            make_special_values, XY, [["x", None], ["x", None]],
            [["x", None], ["x", None], ["x", None], ["x", None], ["x", None], ["x"]],
            [np.array([[1, 0, -1, np.inf], [np.nan, 4, -0.0, 0.25]] * 4, dtype=np.float32),
             np.array([[0, 0, 2, -np.inf], [1, np.nan, 0, -0.5]] * 4, dtype=np.float32)],
            std_variants(XY)[:2]),
    program("layout_ops", "concatenate, pad, transpose, reverse, strided slice, broadcast, reshape",
            make_layout_ops, XY, [["x", None], ["x", None]],
            [["x", None], [None, None], [None, None], ["x", None]],
            [grid((8, 8)), grid((8, 4), offset=-64)],
            std_variants(XY)),
    program("int_ops", "int32 bitwise ops, shifts, rem, floor_divide, clip, sign; uint32 shift and wrapping "
            "multiply; a bool output", make_int_ops, XY, [["x", "y"], ["x", "y"], ["x", None]],
            [["x", "y"]] * 12,
            [ints((8, 8), 240, -100, 100), ints((8, 8), 241, 1, 9) * np.where(ints((8, 8), 242, 0, 2) == 0, -1, 1)
             .astype(np.int32), ints((8, 8), 243, 0, 2**31, np.int64).astype(np.uint32) * np.uint32(2)],
            std_variants(XY)),
    _smap_psum("smap_psum", "shardy"),
    _smap_psum("smap_psum_gspmd", "gspmd"),
    program("smap_all_gather", "shard_map: tiled all_gather over x", make_smap_all_gather, X8,
            [["x", None]], [[None, None]], [grid((16, 4))],
            [V("devices_reversed", reversed_ids(X8)), V("devices_interleaved", interleaved_ids(X8)),
             V("specs_out_sharded", X8, [[None, None]], [["x", None]])]),
    program("smap_psum_scatter", "shard_map: a matmul whose partial sums are psum_scatter'ed over x",
            make_smap_psum_scatter, X8, [[None, "x"], ["x", None]], [["x", None]],
            [normal((8, 64), 250), normal((64, 16), 251) / 8],
            [V("devices_reversed", reversed_ids(X8)), V("devices_interleaved", interleaved_ids(X8)),
             V("specs_replicated", X8, [[None, None], [None, None]], [[None, None]])]),
    program("smap_ppermute", "shard_map: ppermute both ways around a ring of 4 (devices 0..3)",
            make_smap_ppermute, X4, [["x", None]], [["x", None]], [grid((8, 4))],
            [V("devices_4to7", M([4], ["x"], [4, 5, 6, 7])), V("devices_scrambled", M([4], ["x"], [6, 1, 7, 0])),
             V("specs_replicated", X4, [[None, None]], [[None, None]])]),
    program("smap_all_to_all", "shard_map: tiled all_to_all over x (rows to columns)", make_smap_all_to_all, X8,
            [["x", None]], [[None, "x"]], [grid((8, 16))],
            [V("devices_reversed", reversed_ids(X8)), V("devices_interleaved", interleaved_ids(X8)),
             V("specs_replicated", X8, [[None, None]], [[None, None]])]),
    program("smap_axis_index", "shard_map over a 4x2 mesh using axis_index of both axes", make_smap_axis_index,
            XY, [["x", "y"]], [["x", "y"]], [grid((8, 4), scale=1)],
            [V("devices_reversed", reversed_ids(XY)), V("devices_interleaved", interleaved_ids(XY)),
             V("specs_replicated", XY, [[None, None]], [[None, None]])]),
    program("smap_partial", "partially manual shard_map (axis_names={x}); y stays automatic", make_smap_partial,
            XY, [[None, "x"], ["x", "y"]], [[None, "y"]], [normal((8, 16), 260), normal((16, 8), 261) / 4],
            [V("devices_reversed", reversed_ids(XY)), V("mesh_4x1", M([4, 1], ["x", "y"], [1, 3, 5, 7])),
             V("specs_other", XY, [["y", "x"], ["x", None]], [["y", None]])]),
]


# ---------------------------------------------------------------------------
# Generation.

def enc_float(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


# The dtypes whose arrays the corpus writes as values alone; every other (complex, the
# float8 family, float4, int4, int2...) also gets "hex", its raw bytes as NumPy's ml_dtypes
# hold them (one element a byte for the sub-byte types), which xlamesh reads and compares.
PLAIN_DTYPES = {"bool", "int8", "int32", "uint32", "float16", "bfloat16", "float32"}


def enc_array(a):
    a = np.asarray(a)
    flat = a.reshape(-1)
    if a.dtype == np.bool_:
        vals = [bool(v) for v in flat]
    elif a.dtype.kind == "c":
        vals = [[enc_float(float(v.real)), enc_float(float(v.imag))] for v in flat]
    elif a.dtype.kind in "iu":
        vals = [int(v) for v in flat]
    else:
        vals = [enc_float(float(v)) for v in flat.astype(np.float64)]
    out = {"shape": list(a.shape), "dtype": str(a.dtype), "values": vals}
    if str(a.dtype) not in PLAIN_DTYPES:
        out["hex"] = np.ascontiguousarray(a).tobytes().hex()
    return out


TOL = {"float32": 1e-4, "bfloat16": 3e-2, "float16": 3e-3, "complex64": 1e-4}


def check_close(name, what, got, want):
    """Variants re-jit the same function: integers and bools must match exactly,
    floats within a tolerance for their type (reduction order may differ)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        raise ProgramError("program %s: %s gives %s%s, base gives %s%s" % (
            name, what, got.dtype, got.shape, want.dtype, want.shape))
    if got.dtype.kind in "biu" or str(got.dtype) not in TOL:
        ok = got.tobytes() == want.tobytes()
    elif got.dtype.kind == "c":
        ok = np.allclose(got.astype(np.complex128), want.astype(np.complex128), rtol=TOL[str(got.dtype)],
                         atol=TOL[str(got.dtype)], equal_nan=True)
    else:
        tol = TOL[str(got.dtype)]
        ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol, equal_nan=True)
    if not ok:
        raise ProgramError("program %s: %s differs from the base outputs" % (name, what))


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


class _config:
    """Sets jax config flags for a block, restoring them after."""

    def __init__(self, **flags):
        self.flags = flags

    def __enter__(self):
        self.saved = {k: getattr(jax.config, k) for k in self.flags}
        for k, v in self.flags.items():
            jax.config.update(k, v)

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            jax.config.update(k, v)


def _jit(prog, mesh_json, in_specs, out_specs):
    mesh = make_mesh(mesh_json)
    fn = prog["make"](mesh)
    in_sh = tuple(NamedSharding(mesh, to_p(s)) for s in in_specs)
    out_sh = tuple(NamedSharding(mesh, to_p(s)) for s in out_specs)
    if len(out_sh) == 1:
        out_sh = out_sh[0]
    return jax.jit(fn, in_shardings=in_sh, out_shardings=out_sh, donate_argnums=tuple(prog["donate"])), in_sh


def _outputs(tree):
    leaves = jax.tree_util.tree_leaves(tree)
    return [np.asarray(x) for x in leaves]


def _run(jf, in_sh, inputs):
    # Fresh device arrays per call: donated ones are consumed.
    args = [jax.device_put(x, s) for x, s in zip(inputs, in_sh)]
    return _outputs(jf(*args))


CUSTOM_CALL = re.compile(r"stablehlo\.custom_call @([\w.$-]+)")


def gen_program(prog):
    name = prog["name"]
    gspmd = prog["partitioner"] == "gspmd"
    inputs = [np.asarray(x) for x in prog["inputs"]]
    with _config(jax_use_shardy_partitioner=not gspmd, jax_traceback_in_locations_limit=0):
        jf, in_sh = _jit(prog, prog["mesh"], prog["in_specs"], prog["out_specs"])
        exported = jax.export.export(jf)(*[jax.ShapeDtypeStruct(x.shape, x.dtype) for x in inputs])
        blob = exported.serialize()
        text = exported.mlir_module()
        outputs = _run(jf, in_sh, inputs)
        # The exported artifact, deserialized and called, must say the same.
        back = jax.export.deserialize(blob)
        args = [jax.device_put(x, s) for x, s in zip(inputs, in_sh)]
        # JAX 0.12 calls a GSPMD artifact only with Shardy on (it then falls
        # back to GSPMD for that module); with Shardy off its verifier rejects
        # the @Sharding custom call the caller wraps around the arguments.
        # A program without inputs is called on its mesh (there are no arguments to say it).
        with _config(jax_use_shardy_partitioner=True), \
                (jax.set_mesh(make_mesh(prog["mesh"])) if not inputs else contextlib.nullcontext()):
            again = _outputs(back.call(*args))
        if len(again) != len(outputs) or not all(same_bits(a, b) for a, b in zip(again, outputs)):
            raise ProgramError("program %s: the deserialized export computes other outputs" % name)
        if len(outputs) != len(prog["out_specs"]):
            raise ProgramError("program %s: %d outputs, %d out_specs" % (name, len(outputs), len(prog["out_specs"])))
        variants = []
        for v in prog["variants"]:
            in_specs = v["in_specs"] if v["in_specs"] is not None else prog["in_specs"]
            out_specs = v["out_specs"] if v["out_specs"] is not None else prog["out_specs"]
            vjf, vin_sh = _jit(prog, v["mesh"], in_specs, out_specs)
            vout = _run(vjf, vin_sh, inputs)
            for i, (a, b) in enumerate(zip(vout, outputs)):
                check_close(name, "variant %s output %d" % (v["name"], i), a, b)
            variants.append({"name": v["name"], "mesh": v["mesh"], "in_specs": in_specs, "out_specs": out_specs,
                             "outputs": [enc_array(o) for o in vout]})
    for target in CUSTOM_CALL.findall(text):
        if target not in ALLOWED_CUSTOM_CALLS:
            raise ProgramError("program %s: custom call @%s needs jaxlib, not plain XLA" % (name, target))
    if len(variants) < 2:
        raise ProgramError("program %s: %d variants, need >= 2" % (name, len(variants)))
    return {
        "name": name, "about": prog["about"], "partitioner": prog["partitioner"], "mesh": prog["mesh"],
        "in_specs": prog["in_specs"], "out_specs": prog["out_specs"], "donate": prog["donate"],
        "exported": base64.b64encode(blob).decode("ascii"), "stablehlo": text,
        "inputs": [enc_array(x) for x in inputs], "outputs": [enc_array(o) for o in outputs],
        "variants": variants,
    }


NAME = re.compile(r"^[a-z0-9_]+$")


def generate(progs=None):
    """Exports and runs every program (of PROGRAMS, or progs); returns the entries sorted by
    name."""
    seen = set()
    out = []
    for prog in PROGRAMS if progs is None else progs:
        if not NAME.match(prog["name"]) or prog["name"] in seen:
            raise ProgramError("program name %r: duplicate or not [a-z0-9_]+" % prog["name"])
        seen.add(prog["name"])
        out.append(gen_program(prog))
    return sorted(out, key=lambda p: p["name"])
