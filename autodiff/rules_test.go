package autodiff_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/autodiff/gradcheck"
	"github.com/xlamesh/xlamesh/nn"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestMain fails the run if the tests leaked device buffers.
func TestMain(m *testing.M) {
	// On a GPU, scatters run with atomics: with repeated indices, which update wins may differ
	// between the forward scatter and the scatter of update ids the rule uses to find the
	// winner (scatterRule), as in JAX. Deterministic scatters make both pick the same one,
	// and the finite differences of scatter_set_repeated meaningful there.
	if p, err := pjrttest.Platform(); err == nil && p == "gpu" && !strings.Contains(os.Getenv("XLA_FLAGS"), "xla_gpu_deterministic_ops") {
		os.Setenv("XLA_FLAGS", strings.TrimSpace(os.Getenv("XLA_FLAGS")+" --xla_gpu_deterministic_ops=true"))
	}
	os.Exit(pjrttest.CheckLeaks(m, "autodiff"))
}

// vals returns n distinct values a + b*k for k = 0..n-1 scrambled, never an integer
// (so no ties and no kinks of abs, floor or sign fall on them).
func vals(n int, a, b float64) []float64 {
	out := make([]float64, n)
	for k := range out {
		j := (k*7 + 3) % n
		out[k] = a + b*float64(j) + 0.0123*float64(k%3)
	}
	return out
}

type fn = gradcheck.Func
type V = stablehlo.Value
type F = *stablehlo.Function

func f64(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float64, dims...) }

