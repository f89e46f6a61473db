"""The element-type corpus: JAX programs whose inputs and outputs are of the types beyond
float32 and the integers: complex64, each float8 type, float4_e2m1fn, int4 and uint4, int2,
bfloat16, float16 and bool, and programs without inputs.

Each program is exported, run and re-jitted on variants exactly as the programs corpus does
(programs.py, whose machinery and JSON format this reuses); generate.py writes the result to
OUTDIR/programs_types.json. Arrays of the types beyond programs.PLAIN_DTYPES carry their raw
bytes ("hex"), which xlamesh compares bit for bit (complex64 within programs.TOL, like
float32).

No 2-bit integers: jax.export cannot serialize an aval of int2 or uint2 (JAX 0.12's
_dtype_to_dtype_kind has no entry for them); xlamesh's own tests move them (jit's
TestAllDTypes).
"""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from programs import XY, M, V, normal, grid, ints, program, reversed_ids, mesh_2x4

FLOAT8 = [ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e5m2fnuz,
          ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e4m3, ml_dtypes.float8_e3m4, ml_dtypes.float8_e8m0fnu,
          ml_dtypes.float4_e2m1fn]


def cplx(shape, seed):
    return (normal(shape, seed) + 1j * normal(shape, seed + 1000)).astype(np.complex64)


def make_complex_math(mesh):
    def complex_math(x, y, r):
        z = x * y + jnp.conj(x)
        w = lax.complex(r, r * 2)
        return z, jnp.abs(z), jnp.real(w * x), jnp.imag(x), jnp.sum(z, axis=1), (x - w) / (jnp.abs(y) + 1)
    return complex_math


def make_float8_family(mesh):
    def float8_family(*xs):
        outs = [(x.astype(jnp.float32) * 1.5 + 0.25).astype(x.dtype) for x in xs]
        total = sum(jnp.sum(x.astype(jnp.float32), axis=0) for x in xs)
        return (*outs, total, xs[1].astype(jnp.bfloat16), xs[0].astype(ml_dtypes.float8_e4m3fn))
    return float8_family


