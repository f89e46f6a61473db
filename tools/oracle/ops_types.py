"""Oracle group ops_types: JAX's answers for the builder's ops on complex, float8, float4 and
int4 values (complex arithmetic and parts, lax.complex, conj, abs, transcendental functions,
comparisons, reductions, dot, the FFT family, converts to and from every float8 type,
float4_e2m1fn and int4, float8 arithmetic).

generate.py writes testdata/oracle/ops_types.json; internal/oracletest/ops_types_test.go builds
each op with package stablehlo and runs it on the CPU PJRT plugin. Tensors of the types beyond
opsutil.PLAIN carry their raw bytes.
"""

import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from opsutil import case

GROUP = "ops_types"

FLOAT8 = ["float8_e5m2", "float8_e4m3fn", "float8_e4m3b11fnuz", "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e4m3",
          "float8_e3m4", "float8_e8m0fnu", "float4_e2m1fn"]


def c64(shape, seed):
    r = np.random.default_rng(seed)
    x = np.round(r.standard_normal(shape) * 8) / 8 + 1j * (np.round(r.standard_normal(shape) * 8) / 8)
    return x.astype(np.complex64)


def generate():
    x, y = c64((2, 3), 1), c64((2, 3), 2)
    re = np.array([[1.5, -2, 0.25], [0, 3, -0.5]], np.float32)
    im = np.array([[0.5, 1, -4], [2, 0, 0.125]], np.float32)
    out = [
        case("complex_arith", "x + y, x - y, x * y, x / y, -x", lambda x, y: (x + y, x - y, x * y, x / y, -x), x, y),
        case("complex_parts", "jnp.real(x), jnp.imag(x), jnp.conj(x), jnp.abs(x)",
             lambda x: (jnp.real(x), jnp.imag(x), jnp.conj(x), jnp.abs(x)), x),
        case("complex_make", "lax.complex(re, im)", lambda a, b: lax.complex(a, b), re, im),
        case("complex_transcendental", "jnp.exp, log, sqrt, tanh, sin, cos of x",
             lambda x: (jnp.exp(x), jnp.log(x), jnp.sqrt(x), jnp.tanh(x), jnp.sin(x), jnp.cos(x)), x),
        case("complex_compare", "x == y, x != y, x == x", lambda x, y: (x == y, x != y, x == x), x, y),
        case("complex_reduce_dot", "jnp.sum(x, axis=1), jnp.prod(x, axis=0), x @ y.T",
             lambda x, y: (jnp.sum(x, axis=1), jnp.prod(x, axis=0), x @ y.T), x, y),
        case("fft", "jnp.fft.fft(x), jnp.fft.ifft(x) over the last axis",
             lambda x: (jnp.fft.fft(x), jnp.fft.ifft(x)), c64((2, 8), 3)),
        case("rfft_irfft", "jnp.fft.rfft(r), jnp.fft.irfft(z, n=8)",
             lambda r, z: (jnp.fft.rfft(r), jnp.fft.irfft(z, n=8)),
             np.arange(16, dtype=np.float32).reshape(2, 8) / 4, c64((2, 5), 4)),
        case("fft2", "jnp.fft.fft2(x), jnp.fft.ifft2(x)", lambda x: (jnp.fft.fft2(x), jnp.fft.ifft2(x)), c64((3, 4, 4), 5)),
    ]
    v = np.array([0.0, 0.3, -1.75, 2.5, 13.0, -0.0625, 100.0, 0.00390625], np.float32)
    for name in FLOAT8:
        t = getattr(ml_dtypes, name)
        src = np.abs(v) + 0.5 if name == "float8_e8m0fnu" else v
        src = np.clip(src, -float(ml_dtypes.finfo(t).max), float(ml_dtypes.finfo(t).max))
        out.append(case("convert_" + name, "x.astype(%s), that back to float32" % name,
                        lambda x, t=t: (x.astype(t), x.astype(t).astype(jnp.float32)), src.astype(np.float32)))
    ints = np.array([-9, -8, -1, 0, 1, 7, 8, 100], np.int32)
    out.append(case("convert_int4", "x.astype(int4), x.astype(uint4), and back to int32",
                    lambda x: (x.astype(jnp.int4), x.astype(jnp.uint4), x.astype(jnp.int4).astype(jnp.int32)), ints))
    a = np.array([0.5, -1.25, 3, 448, -0.125, 2], np.float32).astype(ml_dtypes.float8_e4m3fn)
    b = np.array([1.5, 0.75, -3, 2, 0.0625, 2], np.float32).astype(ml_dtypes.float8_e4m3fn)
    out.append(case("float8_arith", "a + b, a * b, a - b in float8_e4m3fn", lambda a, b: (a + b, a * b, a - b), a, b))
    return out
