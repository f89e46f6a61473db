package oracletest

import (
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/jnp"
	"github.com/xlamesh/xlamesh/nn"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestOpsNumpy compares stablehlo's NumPy-style ops (broadcasting, Einsum, MatMul), package
// jnp's reductions (keepdims, Mean, Variance) and package nn (Softmax, LogSoftmax,
// LogSumExp, Relu, Gelu, LayerNorm) with jnp, jax.nn and flax on the same inputs
// (testdata/oracle/ops_numpy.json).
func TestOpsNumpy(t *testing.T) {
	runOpsGroup(t, "ops_numpy", "Each case builds one helper of package `stablehlo` (numpy.go, einsum.go), `jnp` or `nn` and runs it "+
		"on the pinned CPU plugin on the inputs JAX was given; the JAX expression is in tools/oracle/ops_numpy.py. "+
		"Integers, bools and bf16 compare bit for bit, and so does f32 except the cases built on exp, log, tanh or erf (softmax, log_softmax, logsumexp, gelu), compared at 1e-6 relative because those polynomials round differently in the last bit between XLA builds.",
		opsNumpyBuilders)
}

// opsN adapts a builder of several results.
func opsN(call string, build func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value) opsBuilder {
	return opsBuilder{call: call, build: build}
}

// einsumOp is f.Einsum(spec, args...).
func einsumOp(spec string) opsBuilder {
	return op1(`f.Einsum("`+spec+`", ...)`, func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Einsum(spec, a...)
	})
}

// matmulOp is f.MatMul(a, b).
var matmulOp = op1("f.MatMul(a, b)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.MatMul(a[0], a[1]) })

// layerNorm is f.LayerNorm with the arguments after x as scale and bias (as the case has
// them).
func layerNorm(call string, scale, bias bool, eps float64, dims ...int) opsBuilder {
	return op1(call, func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		o := nn.LayerNormOptions{Epsilon: eps, Dims: dims}
		i := 1
		if scale {
			o.Scale = a[i]
			i++
		}
		if bias {
			o.Bias = a[i]
		}
		return nn.LayerNorm(f, a[0], o)
	})
}

