package oracletest

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/examples/mlp"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/nn"
	"github.com/xlamesh/xlamesh/optim"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// The vjp group: package autodiff against jax.vjp and jax.value_and_grad
// (tools/oracle/vjp.py writes testdata/oracle/vjp.json).

// vjpTol is the relative tolerance of the comparisons that are not exact: XLA's CPU kernels
// for exp, tanh, log, ... are not bit-identical between jaxlib's XLA and the plugin's, and
// the partitioner may reorder sums; 1e-6 is the absolute floor near zero.
const vjpTol, vjpFloor = 1e-5, 1e-6

// vjpArray is an array of the vjp golden. A complex, float8 or float4 array also carries its
// raw bytes in Hex, and its Values are floats all the same: a complex array's real and
// imaginary parts in turn, a float8 or float4 array's exact values.
type vjpArray struct {
	Shape  []int     `json:"shape"`
	DType  string    `json:"dtype"`
	Values []float64 `json:"values"`
	Hex    string    `json:"hex"`
}

type vjpRuleCase struct {
	Name      string     `json:"name"`
	Exact     bool       `json:"exact"`
	Inputs    []vjpArray `json:"inputs"`
	Out       vjpArray   `json:"out"`
	Cotangent vjpArray   `json:"cotangent"`
	Grads     []vjpArray `json:"grads"`
}

type vjpProgram struct {
	Losses []float64  `json:"losses"`
	Loss   float64    `json:"loss"`
	Grads  []vjpArray `json:"grads"`
}

// vjpRefused is an op jax.vjp refuses to differentiate: the error JAX raised and whether
// jax.jvp takes it forward.
type vjpRefused struct {
	Name  string `json:"name"`
	JAX   string `json:"jax"`
	Error string `json:"error"`
	JVP   bool   `json:"jvp"`
}

type vjpGolden struct {
	Group      string                `json:"group"`
	JAXVersion string                `json:"jax_version"`
	Rules      []vjpRuleCase         `json:"rules"`
	Refused    []vjpRefused          `json:"refused"`
	Programs   map[string]vjpProgram `json:"programs"`
}

func loadVJP(t *testing.T) vjpGolden {
	t.Helper()
	g := readGolden[vjpGolden](t, "vjp")
	if g.Group != "vjp" || len(g.Rules) == 0 || len(g.Programs) == 0 {
		t.Fatalf("oracle golden vjp: malformed")
	}
	return g
}

type sv = stablehlo.Value

