"""Oracle group ops_data: JAX's answers for stablehlo's data-movement, convolution,
window, bit, math and random ops (gather/scatter, conv_general_dilated,
reduce_window, shifts, bitcast_convert, erf, rng_bit_generator) and package random's
jax.random.

generate.py imports every tools/oracle/ops_*.py module and writes
testdata/oracle/<GROUP>.json from its generate(). Each case runs one JAX
function, under jax.jit on the CPU backend, on fixed inputs; the Go test
internal/oracletest/ops_data_test.go builds the same op with package stablehlo or random
(its builder is found by the case's name), runs it on the CPU PJRT plugin and
compares. Tensors are written by opsutil.tensor.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from opsutil import case

GROUP = "ops_data"


def f32(*shape, start=0, scale=1.0):
    """Small exact float32 values: start, start+1, ... times scale, reshaped."""
    n = int(np.prod(shape))
    return (np.arange(start, start + n, dtype=np.float32) * np.float32(scale)).reshape(shape)


def gather_scatter():
    out = []
    x = f32(5, 3)
    idx = np.array([[0, -1, 7], [2, -6, 4]], np.int32)
    out.append(case("take_axis0", "x[idx] (negative indices wrap, out-of-range clamp)", lambda x, i: x[i], x, idx))
    x3 = f32(2, 4, 3)
    idx8 = np.array([3, -1, 0, 9, -9, 1], np.int8)
    out.append(case("take_axis1_int8", "x[:, idx] with int8 indices", lambda x, i: x[:, i], x3, idx8))
    idxu = np.array([1, 200, 0], np.uint8)
    out.append(case("take_axis2_uint8", "x[:, :, idx] with uint8 indices", lambda x, i: x[:, :, i], x3, idxu))
    out.append(case("take_scalar_index", "x[:, i] with a 0-d index", lambda x, i: x[:, i], x3, np.array(-2, np.int32)))

    # lax.gather with the StableHLO spec's example (batching dims), in clip mode: XLA's
    # own clamping, which stablehlo.Gather leaves in place.
    operand = np.arange(1, 49, dtype=np.int32).reshape(2, 3, 4, 2)
    starts = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                       [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], np.int32)
    gdn = lax.GatherDimensionNumbers(offset_dims=(3, 4), collapsed_slice_dims=(1,), start_index_map=(2, 1),
                                     operand_batching_dims=(0,), start_indices_batching_dims=(1,))
    out.append(case("gather_batching", "lax.gather(spec example, mode='clip')",
                    lambda x, i: lax.gather(x, i, gdn, (1, 1, 2, 2), mode="clip"), operand, starts))
    pts = np.array([[0, 2], [4, 0], [3, 1], [9, 9], [1, 1]], np.int32)
    gpts = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
    out.append(case("gather_points", "lax.gather(x, pts, collapsed (0, 1), mode='clip'): x[pts[:,0], pts[:,1]]",
                    lambda x, i: lax.gather(x, i, gpts, (1, 1), mode="clip"), x, pts))
    win = np.array([[1], [3], [-2]], np.int32)
    gwin = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0,))
    out.append(case("gather_windows", "lax.gather(x, starts, 2x2 windows, mode='clip')",
                    lambda x, i: lax.gather(x, i, gwin, (2, 2), mode="clip"), x, win))

    sidx = np.array([0, 3, -1, 9, 3, -7], np.int32)
    upd = f32(6, 3, start=100)
    out.append(case("scatter_add", "x.at[idx].add(u) (duplicates add, negative wrap, out-of-range dropped)",
                    lambda x, i, u: x.at[i].add(u), x, sidx, upd))
    out.append(case("scatter_add_scalar", "x.at[idx].add(1.0)", lambda x, i: x.at[i].add(1.0), x, sidx))
    xi = np.arange(10, dtype=np.int32).reshape(5, 2)
    out.append(case("scatter_add_int2d", "x.at[idx].add(u), int32, 2-D indices",
                    lambda x, i, u: x.at[i].add(u), xi, np.array([[4, 4], [0, -5]], np.int32),
                    np.arange(8, dtype=np.int32).reshape(2, 2, 2) * 10))
    uidx = np.array([4, 0, 2], np.int32)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    for nm, expr, fn in [
            ("scatter_set", "lax.scatter(x, idx[:, None], u, rows, unique_indices=True)",
             lambda x, i, u: lax.scatter(x, i[:, None], u, dn, unique_indices=True)),
            ("scatter_max", "lax.scatter_max(x, idx[:, None], u, rows)", lambda x, i, u: lax.scatter_max(x, i[:, None], u, dn)),
            ("scatter_min", "lax.scatter_min(x, idx[:, None], u, rows)", lambda x, i, u: lax.scatter_min(x, i[:, None], u, dn)),
            ("scatter_mul", "lax.scatter_mul(x, idx[:, None], u, rows)", lambda x, i, u: lax.scatter_mul(x, i[:, None], u, dn)),
            ("scatter_func_sub", "lax.scatter_sub(x, idx[:, None], u, rows)", lambda x, i, u: lax.scatter_sub(x, i[:, None], u, dn))]:
        out.append(case(nm, expr, fn, x, uidx, f32(3, 3, start=-4, scale=2.5)))
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(3, 4), inserted_window_dims=(1,),
                                      scatter_dims_to_operand_dims=(2, 1), operand_batching_dims=(0,),
                                      scatter_indices_batching_dims=(1,))
    out.append(case("scatter_batching", "lax.scatter_add(spec example)",
                    lambda x, i, u: lax.scatter_add(x, i, u, sdn), operand, starts,
                    np.ones((2, 2, 3, 2, 2), np.int32)))
    return out


def ints(seed, shape, lo, hi, dtype=np.float32):
    """Deterministic small integers in [lo, hi] as dtype: float sums of them are exact."""
    return np.random.default_rng(seed).integers(lo, hi + 1, size=shape).astype(dtype)


def conv():
    out = []
    cg = lax.conv_general_dilated
    x = ints(1, (2, 5, 6, 3), -3, 3)
    w = ints(2, (3, 3, 3, 4), -2, 2)
    out.append(case("conv_nhwc_same", "conv_general_dilated(x, w, (1, 1), 'SAME', dimension_numbers=('NHWC', 'HWIO', 'NHWC'))",
                    lambda x, w: cg(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), x, w))
    out.append(case("conv_nhwc_same_stride2", "conv_general_dilated(x, w, (2, 2), 'SAME', NHWC/HWIO/NHWC)",
                    lambda x, w: cg(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")), x, w))
    xc = ints(3, (1, 2, 7, 7), -3, 3)
    wc = ints(4, (3, 2, 3, 2), -2, 2)
    out.append(case("conv_nchw_pad_dilation", "conv_general_dilated(x, w, (2, 1), ((1, 2), (0, 1)), rhs_dilation=(2, 1), NCHW/OIHW/NCHW)",
                    lambda x, w: cg(x, w, (2, 1), ((1, 2), (0, 1)), rhs_dilation=(2, 1),
                                    dimension_numbers=("NCHW", "OIHW", "NCHW")), xc, wc))
    out.append(case("conv_lhs_dilation", "conv_general_dilated(x, w, (1, 1), ((2, 2), (1, 1)), lhs_dilation=(2, 2), NHWC/HWIO/NHWC)",
                    lambda x, w: cg(x, w, (1, 1), ((2, 2), (1, 1)), lhs_dilation=(2, 2),
                                    dimension_numbers=("NHWC", "HWIO", "NHWC")), x, w))
    xd = ints(5, (1, 5, 5, 4), -3, 3)
    out.append(case("conv_depthwise", "conv_general_dilated(x, w, (1, 1), 'SAME', feature_group_count=4, NHWC/HWIO/NHWC)",
                    lambda x, w: cg(x, w, (1, 1), "SAME", feature_group_count=4,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC")), xd, ints(6, (3, 3, 1, 4), -2, 2)))
    out.append(case("conv_feature_groups", "conv_general_dilated(x, w, (1, 1), 'VALID', feature_group_count=2, NHWC/HWIO/NHWC)",
                    lambda x, w: cg(x, w, (1, 1), "VALID", feature_group_count=2,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC")), xd, ints(7, (2, 2, 2, 6), -2, 2)))
    out.append(case("conv_batch_groups", "conv_general_dilated(x, w, (1, 1), 'VALID', batch_group_count=2, NHWC/HWIO/NHWC)",
                    lambda x, w: cg(x, w, (1, 1), "VALID", batch_group_count=2,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC")), ints(8, (4, 4, 4, 3), -3, 3),
                    ints(9, (3, 3, 3, 4), -2, 2)))
    out.append(case("conv_1d_same_lower", "conv_general_dilated(x, w, (2,), 'SAME_LOWER', NWC/WIO/NWC)",
                    lambda x, w: cg(x, w, (2,), "SAME_LOWER", dimension_numbers=("NWC", "WIO", "NWC")),
                    ints(10, (2, 9, 3), -3, 3), ints(11, (4, 3, 2), -2, 2)))
    out.append(case("conv_3d", "conv_general_dilated(x, w, (1, 2, 1), 'SAME', NDHWC/DHWIO/NDHWC)",
                    lambda x, w: cg(x, w, (1, 2, 1), "SAME", dimension_numbers=("NDHWC", "DHWIO", "NDHWC")),
                    ints(12, (1, 3, 4, 4, 2), -3, 3), ints(13, (2, 2, 3, 2, 3), -2, 2)))
    out.append(case("conv_mixed_layout", "conv_general_dilated(x, w, (1, 1), 'SAME', NCHW/HWIO/NHWC)",
                    lambda x, w: cg(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "HWIO", "NHWC")), xc,
                    ints(14, (2, 3, 2, 3), -2, 2)))
    out.append(case("conv_int32", "conv_general_dilated(x, w, (1, 1), 'VALID', NHWC/HWIO/NHWC), int32",
                    lambda x, w: cg(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")),
                    x.astype(np.int32), w.astype(np.int32)))
    return out


def window():
    import flax.linen as nn
    out = []
    x = ints(20, (2, 5, 6, 3), -9, 9)
    out.append(case("reduce_window_max_same", "lax.reduce_window(x, -inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), 'SAME')",
                    lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), x))
    x2 = ints(21, (5, 6), -9, 9)
    out.append(case("reduce_window_sum_dilations",
                    "lax.reduce_window(x, 0., lax.add, (2, 2), (1, 1), ((1, 0), (0, 2)), base_dilation=(2, 1), window_dilation=(1, 2))",
                    lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), ((1, 0), (0, 2)),
                                                base_dilation=(2, 1), window_dilation=(1, 2)), x2))
    out.append(case("reduce_window_same_window_dilation",
                    "lax.reduce_window(x, 0., lax.add, (2, 3), (2, 1), 'SAME', window_dilation=(2, 2))",
                    lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 3), (2, 1), "SAME", window_dilation=(2, 2)), x2))
    out.append(case("reduce_window_min_int", "lax.reduce_window(x, INT32_MAX, lax.min, (2, 2), (2, 3), 'VALID'), int32",
                    lambda x: lax.reduce_window(x, np.int32(2**31 - 1), lax.min, (2, 2), (2, 3), "VALID"),
                    x2.astype(np.int32)))
    out.append(case("reduce_window_prod", "lax.reduce_window(x, 1., lax.mul, (1, 2), (1, 1), 'VALID')",
                    lambda x: lax.reduce_window(x, 1.0, lax.mul, (1, 2), (1, 1), "VALID"), ints(22, (3, 4), -3, 3)))
    out.append(case("reduce_window_func", "lax.reduce_window(x, 2., lax.max, (3, 2), (1, 2), ((1, 1), (0, 0))) (init 2, not max's identity)",
                    lambda x: lax.reduce_window(x, 2.0, lax.max, (3, 2), (1, 2), ((1, 1), (0, 0))), x2))
    out.append(case("max_pool", "flax.linen.max_pool(x, (2, 2), strides=(2, 2), padding='SAME')",
                    lambda x: nn.max_pool(x, (2, 2), strides=(2, 2), padding="SAME"), x))
    out.append(case("max_pool_no_batch", "flax.linen.max_pool(x, (3,), padding='VALID') on (length, features)",
                    lambda x: nn.max_pool(x, (3,), padding="VALID"), x2))
    out.append(case("min_pool_pairs", "flax.linen.pooling.min_pool(x, (2, 3), strides=(1, 2), padding=((0, 1), (1, 1)))",
                    lambda x: nn.pooling.min_pool(x, (2, 3), strides=(1, 2), padding=((0, 1), (1, 1))), x))
    out.append(case("sum_pool", "flax.linen.pool(x, 0., lax.add, (2, 3), (1, 2), ((0, 1), (1, 1)))",
                    lambda x: nn.pooling.pool(x, 0.0, lax.add, (2, 3), (1, 2), ((0, 1), (1, 1))), x))
    out.append(case("avg_pool_same", "flax.linen.avg_pool(x, (3, 3), padding='SAME')",
                    lambda x: nn.avg_pool(x, (3, 3), padding="SAME"), x))
    out.append(case("avg_pool_exclude_pad", "flax.linen.avg_pool(x, (3, 3), strides=(2, 2), padding='SAME', count_include_pad=False)",
                    lambda x: nn.avg_pool(x, (3, 3), strides=(2, 2), padding="SAME", count_include_pad=False), x))
    return out


def bits():
    out = []
    x = np.array([1, -1, 0x7FFFFFFF, -0x80000000, 12345, -7, 1, 1], np.int32)
    sh = np.array([0, 1, 31, 1, 32, 33, -1, 5], np.int32)
    out.append(case("shift_left", "lax.shift_left(x, s), int32, shifts 0..33 and -1", lax.shift_left, x, sh))
    out.append(case("shift_right_arithmetic", "lax.shift_right_arithmetic(x, s), int32",
                    lax.shift_right_arithmetic, x, sh))
    out.append(case("shift_right_logical", "lax.shift_right_logical(x, s), int32", lax.shift_right_logical, x, sh))
    u8 = np.array([0x80, 0xFF, 1, 0x0F, 0xF0, 7, 200, 3], np.uint8)
    out.append(case("shift_right_logical_uint8", "lax.shift_right_logical(x, s), uint8",
                    lax.shift_right_logical, u8, np.array([7, 1, 8, 2, 4, 0, 9, 1], np.uint8)))
    out.append(case("shift_left_scalar", "lax.shift_left(x, 3), int16 (weak scalar shift)",
                    lambda v: lax.shift_left(v, np.int16(3)), np.array([1, -2, 0x1000, 0x7FF], np.int16)))
    out.append(case("population_count", "lax.population_count(x), int32", lax.population_count, x))
    out.append(case("population_count_uint8", "lax.population_count(x), uint8", lax.population_count, u8))
    out.append(case("clz", "lax.clz(x), int32", lax.clz, x))
    fx = np.array([1.0, -2.5, 0.0, -0.0, np.inf, np.nan, 3.4e38, 1e-45], np.float32)
    out.append(case("bitcast_f32_u32", "lax.bitcast_convert_type(x, uint32)",
                    lambda v: lax.bitcast_convert_type(v, jnp.uint32), fx))
    out.append(case("bitcast_f32_u8", "lax.bitcast_convert_type(x, uint8): [8] -> [8, 4]",
                    lambda v: lax.bitcast_convert_type(v, jnp.uint8), fx))
    out.append(case("bitcast_u8_i32", "lax.bitcast_convert_type(x, int32): [3, 4] -> [3]",
                    lambda v: lax.bitcast_convert_type(v, jnp.int32),
                    np.array([[1, 0, 0, 0], [0xFF, 0xFF, 0xFF, 0xFF], [0x78, 0x56, 0x34, 0x12]], np.uint8)))
    out.append(case("bitcast_f32_bf16", "lax.bitcast_convert_type(x, bfloat16): [8] -> [8, 2]",
                    lambda v: lax.bitcast_convert_type(v, jnp.bfloat16), fx[:5]))
    out.append(case("bitcast_i16_bf16", "lax.bitcast_convert_type(x, bfloat16), int16 -> bf16",
                    lambda v: lax.bitcast_convert_type(v, jnp.bfloat16),
                    np.array([0x3F80, -0x4080, 0x7F80, 0, 0x4049], np.int16)))
    return out


def math_ops():
    out = []
    x = np.array([-4.0, -2.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.5, 4.0], np.float32)
    out.append(case("clamp_scalar_bounds", "lax.clamp(-1.0, x, 2.0)", lambda v: lax.clamp(np.float32(-1), v, np.float32(2)), x))
    out.append(case("clamp_array_bounds", "lax.clamp(lo, x, hi) with array bounds",
                    lax.clamp, np.full(10, -0.5, np.float32), x, np.linspace(-1, 3, 10).astype(np.float32)))
    out.append(case("clamp_int", "lax.clamp(0, x, 10), int32", lambda v: lax.clamp(np.int32(0), v, np.int32(10)),
                    np.array([-5, 0, 3, 10, 11, 2**31 - 1], np.int32)))
    out.append(case("clamp_nan", "lax.clamp(0., x, 1.) with NaN", lambda v: lax.clamp(np.float32(0), v, np.float32(1)),
                    np.array([np.nan, -np.inf, np.inf, 0.25], np.float32)))
    wide = np.array([-3.5, -2.0, -1.25, -0.75, -0.3, -1e-4, -0.0, 0.0, 1e-8, 0.1, 0.5, 0.9, 1.7, 2.6, 3.9, 6.0, np.inf, -np.inf, np.nan], np.float32)
    out.append(case("erf", "lax.erf(x)", lax.erf, wide))
    out.append(case("erf_scipy_bf16", "jax.scipy.special.erf(x), bfloat16", jax.scipy.special.erf, wide.astype(jnp.bfloat16)))
    unit = np.array([-1.0, -0.999, -0.9, -0.5, -0.1, -0.0, 0.0, 1e-6, 0.3, 0.75, 0.99, 0.9999, 1.0, 1.5, -2.0, np.nan], np.float32)
    out.append(case("erf_inv", "lax.erf_inv(x)", lax.erf_inv, unit))
    out.append(case("is_finite", "lax.is_finite(x)", lax.is_finite,
                    np.array([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 3.4e38, 1e-45], np.float32)))
    small = np.array([-20.0, -2.0, -1.0, -0.5, -1e-3, -1e-7, 0.0, 1e-7, 1e-3, 0.5, 1.0, 10.0, 88.0, 89.0, np.inf, np.nan], np.float32)
    out.append(case("expm1", "lax.expm1(x)", lax.expm1, small))
    out.append(case("log1p", "lax.log1p(x)", lax.log1p, small))
    ys = np.array([0.0, -0.0, 1.0, 1.0, -1.0, -1.0, 0.0, -0.0, 3.0, np.inf, np.inf, np.nan], np.float32)
    xs = np.array([0.0, 0.0, 1.0, -1.0, 1.0, -1.0, -1.0, -1.0, 0.0, np.inf, -np.inf, 1.0], np.float32)
    out.append(case("atan2", "lax.atan2(y, x) over the quadrants, signed zeros and infinities", lax.atan2, ys, xs))
    halves = np.array([-2.5, -1.5, -0.5, -0.4, -0.0, 0.0, 0.5, 1.5, 2.5, 2.4, 2.6, 1e7 + 0.5, np.inf, np.nan], np.float32)
    out.append(case("round_away", "lax.round(x) (AWAY_FROM_ZERO)", lax.round, halves))
    out.append(case("round_even", "jnp.round(x) (lax.round TO_NEAREST_EVEN)", jnp.round, halves))
    out.append(case("tan", "lax.tan(x)", lax.tan, x))
    out.append(case("cbrt", "lax.cbrt(x)", lax.cbrt, np.array([-27.0, -8.0, -1.0, -0.0, 0.0, 0.001, 2.0, 1e30, np.inf], np.float32)))
    return out


def rng():
    out = []
    key4 = np.array([0x12345678, 0x9ABCDEF0, 42, 7], np.uint32)
    for alg in ("DEFAULT", "THREE_FRY", "PHILOX"):
        a = getattr(lax.RandomAlgorithm, "RNG_" + alg)
        out.append(case("rng_bit_generator_" + alg.lower(),
                        "lax.rng_bit_generator(key u32[4], (3, 5), uint32, algorithm=RNG_%s)" % alg,
                        lambda k, a=a: lax.rng_bit_generator(k, (3, 5), dtype=jnp.uint32, algorithm=a), key4))
    out.append(case("rng_bit_generator_uint8", "lax.rng_bit_generator(key, (2, 3, 4), uint8, RNG_THREE_FRY)",
                    lambda k: lax.rng_bit_generator(k, (2, 3, 4), dtype=jnp.uint8, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY), key4))
    key = np.array([0, 42], np.uint32)  # jax.random.PRNGKey(42)
    key2 = np.array([0xDEADBEEF, 0x01234567], np.uint32)
    out.append(case("random_bits_u32", "jax.random.bits(key, (3, 4))", lambda k: jax.random.bits(k, (3, 4)), key))
    out.append(case("random_bits_u32_scalar", "jax.random.bits(key, ())", lambda k: jax.random.bits(k, ()), key2))
    out.append(case("random_bits_u8", "jax.random.bits(key, (5, 3), uint8)", lambda k: jax.random.bits(k, (5, 3), jnp.uint8), key2))
    out.append(case("random_bits_u16", "jax.random.bits(key, (7,), uint16)", lambda k: jax.random.bits(k, (7,), jnp.uint16), key))
    with jax.enable_x64(True):
        out.append(case("random_bits_u64", "jax.random.bits(key, (2, 3), uint64) (jax_enable_x64)",
                        lambda k: jax.random.bits(k, (2, 3), jnp.uint64), key2))
        out.append(case("random_key_int64", "jax.random.PRNGKey(seed), int64 seed (jax_enable_x64)",
                        lambda s: jax.random.PRNGKey(s), np.array(-(2**40) - 5, np.int64)))
    out.append(case("random_uniform", "jax.random.uniform(key, (4, 5), float32, -2.0, 3.0)",
                    lambda k: jax.random.uniform(k, (4, 5), jnp.float32, -2.0, 3.0), key))
    out.append(case("random_uniform_bf16", "jax.random.uniform(key, (16,), bfloat16)",
                    lambda k: jax.random.uniform(k, (16,), jnp.bfloat16), key2))
    out.append(case("random_normal", "jax.random.normal(key, (8, 8))", lambda k: jax.random.normal(k, (8, 8)), key))
    out.append(case("random_normal_bf16", "jax.random.normal(key, (16,), bfloat16)",
                    lambda k: jax.random.normal(k, (16,), jnp.bfloat16), key2))
    out.append(case("random_split", "jax.random.split(key, 3)", lambda k: jax.random.split(k, 3), key))
    out.append(case("random_fold_in", "jax.random.fold_in(key, data), int32 data",
                    lambda k, d: jax.random.fold_in(k, d), key2, np.array(-7, np.int32)))
    out.append(case("random_key", "jax.random.PRNGKey(seed), int32 seed", lambda s: jax.random.PRNGKey(s), np.array(-3, np.int32)))
    out.append(case("random_split_then_normal", "jax.random.normal(jax.random.split(key)[1], (5,))",
                    lambda k: jax.random.normal(jax.random.split(k)[1], (5,)), key))
    return out


def generate():
    out = []
    for group in (gather_scatter, conv, window, bits, math_ops, rng):
        out.extend(group())
    names = [c["name"] for c in out]
    if len(set(names)) != len(names):
        raise ValueError("ops_data: duplicate case names")
    return out
