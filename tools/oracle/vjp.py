"""The vjp group: JAX's reverse-mode derivatives, for package autodiff.

generate() returns the document generate.py writes to OUTDIR/vjp.json:

- "rules": one case per transpose rule of package autodiff: a lax op on fixed
  inputs, jax.vjp of it, and the cotangents it gives for a fixed output
  cotangent. Inputs are integer-valued or small dyadic floats, so that ops
  whose arithmetic is exact (add, mul, dot, reshapes, reductions of few
  terms) give exact results; "exact" says which cases Go compares bit for bit.
  Cases on complex values (JAX's convention: the plain transpose, no
  conjugation), on float8 and float4 values (whose cotangents are of their
  type) and of the FFTs have inputs, outputs and cotangents of those types:
  such an array carries its raw bytes in "hex", as opsutil writes the types
  beyond its PLAIN, and its values as floats: a complex array's real and
  imaginary parts in turn, a float8 or float4 array's exact values.
  internal/oracletest/vjp_test.go builds the same op with package stablehlo
  (its table of builders is keyed by case name), differentiates it with
  autodiff.VJP and compares.
- "programs": models trained or differentiated under sharding on the 8 CPU
  devices, with jax.value_and_grad and jax.jit's in/out shardings, in Shardy
  and GSPMD mode: the 2-layer MLP of examples/mlp (20 SGD steps; 10 Adam
  steps), its losses step by step; an attention block and a layer norm, their
  loss and gradients.
- "refused": ops jax.vjp refuses to differentiate, on fixed inputs: the error
  JAX raises (its type and first sentence) and whether jax.jvp takes the same
  op forward. internal/oracletest/vjp_test.go requires autodiff to refuse
  them too (ErrNotDifferentiable naming the op). Generation fails if JAX
  starts differentiating one, so the rule can follow.

Every input is built here from formulas Go repeats (examples/mlp.Init; the
test's grid and pattern), never from a random generator Go cannot replay.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P
from opsutil import PLAIN


class VJPError(Exception):
    pass


# ---------------------------------------------------------------------------
# Inputs.

def pattern(shape, k, scale, dtype=np.float32):
    """Go: float32(((i*(7+2k) + 3k) % 17) - 8) / scale, row-major (examples/mlp.Init)."""
    n = math.prod(shape)
    i = np.arange(n, dtype=np.int64)
    v = ((i * (7 + 2 * k) + 3 * k) % 17 - 8).astype(np.float64) / scale
    return v.reshape(shape).astype(dtype)


def arr(x):
    x = np.asarray(x)
    if str(x.dtype) not in PLAIN:
        return narrow_or_complex(x)
    return {"shape": list(x.shape), "dtype": str(x.dtype),
            "values": [float(v) if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else int(v)
                       for v in x.reshape(-1)]}


def narrow_or_complex(x):
    """A complex, float8 or float4 array: its raw bytes and its values as floats (a complex
    array's real and imaginary parts in turn)."""
    flat = np.ascontiguousarray(x).reshape(-1)
    if x.dtype.kind == "c":
        parts = flat.view(np.float32 if x.dtype == np.complex64 else np.float64)
    else:
        parts = flat.astype(np.float64)
    return {"shape": list(x.shape), "dtype": str(x.dtype), "values": [float(v) for v in parts],
            "hex": flat.tobytes().hex()}


def f32(shape, k, scale=4.0):
    return pattern(shape, k, scale)


def pos(shape, k):
    """Positive values 1/8 .. 17/8."""
    return pattern(shape, k, 8.0) + np.float32(17.0 / 16)


def c64(shape, k, scale=4.0):
    """Go: complex(pattern k, pattern k+1)."""
    return (pattern(shape, k, scale) + 1j * pattern(shape, k + 1, scale)).astype(np.complex64)


def cpos(shape, k):
    """complex(pos k, pattern k+1): a real part of 1/8 .. 17/8, never zero."""
    return (pos(shape, k) + 1j * pattern(shape, k + 1, 4.0)).astype(np.complex64)


def cotangent(shape, dtype):
    """pattern(shape, 9, 2) of the output's type; a complex one's imaginary part is
    pattern(shape, 10, 2)."""
    if np.dtype(dtype).kind == "c":
        return (pattern(shape, 9, 2.0) + 1j * pattern(shape, 10, 2.0)).astype(dtype)
    return pattern(shape, 9, 2.0, dtype)


# ---------------------------------------------------------------------------
# Rule cases: name -> (function, inputs, exact). The cotangent is
# cotangent(out.shape, out.dtype).

def _rules():
    a23, b23 = f32((2, 3), 1), f32((2, 3), 2)
    ties_x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    ties_y = np.array([[1, 1, 4], [4, 6, 5]], np.float32)
    dn = lambda lc, rc, lb=(), rb=(): ((lc, rc), (lb, rb))
    return {
        "add": (lax.add, [a23, b23], True),
        "sub": (lax.sub, [a23, b23], True),
        "mul": (lax.mul, [a23, b23], True),
        "mul_same_operand": (lambda x: lax.mul(x, x), [a23], True),
        "div": (lax.div, [a23, pos((2, 3), 3)], False),
        "rem": (lax.rem, [f32((2, 3), 4, 1.0), pos((2, 3), 5)], False),
        "max_ties": (lax.max, [ties_x, ties_y], True),
        "min_ties": (lax.min, [ties_x, ties_y], True),
        "pow": (lax.pow, [pos((2, 3), 6), f32((2, 3), 7)], False),
        "neg": (lax.neg, [a23], True),
        "exp": (lax.exp, [a23], False),
        "log": (lax.log, [pos((2, 3), 8)], False),
        "sqrt": (lax.sqrt, [pos((2, 3), 8)], False),
        "rsqrt": (lax.rsqrt, [pos((2, 3), 8)], False),
        "tanh": (lax.tanh, [a23], False),
        "logistic": (lax.logistic, [a23], False),
        "sin": (lax.sin, [a23], False),
        "cos": (lax.cos, [a23], False),
        "abs_with_zero": (lax.abs, [np.array([[-1.5, 0, 2], [0, -3, 4]], np.float32)], True),
        "sign": (lambda x: lax.mul(x, lax.sign(x)), [a23], True),
        "floor_ceil": (lambda x: lax.add(lax.floor(x), lax.mul(lax.ceil(x), x)), [f32((2, 3), 3, 3.0)], True),
        "select": (lambda x, y: lax.select(lax.gt(x, y), x, lax.mul(y, y)), [a23, b23], True),
        "convert_bf16": (lambda x: lax.convert_element_type(lax.mul(lax.convert_element_type(x, jnp.bfloat16), lax.convert_element_type(x, jnp.bfloat16)), np.float32), [a23], True),
        "broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)), [a23], True),
        "broadcast_unit_dim": (lambda x: lax.broadcast_in_dim(x, (2, 3, 5), (0, 2)), [f32((2, 1), 4)], True),
        "reshape": (lambda x: lax.reshape(x, (3, 2)), [a23], True),
        "transpose": (lambda x: lax.transpose(x, (2, 0, 1)), [f32((2, 3, 4), 5)], True),
        "slice_strided": (lambda x: lax.slice(x, (1, 0), (5, 7), (2, 3)), [f32((5, 7), 6)], True),
        "dynamic_slice": (lambda x: lax.dynamic_slice(x, (np.int32(3), np.int32(1)), (2, 3)), [f32((4, 5), 7)], True),
        "dynamic_update_slice": (lambda x, u: lax.dynamic_update_slice(x, u, (np.int32(1), np.int32(2))), [f32((4, 5), 7), f32((2, 3), 8)], True),
        "pad": (lambda x, v: lax.pad(x, v, ((1, 2, 1), (-1, 1, 2))), [f32((3, 4), 9), np.float32(0.5)], True),
        "concatenate": (lambda x, y: lax.concatenate([x, y, x], 1), [a23, f32((2, 2), 10)], True),
        "dot_general_matmul": (lambda x, y: lax.dot_general(x, y, dn((1,), (0,))), [a23, f32((3, 4), 11)], True),
        "dot_general_batch": (lambda x, y: lax.dot_general(x, y, dn((2,), (1,), (0,), (2,))), [f32((2, 3, 4), 12), f32((5, 4, 2), 13)], True),
        "dot_general_two_contracting": (lambda x, y: lax.dot_general(x, y, dn((2, 1), (0, 2))), [f32((2, 3, 4), 12), f32((4, 5, 3), 14)], True),
        "reduce_sum": (lambda x: lax.reduce_sum(x, (1,)), [f32((3, 4), 15)], True),
        "reduce_max_ties": (lambda x: lax.reduce_max(x, (1,)), [np.array([[1, 3, 3], [2, 2, 2], [5, 1, 0]], np.float32)], True),
        "reduce_min_all": (lambda x: lax.reduce_min(x, (0, 1)), [np.array([[1, 0, 3], [0, 2, 0]], np.float32)], True),
        "stop_gradient": (lambda x: lax.mul(x, lax.stop_gradient(x)), [a23], True),
        "clamp_ties": (lambda x: lax.clamp(np.float32(-1), x, np.float32(1)), [np.array([[-2, -1, 0], [1, 2, 0.5]], np.float32)], True),
        "clamp_tensor_bounds": (lambda lo, x, hi: lax.clamp(lo, x, hi), [f32((2, 3), 4, 8.0) - np.float32(0.5), a23, f32((2, 3), 3, 8.0) + np.float32(0.5)], True),
        "expm1": (lax.expm1, [a23], False),
        "log1p": (lax.log1p, [pos((2, 3), 8)], False),
        "tan": (lax.tan, [f32((2, 3), 1, 8.0)], False),
        "cbrt": (lax.cbrt, [pos((2, 3), 8)], False),
        "erf": (lax.erf, [a23], False),
        "erf_inv": (lax.erf_inv, [f32((2, 3), 1, 16.0)], False),
        "gelu_exact": (lambda x: jax.nn.gelu(x, approximate=False), [a23], False),
        "relu_at_zero": (jax.nn.relu, [np.array([[-1, 0, 2], [0, 3, -4]], np.float32)], True),
        "atan2": (lax.atan2, [a23, b23], False),
        "take": (lambda x: x[jnp.array([3, 0, 3, 1, -1])], [f32((4, 3), 2)], True),
        "scatter_add_dropped": (lambda x, u: x.at[jnp.array([2, 7, 2])].add(u), [f32((4, 3), 3), f32((3, 3), 4)], True),
        "scatter_set_repeated": (lambda x, u: x.at[jnp.array([2, 0, 2])].set(u), [f32((4, 3), 3), f32((3, 3), 4)], True),
        "max_pool_ties": (lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID"),
                          [np.array([[1, 3, 3], [3, 2, 0], [0, 3, 3]], np.float32)], True),
        "min_pool_same": (lambda x: lax.reduce_window(x, np.inf, lax.min, (2, 3), (2, 1), "SAME"), [f32((5, 4), 5)], True),
        "sum_pool_same": (lambda x: lax.reduce_window(x, np.float32(0), lax.add, (1, 2, 3, 1), (1, 2, 1, 1), "SAME"), [f32((1, 5, 6, 2), 6)], True),
        "cond_captures": (lambda x, y: lax.cond(jnp.sum(x) > 0, lambda: lax.exp(x) * y, lambda: lax.tanh(y)), [a23, b23], False),
        "cond_else": (lambda x, y: lax.cond(jnp.sum(x) > 100, lambda: lax.exp(x) * y, lambda: lax.tanh(y)), [a23, b23], False),
        "fori_loop": (lambda x, y: _fori(x, y), [a23, f32((2, 3), 2, 8.0)], False),
        "scan": (lambda xs, c: _scan(xs, c), [f32((3, 2), 4, 8.0), f32((2,), 5, 8.0)], False),
        "sort": (lambda x: lax.sort(x, dimension=1), [f32((3, 4), 6)], True),
        "top_k": (lambda x: lax.top_k(x, 2)[0], [f32((3, 5), 7)], True),
        "rev": (lambda x: lax.rev(x, (0, 1)), [f32((3, 4), 8)], True),
        "cumsum": (lambda x: lax.cumsum(x, axis=1), [f32((3, 4), 9)], True),
        "cumsum_reverse": (lambda x: lax.cumsum(x, axis=0, reverse=True), [f32((3, 4), 9)], True),
        "conv_nhwc_same": (lambda x, k: lax.conv_general_dilated(x, k, (2, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
                           [f32((2, 5, 6, 3), 10), f32((3, 2, 3, 4), 11)], True),
        "conv_nchw_dilated": (lambda x, k: lax.conv_general_dilated(x, k, (1, 2), ((1, 0), (0, 2)), lhs_dilation=(2, 1), rhs_dilation=(1, 2),
                                                                    dimension_numbers=("NCHW", "OIHW", "NCHW")),
                              [f32((1, 2, 7, 6), 12), f32((3, 2, 2, 2), 13)], True),
        "conv_depthwise": (lambda x, k: lax.conv_general_dilated(x, k, (1,), "VALID", dimension_numbers=("NWC", "WIO", "NWC"), feature_group_count=4),
                           [f32((2, 5, 4), 14), f32((3, 1, 8), 15)], True),
        "reduce_prod_zeros": (lambda x: lax.reduce_prod(x, (1,)),
                              [np.array([[1, 2, -0.5, 3, 0.5], [2, 0, 3, -1, 2], [0, 1, 2, 0, 4]], np.float32)], True),
        "reduce_prod_dims02": (lambda x: lax.reduce_prod(x, (0, 2)), [pos((2, 3, 2), 4) - np.float32(1)], True),
        "cumprod_zeros": (lambda x: lax.cumprod(x, axis=1), [np.array([[1, 2, 0, 3, -1], [0.5, -2, 2, 0, 0], [2, 1, 0.5, 4, -1]], np.float32)], True),
        "cumprod_reverse": (lambda x: lax.cumprod(x, axis=0, reverse=True), [pos((5, 2), 5)], True),
        "cummax_ties": (lambda x: lax.cummax(x, axis=1), [np.array([[1, 3, 3, 2, 3, 5], [2, 2, 2, 1, 4, 4], [5, 1, 5, 0, 5, 5]], np.float32)], True),
        "cummin_reverse_ties": (lambda x: lax.cummin(x, axis=0, reverse=True), [np.array([[1, 3], [0, 3], [2, 1], [0, 1], [4, 1]], np.float32)], True),
        "max_pool_hvp_ties": (lambda x, v: _pool_hvp(lambda y: lax.reduce_window(y, -np.inf, lax.max, (2, 2), (1, 1), "VALID"), x, v),
                              [np.array([[1, 3, 3], [3, 2, 0], [0, 3, 3]], np.float32), f32((3, 3), 2)], True),
        "min_pool_hvp_same": (lambda x, v: _pool_hvp(lambda y: lax.reduce_window(y, np.inf, lax.min, (2, 3), (2, 1), "SAME"), x, v),
                              [f32((5, 4), 5), f32((5, 4), 6)], True),
        "scatter_mul_unique": (lambda x, u: x.at[jnp.array([2, 0, 3])].multiply(u, unique_indices=True),
                               [np.array([[1, 2, 0], [-1, 0.5, 2], [3, -2, 1], [0, 4, 0.5]], np.float32), f32((3, 3), 4)], True),
        "scatter_mul_repeated_operand": (lambda x: x.at[jnp.array([2, 0, 2])].multiply(f32((3, 3), 4)), [f32((4, 3), 3)], True),
        "scatter_max_ties": (lambda x, u: x.at[jnp.array([2, 0, 2, 1])].max(u),
                             [np.array([[1, 2, 3], [4, 5, 6], [2, 2, 0], [1, 1, 1]], np.float32),
                              np.array([[2, 1, 3], [4, 1, 7], [2, 3, 0], [4, 5, 6]], np.float32)], True),
        "scatter_min_dropped": (lambda x, u: x.at[jnp.array([1, 5, 1])].min(u),
                                [np.array([[1, 2, 3], [4, 5, 6], [2, 2, 0], [1, 1, 1]], np.float32),
                                 np.array([[4, 1, 7], [0, 0, 0], [3, 1, 6]], np.float32)], True),
        "reduce_window_sum_dilated": (lambda x: lax.reduce_window(x, np.float32(0), lax.add, (2, 2), (2, 1), ((1, 0), (0, 1)),
                                                                  base_dilation=(2, 1), window_dilation=(1, 2)), [f32((7, 6), 7)], True),
        **_complex_rules(),
        **_narrow_rules(),
    }


def _complex_rules():
    """Cases on complex values: JAX's cotangents are the plain transpose, ct * y for x * y."""
    c23, d23 = c64((2, 3), 1), c64((2, 3), 3)
    dn = ((1,), (0,)), ((), ())
    fft = lax.FftType
    abs_in = np.array([[3 + 4j, 0, -1.5 + 2j], [0.5, -4 + 3j, 2j]], np.complex64)
    return {
        "real": (lax.real, [c23], True),
        "imag": (lax.imag, [c23], True),
        "complex": (lax.complex, [f32((2, 3), 1), f32((2, 3), 2)], True),
        "conj": (lax.conj, [c23], True),
        "add_complex": (lax.add, [c23, d23], True),
        "mul_complex": (lax.mul, [c23, d23], True),
        "div_complex": (lax.div, [c23, cpos((2, 3), 3)], False),
        "pow_complex": (lax.pow, [cpos((2, 3), 6), c64((2, 3), 7, 8.0)], False),
        "exp_complex": (lax.exp, [c23], False),
        "log_complex": (lax.log, [cpos((2, 3), 8)], False),
        "sin_complex": (lax.sin, [c23], False),
        "cos_complex": (lax.cos, [c23], False),
        "tanh_complex": (lax.tanh, [c64((2, 3), 1, 8.0)], False),
        "sqrt_complex": (lax.sqrt, [cpos((2, 3), 8)], False),
        "rsqrt_complex": (lax.rsqrt, [cpos((2, 3), 8)], False),
        "logistic_complex": (lax.logistic, [c64((2, 3), 1, 8.0)], False),
        "abs_complex_with_zero": (lax.abs, [abs_in], False),
        # convert_element_type from complex to real takes the real part; its transpose is
        # complex(ct, 0), and real to complex's transpose the cotangent's real part.
        "convert_complex_round_trip": (lambda x, z: lax.convert_element_type(lax.mul(lax.convert_element_type(x, np.complex64), z), np.float32),
                                       [f32((2, 3), 1), c23], True),
        "dot_general_complex": (lambda x, y: lax.dot_general(x, y, dn), [c23, c64((3, 4), 5)], True),
        "reduce_sum_complex": (lambda x: lax.reduce_sum(x, (1,)), [c64((3, 4), 6)], True),
        # jax.grad of a real loss of a complex input: the cotangent of the scalar loss is 1.
        "grad_abs_squared": (lambda z: lax.reduce_sum(lax.mul(lax.abs(z), lax.abs(z)), (0, 1)), [abs_in], False),
        "grad_real_z_conj_z": (lambda z: lax.real(lax.reduce_sum(lax.mul(z, lax.conj(z)), (0, 1))), [c23], True),
        "fft": (lambda x: lax.fft(x, fft.FFT, (4,)), [c64((2, 4), 2)], False),
        "ifft_2d": (lambda x: lax.fft(x, fft.IFFT, (2, 4)), [c64((2, 4), 3)], False),
        "rfft_even": (lambda x: lax.fft(x, fft.RFFT, (6,)), [f32((2, 6), 4)], False),
        "rfft_odd_2d": (lambda x: lax.fft(x, fft.RFFT, (3, 5)), [f32((2, 3, 5), 5)], False),
        "irfft_even": (lambda x: lax.fft(x, fft.IRFFT, (6,)), [c64((2, 4), 6)], False),
        "irfft_odd_2d": (lambda x: lax.fft(x, fft.IRFFT, (3, 5)), [c64((3, 3), 7)], False),
    }


def _narrow_rules():
    """Cases on float8 and float4 values, ordinary floats to JAX: their cotangents are of
    their own type, and a conversion's cotangent is converted back."""
    e4, e5, f4 = jnp.float8_e4m3fn, jnp.float8_e5m2, jnp.float4_e2m1fn
    to_and_back = lambda t: lambda x: lax.convert_element_type(lax.convert_element_type(x, t), np.float32)
    return {
        "convert_f8e4m3fn": (to_and_back(e4), [f32((2, 3), 1, 3.0)], True),
        "convert_f8e5m2": (to_and_back(e5), [f32((2, 3), 1, 3.0)], True),
        "mul_f8e4m3fn": (lax.mul, [pattern((2, 3), 1, 4.0, e4), pattern((2, 3), 2, 4.0, e4)], True),
        "add_f8e5m2": (lax.add, [pattern((2, 3), 1, 4.0, e5), pattern((2, 3), 2, 4.0, e5)], True),
        "reduce_sum_f8e4m3fn": (lambda x: lax.reduce_sum(lax.mul(x, x), (1,)), [pattern((2, 3), 3, 4.0, e4)], True),
        "mul_f4e2m1fn": (lax.mul, [pattern((2, 3), 1, 2.0, f4), pattern((2, 3), 2, 4.0, f4)], True),
    }


def _pool_hvp(pool, x, v):
    """The Hessian-vector product of sum(pool(x)^3) at x along v, reverse over reverse:
    differentiating it transposes the pool's select_and_scatter (and, for the cotangents
    vjp asks for, the select_and_gather that transposes)."""
    def loss(y):
        m = pool(y)
        return jnp.sum(m * m * m)
    return jax.grad(lambda y: jnp.sum(jax.grad(loss)(y) * v))(x)


def _fori(x, y):
    def body(i, c):
        h = jnp.tanh(c[0] * y + i.astype(np.float32))
        return h, c[1] + jnp.sum(h)
    h, t = lax.fori_loop(0, 4, body, (x, np.float32(0)))
    return jnp.sum(h) + t


def _scan(xs, c):
    def body(c, x):
        h = jnp.tanh(c * np.float32(0.9) + x)
        return h, h * h
    c, ys = lax.scan(body, c, xs)
    return jnp.sum(c) + jnp.sum(ys)


def gen_rule(name, fn, inputs, exact):
    inputs = [np.asarray(x) for x in inputs]
    out, vjp_fn = jax.vjp(fn, *[jnp.asarray(x) for x in inputs])
    out = np.asarray(out)
    ct = cotangent(out.shape, out.dtype)
    grads = vjp_fn(jnp.asarray(ct))
    return {"name": name, "exact": exact, "inputs": [arr(x) for x in inputs], "out": arr(out),
            "cotangent": arr(ct), "grads": [arr(np.asarray(g)) for g in grads]}


# ---------------------------------------------------------------------------
# Refused cases: name -> (description, function, input). lax.reduce_window recognises
# only lax.add, lax.max and lax.min with their identities as init (its monoid
# reducers, which have transpose rules); any other computation, lax.mul included,
# binds the generic reduce_window primitive, which has a JVP rule and no transpose.
# lax.clamp's JVP compares the operand with its bounds (lax.gt), which complex
# values refuse, so neither jax.vjp nor jax.jvp differentiates a complex clamp.

def _refused():
    zero_in = np.array([1, 2, 0, 3, 4], np.float32)
    return {
        "reduce_window_prod": ("lax.reduce_window(x, 1., lax.mul, (2,), (1,), 'VALID')",
                               lambda x: lax.reduce_window(x, np.float32(1), lax.mul, (2,), (1,), "VALID"), zero_in),
        "reduce_window_func": ("lax.reduce_window(x, 2., lax.max, (3, 2), (1, 2), ((1, 1), (0, 0))) (init 2, not max's identity)",
                               lambda x: lax.reduce_window(x, np.float32(2), lax.max, (3, 2), (1, 2), ((1, 1), (0, 0))),
                               f32((4, 4), 8)),
        "clamp_complex": ("lax.real(lax.clamp(0j, lax.complex(x, x), 2+0j))",
                          lambda x: lax.real(lax.clamp(np.complex64(0), lax.complex(x, x), np.complex64(2))), f32((2, 3), 1)),
    }


def gen_refused(name, desc, fn, x):
    x = jnp.asarray(x)
    try:
        out, vjp_fn = jax.vjp(fn, x)
        vjp_fn(jnp.ones_like(out))
    except Exception as e:  # noqa: BLE001 -- any refusal is recorded
        msg = str(e).split(". ")[0].strip()
        error = "%s: %s" % (type(e).__name__, msg)
    else:
        raise VJPError("%s: jax.vjp differentiates %s now; add a rule" % (name, desc))
    try:
        jax.jvp(fn, (x,), (jnp.ones_like(x),))
        jvp = True
    except Exception:  # noqa: BLE001
        jvp = False
    return {"name": name, "jax": desc, "error": error, "jvp": jvp}


# ---------------------------------------------------------------------------
# Programs under sharding. The mesh is 2x4 ("data", "model") over devices 0..7.

SIZES = dict(batch=16, inp=8, hidden=32, out=4)  # examples/mlp.Small


def mlp_init():
    s = SIZES
    shapes = [(s["inp"], s["hidden"]), (s["hidden"],), (s["hidden"], s["out"]), (s["out"],),
              (s["batch"], s["inp"]), (s["batch"], s["out"])]
    return [pattern(sh, k, 64.0 if k < 4 else 8.0) for k, sh in enumerate(shapes)]


MLP_SPECS = [P(None, "model"), P("model"), P("model", None), P(), P("data", None), P("data", None)]


def mlp_loss(w1, b1, w2, b2, x, y):
    h = jnp.tanh(x @ w1 + b1)
    p = h @ w2 + b2
    d = p - y
    return jnp.sum(d * d) / np.float32(d.size)


def with_partitioner(gspmd, fn):
    prev = jax.config.jax_use_shardy_partitioner
    jax.config.update("jax_use_shardy_partitioner", not gspmd)
    try:
        return fn()
    finally:
        jax.config.update("jax_use_shardy_partitioner", prev)


def the_mesh():
    return Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("data", "model"))


def train_sgd(gspmd, steps=20, lr=0.1):
    mesh = the_mesh()
    sh = [NamedSharding(mesh, s) for s in MLP_SPECS]

    def step(w1, b1, w2, b2, x, y):
        loss, g = jax.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3))(w1, b1, w2, b2, x, y)
        new = [w - g_ * np.float32(lr) for w, g_ in zip((w1, b1, w2, b2), g)]
        return (loss, *new)

    def go():
        f = jax.jit(step, in_shardings=tuple(sh), out_shardings=(NamedSharding(mesh, P()), *sh[:4]),
                    donate_argnums=(0, 1, 2, 3))
        args = [jax.device_put(a, s) for a, s in zip(mlp_init(), sh)]
        losses = []
        for _ in range(steps):
            loss, *params = f(*args)
            losses.append(float(np.asarray(loss)))
            args = params + args[4:]
        return losses
    return with_partitioner(gspmd, go)


