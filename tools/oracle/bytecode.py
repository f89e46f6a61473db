"""Goldens for package mlir/bytecode: small JAX programs exported with jax.export.

Each program is jitted with NamedShardings on a mesh of the 8 CPU devices,
exported (Exported.serialize(), base64) and run by JAX on fixed inputs. The
programs cover what the programs corpus (programs.py) does not: every element
type in arguments and constants (f64/i64/u64 under x64, bf16, f16, int8/16,
uint8/16/32, bool, complex64), CHLO ops (serialized as custom calls
@mhlo.erf, ...), composites, rng_bit_generator, fft, select_and_scatter,
reduce_precision, optimization barriers, precision configs, big non-splat
constants, NaN/Inf constants, and GSPMD as well as Shardy annotations.

The file has the programs corpus's format (see /work/helpers/PROGRAMS.md and
tools/oracle/README.md), without "stablehlo" and "variants":

    {"programs": [{"name", "about", "partitioner", "mesh", "in_specs",
                   "out_specs", "exported", "inputs", "outputs"}, ...]}

Usage (from the repository root; writes OUTDIR/bytecode.json):

    JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=8 \\
        .cache/oracle-venv/bin/python tools/oracle/bytecode.py OUTDIR

Deterministic: no Python locations in the modules
(jax_traceback_in_locations_limit=0), inputs from np.arange, sorted keys.
"""

import base64
import json
import math
import os
import sys

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


def mesh_json(shape, axes):
    return {"shape": list(shape), "axes": list(axes), "device_ids": list(range(math.prod(shape)))}


XY = mesh_json([4, 2], ["x", "y"])
X8 = mesh_json([8], ["x"])


def arange(shape, dtype=np.float32, scale=1.0 / 8, offset=0):
    n = math.prod(shape)
    return ((np.arange(n, dtype=np.float64) - offset) * scale).reshape(shape).astype(dtype)


BIG = arange((16, 64), scale=1.0 / 64)  # a non-splat constant of 1024 floats


def consts(x):
    return (
        x * 2,
        jnp.array([1, 2, 250], dtype=jnp.uint8),
        jnp.array([-1, 2, -300], dtype=jnp.int16),
        jnp.array([1, 60000], dtype=jnp.uint16),
        jnp.array([4000000000, 7], dtype=jnp.uint32),
        jnp.array([-128, 127], dtype=jnp.int8),
        jnp.full((3,), 7, dtype=jnp.int8),
        jnp.array([1.5, -2.0, 3.25], dtype=jnp.bfloat16),
        jnp.full((2,), jnp.nan, dtype=jnp.bfloat16),
        jnp.array([0.1, 65504.0, -jnp.inf], dtype=jnp.float16),
        jnp.array([True, False, True]),
        jnp.full((2, 2), True),
        # xlamesh's buffers carry no complex numbers: complex constants leave as real parts.
        jnp.real(jnp.array([1 + 2j, 3 - 4j], dtype=jnp.complex64) * jnp.array([2j, 1], dtype=jnp.complex64)),
        jnp.imag(jnp.full((2, 2), 1 - 1.5j, dtype=jnp.complex64)),
        jnp.array([jnp.nan, jnp.inf, -jnp.inf, -0.0, 1e-45, 3.4e38], dtype=jnp.float32),
    )


def dtypes_fn(a, b, c, d, e, f):
    # u8, i16, bf16, f16, bool, int8 arguments mixed with constants of their types.
    return (a * 3 + jnp.uint8(200), b - jnp.int16(-3000), c * jnp.bfloat16(1.5) + jnp.bfloat16(0.25),
            d / jnp.float16(3), jnp.logical_xor(e, jnp.array([True, False, False, True])), f >> 1)


def x64_fn(a, b, c):
    return (a * 2.5 + jnp.array([1.5, -2.25, 1e300, -1e-300]), b * 3 - jnp.int64(1 << 40),
            c + jnp.uint64((1 << 63) + 5), jnp.sqrt(a).astype(jnp.float32))