// vjpRules builds, per golden case, the op JAX differentiated, with package stablehlo.
var vjpRules = map[string]func(f *stablehlo.Function, a []sv) sv{
	"add":              func(f *stablehlo.Function, a []sv) sv { return f.Add(a[0], a[1]) },
	"sub":              func(f *stablehlo.Function, a []sv) sv { return f.Sub(a[0], a[1]) },
	"mul":              func(f *stablehlo.Function, a []sv) sv { return f.Mul(a[0], a[1]) },
	"mul_same_operand": func(f *stablehlo.Function, a []sv) sv { return f.Mul(a[0], a[0]) },
	"div":              func(f *stablehlo.Function, a []sv) sv { return f.Div(a[0], a[1]) },
	"rem":              func(f *stablehlo.Function, a []sv) sv { return f.Rem(a[0], a[1]) },
	"max_ties":         func(f *stablehlo.Function, a []sv) sv { return f.Max(a[0], a[1]) },
	"min_ties":         func(f *stablehlo.Function, a []sv) sv { return f.Min(a[0], a[1]) },
	"pow":              func(f *stablehlo.Function, a []sv) sv { return f.Pow(a[0], a[1]) },
	"neg":              func(f *stablehlo.Function, a []sv) sv { return f.Neg(a[0]) },
	"exp":              func(f *stablehlo.Function, a []sv) sv { return f.Exp(a[0]) },
	"log":              func(f *stablehlo.Function, a []sv) sv { return f.Log(a[0]) },
	"sqrt":             func(f *stablehlo.Function, a []sv) sv { return f.Sqrt(a[0]) },
	"rsqrt":            func(f *stablehlo.Function, a []sv) sv { return f.Rsqrt(a[0]) },
	"tanh":             func(f *stablehlo.Function, a []sv) sv { return f.Tanh(a[0]) },
	"logistic":         func(f *stablehlo.Function, a []sv) sv { return f.Logistic(a[0]) },
	"sin":              func(f *stablehlo.Function, a []sv) sv { return f.Sin(a[0]) },
	"cos":              func(f *stablehlo.Function, a []sv) sv { return f.Cos(a[0]) },
	"abs_with_zero":    func(f *stablehlo.Function, a []sv) sv { return f.Abs(a[0]) },
	"sign":             func(f *stablehlo.Function, a []sv) sv { return f.Mul(a[0], f.Sign(a[0])) },
	"floor_ceil": func(f *stablehlo.Function, a []sv) sv {
		return f.Add(f.Floor(a[0]), f.Mul(f.Ceil(a[0]), a[0]))
	},
	"select": func(f *stablehlo.Function, a []sv) sv {
		return f.Select(f.Greater(a[0], a[1]), a[0], f.Mul(a[1], a[1]))
	},
	"convert_bf16": func(f *stablehlo.Function, a []sv) sv {
		b := f.Convert(a[0], dtypes.BFloat16)
		return f.Convert(f.Mul(b, b), dtypes.Float32)
	},
	"broadcast_in_dim":   func(f *stablehlo.Function, a []sv) sv { return f.BroadcastInDim(a[0], []int{4, 2, 3}, []int{1, 2}) },
	"broadcast_unit_dim": func(f *stablehlo.Function, a []sv) sv { return f.BroadcastInDim(a[0], []int{2, 3, 5}, []int{0, 2}) },
	"reshape":            func(f *stablehlo.Function, a []sv) sv { return f.Reshape(a[0], 3, 2) },
	"transpose":          func(f *stablehlo.Function, a []sv) sv { return f.Transpose(a[0], 2, 0, 1) },
	"slice_strided":      func(f *stablehlo.Function, a []sv) sv { return f.Slice(a[0], []int{1, 0}, []int{5, 7}, []int{2, 3}) },
	"dynamic_slice": func(f *stablehlo.Function, a []sv) sv {
		return f.DynamicSlice(a[0], []sv{f.ConstantOf(dtypes.Int32, 3), f.ConstantOf(dtypes.Int32, 1)}, []int{2, 3})
	},
	"dynamic_update_slice": func(f *stablehlo.Function, a []sv) sv {
		return f.DynamicUpdateSlice(a[0], a[1], []sv{f.ConstantOf(dtypes.Int32, 1), f.ConstantOf(dtypes.Int32, 2)})
	},
	"pad": func(f *stablehlo.Function, a []sv) sv {
		return f.Pad(a[0], a[1], []int{1, -1}, []int{2, 1}, []int{1, 2})
	},
	"concatenate":        func(f *stablehlo.Function, a []sv) sv { return f.Concatenate(1, a[0], a[1], a[0]) },
	"dot_general_matmul": func(f *stablehlo.Function, a []sv) sv { return f.MatMul(a[0], a[1]) },
	"dot_general_batch": func(f *stablehlo.Function, a []sv) sv {
		return f.DotGeneral(a[0], a[1], stablehlo.DotDims{LhsContracting: []int{2}, RhsContracting: []int{1}, LhsBatch: []int{0}, RhsBatch: []int{2}})
	},
	"dot_general_two_contracting": func(f *stablehlo.Function, a []sv) sv {
		return f.DotGeneral(a[0], a[1], stablehlo.DotDims{LhsContracting: []int{2, 1}, RhsContracting: []int{0, 2}})
	},
	"reduce_sum":      func(f *stablehlo.Function, a []sv) sv { return f.Sum(a[0], 1) },
	"reduce_max_ties": func(f *stablehlo.Function, a []sv) sv { return f.ReduceMax(a[0], 1) },
	"reduce_min_all":  func(f *stablehlo.Function, a []sv) sv { return f.ReduceMin(a[0], 0, 1) },
	"stop_gradient":   func(f *stablehlo.Function, a []sv) sv { return f.Mul(a[0], autodiff.StopGradient(a[0])) },
	"cond_captures": func(f *stablehlo.Function, a []sv) sv {
		return f.If(f.Greater(f.Sum(a[0]), f.ConstantOf(dtypes.Float32, 0)),
			func(g *stablehlo.Function) []sv { return []sv{g.Mul(g.Exp(a[0]), a[1])} },
			func(g *stablehlo.Function) []sv { return []sv{g.Tanh(a[1])} })[0]
	},
	"cond_else": func(f *stablehlo.Function, a []sv) sv {
		return f.If(f.Greater(f.Sum(a[0]), f.ConstantOf(dtypes.Float32, 100)),
			func(g *stablehlo.Function) []sv { return []sv{g.Mul(g.Exp(a[0]), a[1])} },
			func(g *stablehlo.Function) []sv { return []sv{g.Tanh(a[1])} })[0]
	},
	"fori_loop": func(f *stablehlo.Function, a []sv) sv {
		r := f.ForLoop(4, []sv{a[0], f.ConstantOf(dtypes.Float32, 0)}, func(g *stablehlo.Function, i sv, c []sv) []sv {
			h := g.Tanh(g.Add(g.Mul(c[0], a[1]), g.Convert(i, dtypes.Float32)))
			return []sv{h, g.Add(c[1], g.Sum(h))}
		})
		return f.Add(f.Sum(r[0]), r[1])
	},
	"scan": func(f *stablehlo.Function, a []sv) sv {
		c, ys := f.Scan(func(g *stablehlo.Function, c, x []sv) ([]sv, []sv) {
			h := g.Tanh(g.Add(g.Mul(c[0], g.Constant(0.9)), x[0]))
			return []sv{h}, []sv{g.Mul(h, h)}
		}, []sv{a[1]}, []sv{a[0]}, stablehlo.ScanOptions{})
		return f.Add(f.Sum(c[0]), f.Sum(ys[0]))
	},
	"sort":           func(f *stablehlo.Function, a []sv) sv { return f.SortAscending(a[0], 1) },
	"top_k":          func(f *stablehlo.Function, a []sv) sv { v, _ := f.TopK(a[0], 2); return v },
	"rev":            func(f *stablehlo.Function, a []sv) sv { return f.Reverse(a[0], 0, 1) },
	"cumsum":         func(f *stablehlo.Function, a []sv) sv { return f.Cumsum(a[0], 1, false) },
	"cumsum_reverse": func(f *stablehlo.Function, a []sv) sv { return f.Cumsum(a[0], 0, true) },
	"conv_nhwc_same": func(f *stablehlo.Function, a []sv) sv {
		d, _ := stablehlo.ConvLayout("NHWC", "HWIO", "NHWC")
		return f.Conv(a[0], a[1], stablehlo.ConvParams{Dims: d, Strides: []int{2, 1}, Padding: stablehlo.PadSame})
	},
	"conv_nchw_dilated": func(f *stablehlo.Function, a []sv) sv {
		d, _ := stablehlo.ConvLayout("NCHW", "OIHW", "NCHW")
		return f.Conv(a[0], a[1], stablehlo.ConvParams{Dims: d, Strides: []int{1, 2}, Padding: stablehlo.Pads([2]int{1, 0}, [2]int{0, 2}),
			LhsDilation: []int{2, 1}, RhsDilation: []int{1, 2}})
	},
	"conv_depthwise": func(f *stablehlo.Function, a []sv) sv {
		d, _ := stablehlo.ConvLayout("NWC", "WIO", "NWC")
		return f.Conv(a[0], a[1], stablehlo.ConvParams{Dims: d, Padding: stablehlo.PadValid, FeatureGroupCount: 4})
	},
	"clamp_ties": func(f *stablehlo.Function, a []sv) sv {
		return f.Clamp(f.ConstantOf(dtypes.Float32, -1), a[0], f.ConstantOf(dtypes.Float32, 1))
	},
	"clamp_tensor_bounds": func(f *stablehlo.Function, a []sv) sv { return f.Clamp(a[0], a[1], a[2]) },
	"expm1":               func(f *stablehlo.Function, a []sv) sv { return f.Expm1(a[0]) },
	"log1p":               func(f *stablehlo.Function, a []sv) sv { return f.Log1p(a[0]) },
	"tan":                 func(f *stablehlo.Function, a []sv) sv { return f.Tan(a[0]) },
	"cbrt":                func(f *stablehlo.Function, a []sv) sv { return f.Cbrt(a[0]) },
	"erf":                 func(f *stablehlo.Function, a []sv) sv { return f.Erf(a[0]) },
	"erf_inv":             func(f *stablehlo.Function, a []sv) sv { return f.ErfInv(a[0]) },
	"gelu_exact":          func(f *stablehlo.Function, a []sv) sv { return nn.Gelu(f, a[0], false) },
	"relu_at_zero":        func(f *stablehlo.Function, a []sv) sv { return nn.Relu(f, a[0]) },
	"atan2":               func(f *stablehlo.Function, a []sv) sv { return f.Atan2(a[0], a[1]) },
	"take": func(f *stablehlo.Function, a []sv) sv {
		return f.Take(a[0], f.Array([]int32{3, 0, 3, 1, -1}, 5), 0)
	},
	"scatter_add_dropped": func(f *stablehlo.Function, a []sv) sv {
		return f.ScatterAdd(a[0], f.Array([]int32{2, 7, 2}, 3), a[1])
	},
	"scatter_set_repeated": func(f *stablehlo.Function, a []sv) sv {
		d := stablehlo.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}
		return f.Scatter(a[0], f.Array([]int32{2, 0, 2}, 3, 1), a[1], stablehlo.ScatterParams{Dims: d})
	},
	"max_pool_ties": func(f *stablehlo.Function, a []sv) sv {
		return f.ReduceWindow(a[0], stablehlo.Max, stablehlo.ReduceWindowParams{Window: []int{2, 2}})
	},
	"min_pool_same": func(f *stablehlo.Function, a []sv) sv {
		return f.ReduceWindow(a[0], stablehlo.Min, stablehlo.ReduceWindowParams{Window: []int{2, 3}, Strides: []int{2, 1}, Padding: stablehlo.PadSame})
	},
	"sum_pool_same": func(f *stablehlo.Function, a []sv) sv {
		return f.ReduceWindow(a[0], stablehlo.Sum, stablehlo.ReduceWindowParams{Window: []int{1, 2, 3, 1}, Strides: []int{1, 2, 1, 1}, Padding: stablehlo.PadSame})
	},
	"reduce_prod_zeros":   func(f *stablehlo.Function, a []sv) sv { return f.Reduce(a[0], stablehlo.Prod, 1) },
	"reduce_prod_dims02":  func(f *stablehlo.Function, a []sv) sv { return f.Reduce(a[0], stablehlo.Prod, 0, 2) },
	"cumprod_zeros":       func(f *stablehlo.Function, a []sv) sv { return f.Cumprod(a[0], 1, false) },
	"cumprod_reverse":     func(f *stablehlo.Function, a []sv) sv { return f.Cumprod(a[0], 0, true) },
	"cummax_ties":         func(f *stablehlo.Function, a []sv) sv { return f.Cummax(a[0], 1, false) },
	"cummin_reverse_ties": func(f *stablehlo.Function, a []sv) sv { return f.Cummin(a[0], 0, true) },
	"max_pool_hvp_ties": func(f *stablehlo.Function, a []sv) sv {
		return poolHVP(f, a[0], a[1], stablehlo.Max, stablehlo.ReduceWindowParams{Window: []int{2, 2}})
	},
	"min_pool_hvp_same": func(f *stablehlo.Function, a []sv) sv {
		return poolHVP(f, a[0], a[1], stablehlo.Min, stablehlo.ReduceWindowParams{Window: []int{2, 3}, Strides: []int{2, 1}, Padding: stablehlo.PadSame})
	},
	"scatter_mul_unique": func(f *stablehlo.Function, a []sv) sv {
		return f.Scatter(a[0], f.Array([]int32{2, 0, 3}, 3, 1), a[1], stablehlo.ScatterParams{Dims: rowScatter, UniqueIndices: true, Combine: stablehlo.Prod})
	},
	"scatter_mul_repeated_operand": func(f *stablehlo.Function, a []sv) sv {
		u := f.ArrayOf(dtypes.Float32, pattern([]int{3, 3}, 4, 4, 0), 3, 3)
		return f.Scatter(a[0], f.Array([]int32{2, 0, 2}, 3, 1), u, stablehlo.ScatterParams{Dims: rowScatter, Combine: stablehlo.Prod})
	},
	"scatter_max_ties": func(f *stablehlo.Function, a []sv) sv {
		return f.Scatter(a[0], f.Array([]int32{2, 0, 2, 1}, 4, 1), a[1], stablehlo.ScatterParams{Dims: rowScatter, Combine: stablehlo.Max})
	},
	"scatter_min_dropped": func(f *stablehlo.Function, a []sv) sv {
		return f.Scatter(a[0], f.Array([]int32{1, 5, 1}, 3, 1), a[1], stablehlo.ScatterParams{Dims: rowScatter, Combine: stablehlo.Min})
	},
	"reduce_window_sum_dilated": func(f *stablehlo.Function, a []sv) sv {
		return f.ReduceWindow(a[0], stablehlo.Sum, stablehlo.ReduceWindowParams{Window: []int{2, 2}, Strides: []int{2, 1},
			BaseDilations: []int{2, 1}, WindowDilations: []int{1, 2}, Padding: stablehlo.Pads([2]int{1, 0}, [2]int{0, 1})})
	},

	// Complex values.
	"real":                  func(f *stablehlo.Function, a []sv) sv { return f.Real(a[0]) },
	"imag":                  func(f *stablehlo.Function, a []sv) sv { return f.Imag(a[0]) },
	"complex":               func(f *stablehlo.Function, a []sv) sv { return f.Complex(a[0], a[1]) },
	"conj":                  func(f *stablehlo.Function, a []sv) sv { return f.Conj(a[0]) },
	"add_complex":           func(f *stablehlo.Function, a []sv) sv { return f.Add(a[0], a[1]) },
	"mul_complex":           func(f *stablehlo.Function, a []sv) sv { return f.Mul(a[0], a[1]) },
	"div_complex":           func(f *stablehlo.Function, a []sv) sv { return f.Div(a[0], a[1]) },
	"pow_complex":           func(f *stablehlo.Function, a []sv) sv { return f.Pow(a[0], a[1]) },
	"exp_complex":           func(f *stablehlo.Function, a []sv) sv { return f.Exp(a[0]) },
	"log_complex":           func(f *stablehlo.Function, a []sv) sv { return f.Log(a[0]) },
	"sin_complex":           func(f *stablehlo.Function, a []sv) sv { return f.Sin(a[0]) },
	"cos_complex":           func(f *stablehlo.Function, a []sv) sv { return f.Cos(a[0]) },
	"tanh_complex":          func(f *stablehlo.Function, a []sv) sv { return f.Tanh(a[0]) },
	"sqrt_complex":          func(f *stablehlo.Function, a []sv) sv { return f.Sqrt(a[0]) },
	"rsqrt_complex":         func(f *stablehlo.Function, a []sv) sv { return f.Rsqrt(a[0]) },
	"logistic_complex":      func(f *stablehlo.Function, a []sv) sv { return f.Logistic(a[0]) },
	"abs_complex_with_zero": func(f *stablehlo.Function, a []sv) sv { return f.Abs(a[0]) },
	"convert_complex_round_trip": func(f *stablehlo.Function, a []sv) sv {
		return f.Real(f.Mul(f.Convert(a[0], dtypes.Complex64), a[1]))
	},
	"dot_general_complex": func(f *stablehlo.Function, a []sv) sv { return f.MatMul(a[0], a[1]) },
	"reduce_sum_complex":  func(f *stablehlo.Function, a []sv) sv { return f.Sum(a[0], 1) },
	"grad_abs_squared": func(f *stablehlo.Function, a []sv) sv {
		r := f.Abs(a[0])
		return f.Sum(f.Mul(r, r))
	},
	"grad_real_z_conj_z": func(f *stablehlo.Function, a []sv) sv { return f.Real(f.Sum(f.Mul(a[0], f.Conj(a[0])))) },
	"fft":                func(f *stablehlo.Function, a []sv) sv { return f.FFT(a[0], stablehlo.FFT, 4) },
	"ifft_2d":            func(f *stablehlo.Function, a []sv) sv { return f.FFT(a[0], stablehlo.IFFT, 2, 4) },
	"rfft_even":          func(f *stablehlo.Function, a []sv) sv { return f.FFT(a[0], stablehlo.RFFT, 6) },
	"rfft_odd_2d":        func(f *stablehlo.Function, a []sv) sv { return f.FFT(a[0], stablehlo.RFFT, 3, 5) },
	"irfft_even":         func(f *stablehlo.Function, a []sv) sv { return f.FFT(a[0], stablehlo.IRFFT, 6) },
	"irfft_odd_2d":       func(f *stablehlo.Function, a []sv) sv { return f.FFT(a[0], stablehlo.IRFFT, 3, 5) },

	// Float8 and float4 values.
	"convert_f8e4m3fn": func(f *stablehlo.Function, a []sv) sv {
		return f.Convert(f.Convert(a[0], dtypes.F8E4M3FN), dtypes.Float32)
	},
	"convert_f8e5m2": func(f *stablehlo.Function, a []sv) sv {
		return f.Convert(f.Convert(a[0], dtypes.F8E5M2), dtypes.Float32)
	},
	"mul_f8e4m3fn":        func(f *stablehlo.Function, a []sv) sv { return f.Mul(a[0], a[1]) },
	"add_f8e5m2":          func(f *stablehlo.Function, a []sv) sv { return f.Add(a[0], a[1]) },
	"reduce_sum_f8e4m3fn": func(f *stablehlo.Function, a []sv) sv { return f.Sum(f.Mul(a[0], a[0]), 1) },
	"mul_f4e2m1fn":        func(f *stablehlo.Function, a []sv) sv { return f.Mul(a[0], a[1]) },
}