def train_adam(gspmd, steps=10, lr=0.01, b1=0.9, b2=0.999, eps=1e-8):
    mesh = the_mesh()
    sh = [NamedSharding(mesh, s) for s in MLP_SPECS]
    rep = NamedSharding(mesh, P())

    def step(p, m, v, t, x, y):
        loss, g = jax.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3))(*p, x, y)
        c1 = np.float32(1) - np.float32(b1) ** t
        c2 = np.float32(1) - np.float32(b2) ** t
        ms = [np.float32(b1) * mi + np.float32(1 - b1) * gi for mi, gi in zip(m, g)]
        vs = [np.float32(b2) * vi + np.float32(1 - b2) * (gi * gi) for vi, gi in zip(v, g)]
        ps = [pi - np.float32(lr) * ((mi / c1) / (jnp.sqrt(vi / c2) + np.float32(eps)))
              for pi, mi, vi in zip(p, ms, vs)]
        return loss, ps, ms, vs

    def go():
        f = jax.jit(step, in_shardings=(sh[:4], sh[:4], sh[:4], rep, sh[4], sh[5]),
                    out_shardings=(rep, sh[:4], sh[:4], sh[:4]), donate_argnums=(0, 1, 2))
        init = mlp_init()
        p = [jax.device_put(a, s) for a, s in zip(init[:4], sh)]
        m = [jax.device_put(np.zeros_like(a), s) for a, s in zip(init[:4], sh)]
        v = [jax.device_put(np.zeros_like(a), s) for a, s in zip(init[:4], sh)]
        x, y = jax.device_put(init[4], sh[4]), jax.device_put(init[5], sh[5])
        losses = []
        for t in range(1, steps + 1):
            loss, p, m, v = f(p, m, v, jax.device_put(np.float32(t), rep), x, y)
            losses.append(float(np.asarray(loss)))
        return losses
    return with_partitioner(gspmd, go)