def chlo_fn(x):
    return (lax.erf(x), jnp.sinh(x), jnp.cosh(x), jnp.arcsin(x), jnp.arctanh(x), jnp.tan(x), jnp.cbrt(x),
            jnp.arctan2(x, x + 1), jnp.expm1(x), jnp.floor(x * 3), jnp.ceil(x * 3), jnp.round(x * 3),
            lax.round(x * 3, lax.RoundingMethod.AWAY_FROM_ZERO), lax.erf_inv(x))


def bits_fn(i, u):
    return (lax.population_count(i), lax.clz(i), ~i, jnp.logical_not(i > 3), i << 3, u >> 2,
            lax.shift_right_arithmetic(i - 4, jnp.int32(1)), u < jnp.uint32(5), i % 3)


def fft_fn(re, im):
    x = lax.complex(re, im)
    f = jnp.fft.fft(x)
    return f.real, f.imag, jnp.fft.ifft(x).real, jnp.fft.rfft(re).imag


def rng_fn(k):
    k1, a = lax.rng_bit_generator(k, (4, 2), dtype=jnp.uint32)
    _, b = lax.rng_bit_generator(k1, (3,), dtype=jnp.uint8, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    _, c = lax.rng_bit_generator(k1, (2,), dtype=jnp.uint64, algorithm=lax.RandomAlgorithm.RNG_PHILOX)
    return a, b, c


def composite_fn(x):
    fma = lax.composite(lambda x, y: x * y + 1.0, name="xlamesh.fma")
    scaled = lax.composite(lambda x, *, k: x * k, name="xlamesh.scale", version=2)
    return fma(x, x), scaled(x, k=3.0)


def maxpool_grad_fn(x):
    return jax.grad(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID").sum())(x)


def misc_fn(x):
    z = lax.complex(x, -x)
    return (lax.reduce_precision(x, 5, 10), lax.optimization_barrier(x * 2), jnp.real(z * z), jnp.imag(z),
            jnp.abs(z), jnp.clip(x, 0.25, 0.5), jnp.pad(x, (2, 1)), x[::-1], lax.iota(jnp.int16, 5))


def precision_fn(a, b):
    return (jnp.dot(a, b, precision=lax.Precision.HIGHEST), jnp.einsum("ij,jk->ik", a, b, precision="high"),
            jnp.dot(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16), preferred_element_type=jnp.float32))


def bigconst_fn(x):
    return x @ BIG[:8, :4].T + BIG.sum(axis=0)[:8], jnp.asarray(BIG)


def make_gspmd(mesh):
    def gspmd(x, w):
        y = jnp.tanh(x @ w)
        return jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P("x", None))) * 2
    return gspmd


def make_smap(mesh):
    def body(x):
        return lax.pmax(x, "x"), lax.pmin(x, "y"), lax.all_gather(x, "y", tiled=True), lax.axis_index("x") + x
    return jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), check_vma=False,
                         out_specs=(P(None, "y"), P("x"), P("x"), P("x", "y")))