// ruleCases differentiate every rule through gradcheck, at points where each op is smooth.
var ruleCases = []struct {
	name   string
	inputs []gradcheck.Input
	fn     fn
}{
	{"add", in2(3, 2), func(f F, a []V) V { return f.Add(a[0], a[1]) }},
	{"sub", in2(3, 2), func(f F, a []V) V { return f.Sub(a[0], a[1]) }},
	{"mul", in2(3, 2), func(f F, a []V) V { return f.Mul(a[0], a[1]) }},
	{"mul_same", in1(3, 2), func(f F, a []V) V { return f.Mul(a[0], a[0]) }},
	{"div", in2(3, 2), func(f F, a []V) V { return f.Div(a[0], f.Add(a[1], f.Constant(3.0))) }},
	{"rem", in2(3, 2), func(f F, a []V) V { return f.Rem(f.Mul(a[0], f.Constant(5.0)), f.Add(a[1], f.Constant(2.5))) }},
	{"max", in2(3, 2), func(f F, a []V) V { return f.Max(a[0], f.Mul(a[1], f.Constant(1.1))) }},
	{"min", in2(3, 2), func(f F, a []V) V { return f.Min(a[0], f.Mul(a[1], f.Constant(1.1))) }},
	{"pow", []gradcheck.Input{gradcheck.F64(vals(6, 0.5, 0.3), 3, 2), gradcheck.F64(vals(6, -1.2, 0.4), 3, 2)},
		func(f F, a []V) V { return f.Pow(a[0], a[1]) }},
	{"neg", in1(3, 2), func(f F, a []V) V { return f.Neg(a[0]) }},
	{"exp", in1(3, 2), func(f F, a []V) V { return f.Exp(a[0]) }},
	{"log", pos(3, 2), func(f F, a []V) V { return f.Log(a[0]) }},
	{"sqrt", pos(3, 2), func(f F, a []V) V { return f.Sqrt(a[0]) }},
	{"rsqrt", pos(3, 2), func(f F, a []V) V { return f.Rsqrt(a[0]) }},
	{"tanh", in1(3, 2), func(f F, a []V) V { return f.Tanh(a[0]) }},
	{"logistic", in1(3, 2), func(f F, a []V) V { return f.Logistic(a[0]) }},
	{"sin", in1(3, 2), func(f F, a []V) V { return f.Sin(a[0]) }},
	{"cos", in1(3, 2), func(f F, a []V) V { return f.Cos(a[0]) }},
	{"abs", in1(3, 2), func(f F, a []V) V { return f.Abs(a[0]) }},
	{"sign_floor_ceil", in1(3, 2), func(f F, a []V) V {
		return f.Add(f.Mul(a[0], f.Sign(a[0])), f.Add(f.Floor(a[0]), f.Ceil(a[0])))
	}},
	{"select", in2(3, 2), func(f F, a []V) V {
		return f.Select(f.Greater(a[0], a[1]), f.Exp(a[0]), f.Mul(a[1], a[1]))
	}},
	{"select_scalar_pred", in2(3, 2), func(f F, a []V) V {
		return f.Select(f.Greater(f.Sum(a[0]), f.Constant(0.0)), a[0], a[1])
	}},
	{"convert", in1(3, 2), func(f F, a []V) V {
		return f.Convert(f.Exp(f.Convert(a[0], dtypes.Float32)), dtypes.Float64)
	}},
	{"convert_int_cut", in1(3, 2), func(f F, a []V) V {
		return f.Mul(a[0], f.Convert(f.Convert(f.Mul(a[0], f.Constant(3.7)), dtypes.Int32), dtypes.Float64))
	}},
	{"broadcast", in1(3), func(f F, a []V) V { return f.BroadcastInDim(a[0], []int{2, 3, 4}, []int{1}) }},
	{"broadcast_unit", in1(1, 3), func(f F, a []V) V { return f.BroadcastInDim(a[0], []int{4, 3, 2}, []int{0, 1}) }},
	{"broadcast_unsorted", in1(2, 3), func(f F, a []V) V { return f.BroadcastInDim(a[0], []int{3, 4, 2}, []int{2, 0}) }},
	{"broadcast_scalar", in1(), func(f F, a []V) V { return f.Mul(f.BroadcastInDim(a[0], []int{2, 2}, nil), f.Constant(2.0)) }},
	{"reshape", in1(3, 4), func(f F, a []V) V { return f.Reshape(a[0], 2, 6) }},
	{"transpose", in1(2, 3, 4), func(f F, a []V) V { return f.Transpose(a[0], 2, 0, 1) }},
	{"slice", in1(5, 7), func(f F, a []V) V { return f.Slice(a[0], []int{1, 2}, []int{5, 7}, []int{2, 3}) }},
	{"slice_empty", in1(5, 7), func(f F, a []V) V {
		return f.Add(f.Sum(f.Slice(a[0], []int{2, 0}, []int{2, 7}, nil)), f.Sum(f.Slice(a[0], []int{0, 0}, []int{1, 7}, nil)))
	}},
	{"dynamic_slice", []gradcheck.Input{gradcheck.F64(vals(20, -1, 0.1), 4, 5), {Shape: stablehlo.NewShape(dtypes.Int32), Data: []int32{3}}},
		func(f F, a []V) V { return f.DynamicSlice(a[0], []V{a[1], f.ConstantOf(dtypes.Int32, 1)}, []int{2, 3}) }},
	{"dynamic_update_slice", []gradcheck.Input{gradcheck.F64(vals(20, -1, 0.1), 4, 5), gradcheck.F64(vals(6, 2, 0.5), 2, 3), {Shape: stablehlo.NewShape(dtypes.Int32), Data: []int32{1}}},
		func(f F, a []V) V {
			return f.Tanh(f.DynamicUpdateSlice(a[0], a[1], []V{a[2], f.ConstantOf(dtypes.Int32, 2)}))
		}},
	{"pad", in2s([]int{3, 4}, nil), func(f F, a []V) V {
		return f.Pad(a[0], a[1], []int{1, -1}, []int{2, 1}, []int{1, 2})
	}},
	{"concatenate", []gradcheck.Input{gradcheck.F64(vals(6, -1, 0.1), 2, 3), gradcheck.F64(vals(4, 2, 0.5), 2, 2)},
		func(f F, a []V) V { return f.Concatenate(1, a[0], a[1], a[0]) }},
	{"matmul", []gradcheck.Input{gradcheck.F64(vals(6, -1, 0.3), 2, 3), gradcheck.F64(vals(12, -2, 0.3), 3, 4)},
		func(f F, a []V) V { return f.MatMul(a[0], a[1]) }},
	{"dot_batch", []gradcheck.Input{gradcheck.F64(vals(24, -1, 0.1), 2, 3, 4), gradcheck.F64(vals(40, -2, 0.13), 5, 4, 2, 1)},
		func(f F, a []V) V {
			return f.DotGeneral(a[0], a[1], stablehlo.DotDims{LhsBatch: []int{0}, RhsBatch: []int{2}, LhsContracting: []int{2}, RhsContracting: []int{1}})
		}},
	{"dot_multi_contract", []gradcheck.Input{gradcheck.F64(vals(24, -1, 0.1), 2, 3, 4), gradcheck.F64(vals(60, -2, 0.07), 4, 5, 3)},
		func(f F, a []V) V {
			return f.DotGeneral(a[0], a[1], stablehlo.DotDims{LhsContracting: []int{2, 1}, RhsContracting: []int{0, 2}})
		}},
	{"sum", in1(3, 4), func(f F, a []V) V { return f.Sum(a[0], 1) }},
	{"reduce_max", in1(3, 4), func(f F, a []V) V { return f.ReduceMax(a[0], 0) }},
	{"reduce_min", in1(3, 4), func(f F, a []V) V { return f.ReduceMin(a[0]) }},
	{"clamp", in1(3, 4), func(f F, a []V) V { return f.Clamp(f.Constant(-0.5), a[0], f.Constant(0.6)) }},
	{"clamp_tensor_bounds", []gradcheck.Input{gradcheck.F64(vals(6, -1, 0.37), 6), gradcheck.F64(vals(6, -2, 0.2), 6), gradcheck.F64(vals(6, 0.1, 0.2), 6)},
		func(f F, a []V) V { return f.Clamp(a[1], a[0], a[2]) }},
	{"expm1", in1(3, 2), func(f F, a []V) V { return f.Expm1(a[0]) }},
	{"log1p", pos(3, 2), func(f F, a []V) V { return f.Log1p(a[0]) }},
	{"tan", in1(3, 2), func(f F, a []V) V { return f.Tan(f.Mul(a[0], f.Constant(0.5))) }},
	{"cbrt", pos(3, 2), func(f F, a []V) V { return f.Cbrt(a[0]) }},
	{"erf", in1(3, 2), func(f F, a []V) V { return f.Erf(a[0]) }},
	{"erf_inv", in1(3, 2), func(f F, a []V) V { return f.ErfInv(f.Mul(a[0], f.Constant(0.5))) }},
	{"gelu_exact", in1(3, 2), func(f F, a []V) V { return nn.Gelu(f, a[0], false) }},
	{"atan2", in2(3, 2), func(f F, a []V) V { return f.Atan2(a[0], a[1]) }},
	{"take", []gradcheck.Input{gradcheck.F64(vals(12, -1, 0.2), 4, 3), {Shape: stablehlo.NewShape(dtypes.Int32, 5), Data: []int32{3, 0, 3, 1, -1}}},
		func(f F, a []V) V { return f.Take(a[0], a[1], 0) }},
	{"take_axis1", []gradcheck.Input{gradcheck.F64(vals(12, -1, 0.2), 3, 4), {Shape: stablehlo.NewShape(dtypes.Int32, 2, 2), Data: []int32{1, 1, 0, 3}}},
		func(f F, a []V) V { return f.Take(a[0], a[1], 1) }},
	{"scatter_add", []gradcheck.Input{gradcheck.F64(vals(12, -1, 0.2), 4, 3), {Shape: stablehlo.NewShape(dtypes.Int32, 3), Data: []int32{2, 7, 2}}, gradcheck.F64(vals(9, 0.5, 0.3), 3, 3)},
		func(f F, a []V) V { return f.ScatterAdd(a[0], a[1], f.Tanh(a[2])) }},
	{"scatter_set_repeated", []gradcheck.Input{gradcheck.F64(vals(12, -1, 0.2), 4, 3), gradcheck.F64(vals(9, 0.5, 0.3), 3, 3)},
		func(f F, a []V) V {
			idx := f.Reshape(f.Array([]int32{2, 0, 2}, 3), 3, 1)
			d := stablehlo.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}
			return f.Scatter(a[0], idx, a[1], stablehlo.ScatterParams{Dims: d})
		}},
	{"scatter_mul_unique", []gradcheck.Input{gradcheck.F64(vals(12, -1, 0.2), 4, 3), gradcheck.F64(vals(9, 0.5, 0.3), 3, 3)},
		func(f F, a []V) V {
			return f.Scatter(a[0], f.Array([]int32{2, 0, 3}, 3, 1), a[1], stablehlo.ScatterParams{Dims: rowScatter, UniqueIndices: true, Combine: stablehlo.Prod})
		}},
	{"scatter_mul_repeated_operand", in1(4, 3), func(f F, a []V) V {
		u := f.ArrayOf(dtypes.Float64, vals(9, 0.5, 0.3), 3, 3)
		return f.Scatter(a[0], f.Array([]int32{2, 0, 2}, 3, 1), u, stablehlo.ScatterParams{Dims: rowScatter, Combine: stablehlo.Prod})
	}},
	{"scatter_max", []gradcheck.Input{gradcheck.F64(vals(12, -1, 0.2), 4, 3), gradcheck.F64(vals(12, -1.1, 0.21), 4, 3)},
		func(f F, a []V) V {
			return f.Scatter(a[0], f.Array([]int32{2, 0, 2, 7}, 4, 1), a[1], stablehlo.ScatterParams{Dims: rowScatter, Combine: stablehlo.Max})
		}},
	{"scatter_min", []gradcheck.Input{gradcheck.F64(vals(12, -1, 0.2), 4, 3), gradcheck.F64(vals(12, -1.1, 0.21), 4, 3)},
		func(f F, a []V) V {
			return f.Scatter(a[0], f.Array([]int32{1, 1, 3, 1}, 4, 1), a[1], stablehlo.ScatterParams{Dims: rowScatter, Combine: stablehlo.Min})
		}},
	{"sum_pool", in1(1, 5, 6, 2), func(f F, a []V) V {
		return f.SumPool(a[0], []int{2, 3}, []int{2, 1}, stablehlo.PadSame)
	}},
	{"avg_pool", in1(1, 5, 6, 2), func(f F, a []V) V {
		return f.AvgPool(a[0], []int{3, 2}, []int{1, 2}, stablehlo.PadValid, false)
	}},
	{"reduce_window_dilated", in1(7, 6), func(f F, a []V) V {
		return f.ReduceWindow(a[0], stablehlo.Sum, stablehlo.ReduceWindowParams{Window: []int{2, 2}, Strides: []int{2, 1},
			BaseDilations: []int{2, 1}, WindowDilations: []int{1, 2}, Padding: stablehlo.Pads([2]int{1, 0}, [2]int{0, 1})})
	}},
	{"max_pool", in1(1, 5, 6, 2), func(f F, a []V) V {
		return f.MaxPool(a[0], []int{2, 3}, []int{2, 1}, stablehlo.PadSame)
	}},
	{"min_pool", in1(1, 5, 6, 2), func(f F, a []V) V {
		return f.MinPool(a[0], []int{3, 2}, []int{1, 2}, stablehlo.PadValid)
	}},
	{"max_window_base_dilated", in1(5, 6), func(f F, a []V) V {
		return f.ReduceWindow(a[0], stablehlo.Max, stablehlo.ReduceWindowParams{Window: []int{2, 2}, Strides: []int{1, 2},
			BaseDilations: []int{2, 1}, Padding: stablehlo.Pads([2]int{0, 1}, [2]int{1, 0})})
	}},
	{"max_pool_grad", in1(1, 5, 6, 2), func(f F, a []V) V {
		m := f.MaxPool(a[0], []int{2, 3}, []int{2, 1}, stablehlo.PadSame)
		return autodiff.Grad(f, f.Sum(f.Tanh(m)), a[0])[0]
	}},
	{"min_pool_grad", in1(4, 5), func(f F, a []V) V {
		m := f.ReduceWindow(a[0], stablehlo.Min, stablehlo.ReduceWindowParams{Window: []int{2, 2}, Strides: []int{1, 2},
			Padding: stablehlo.Pads([2]int{1, 0}, [2]int{0, 1})})
		return autodiff.Grad(f, f.Sum(f.Mul(f.Mul(m, m), m)), a[0])[0]
	}},
	{"if_captures", in2(3, 2), func(f F, a []V) V {
		r := f.If(f.Greater(f.Sum(a[0]), f.Constant(-100.0)),
			func(g F) []V { return []V{g.Mul(g.Exp(a[0]), a[1]), a[1]} },
			func(g F) []V { return []V{g.Tanh(a[1]), a[0]} })
		return f.Add(r[0], f.Mul(r[1], r[1]))
	}},
	{"if_else_branch", in2(3, 2), func(f F, a []V) V {
		r := f.If(f.Greater(f.Sum(a[0]), f.Constant(100.0)),
			func(g F) []V { return []V{g.Mul(g.Exp(a[0]), a[1])} },
			func(g F) []V { return []V{g.Tanh(a[1])} })
		return r[0]
	}},
	{"case", in2(3, 2), func(f F, a []V) V {
		r := f.Case(f.ConstantOf(dtypes.Int32, 1),
			func(g F) []V { return []V{g.Exp(a[0])} },
			func(g F) []V { return []V{g.Mul(a[0], g.Sin(a[1]))} },
			func(g F) []V { return []V{a[1]} })
		return r[0]
	}},
	{"for_loop", in2(3, 2), func(f F, a []V) V {
		r := f.ForLoop(4, []V{a[0], f.Constant(0.0)}, func(g F, i V, c []V) []V {
			x := g.Tanh(g.Add(g.Mul(c[0], a[1]), g.Convert(i, dtypes.Float64)))
			return []V{x, g.Add(c[1], g.Sum(x))}
		})
		return f.Add(f.Sum(r[0]), r[1])
	}},
	{"scan", []gradcheck.Input{gradcheck.F64(vals(6, -1, 0.3), 3, 2), gradcheck.F64(vals(2, 0.5, 0.1), 2)}, func(f F, a []V) V {
		carry, ys := f.Scan(func(g F, c, x []V) ([]V, []V) {
			h := g.Tanh(g.Add(g.Mul(c[0], g.Constant(0.9)), x[0]))
			return []V{h}, []V{g.Mul(h, h)}
		}, []V{a[1]}, []V{a[0]}, stablehlo.ScanOptions{})
		return f.Add(f.Sum(carry[0]), f.Sum(ys[0]))
	}},
	{"scan_reverse", []gradcheck.Input{gradcheck.F64(vals(6, -1, 0.3), 3, 2), gradcheck.F64(vals(2, 0.5, 0.1), 2)}, func(f F, a []V) V {
		_, ys := f.Scan(func(g F, c, x []V) ([]V, []V) {
			h := g.Sin(g.Add(g.Mul(c[0], x[0]), x[0]))
			return []V{h}, []V{g.Exp(h)}
		}, []V{a[1]}, []V{a[0]}, stablehlo.ScanOptions{Reverse: true})
		return ys[0]
	}},
	{"sort", in1(3, 4), func(f F, a []V) V { return f.Mul(f.SortAscending(a[0], 1), f.Constant(2.0)) }},
	{"sort_dim0_descending", in1(3, 4), func(f F, a []V) V { return f.SortDescending(a[0], 0) }},
	{"sort_by_key", in2(3, 4), func(f F, a []V) V {
		r := f.SortBy([]V{a[0], a[1]}, 1, 1, true)
		return f.Add(f.Mul(r[0], r[0]), r[1])
	}},
	{"top_k", in1(3, 5), func(f F, a []V) V { v, _ := f.TopK(a[0], 2); return v }},
	{"reverse", in1(3, 4), func(f F, a []V) V { return f.Reverse(a[0], 0, 1) }},
	{"cumsum", in1(3, 4), func(f F, a []V) V { return f.Cumsum(a[0], 1, false) }},
	{"cumsum_reverse", in1(3, 4), func(f F, a []V) V { return f.Cumsum(a[0], 0, true) }},
	{"reduce_prod", in1(3, 4), func(f F, a []V) V { return f.Reduce(a[0], stablehlo.Prod, 1) }},
	{"reduce_prod_dims", in1(2, 3, 3), func(f F, a []V) V { return f.Reduce(a[0], stablehlo.Prod, 0, 2) }},
	{"reduce_prod_zero", []gradcheck.Input{gradcheck.F64([]float64{0.5, 0, -1.5, 2, 0, 0, 0.7, 1.1, 0.3}, 3, 3)},
		func(f F, a []V) V { return f.Reduce(a[0], stablehlo.Prod, 1) }},
	{"cumprod", in1(3, 5), func(f F, a []V) V { return f.Cumprod(a[0], 1, false) }},
	{"cumprod_reverse", in1(4, 2), func(f F, a []V) V { return f.Cumprod(a[0], 0, true) }},
	{"cummax", in1(3, 5), func(f F, a []V) V { return f.Cummax(a[0], 1, false) }},
	{"cummin_reverse", in1(6, 2), func(f F, a []V) V { return f.Cummin(a[0], 0, true) }},
	{"conv_nhwc", []gradcheck.Input{gradcheck.F64(vals(2*5*6*3, -1, 0.02), 2, 5, 6, 3), gradcheck.F64(vals(3*2*3*4, -1, 0.03), 3, 2, 3, 4)},
		func(f F, a []V) V {
			d, _ := stablehlo.ConvLayout("NHWC", "HWIO", "NHWC")
			return f.Conv(a[0], a[1], stablehlo.ConvParams{Dims: d, Strides: []int{2, 1}, Padding: stablehlo.PadSame})
		}},
	{"conv_nchw_dilated", []gradcheck.Input{gradcheck.F64(vals(1*2*7*6, -1, 0.02), 1, 2, 7, 6), gradcheck.F64(vals(3*2*2*2, -1, 0.05), 3, 2, 2, 2)},
		func(f F, a []V) V {
			d, _ := stablehlo.ConvLayout("NCHW", "OIHW", "NCHW")
			return f.Conv(a[0], a[1], stablehlo.ConvParams{Dims: d, Strides: []int{1, 2}, Padding: stablehlo.Pads([2]int{1, 0}, [2]int{0, 2}),
				LhsDilation: []int{2, 1}, RhsDilation: []int{1, 2}})
		}},
	{"conv_depthwise", []gradcheck.Input{gradcheck.F64(vals(2*5*4, -1, 0.05), 2, 5, 4), gradcheck.F64(vals(3*1*8, -1, 0.06), 3, 1, 8)},
		func(f F, a []V) V {
			d, _ := stablehlo.ConvLayout("NWC", "WIO", "NWC")
			return f.Conv(a[0], a[1], stablehlo.ConvParams{Dims: d, Padding: stablehlo.PadValid, FeatureGroupCount: 4})
		}},
	{"conv_batch_group", []gradcheck.Input{gradcheck.F64(vals(4*5*2, -1, 0.05), 4, 5, 2), gradcheck.F64(vals(2*2*6, -1, 0.06), 2, 2, 6)},
		func(f F, a []V) V {
			d, _ := stablehlo.ConvLayout("NWC", "WIO", "NWC")
			return f.Conv(a[0], a[1], stablehlo.ConvParams{Dims: d, Padding: stablehlo.PadValid, BatchGroupCount: 2})
		}},
	{"call", in2(3, 2), func(f F, a []V) V {
		g := f.Module().Func("helper")
		x := g.Arg(f64(3, 2))
		y := g.Arg(f64(3, 2))
		g.Return(g.Mul(x, x), g.Tanh(g.Mul(x, y)), y)
		r := f.Call(g, a[0], a[1])
		s := f.Call(g, r[1], a[0])
		return f.Add(f.Add(r[0], s[0]), f.Mul(s[1], s[2]))
	}},
	{"call_same_operand", in1(3, 2), func(f F, a []V) V {
		g := f.Module().Func("helper")
		x := g.Arg(f64(3, 2))
		y := g.Arg(f64(3, 2))
		g.Return(g.Mul(x, g.Exp(y)))
		return f.Call(g, a[0], a[0])[0]
	}},
}