def make_int4_math(mesh):
    def int4_math(a, b):
        wide = a.astype(jnp.int8) * b.astype(jnp.int8)
        return (a + a, jnp.maximum(a, jnp.int4(-2)), wide, jnp.sum(a.astype(jnp.int32), axis=0), b >> 1,
                (wide // 4).astype(jnp.int4), a == jnp.int4(3))
    return int4_math


def make_bool_ops(mesh):
    def bool_ops(p, q, x):
        return p & q, p ^ ~q, jnp.where(p, x, -x), jnp.any(p, axis=1), jnp.sum(q, axis=0), x > 0
    return bool_ops


def make_narrow_floats(mesh):
    def narrow_floats(x, y):
        s = (x.astype(jnp.float32) + y.astype(jnp.float32))
        return s.astype(jnp.bfloat16), y * y, x.astype(jnp.float16), jnp.max(x, axis=0), jnp.exp(y)
    return narrow_floats


def make_no_inputs(mesh):
    def no_inputs():
        i = lax.broadcasted_iota(jnp.int32, (8, 4), 0) * 4 + lax.broadcasted_iota(jnp.int32, (8, 4), 1)
        f = i.astype(jnp.float32) / 8
        return (i, lax.complex(f, -f), (f - 2).astype(ml_dtypes.float8_e4m3fn), (i % 16 - 8).astype(jnp.int4),
                f.astype(jnp.bfloat16), i % 3 == 0)
    return no_inputs


def make_no_inputs_scalar(mesh):
    def no_inputs_scalar():
        return jnp.float32(3.5), jnp.arange(8, dtype=jnp.float16) * 0.5
    return no_inputs_scalar


def _f8_inputs():
    return [normal((8, 4), 300 + i, step=1 / 8).astype(t) for i, t in enumerate(FLOAT8)]


OUT_F8 = [["x", "y"], ["x", None], [None, "y"], [None, None], ["y", "x"], ["x", "y"], [None, None], ["x", None],
          [None, "y"]]
IN_F8 = [["x", "y"], [None, "y"], ["x", None], [None, None], ["x", "y"], ["y", None], ["x", "y"], [None, "x"],
         ["x", "y"]]

TYPE_PROGRAMS = [
    program("complex_math", "complex64 arithmetic: multiply, conj, abs, real/imag, lax.complex, a reduction, divide",
            make_complex_math, XY, [["x", "y"], ["x", None], [None, "y"]],
            [["x", "y"], ["x", None], [None, None], ["x", "y"], ["x"], [None, "y"]],
            [cplx((8, 4), 400), cplx((8, 4), 401), normal((8, 4), 402)],
            [V("devices_reversed", reversed_ids(XY)), V("mesh_2x4", mesh_2x4(XY)),
             V("specs_other", XY, [["y", "x"], [None, "x"], ["x", None]],
               [[None, "x"], ["y", None], ["x", "y"], [None, None], [None], ["x", "y"]])]),
    program("float8_family", "every float8 type and float4_e2m1fn: converts through float32, a sum, casts between them",
            make_float8_family, XY, IN_F8, OUT_F8 + [["y"], [None, "x"], ["x", None]], _f8_inputs(),
            [V("devices_reversed", reversed_ids(XY)), V("mesh_2x4", mesh_2x4(XY)),
             V("specs_replicated", XY, [[None, None]] * 9, [[None, None]] * 9 + [[None], [None, None], [None, None]])]),
    program("int4_math", "int4 and uint4: add (wrapping), max, widening multiply, sum, shift, narrowing, compare",
            make_int4_math, XY, [["x", "y"], [None, "y"]],
            [["x", "y"], ["x", None], [None, "y"], ["y"], [None, None], ["x", "y"], ["x", None]],
            [ints((8, 8), 410, -8, 8, np.int8).astype(ml_dtypes.int4), ints((8, 8), 411, 0, 16, np.uint8).astype(ml_dtypes.uint4)],
            [V("devices_reversed", reversed_ids(XY)), V("mesh_2x4", mesh_2x4(XY)),
             V("specs_other", XY, [[None, "x"], ["y", None]], [[None, None], [None, "x"], ["x", "y"], [None], ["y", "x"],
                                                              [None, None], [None, "y"]])]),
    program("bool_ops", "bool inputs and outputs: and, xor, not, where, any, count, compare",
            make_bool_ops, XY, [["x", "y"], ["x", None], [None, "y"]],
            [["x", "y"], [None, "y"], ["x", None], ["x"], [None], ["x", "y"]],
            [ints((8, 4), 420, 0, 2, np.uint8).astype(bool), ints((8, 4), 421, 0, 2, np.uint8).astype(bool),
             normal((8, 4), 422)],
            [V("devices_reversed", reversed_ids(XY)), V("mesh_2x4", mesh_2x4(XY))]),
    program("narrow_floats", "bfloat16 and float16 inputs and outputs: mixed sum, square, cast, max, exp",
            make_narrow_floats, XY, [["x", "y"], [None, "y"]],
            [["x", "y"], [None, "y"], ["x", None], ["y"], ["x", "y"]],
            [normal((8, 4), 430, dtype=ml_dtypes.bfloat16), normal((8, 4), 431, dtype=np.float16)],
            [V("devices_reversed", reversed_ids(XY)), V("mesh_2x4", mesh_2x4(XY))]),
    program("no_inputs", "no inputs: iota, complex, float8, int4, bfloat16 and bool results over the mesh",
            make_no_inputs, XY, [],
            [["x", "y"], ["x", None], [None, "y"], ["x", "y"], [None, None], ["y", None]], [],
            [V("devices_reversed", reversed_ids(XY)), V("mesh_2x4", mesh_2x4(XY)),
             V("specs_other", XY, [], [[None, "x"], ["y", None], ["x", None], [None, None], ["x", "y"], [None, "y"]])]),
    program("no_inputs_scalar", "no inputs: a float32 scalar and a replicated float16 vector",
            make_no_inputs_scalar, M([8], ["x"]), [], [[], [None]], [],
            [V("devices_reversed", reversed_ids(M([8], ["x"]))), V("mesh_4", M([4], ["x"], [4, 5, 6, 7]))]),
]