ATTN = dict(batch=4, seq=8, dim=16)
ATTN_SPECS = [P("data", None, None), P(None, "model"), P(None, "model"), P(None, "model"), P("model", None)]


def attention_inputs():
    b, t, d = ATTN["batch"], ATTN["seq"], ATTN["dim"]
    return [pattern((b, t, d), 0, 8.0)] + [pattern((d, d), k, 32.0) for k in range(1, 5)]


def attention_loss(x, wq, wk, wv, wo):
    q, k, v = x @ wq, x @ wk, x @ wv
    s = jnp.einsum("btd,bsd->bts", q, k) / np.float32(math.sqrt(ATTN["dim"]))
    m = lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True))
    e = jnp.exp(s - m)
    p = e / jnp.sum(e, axis=-1, keepdims=True)
    o = jnp.einsum("bts,bsd->btd", p, v) @ wo
    return jnp.sum(jnp.tanh(o))


CONVNET_SPECS = [P("data", None, None, None), P(None, None, None, "model"), P("model"), P("model", None), P(), P("data", None)]


def convnet_inputs():
    shapes = [(8, 8, 8, 3), (3, 3, 3, 8), (8,), (128, 4), (4,), (8, 4)]
    return [pattern(sh, k, 8.0) for k, sh in enumerate(shapes)]