var opsNumpyBuilders = map[string]opsBuilder{
	"broadcast2_add": op1("f.Add(f.Broadcast2(x, y))", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Add(f.Broadcast2(a[0], a[1]))
	}),
	"broadcast2_mul_int": op1("f.Mul(f.Broadcast2(x, y))", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return f.Mul(f.Broadcast2(a[0], a[1]))
	}),
	"broadcast_arrays": opsN("f.BroadcastArrays(a, b, c)", func(f *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value { return f.BroadcastArrays(a...) }),

	"sum_keepdims": op1("jnp.SumKeepDims(f, x, 0, 2)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return jnp.SumKeepDims(f, a[0], 0, 2)
	}),
	"sum_keepdims_all": op1("jnp.SumKeepDims(f, x)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return jnp.SumKeepDims(f, a[0]) }),
	"max_keepdims": op1("jnp.ReduceMaxKeepDims(f, x, -1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return jnp.ReduceMaxKeepDims(f, a[0], -1)
	}),
	"min_keepdims": op1("jnp.ReduceMinKeepDims(f, x, 1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return jnp.ReduceMinKeepDims(f, a[0], 1)
	}),
	"mean_axis": op1("jnp.Mean(f, x, 1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return jnp.Mean(f, a[0], 1) }),
	"mean_all":  op1("jnp.Mean(f, x)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return jnp.Mean(f, a[0]) }),
	"mean_keepdims": op1("jnp.MeanKeepDims(f, x, 0, -1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return jnp.MeanKeepDims(f, a[0], 0, -1)
	}),
	"mean_bf16": op1("jnp.Mean(f, x, -1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return jnp.Mean(f, a[0], -1) }),
	"var_axis":  op1("jnp.Variance(f, x, 0)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return jnp.Variance(f, a[0], 0) }),
	"var_all":   op1("jnp.Variance(f, x)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return jnp.Variance(f, a[0]) }),
	"var_keepdims": op1("jnp.VarianceKeepDims(f, x, -1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return jnp.VarianceKeepDims(f, a[0], -1)
	}),
	"var_bf16": op1("jnp.Variance(f, x, 1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return jnp.Variance(f, a[0], 1) }),

	"softmax":           op1("nn.Softmax(f, x)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.Softmax(f, a[0]) }),
	"softmax_axis0":     op1("nn.Softmax(f, x, 0)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.Softmax(f, a[0], 0) }),
	"softmax_axes":      op1("nn.Softmax(f, x, 0, 2)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.Softmax(f, a[0], 0, 2) }),
	"softmax_large":     op1("nn.Softmax(f, x)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.Softmax(f, a[0]) }),
	"softmax_bf16":      op1("nn.Softmax(f, x)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.Softmax(f, a[0]) }),
	"log_softmax":       op1("nn.LogSoftmax(f, x)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.LogSoftmax(f, a[0]) }),
	"log_softmax_axis1": op1("nn.LogSoftmax(f, x, 1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.LogSoftmax(f, a[0], 1) }),
	"logsumexp_all":     op1("nn.LogSumExp(f, x)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.LogSumExp(f, a[0]) }),
	"logsumexp_axis":    op1("nn.LogSumExp(f, x, 1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.LogSumExp(f, a[0], 1) }),
	"logsumexp_keepdims": op1("nn.LogSumExpKeepDims(f, x, 0)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return nn.LogSumExpKeepDims(f, a[0], 0)
	}),
	"logsumexp_inf": op1("nn.LogSumExp(f, x, 1)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.LogSumExp(f, a[0], 1) }),
	"relu":          op1("nn.Relu(f, x)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.Relu(f, a[0]) }),
	"relu_int":      op1("nn.Relu(f, x)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.Relu(f, a[0]) }),
	"gelu_tanh":     op1("nn.Gelu(f, x, true)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.Gelu(f, a[0], true) }),
	"gelu_exact":    op1("nn.Gelu(f, x, false)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.Gelu(f, a[0], false) }),
	"gelu_bf16":     op1("nn.Gelu(f, x, true)", func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return nn.Gelu(f, a[0], true) }),

	"layer_norm_plain":      layerNorm("nn.LayerNorm(f, x, nn.LayerNormOptions{})", false, false, 0),
	"layer_norm":            layerNorm("nn.LayerNorm(f, x, nn.LayerNormOptions{Scale: s, Bias: b})", true, true, 0),
	"layer_norm_eps":        layerNorm("nn.LayerNorm(f, x, nn.LayerNormOptions{Scale: s, Epsilon: 0.5})", true, false, 0.5),
	"layer_norm_axes":       layerNorm("nn.LayerNorm(f, x, nn.LayerNormOptions{Scale: s, Bias: b, Dims: []int{1, 2}})", true, true, 0, 1, 2),
	"layer_norm_bf16":       layerNorm("nn.LayerNorm(f, x, nn.LayerNormOptions{Scale: s, Bias: b})", true, true, 0),
	"layer_norm_bf16_plain": layerNorm("nn.LayerNorm(f, x, nn.LayerNormOptions{})", false, false, 0),

	"einsum_bmm":            einsumOp("bij,bjk->bik"),
	"einsum_implicit":       einsumOp("ij,jk"),
	"einsum_implicit_order": einsumOp("Ba,ac"),
	"einsum_transpose":      einsumOp("ij->ji"),
	"einsum_sum_all":        einsumOp("ij->"),
	"einsum_sum_axis":       einsumOp("ij->j"),
	"einsum_trace":          einsumOp("ii"),
	"einsum_diagonal":       einsumOp("ii->i"),
	"einsum_diag3":          einsumOp("iij->ji"),
	"einsum_outer":          einsumOp("i,j"),
	"einsum_dot":            einsumOp("i,i"),
	"einsum_chain":          einsumOp("ij,jk,kl->il"),
	"einsum_ellipsis":       einsumOp("...ij,...jk"),
	"einsum_ellipsis_sum":   einsumOp("...ij->ij"),
	"einsum_ellipsis_out":   einsumOp("i...->...i"),
	"einsum_broadcast1":     einsumOp("ij,jk"),
	"einsum_attention":      einsumOp("bqhd,bkhd->bhqk"),
	"einsum_elementwise":    einsumOp("ij,ij->ij"),

	"matmul_2d":              matmulOp,
	"matmul_batch":           matmulOp,
	"matmul_batch_broadcast": matmulOp,
	"matmul_vec_mat":         matmulOp,
	"matmul_mat_vec":         matmulOp,
	"matmul_vec_vec":         matmulOp,
	"matmul_rank3_mat":       matmulOp,
	"matmul_one_batch":       matmulOp,
	"matmul_ones_crossed":    matmulOp,
	"matmul_ones_both":       matmulOp,
	"matmul_int":             matmulOp,
}

// transcendentalTol is the relative tolerance of the f32 cases built on exp, log, tanh
// or erf: their polynomials differ in the last bit between XLA builds (the 0.115 plugin's
// exp rounds 1 ulp away from jaxlib's on a few softmax values), so those cases are
// bit-exact on one plugin only. bf16 cases stay bit-exact.
const transcendentalTol = 1e-6

func init() {
	for name, b := range opsNumpyBuilders {
		if strings.HasSuffix(name, "_bf16") {
			continue
		}
		for _, p := range []string{"softmax", "log_softmax", "logsumexp", "gelu"} {
			if strings.HasPrefix(name, p) && b.tol == 0 {
				b.tol = transcendentalTol
				opsNumpyBuilders[name] = b
			}
		}
	}
}