// vjpRefusedOps builds, per refused golden case, the op jax.vjp refused, with package
// stablehlo, on an f32 operand of shape in: op is the op autodiff must name, and jvp says
// whether jax.jvp takes it forward, as vjpNote says.
var vjpRefusedOps = map[string]struct {
	in    []int
	op    string
	jvp   bool
	build func(f *stablehlo.Function, x sv) sv
}{
	"reduce_window_prod": {[]int{5}, "stablehlo.reduce_window", true, func(f *stablehlo.Function, x sv) sv {
		return f.ReduceWindow(x, stablehlo.Prod, stablehlo.ReduceWindowParams{Window: []int{2}})
	}},
	"reduce_window_func": {[]int{4, 4}, "stablehlo.reduce_window", true, func(f *stablehlo.Function, x sv) sv {
		return f.ReduceWindowFunc(x, f.Constant(2.0), stablehlo.ReduceWindowParams{Window: []int{3, 2}, Strides: []int{1, 2},
			Padding: stablehlo.Pads([2]int{1, 1}, [2]int{0, 0})}, func(g *stablehlo.Function, acc, v sv) sv { return g.Max(acc, v) })
	}},
	"clamp_complex": {[]int{2, 3}, "stablehlo.clamp", false, func(f *stablehlo.Function, x sv) sv {
		return f.Real(f.Clamp(f.ConstantOf(dtypes.Complex64, complex64(0)), f.Complex(x, x), f.ConstantOf(dtypes.Complex64, complex64(2))))
	}},
}