PROGRAMS = [
    dict(name="consts", about="constants of every dtype, splats, NaN/Inf", mesh=X8, partitioner="shardy",
         make=lambda m: consts, in_specs=[["x"]], out_specs=[["x"]] + [[]] * 14, inputs=[np.arange(8, dtype=np.int32)]),
    dict(name="dtypes", about="u8/i16/bf16/f16/bool/int8 arguments, sharded", mesh=X8, partitioner="shardy",
         make=lambda m: dtypes_fn, in_specs=[["x"], ["x"], [None], ["x"], [None], ["x"]],
         out_specs=[["x"], ["x"], [None], ["x"], [None], ["x"]],
         inputs=[np.arange(8, dtype=np.uint8) * 7, np.arange(8, dtype=np.int16) * -311,
                 arange((4,), ml_dtypes.bfloat16), arange((8,), np.float16, offset=3),
                 np.array([True, True, False, False]), np.arange(-4, 4, dtype=np.int8) * 30]),
    dict(name="x64", about="f64/i64/u64 with jax_enable_x64", mesh=XY, partitioner="shardy", x64=True,
         make=lambda m: x64_fn, in_specs=[["x"], [None], ["y"]], out_specs=[["x"], [None], ["y"], ["x"]],
         inputs=[np.arange(4, dtype=np.float64) / 3, np.arange(4, dtype=np.int64) * (1 << 33),
                 np.arange(4, dtype=np.uint64) * 3]),
    dict(name="chlo_math", about="CHLO ops (custom calls @mhlo.erf, ...) and rounding", mesh=X8,
         partitioner="shardy", make=lambda m: chlo_fn, in_specs=[["x"]], out_specs=[["x"]] * 14,
         inputs=[arange((8,), offset=-1, scale=0.1)]),
    dict(name="bits", about="popcnt, clz, not, shifts, unsigned compare, remainder", mesh=XY,
         partitioner="shardy", make=lambda m: bits_fn, in_specs=[["x"], ["y"]],
         out_specs=[["x"], ["x"], ["x"], ["x"], ["x"], ["y"], ["x"], ["y"], ["x"]],
         inputs=[np.arange(8, dtype=np.int32) * 37, np.arange(8, dtype=np.uint32) * 1000003]),
    dict(name="fft", about="stablehlo.fft on complex64 made from two f32 arrays", mesh=X8, partitioner="shardy", make=lambda m: fft_fn,
         in_specs=[[None], [None]], out_specs=[[None]] * 4, inputs=[arange((8,)), arange((8,), offset=4)]),
    dict(name="rng", about="rng_bit_generator: default, THREE_FRY, PHILOX", mesh=X8, partitioner="shardy",
         make=lambda m: rng_fn, in_specs=[[None]], out_specs=[[None, None], [None], [None]],
         inputs=[np.array([1, 2, 3, 4], dtype=np.uint32)]),
    dict(name="composite", about="lax.composite with attributes and a version", mesh=XY,
         partitioner="shardy", make=lambda m: composite_fn, in_specs=[["x", "y"]],
         out_specs=[["x", "y"], ["x", "y"]], inputs=[arange((8, 4))]),
    dict(name="maxpool_grad", about="select_and_scatter from the gradient of a max pool", mesh=XY,
         partitioner="shardy", make=lambda m: maxpool_grad_fn, in_specs=[["x", None]], out_specs=[["x", None]],
         inputs=[(arange((8, 8), offset=20) * ((np.arange(64) % 3) - 1).reshape(8, 8)).astype(np.float32)]),
    dict(name="misc", about="reduce_precision, optimization_barrier, complex, clamp, pad, rev, iota",
         mesh=X8, partitioner="shardy", make=lambda m: misc_fn, in_specs=[[None]],
         out_specs=[[None]] * 9, inputs=[arange((8,), scale=1.0 / 7)]),
    dict(name="precision", about="dot with HIGHEST/HIGH precision and bf16 x bf16 -> f32", mesh=XY,
         partitioner="shardy", make=lambda m: precision_fn, in_specs=[["x", None], [None, "y"]],
         out_specs=[["x", "y"], ["x", "y"], ["x", "y"]], inputs=[arange((8, 4)), arange((4, 6), offset=5)]),
    dict(name="bigconst", about="a 16x64 non-splat f32 constant", mesh=XY, partitioner="shardy",
         make=lambda m: bigconst_fn, in_specs=[["x", None]], out_specs=[["x", None], [None, "y"]],
         inputs=[arange((8, 4))]),
    dict(name="gspmd", about="mhlo.sharding strings (GSPMD) and a sharding custom call", mesh=XY,
         partitioner="gspmd", make=make_gspmd, in_specs=[["x", "y"], ["y", None]],
         out_specs=[["x", None]], inputs=[arange((8, 4)), arange((4, 4), offset=8)]),
    dict(name="smap_reductions", about="shard_map with pmax, pmin, tiled all_gather, axis_index", mesh=XY,
         partitioner="shardy", make=make_smap, in_specs=[["x", "y"]],
         out_specs=[[None, "y"], ["x"], ["x"], ["x", "y"]], inputs=[arange((8, 4), offset=13)]),
]