def convnet_loss(x, k1, b1, w2, b2, y):
    h = jnp.tanh(lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")) + b1)
    h = lax.reduce_window(h, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    out = jnp.reshape(h, (8, 128)) @ w2 + b2
    d = out - y
    return jnp.sum(d * d) / np.float32(d.size)


LN = dict(batch=8, dim=16)
LN_SPECS = [P("data", None), P(), P()]


def layer_norm_inputs():
    return [pattern((LN["batch"], LN["dim"]), 0, 4.0), pattern((LN["dim"],), 1, 8.0) + np.float32(1),
            pattern((LN["dim"],), 2, 8.0)]


def layer_norm_loss(x, gamma, beta):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    y = (x - mean) * lax.rsqrt(var + np.float32(1e-5)) * gamma + beta
    t = pattern(y.shape, 5, 8.0)
    return jnp.sum(jnp.tanh(y) * t)


def grads_of(loss_fn, inputs, specs, gspmd):
    mesh = the_mesh()
    sh = [NamedSharding(mesh, s) for s in specs]

    def go():
        n = len(inputs)
        f = jax.jit(jax.value_and_grad(loss_fn, argnums=tuple(range(n))), in_shardings=tuple(sh),
                    out_shardings=(NamedSharding(mesh, P()), tuple(sh)))
        loss, g = f(*[jax.device_put(a, s) for a, s in zip(inputs, sh)])
        return {"loss": float(np.asarray(loss)), "grads": [arr(np.asarray(x)) for x in g]}
    return with_partitioner(gspmd, go)


# shard_map programs on the same 2x4 mesh: each is a loss of one or two float inputs whose
# gradient goes through a collective's transpose (or the implicit pvary's psum).

def smap(fn, in_specs, out_specs, axis_names=None):
    kw = {} if axis_names is None else {"axis_names": set(axis_names)}
    return jax.shard_map(fn, mesh=the_mesh(), in_specs=in_specs, out_specs=out_specs, **kw)


def tloss(y):
    return jnp.sum(jnp.tanh(y) * pattern(y.shape, 5, 8.0))


def a2a_untiled_01(a):
    """lax.all_to_all(a, "model", 0, 1, tiled=False) with tiled=True."""
    return lax.squeeze(lax.all_to_all(jnp.expand_dims(a, 2), "model", 0, 2, tiled=True), (0,))


def check_a2a_untiled():
    x = pattern((4, 8), 0, 8.0)
    want = smap(lambda a: lax.all_to_all(a, "model", 0, 1, tiled=False), (P(None, "model"),), P("model", None))(x)
    got = smap(a2a_untiled_01, (P(None, "model"),), P("model", None))(x)
    if not np.array_equal(np.asarray(want), np.asarray(got)):
        raise VJPError("a2a_untiled_01 differs from lax.all_to_all(tiled=False)")


SMAP = {
    # row-parallel matmul: x P('data', 'model') @ w P('model', None), psum over model.
    "smap_psum_matmul": (lambda x, w: tloss(smap(lambda a, b: lax.psum(a @ b, "model"),
                                                 (P("data", "model"), P("model", None)), P("data", None))(x, w)),
                         [((8, 16), P("data", "model")), ((16, 4), P("model", None))], False),
    # data parallel with a replicated weight: its cotangent is summed over data.
    "smap_replicated_weight": (lambda x, w: smap(lambda a, b: lax.psum(jnp.sum(jnp.tanh(a @ b)), "data"),
                                                 (P("data", None), P()), P())(x, w),
                               [((8, 16), P("data", None)), ((16, 4), P())], False),
    # a loop in the body whose body captures the replicated weight.
    "smap_loop_replicated_weight": (lambda x, w: smap(lambda a, b: lax.psum(jnp.sum(lax.fori_loop(0, 3, lambda i, h: jnp.tanh(h @ b), a)), "data"),
                                                      (P("data", None), P()), P())(x, w),
                                    [((8, 4), P("data", None)), ((4, 4), P())], False),
    "smap_psum_replicated": (lambda w: tloss(smap(lambda b: lax.psum(b, "model"), (P(),), P())(w)),
                             [((4, 4), P())], False),
    "smap_all_gather": (lambda x: tloss(smap(lambda a: lax.all_gather(a, "model", axis=1, tiled=True) * a[:, :1],
                                             (P(None, "model"),), P("model", None))(x)),
                        [((4, 8), P(None, "model"))], False),
    "smap_psum_scatter": (lambda x: tloss(smap(lambda a: lax.psum_scatter(a * a, "model", scatter_dimension=0, tiled=True),
                                               (P("data", None),), P(("data", "model"), None))(x)),
                          [((16, 4), P("data", None))], False),
    "smap_ppermute": (lambda x: tloss(smap(lambda a: lax.ppermute(a, "model", [(0, 1), (1, 2), (2, 3), (3, 0)]) * a
                                           + lax.ppermute(a, "model", [(0, 2), (1, 3)]),
                                           (P("model", None),), P("model", None))(x)),
                      [((8, 4), P("model", None))], False),
    "smap_all_to_all": (lambda x: tloss(smap(lambda a: lax.all_to_all(a, "model", 0, 1, tiled=True) * np.float32(2),
                                             (P(None, "model"),), P(None, "model"))(x)),
                        [((8, 8), P(None, "model"))], False),
    # tiled=False: the gathered blocks stack in a new dimension; all_to_all drops its split
    # dimension and stacks the received slices in a new one.
    "smap_all_gather_untiled": (lambda x: tloss(smap(lambda a: lax.all_gather(a, "model", axis=1, tiled=False) * np.float32(2),
                                                     (P(None, "model"),), P(None, None, "model"))(x)),
                                [((4, 8), P(None, "model"))], False),
    # JAX 0.8.1's transpose of all_to_all with tiled=False and split != concat re-inserts
    # the dimensions and returns a cotangent of the wrong shape, so the gradient is JAX's of
    # the same function written with tiled=True (checked equal to tiled=False below).
    "smap_all_to_all_untiled": (lambda x: tloss(smap(lambda a: a2a_untiled_01(a) * np.float32(2),
                                                     (P(None, "model"),), P("model", None))(x)),
                                [((4, 8), P(None, "model"))], False),
    # a shard_map over "model" only: "data" stays with the partitioner (Shardy only; GSPMD
    # shard_maps cover every axis).
    "smap_partial_manual": (lambda x, w: tloss(smap(lambda a, b: lax.psum(a @ b, "model"),
                                                    (P(None, "model"), P("model", None)), P(),
                                                    axis_names=["model"])(x, w)),
                            [((8, 16), P("data", "model")), ((16, 4), P("model", None))], True),
}


def gen_smap(gspmd):
    check_a2a_untiled()
    out = {}
    for name, (fn, args, shardy_only) in SMAP.items():
        if gspmd and shardy_only:
            continue
        inputs = [pattern(shape, k, 8.0) for k, (shape, _) in enumerate(args)]
        out[name] = grads_of(fn, inputs, [spec for _, spec in args], gspmd)
    return out


def gen_programs():
    out = {}
    for mode, gspmd in (("shardy", False), ("gspmd", True)):
        for name, v in gen_smap(gspmd).items():
            out[name + "_" + mode] = v
    for mode, gspmd in (("shardy", False), ("gspmd", True)):
        out["mlp_sgd_" + mode] = {"losses": train_sgd(gspmd)}
        out["mlp_adam_" + mode] = {"losses": train_adam(gspmd)}
        out["attention_" + mode] = grads_of(attention_loss, attention_inputs(), ATTN_SPECS, gspmd)
        out["layer_norm_" + mode] = grads_of(layer_norm_loss, layer_norm_inputs(), LN_SPECS, gspmd)
        out["convnet_" + mode] = grads_of(convnet_loss, convnet_inputs(), CONVNET_SPECS, gspmd)
    for name in ("mlp_sgd", "mlp_adam"):
        a, b = out[name + "_shardy"]["losses"], out[name + "_gspmd"]["losses"]
        if not np.allclose(a, b, rtol=1e-5):
            raise VJPError("%s: Shardy and GSPMD losses differ: %s vs %s" % (name, a, b))
    return out


def generate():
    rules = _rules()
    cases = [gen_rule(name, *rules[name]) for name in sorted(rules)]
    refused = _refused()
    return {"rules": cases, "refused": [gen_refused(name, *refused[name]) for name in sorted(refused)],
            "programs": gen_programs()}