// TestVJPRefused requires autodiff to refuse, with ErrNotDifferentiable naming the op and
// saying that JAX refuses it too, each op jax.vjp refused in the golden.
func TestVJPRefused(t *testing.T) {
	g := loadVJP(t)
	if len(g.Refused) == 0 {
		t.Fatal("oracle golden vjp: no refused cases (regenerate with `make oracle`)")
	}
	seen := map[string]bool{}
	for _, tc := range g.Refused {
		seen[tc.Name] = true
		t.Run(tc.Name, func(t *testing.T) {
			c, ok := vjpRefusedOps[tc.Name]
			if !ok {
				t.Errorf("vjp/refused/%s: no builder in vjpRefusedOps", tc.Name)
				return
			}
			m := stablehlo.NewModule("vjp_refused_" + tc.Name)
			f := m.Main()
			x := f.Arg(stablehlo.NewShape(dtypes.Float32, c.in...))
			grads := autodiff.Grad(f, f.Sum(c.build(f, x)), x)
			f.Return(grads...)
			_, err := m.Build()
			var d []string
			var oe *stablehlo.OpError
			switch {
			case err == nil:
				d = append(d, fmt.Sprintf("JAX refuses %s (%s), xlamesh differentiates it", tc.JAX, tc.Error))
			case !errors.Is(err, autodiff.ErrNotDifferentiable) || !errors.As(err, &oe) || oe.Op != c.op:
				d = append(d, fmt.Sprintf("want ErrNotDifferentiable naming %s, got %v", c.op, err))
			case !strings.Contains(err.Error(), "jax.vjp refuses it too"):
				d = append(d, fmt.Sprintf("error does not say JAX refuses it too: %v", err))
			case tc.JVP != c.jvp:
				d = append(d, fmt.Sprintf("jax.jvp takes it forward: %v, not %v: the JVP note of vjpNote is out of date", tc.JVP, c.jvp))
			}
			report.check(t, "vjp", "refused/"+tc.Name, d)
		})
	}
	for name := range vjpRefusedOps {
		if !seen[name] {
			t.Errorf("vjp: refused builder %s has no golden case", name)
		}
	}
}

// rowScatter are the dimension numbers of x.at[idx] on the rows of a matrix, idx of shape
// (n, 1).
var rowScatter = stablehlo.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}

// poolHVP is vjp.py's _pool_hvp: the Hessian-vector product of sum(pool(x)^3) at x along v,
// as the gradient of <grad, v>.
func poolHVP(f *stablehlo.Function, x, v sv, r stablehlo.Reduction, p stablehlo.ReduceWindowParams) sv {
	m := f.ReduceWindow(x, r, p)
	g := autodiff.Grad(f, f.Sum(f.Mul(f.Mul(m, m), m)), x)[0]
	return autodiff.Grad(f, f.Sum(f.Mul(g, v)), x)[0]
}

func vjpDType(s string) (dtypes.DType, error) {
	if d, ok := programDTypes[s]; ok {
		return d, nil
	}
	return 0, fmt.Errorf("vjp: dtype %q", s)
}

// vjpConstant returns a as a constant of f: its values in its type, a complex array's from
// its (real, imaginary) pairs.
func vjpConstant(f *stablehlo.Function, a vjpArray) (sv, error) {
	d, err := vjpDType(a.DType)
	if err != nil {
		return sv{}, err
	}
	switch d {
	case dtypes.Complex64:
		v := make([]complex64, len(a.Values)/2)
		for i := range v {
			v[i] = complex(float32(a.Values[2*i]), float32(a.Values[2*i+1]))
		}
		return f.ArrayOf(d, v, a.Shape...), nil
	case dtypes.Float32:
		return f.ArrayOf(d, f32s(a.Values), a.Shape...), nil
	}
	return f.ArrayOf(d, a.Values, a.Shape...), nil
}

// vjpBuffer puts input a on dev: its raw bytes where the golden has them, else its values
// as float32.
func vjpBuffer(c *pjrt.Client, dev *pjrt.Device, a vjpArray) (*pjrt.Buffer, error) {
	if a.Hex == "" {
		return c.BufferFromHost(dev, f32s(a.Values), a.Shape)
	}
	d, err := vjpDType(a.DType)
	if err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(a.Hex)
	if err != nil {
		return nil, err
	}
	return c.BufferFromBytes(dev, d, a.Shape, raw)
}

// compareBuffer appends the differences between JAX's want and the buffer xlamesh computed
// (see compareHost).
func compareBuffer(d *[]string, what string, want vjpArray, got *pjrt.Buffer, exact bool) error {
	h, err := got.ToHost()
	if err != nil {
		return err
	}
	return compareHost(d, what, want, got.Shape(), h, exact)
}

// compareHost appends the differences between JAX's want and xlamesh's array of shape s,
// copied to the host as h: its type and shape, then float32 values as compareArray compares
// them, complex64 values as float32 (real, imaginary) pairs, and float8 and float4 values
// (one byte each) bit for bit.
func compareHost(d *[]string, what string, want vjpArray, s stablehlo.Shape, h any, exact bool) error {
	wd, err := vjpDType(want.DType)
	if err != nil {
		return err
	}
	if s.DType() != wd || !slices.Equal(s.Dims(), want.Shape) {
		*d = append(*d, fmt.Sprintf("%s: JAX %s%v, xlamesh %v%v", what, want.DType, want.Shape, s.DType(), s.Dims()))
		return nil
	}
	switch h := h.(type) {
	case []float32:
		compareArray(d, what, want, h, exact)
	case []complex64:
		parts := make([]float32, 0, 2*len(h))
		for _, z := range h {
			parts = append(parts, real(z), imag(z))
		}
		compareArray(d, what+" (real, imaginary)", want, parts, exact)
	case []uint8:
		raw, err := hex.DecodeString(want.Hex)
		if err != nil {
			return err
		}
		if len(raw) != len(h) || len(want.Values) != len(h) {
			*d = append(*d, fmt.Sprintf("%s: JAX has %d bytes, xlamesh %d", what, len(raw), len(h)))
			return nil
		}
		for i := range h {
			if h[i] != raw[i] {
				*d = append(*d, fmt.Sprintf("%s[%d]: JAX %v (%#02x), xlamesh %#02x", what, i, want.Values[i], raw[i], h[i]))
				return nil
			}
		}
	default:
		return fmt.Errorf("%s: host data %T", what, h)
	}
	return nil
}