def make_mesh(m):
    devs = jax.devices()
    return Mesh(np.array([devs[i] for i in m["device_ids"]], dtype=object).reshape(m["shape"]), tuple(m["axes"]))


def to_p(spec):
    return P(*[tuple(e) if isinstance(e, list) else e for e in spec])


def enc_float(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def enc_array(a):
    a = np.asarray(a)
    flat = a.reshape(-1)
    if a.dtype == np.bool_:
        vals = [bool(v) for v in flat]
    elif a.dtype.kind in "iu":
        vals = [int(v) for v in flat]
    elif a.dtype.kind == "c":
        vals = [[enc_float(float(v.real)), enc_float(float(v.imag))] for v in flat]
    else:
        vals = [enc_float(float(v)) for v in flat.astype(np.float64)]
    return {"shape": list(a.shape), "dtype": str(a.dtype), "values": vals}


def gen(prog):
    inputs = [np.asarray(x) for x in prog["inputs"]]
    flags = dict(jax_use_shardy_partitioner=prog["partitioner"] == "shardy", jax_traceback_in_locations_limit=0,
                 jax_enable_x64=prog.get("x64", False))
    saved = {k: getattr(jax.config, k) for k in flags}
    for k, v in flags.items():
        jax.config.update(k, v)
    try:
        mesh = make_mesh(prog["mesh"])
        in_sh = tuple(NamedSharding(mesh, to_p(s)) for s in prog["in_specs"])
        out_sh = tuple(NamedSharding(mesh, to_p(s)) for s in prog["out_specs"])
        jf = jax.jit(prog["make"](mesh), in_shardings=in_sh, out_shardings=out_sh[0] if len(out_sh) == 1 else out_sh)
        exported = jax.export.export(jf)(*[jax.ShapeDtypeStruct(x.shape, x.dtype) for x in inputs])
        blob = exported.serialize()
        args = [jax.device_put(x, s) for x, s in zip(inputs, in_sh)]
        outputs = [np.asarray(o) for o in jax.tree_util.tree_leaves(jf(*args))]
        # JAX 0.12 calls a GSPMD artifact only with Shardy on (see programs.py).
        jax.config.update("jax_use_shardy_partitioner", True)
        again = [np.asarray(o) for o in jax.tree_util.tree_leaves(jax.export.deserialize(blob).call(*args))]
        if [o.tobytes() for o in outputs] != [o.tobytes() for o in again]:
            raise SystemExit("bytecode.py: %s: the deserialized export computes other outputs" % prog["name"])
        if len(outputs) != len(prog["out_specs"]):
            raise SystemExit("bytecode.py: %s: %d outputs, %d out_specs" % (prog["name"], len(outputs),
                                                                            len(prog["out_specs"])))
    finally:
        for k, v in saved.items():
            jax.config.update(k, v)
    return {"name": prog["name"], "about": prog["about"], "partitioner": prog["partitioner"],
            "mesh": prog["mesh"], "in_specs": prog["in_specs"], "out_specs": prog["out_specs"],
            "exported": base64.b64encode(blob).decode("ascii"),
            "inputs": [enc_array(x) for x in inputs], "outputs": [enc_array(o) for o in outputs]}


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: bytecode.py OUTDIR")
    progs = sorted((gen(p) for p in PROGRAMS), key=lambda p: p["name"])
    with open(os.path.join(sys.argv[1], "bytecode.json"), "w") as f:
        json.dump({"programs": progs}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