// rowScatter are the dimension numbers of x.at[idx] on the rows of a matrix, idx of shape
// (n, 1).
var rowScatter = stablehlo.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}

// caseOpts loosen the check where the function rounds to float32.
var caseOpts = map[string][]gradcheck.Option{
	"convert": {gradcheck.Eps(1e-2), gradcheck.Tolerance(1e-4, 1e-4)},
}

func in1(dims ...int) []gradcheck.Input {
	n := stablehlo.NewShape(dtypes.Float64, dims...).Size()
	return []gradcheck.Input{gradcheck.F64(vals(n, -1.3, 2.9/float64(n)), dims...)}
}

func pos(dims ...int) []gradcheck.Input {
	n := stablehlo.NewShape(dtypes.Float64, dims...).Size()
	return []gradcheck.Input{gradcheck.F64(vals(n, 0.4, 1.7/float64(n)), dims...)}
}

func in2(dims ...int) []gradcheck.Input {
	n := stablehlo.NewShape(dtypes.Float64, dims...).Size()
	return []gradcheck.Input{gradcheck.F64(vals(n, -1.3, 2.9/float64(n)), dims...), gradcheck.F64(vals(n, -0.77, 2.1/float64(n)), dims...)}
}

func in2s(a, b []int) []gradcheck.Input {
	na := stablehlo.NewShape(dtypes.Float64, a...).Size()
	nb := stablehlo.NewShape(dtypes.Float64, b...).Size()
	return []gradcheck.Input{gradcheck.F64(vals(na, -1.3, 2.9/float64(na)), a...), gradcheck.F64(vals(nb, 0.7, 1), b...)}
}

func TestRulesGradcheck(t *testing.T) {
	c := pjrttest.Client(t)
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, gradcheck.Check(c, tc.fn, tc.inputs, caseOpts[tc.name]...))
		})
	}
}

// TestJVPGradcheck checks JVP (the double VJP) against finite differences on a few of the
// rule cases, which exercises the rules of the backward ops too.
func TestJVPGradcheck(t *testing.T) {
	c := pjrttest.Client(t)
	for _, name := range []string{"matmul", "div", "pow", "broadcast_unsorted", "slice", "pad", "concatenate", "dot_batch",
		"reduce_max", "reduce_prod", "cumprod", "cummax", "max_pool", "max_pool_grad", "take", "scatter_add", "scatter_mul_unique", "scatter_max", "sum_pool", "if_captures", "for_loop", "scan", "sort", "cumsum", "conv_nhwc", "call"} {
		t.Run(name, func(t *testing.T) {
			for _, tc := range ruleCases {
				if tc.name == name {
					require.NoError(t, gradcheck.CheckJVP(c, tc.fn, tc.inputs, caseOpts[tc.name]...))
					return
				}
			}
			t.Fatalf("no rule case %s", name)
		})
	}
}