func f32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// compareArray appends the differences between JAX's want and xlamesh's got.
func compareArray(d *[]string, what string, want vjpArray, got []float32, exact bool) {
	if len(want.Values) != len(got) {
		*d = append(*d, fmt.Sprintf("%s: JAX has %d values, xlamesh %d", what, len(want.Values), len(got)))
		return
	}
	scale := 0.0 // on a GPU, differences are relative to the array's largest magnitude (TF32)
	if gpuLoose() {
		for _, w := range want.Values {
			scale = max(scale, math.Abs(w))
		}
	}
	for i, w := range want.Values {
		g := float64(got[i])
		ok := float32(w) == got[i]
		if !exact || gpuLoose() {
			ok = ok || math.Abs(g-w) <= vjpFloor+vjpTolerance()*max(math.Abs(g), math.Abs(w), scale)
		}
		if !ok {
			*d = append(*d, fmt.Sprintf("%s[%d]: JAX %v, xlamesh %v", what, i, float32(w), got[i]))
			return
		}
	}
}

func TestVJPRules(t *testing.T) {
	g := loadVJP(t)
	report.noteGroup("vjp", vjpNote())
	c := pjrttest.Client(t)
	dev := c.Devices()[0]
	seen := map[string]bool{}
	for _, tc := range g.Rules {
		seen[tc.Name] = true
		t.Run(tc.Name, func(t *testing.T) {
			build, ok := vjpRules[tc.Name]
			if !ok {
				t.Errorf("vjp/%s: no builder in vjpRules", tc.Name)
				return
			}
			m := stablehlo.NewModule("vjp_" + tc.Name)
			f := m.Main()
			args := make([]sv, len(tc.Inputs))
			for i, in := range tc.Inputs {
				dt, err := vjpDType(in.DType)
				if err != nil {
					t.Fatal(err)
				}
				args[i] = f.Arg(stablehlo.NewShape(dt, in.Shape...))
			}
			out := build(f, args)
			ct, err := vjpConstant(f, tc.Cotangent)
			if err != nil {
				t.Fatal(err)
			}
			grads := autodiff.VJP(f, []sv{out}, args, []sv{ct})
			f.Return(append([]sv{out}, grads...)...)
			text, err := m.Build()
			if err != nil {
				report.check(t, "vjp", tc.Name, []string{err.Error()})
				return
			}
			exe, err := c.Compile(text, pjrt.CompileOptions{NumPartitions: 1, DeviceAssignment: []int{dev.ID()}})
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			defer exe.Close()
			var bufs []*pjrt.Buffer
			defer func() {
				for _, b := range bufs {
					b.Close()
				}
			}()
			for _, in := range tc.Inputs {
				b, err := vjpBuffer(c, dev, in)
				if err != nil {
					t.Fatal(err)
				}
				bufs = append(bufs, b)
			}
			outs, err := exe.Execute([][]*pjrt.Buffer{bufs})
			if err != nil {
				t.Fatal(err)
			}
			var d []string
			for i, b := range outs[0] {
				what, want := "out", tc.Out
				if i > 0 {
					what, want = fmt.Sprintf("grad %d", i-1), tc.Grads[i-1]
				}
				err := compareBuffer(&d, what, want, b, tc.Exact)
				b.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			report.check(t, "vjp", tc.Name, d)
		})
	}
	for name := range vjpRules {
		if !seen[name] {
			t.Errorf("vjp: builder %s has no golden case", name)
		}
	}
}

// vjpNote describes the group in docs/jax-compat.md: what is compared, the transpose rules
// package autodiff has (from its registry, so the list cannot go stale) and the deliberate
// differences from JAX.
func vjpNote() string {
	var ops []string
	for _, n := range autodiff.Registered() {
		ops = append(ops, "`"+n+"`")
	}
	return "Each transpose rule of package autodiff against `jax.vjp` of the same lax op on the same inputs and " +
		"cotangent (exact where the case's arithmetic is, else to 1e-5 relative); the `program/` cases train or " +
		"differentiate models under sharding on the 2x4 mesh with `jax.value_and_grad` in Shardy and GSPMD mode " +
		"(losses step by step and gradients to 1e-5 relative, and each gradient must come back with its " +
		"parameter's sharding); the `refused/` cases are ops `jax.vjp` refuses, which VJP must refuse too, with an error " +
		"wrapping autodiff.ErrNotDifferentiable that names the op and says so. Cases on complex values follow JAX's " +
		"convention, the plain transpose without conjugation, and compare complex64 as float32 (real, imaginary) pairs; " +
		"cases on float8 and float4 values, whose cotangents are of their own type, compare bit for bit.\n\n" +
		"Ops with a transpose rule: " + strings.Join(ops, ", ") + "; and, in the modules package lower makes, " +
		"`sdy.sharding_constraint`, `sdy.manual_computation`, the collectives over mesh axes and " +
		"`annotate_device_placement` (rules lower gives each of its modules).\n\n" +
		"Deliberate differences from JAX:\n\n" +
		"- A scatter with a Go combiner (ScatterFunc) has no rule (an error wrapping autodiff.ErrNotDifferentiable naming the op).\n" +
		"- JVP is computed by transposing VJP, so it refuses what VJP refuses, the `refused/` cases included: `jax.vjp` refuses a " +
		"windowed product and a reduce_window whose computation is not add, max or min with its identity (JAX's generic " +
		"reduce_window has a JVP rule and no transpose), as VJP does, but `jax.jvp` takes them forward (a clamp of complex " +
		"values both refuse).\n" +
		"- The abs of a complex value is the builder's `stablehlo.abs`, where JAX lowers it through a scaled hypot of the " +
		"real and imaginary parts: the values, and so the cotangents of `abs_complex_with_zero` and `grad_abs_squared`, " +
		"agree to the tolerance, not bit for bit.\n" +
		"- Loops with a known trip count (ForLoop, Scan) run their body forward twice in the gradient program (once more to stack " +
		"the carried values each iteration starts from), and the cotangent of a captured value or of a scanned input is summed " +
		"over the iterations in full; JAX's scan saves its residuals in the forward pass and stacks the inputs' cotangents.\n" +
		"- VJP gives an integer or pred input zeros of its own type where JAX gives `float0` zeros; Grad refuses it (ErrNotFloat) as `jax.grad` does.\n" +
		"- A `func.call` callee and a shard_map body are replayed next to their backward pass instead of saving residuals " +
		"(same values; XLA merges the copies of a call after inlining).\n" +
		"- VJP accepts any value of the function as a differentiated value, not only arguments: the walk treats it as an input.\n" +
		"- A shard_map built with ShardMapUnchecked (`check_vma=False`) has no rule: its gradient needs the replication types " +
		"that JAX's rules for `check_vma=False` do without.\n" +
		"- `program/smap_all_to_all_untiled` compares with JAX's gradient of the same function written with `tiled=True` " +
		"(expand_dims, all_to_all, squeeze; vjp.py checks both forms agree): JAX 0.8.1's transpose of `all_to_all` with " +
		"`tiled=False` and different split and concat axes applies the untiled reshapes a second time and returns a " +
		"cotangent of the wrong shape."
}

// pattern is tools/oracle/vjp.py's pattern (examples/mlp.Init's formula).
func pattern(dims []int, k int, scale float32, offset float32) []float32 {
	n := 1
	for _, d := range dims {
		n *= d
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = float32((i*(7+2*k)+3*k)%17-8)/scale + offset
	}
	return out
}

// vjpMesh is the 2x4 ("data", "model") mesh over devices 0..7, or on a client with fewer
// devices the mesh fitShape makes of it (2x2, 2x1, 1x1) over the first ones: the programs'
// losses and gradients are global values, the same on any mesh.
func vjpMesh(t *testing.T, c *pjrt.Client) mesh.Mesh {
	shape := pjrttest.FitShape([]int{2, 4}, len(c.Devices()))
	m, err := mesh.New(jit.Devices(c)[:prod(shape)], shape, "data", "model")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func put(t *testing.T, c *pjrt.Client, m mesh.Mesh, v []float32, dims []int, spec mesh.PartitionSpec) *jit.Array {
	t.Helper()
	s, err := mesh.NewNamedSharding(m, spec)
	if err != nil {
		t.Fatal(err)
	}
	a, err := jit.Put(c, v, dims, s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// putInt32 puts the int32 scalar v on m, replicated.
func putInt32(t *testing.T, c *pjrt.Client, m mesh.Mesh, v int32) *jit.Array {
	t.Helper()
	s, err := mesh.NewNamedSharding(m, mesh.P())
	if err != nil {
		t.Fatal(err)
	}
	a, err := jit.Put(c, []int32{v}, nil, s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func scalar(t *testing.T, a *jit.Array) float64 {
	t.Helper()
	h, err := a.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	return float64(h.([]float32)[0])
}

func closeAll(as []*jit.Array) {
	for _, a := range as {
		if a != nil {
			a.Close()
		}
	}
}

func compareLosses(d *[]string, want, got []float64) {
	if len(want) != len(got) {
		*d = append(*d, fmt.Sprintf("JAX has %d losses, xlamesh %d", len(want), len(got)))
		return
	}
	for i := range want {
		// Written as "not within", so a NaN loss from xlamesh is a difference (NaN > x is false).
		if !(math.Abs(got[i]-want[i]) <= vjpTolerance()*math.Abs(want[i])) {
			*d = append(*d, fmt.Sprintf("loss %d: JAX %.8g, xlamesh %.8g", i, want[i], got[i]))
		}
	}
}

var vjpModes = []struct {
	name string
	p    lower.Partitioner
}{{"shardy", lower.Shardy}, {"gspmd", lower.GSPMD}}

// TestVJPPrograms trains and differentiates the models of tools/oracle/vjp.py under
// sharding and compares with JAX.
func TestVJPPrograms(t *testing.T) {
	g := loadVJP(t)
	c := pjrttest.Client(t)
	m := vjpMesh(t, c)
	for _, mode := range vjpModes {
		t.Run("mlp_sgd_"+mode.name, func(t *testing.T) {
			name := "mlp_sgd_" + mode.name
			step := jit.New("sgd_step", mlp.SGD(0.1), append(mlp.StepOptions(), jit.WithPartitioner(mode.p))...)
			defer step.Close()
			shapes, specs := mlp.Small.Shapes(), mlp.Specs()
			args := make([]*jit.Array, 6)
			for i, v := range mlp.Small.Init() {
				args[i] = put(t, c, m, v, shapes[i], specs[i])
			}
			defer func() { closeAll(args) }()
			var losses []float64
			for range 20 {
				out, err := step.Call(c, args...)
				if err != nil {
					t.Fatal(err)
				}
				losses = append(losses, scalar(t, out[0]))
				out[0].Close()
				copy(args, out[1:])
			}
			var d []string
			compareLosses(&d, g.Programs[name].Losses, losses)
			report.check(t, "vjp", "program/"+name, d)
		})
		t.Run("mlp_adam_"+mode.name, func(t *testing.T) {
			name := "mlp_adam_" + mode.name
			opts, err := mlp.Small.AdamOptions()
			if err != nil {
				t.Fatal(err)
			}
			step := jit.New("adam_step", mlp.Adam(0.01, 0.9, 0.999, 1e-8), append(opts, jit.WithPartitioner(mode.p))...)
			defer step.Close()
			shapes, specs := mlp.Small.Shapes(), mlp.Specs()
			init := mlp.Small.Init()
			// The parameters, then the optimizer state: a zero step count, zero moments.
			var state []*jit.Array
			for i := range 4 {
				state = append(state, put(t, c, m, init[i], shapes[i], specs[i]))
			}
			for _, l := range mlp.Small.AdamState() {
				if l.Kind == optim.Count {
					state = append(state, putInt32(t, c, m, 0))
					continue
				}
				state = append(state, put(t, c, m, make([]float32, len(init[l.Param])), shapes[l.Param], specs[l.Param]))
			}
			x := put(t, c, m, init[4], shapes[4], specs[4])
			y := put(t, c, m, init[5], shapes[5], specs[5])
			defer func() { closeAll(state); x.Close(); y.Close() }()
			var losses []float64
			for range 10 {
				out, err := step.Call(c, append(slices.Clone(state), x, y)...)
				if err != nil {
					t.Fatal(err)
				}
				losses = append(losses, scalar(t, out[0]))
				out[0].Close()
				copy(state, out[1:])
			}
			var d []string
			compareLosses(&d, g.Programs[name].Losses, losses)
			report.check(t, "vjp", "program/"+name, d)
		})
		t.Run("attention_"+mode.name, func(t *testing.T) {
			dims := [][]int{{4, 8, 16}, {16, 16}, {16, 16}, {16, 16}, {16, 16}}
			specs := []mesh.PartitionSpec{mesh.P("data", nil, nil), mesh.P(nil, "model"), mesh.P(nil, "model"), mesh.P(nil, "model"), mesh.P("model", nil)}
			inputs := [][]float32{pattern(dims[0], 0, 8, 0)}
			for k := 1; k <= 4; k++ {
				inputs = append(inputs, pattern(dims[k], k, 32, 0))
			}
			gradProgram(t, c, m, "attention_"+mode.name, mode.p, g.Programs["attention_"+mode.name], attentionLoss, inputs, dims, specs)
		})
		t.Run("convnet_"+mode.name, func(t *testing.T) {
			dims := [][]int{{8, 8, 8, 3}, {3, 3, 3, 8}, {8}, {128, 4}, {4}, {8, 4}}
			specs := []mesh.PartitionSpec{mesh.P("data", nil, nil, nil), mesh.P(nil, nil, nil, "model"), mesh.P("model"),
				mesh.P("model", nil), mesh.P(), mesh.P("data", nil)}
			var inputs [][]float32
			for k, d := range dims {
				inputs = append(inputs, pattern(d, k, 8, 0))
			}
			gradProgram(t, c, m, "convnet_"+mode.name, mode.p, g.Programs["convnet_"+mode.name], convnetLoss, inputs, dims, specs)
		})
		t.Run("layer_norm_"+mode.name, func(t *testing.T) {
			dims := [][]int{{8, 16}, {16}, {16}}
			specs := []mesh.PartitionSpec{mesh.P("data", nil), mesh.P(), mesh.P()}
			inputs := [][]float32{pattern(dims[0], 0, 4, 0), pattern(dims[1], 1, 8, 1), pattern(dims[2], 2, 8, 0)}
			gradProgram(t, c, m, "layer_norm_"+mode.name, mode.p, g.Programs["layer_norm_"+mode.name], layerNormLoss, inputs, dims, specs)
		})
	}
}

// smapPrograms are tools/oracle/vjp.py's SMAP: losses through a shard_map on the 2x4
// ("data", "model") mesh, each with its inputs' shapes and specs; shardyOnly marks a
// partial-manual shard_map, which GSPMD mode does not have.
var smapPrograms = []struct {
	name       string
	loss       jit.Loss
	dims       [][]int
	specs      []mesh.PartitionSpec
	shardyOnly bool
}{
	{"smap_psum_matmul", func(f *lower.Function, a []lower.Value) lower.Value {
		return tloss(f, smap(f, []mesh.PartitionSpec{mesh.P("data", "model"), mesh.P("model", nil)}, mesh.P("data", nil), nil,
			func(g *lower.Function, b []lower.Value) lower.Value { return g.Psum(g.MatMul(b[0], b[1]), "model") }, a...))
	}, [][]int{{8, 16}, {16, 4}}, []mesh.PartitionSpec{mesh.P("data", "model"), mesh.P("model", nil)}, false},
	{"smap_replicated_weight", func(f *lower.Function, a []lower.Value) lower.Value {
		return smap(f, []mesh.PartitionSpec{mesh.P("data", nil), mesh.P()}, mesh.P(), nil,
			func(g *lower.Function, b []lower.Value) lower.Value {
				return g.Psum(g.Sum(g.Tanh(g.MatMul(b[0], b[1]))), "data")
			}, a...)
	}, [][]int{{8, 16}, {16, 4}}, []mesh.PartitionSpec{mesh.P("data", nil), mesh.P()}, false},
	{"smap_loop_replicated_weight", func(f *lower.Function, a []lower.Value) lower.Value {
		return smap(f, []mesh.PartitionSpec{mesh.P("data", nil), mesh.P()}, mesh.P(), nil,
			func(g *lower.Function, b []lower.Value) lower.Value {
				w := b[1]
				h := g.ForLoop(3, []lower.Value{b[0]}, func(r *stablehlo.Function, _ lower.Value, c []lower.Value) []lower.Value {
					return []lower.Value{r.Tanh(r.MatMul(c[0], w))}
				})
				return g.Psum(g.Sum(h[0]), "data")
			}, a...)
	}, [][]int{{8, 4}, {4, 4}}, []mesh.PartitionSpec{mesh.P("data", nil), mesh.P()}, false},
	{"smap_psum_replicated", func(f *lower.Function, a []lower.Value) lower.Value {
		return tloss(f, smap(f, []mesh.PartitionSpec{mesh.P()}, mesh.P(), nil,
			func(g *lower.Function, b []lower.Value) lower.Value { return g.Psum(b[0], "model") }, a...))
	}, [][]int{{4, 4}}, []mesh.PartitionSpec{mesh.P()}, false},
	{"smap_all_gather", func(f *lower.Function, a []lower.Value) lower.Value {
		return tloss(f, smap(f, []mesh.PartitionSpec{mesh.P(nil, "model")}, mesh.P("model", nil), nil,
			func(g *lower.Function, b []lower.Value) lower.Value {
				x := b[0]
				gathered := g.AllGatherOver(x, 1, "model")
				col := g.BroadcastInDim(g.Slice(x, []int{0, 0}, []int{4, 1}, nil), gathered.Shape().Dims(), []int{0, 1})
				return g.Mul(gathered, col)
			}, a...))
	}, [][]int{{4, 8}}, []mesh.PartitionSpec{mesh.P(nil, "model")}, false},
	{"smap_psum_scatter", func(f *lower.Function, a []lower.Value) lower.Value {
		return tloss(f, smap(f, []mesh.PartitionSpec{mesh.P("data", nil)}, mesh.P(mesh.Axes("data", "model"), nil), nil,
			func(g *lower.Function, b []lower.Value) lower.Value {
				return g.PsumScatter(g.Mul(b[0], b[0]), 0, true, "model")
			}, a...))
	}, [][]int{{16, 4}}, []mesh.PartitionSpec{mesh.P("data", nil)}, false},
	{"smap_ppermute", func(f *lower.Function, a []lower.Value) lower.Value {
		return tloss(f, smap(f, []mesh.PartitionSpec{mesh.P("model", nil)}, mesh.P("model", nil), nil,
			func(g *lower.Function, b []lower.Value) lower.Value {
				x := b[0]
				ring := g.Ppermute(x, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 0}}, "model")
				return g.Add(g.Mul(ring, x), g.Ppermute(x, [][2]int{{0, 2}, {1, 3}}, "model"))
			}, a...))
	}, [][]int{{8, 4}}, []mesh.PartitionSpec{mesh.P("model", nil)}, false},
	{"smap_all_to_all", func(f *lower.Function, a []lower.Value) lower.Value {
		return tloss(f, smap(f, []mesh.PartitionSpec{mesh.P(nil, "model")}, mesh.P(nil, "model"), nil,
			func(g *lower.Function, b []lower.Value) lower.Value {
				return g.Mul(g.AllToAllOver(b[0], 0, 1, "model"), g.Constant(2.0))
			}, a...))
	}, [][]int{{8, 8}}, []mesh.PartitionSpec{mesh.P(nil, "model")}, false},
	{"smap_all_gather_untiled", func(f *lower.Function, a []lower.Value) lower.Value {
		return tloss(f, smap(f, []mesh.PartitionSpec{mesh.P(nil, "model")}, mesh.P(nil, nil, "model"), nil,
			func(g *lower.Function, b []lower.Value) lower.Value {
				return g.Mul(g.AllGatherUntiled(b[0], 1, "model"), g.Constant(2.0))
			}, a...))
	}, [][]int{{4, 8}}, []mesh.PartitionSpec{mesh.P(nil, "model")}, false},
	{"smap_all_to_all_untiled", func(f *lower.Function, a []lower.Value) lower.Value {
		return tloss(f, smap(f, []mesh.PartitionSpec{mesh.P(nil, "model")}, mesh.P("model", nil), nil,
			func(g *lower.Function, b []lower.Value) lower.Value {
				return g.Mul(g.AllToAllUntiled(b[0], 0, 1, "model"), g.Constant(2.0))
			}, a...))
	}, [][]int{{4, 8}}, []mesh.PartitionSpec{mesh.P(nil, "model")}, false},
	{"smap_partial_manual", func(f *lower.Function, a []lower.Value) lower.Value {
		return tloss(f, smap(f, []mesh.PartitionSpec{mesh.P(nil, "model"), mesh.P("model", nil)}, mesh.P(), []string{"model"},
			func(g *lower.Function, b []lower.Value) lower.Value { return g.Psum(g.MatMul(b[0], b[1]), "model") }, a...))
	}, [][]int{{8, 16}, {16, 4}}, []mesh.PartitionSpec{mesh.P("data", "model"), mesh.P("model", nil)}, true},
}

// smap is jax.shard_map on the 2x4 mesh with one result.
func smap(f *lower.Function, in []mesh.PartitionSpec, out mesh.PartitionSpec, manual []string,
	body func(g *lower.Function, a []lower.Value) lower.Value, args ...lower.Value) lower.Value {
	abs := mesh.MustAbstract([]int{2, 4}, []string{"data", "model"})
	return f.ShardMap(abs, in, []mesh.PartitionSpec{out}, manual, func(g *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{body(g, a)}
	}, args...)[0]
}

// tloss is vjp.py's tloss: sum(tanh(y) * pattern(y.shape, 5, 8)).
func tloss(f *lower.Function, y lower.Value) lower.Value {
	dims := y.Shape().Dims()
	return f.Sum(f.Mul(f.Tanh(y), f.ArrayOf(dtypes.Float32, pattern(dims, 5, 8, 0), dims...)))
}

// TestVJPShardMap differentiates the losses of smapPrograms and compares with JAX; each
// needs the 8 devices of the 2x4 mesh.
func TestVJPShardMap(t *testing.T) {
	g := loadVJP(t)
	c := pjrttest.Client(t)
	m := vjpMesh(t, c)
	for _, mode := range vjpModes {
		for _, p := range smapPrograms {
			if p.shardyOnly && mode.p == lower.GSPMD {
				continue
			}
			name := p.name + "_" + mode.name
			t.Run(name, func(t *testing.T) {
				// The shard_map's collectives (and smap's abstract mesh) are those of
				// the 2x4 mesh the golden was computed on.
				pjrttest.NeedDevices(t, 8)
				want, ok := g.Programs[name]
				if !ok {
					t.Fatalf("no golden program %s", name)
				}
				inputs := make([][]float32, len(p.dims))
				for k, d := range p.dims {
					inputs[k] = pattern(d, k, 8, 0)
				}
				gradProgram(t, c, m, name, mode.p, want, p.loss, inputs, p.dims, p.specs)
			})
		}
	}
}

// gradProgram runs jit.ValueAndGrad of loss on the inputs with their specs and compares the
// loss and every gradient with JAX's.
func gradProgram(t *testing.T, c *pjrt.Client, m mesh.Mesh, name string, p lower.Partitioner, want vjpProgram,
	loss jit.Loss, inputs [][]float32, dims [][]int, specs []mesh.PartitionSpec) {
	wrt := make([]int, len(inputs))
	for i := range wrt {
		wrt[i] = i
	}
	fn := jit.New(name, jit.ValueAndGrad(loss, wrt...), jit.InSpecs(specs...),
		jit.OutSpecs(append([]mesh.PartitionSpec{mesh.P()}, specs...)...), jit.WithPartitioner(p))
	defer fn.Close()
	args := make([]*jit.Array, len(inputs))
	for i, v := range inputs {
		args[i] = put(t, c, m, v, dims[i], specs[i])
	}
	defer closeAll(args)
	out, err := fn.Call(c, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(out)
	var d []string
	if l := scalar(t, out[0]); math.Abs(l-want.Loss) > vjpFloor+vjpTolerance()*math.Abs(want.Loss) {
		d = append(d, fmt.Sprintf("loss: JAX %.8g, xlamesh %.8g", want.Loss, l))
	}
	for i, gr := range out[1:] {
		if !gr.Sharding().Spec().Equal(specs[i]) {
			d = append(d, fmt.Sprintf("grad %d: sharding %v, want the argument's %v", i, gr.Sharding().Spec(), specs[i]))
		}
		h, err := gr.ToHost()
		if err != nil {
			t.Fatal(err)
		}
		compareArray(&d, fmt.Sprintf("grad %d", i), want.Grads[i], h.([]float32), false)
	}
	report.check(t, "vjp", "program/"+name, d)
}

// attentionLoss is tools/oracle/vjp.py's attention_loss: one head, softmax with the row max
// under stop_gradient, sum(tanh(out)).
func attentionLoss(f *lower.Function, a []lower.Value) lower.Value {
	x, wq, wk, wv, wo := a[0], a[1], a[2], a[3], a[4]
	proj := func(w lower.Value) lower.Value {
		return f.DotGeneral(x, w, lower.DotDims{LhsContracting: []int{2}, RhsContracting: []int{0}})
	}
	q, k, v := proj(wq), proj(wk), proj(wv)
	s := f.DotGeneral(q, k, lower.DotDims{LhsBatch: []int{0}, RhsBatch: []int{0}, LhsContracting: []int{2}, RhsContracting: []int{2}})
	s = f.Div(s, f.Constant(4.0))
	dims := s.Shape().Dims()
	mx := autodiff.StopGradient(f.ReduceMax(s, 2))
	e := f.Exp(f.Sub(s, f.BroadcastInDim(mx, dims, []int{0, 1})))
	p := f.Div(e, f.BroadcastInDim(f.Sum(e, 2), dims, []int{0, 1}))
	o := f.DotGeneral(p, v, lower.DotDims{LhsBatch: []int{0}, RhsBatch: []int{0}, LhsContracting: []int{2}, RhsContracting: []int{1}})
	o = f.DotGeneral(o, wo, lower.DotDims{LhsContracting: []int{2}, RhsContracting: []int{0}})
	return f.Sum(f.Tanh(o))
}

// convnetLoss is tools/oracle/vjp.py's convnet_loss: a SAME 3x3 convolution, tanh, a 2x2
// max pool, a dense layer and the mean squared error; the last argument is the target.
func convnetLoss(f *lower.Function, a []lower.Value) lower.Value {
	x, k1, b1, w2, b2, y := a[0], a[1], a[2], a[3], a[4], a[5]
	d, _ := stablehlo.ConvLayout("NHWC", "HWIO", "NHWC")
	c := f.Conv(x, k1, stablehlo.ConvParams{Dims: d, Padding: stablehlo.PadSame})
	h := f.Tanh(f.Add(c, f.BroadcastInDim(b1, c.Shape().Dims(), []int{3})))
	h = f.ReduceWindow(h, stablehlo.Max, stablehlo.ReduceWindowParams{Window: []int{1, 2, 2, 1}, Strides: []int{1, 2, 2, 1}})
	out := f.MatMul(f.Reshape(h, 8, 128), w2)
	out = f.Add(out, f.BroadcastInDim(b2, out.Shape().Dims(), []int{1}))
	e := f.Sub(out, y)
	return f.Div(f.Sum(f.Mul(e, e)), f.Constant(float64(e.Shape().Size())))
}

// layerNormLoss is tools/oracle/vjp.py's layer_norm_loss.
func layerNormLoss(f *lower.Function, a []lower.Value) lower.Value {
	x, gamma, beta := a[0], a[1], a[2]
	dims := x.Shape().Dims()
	n := float64(dims[1])
	row := func(v lower.Value) lower.Value { return f.BroadcastInDim(v, dims, []int{0}) }
	col := func(v lower.Value) lower.Value { return f.BroadcastInDim(v, dims, []int{1}) }
	mean := row(f.Div(f.Sum(x, 1), f.Constant(n)))
	xc := f.Sub(x, mean)
	v := row(f.Div(f.Sum(f.Mul(xc, xc), 1), f.Constant(n)))
	y := f.Add(f.Mul(f.Mul(xc, f.Rsqrt(f.Add(v, f.Constant(1e-5)))), col(gamma)), col(beta))
	tt := f.ArrayOf(dtypes.Float32, pattern(dims, 5, 8, 0), dims...)
	return f.Sum(f.Mul(f.Tanh(y), tt))
}
