package oracletest

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// explicitCase is one case of testdata/oracle/explicit.json (tools/oracle/ops_explicit.py):
// a jitted function of lax ops on a mesh with Explicit axes, the types jax.typeof gave the
// values it probed, the sharding constraints and entry shardings of its lowering, and its
// outputs, or the error JAX raised while tracing it.
type explicitCase struct {
	Name            string      `json:"name"`
	JAX             string      `json:"jax"`
	Mesh            meshJSON    `json:"mesh"`
	ExpectError     bool        `json:"expect_error"`
	Inputs          []opsTensor `json:"inputs"`
	Specs           [][]any     `json:"specs"`
	ArgTypes        []string    `json:"arg_types"`
	Types           []string    `json:"types"`
	Constraints     []string    `json:"constraints"`
	ArgShardings    []string    `json:"arg_shardings"`
	ResultShardings []string    `json:"result_shardings"`
	Outputs         []opsTensor `json:"outputs"`
	Error           *jaxError   `json:"error"`
	Grad            bool        `json:"grad"`
	// ScalarConstraints false: JAX's lowering adds scalar ops of its own (dynamic_slice's index
	// arithmetic), so rank-0 constraints are left out of the comparison.
	ScalarConstraints bool `json:"scalar_constraints"`
	// FirstLine: the golden keeps only the first line of JAX's error (the rest quotes the
	// generator's Python source); xlamesh's is compared up to its first line break.
	FirstLine bool `json:"first_line"`
	// OwnLowering: JAX lowers the op through a loop of its own layout (lax.scan); its
	// constraints are not compared.
	OwnLowering bool `json:"own_lowering"`
}

// xenv is what a case's Go body builds with: the function, the case's abstract mesh, and
// the types of the values it probes.
type xenv struct {
	f     *lower.Function
	m     mesh.Mesh
	types []string
}

// p records v's type, as the JAX side's probe() records jax.typeof.
func (e *xenv) p(v lower.Value) lower.Value {
	e.types = append(e.types, e.f.TypeOf(v).String())
	return v
}

// sh is a sharding over the case's mesh.
func (e *xenv) sh(entries ...any) mesh.NamedSharding {
	s, err := mesh.NewNamedSharding(e.m, mesh.P(entries...))
	if err != nil {
		panic(err) // a test table bug
	}
	return s
}

type explicitBody struct {
	call  string
	build func(e *xenv, a []lower.Value) []lower.Value
}

func xb(call string, build func(e *xenv, a []lower.Value) lower.Value) explicitBody {
	return explicitBody{call, func(e *xenv, a []lower.Value) []lower.Value { return []lower.Value{build(e, a)} }}
}

var (
	xsrows = stablehlo.ScatterParams{Dims: stablehlo.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}, Combine: stablehlo.Sum}
	xrows  = stablehlo.GatherParams{Dims: stablehlo.GatherDims{OffsetDims: []int{1}, CollapsedSliceDims: []int{0}, StartIndexMap: []int{0}, IndexVectorDim: 1}, SliceSizes: []int{1, 4}}
	xcols  = stablehlo.GatherParams{Dims: stablehlo.GatherDims{OffsetDims: []int{0}, CollapsedSliceDims: []int{1}, StartIndexMap: []int{1}, IndexVectorDim: 1}, SliceSizes: []int{8, 1}}
	xdot   = lower.DotDims{LhsContracting: []int{1}, RhsContracting: []int{0}}
	xbdot  = lower.DotDims{LhsBatch: []int{0}, RhsBatch: []int{0}, LhsContracting: []int{2}, RhsContracting: []int{1}}
)

// xbin is a case whose body is one binary op of package stablehlo, probed.
func xbin(call string, op func(f *stablehlo.Function, x, y stablehlo.Value) stablehlo.Value) explicitBody {
	return xb(call, func(e *xenv, a []lower.Value) lower.Value { return e.p(op(e.f.Function, a[0], a[1])) })
}

func partialSum(e *xenv, a []lower.Value) lower.Value {
	return e.f.DotGeneralOut(a[0], a[1], xdot, lower.Out(mesh.P(nil, nil), "X"))
}

func xless(g *stablehlo.Function, l, r []stablehlo.Value) stablehlo.Value {
	return g.Compare(l[0], r[0], stablehlo.LT)
}

// explicitBodies builds each case with package lower; call is shown in the report.
var explicitBodies = map[string]explicitBody{
	"add_same":         xb("f.Add(x, y)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Add(a[0], a[1])) }),
	"add_one_sharded":  xb("f.Add(x, y)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Add(a[0], a[1])) }),
	"add_two_dims":     xb("f.Add(x, y)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Add(a[0], a[1])) }),
	"add_incompatible": xb("f.Add(x, y)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Add(a[0], a[1])) }),
	"add_illegal_result": xb("f.Add(x, y)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Add(a[0], a[1]))
	}),
	"sub_multi_axis": xb("f.Sub(x, y)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Sub(a[0], a[1])) }),
	"mul_chain": xb("f.Mul(f.Mul(x, y), x)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Mul(e.p(e.f.Mul(a[0], a[1])), a[0]))
	}),
	"max_min": xb("f.Min(f.Max(x, y), y)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Min(e.p(e.f.Max(a[0], a[1])), a[1]))
	}),
	"neg_exp": xb("f.Exp(f.Neg(x))", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Exp(e.p(e.f.Neg(a[0])))) }),
	"abs":     xb("f.Abs(x)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Abs(a[0])) }),
	"convert": xb("f.Convert(x, dtypes.Int32)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Convert(a[0], dtypes.Int32))
	}),
	"compare_select": xb("f.Select(f.Greater(x, y), x, y)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Select(e.p(e.f.Greater(a[0], a[1])), a[0], a[1]))
	}),
	"select_mismatch": xb("f.Select(f.Greater(x, x), x, y)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Select(e.f.Greater(a[0], a[0]), a[0], a[1]))
	}),
	"broadcast_then_add": xb("f.Add(f.BroadcastInDim(a, [4 8], [0 1]), f.BroadcastInDim(b, [4 8], [0 1]))", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Add(e.p(e.f.BroadcastInDim(a[0], []int{4, 8}, []int{0, 1})), e.p(e.f.BroadcastInDim(a[1], []int{4, 8}, []int{0, 1}))))
	}),
	"dot_free":              xb("f.DotGeneral(x, y, dims)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.DotGeneral(a[0], a[1], xdot)) }),
	"dot_contract_one_side": xb("f.DotGeneral(x, y, dims)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.DotGeneral(a[0], a[1], xdot)) }),
	"dot_contract_rhs_side": xb("f.DotGeneral(x, y, dims)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.DotGeneral(a[0], a[1], xdot)) }),
	"dot_contract_both":     xb("f.DotGeneral(x, y, dims)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.DotGeneral(a[0], a[1], xdot)) }),
	"dot_contract_both_out": xb("f.DotGeneralOut(x, y, dims, lower.Out(P(\"X\", nil)))", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.DotGeneralOut(a[0], a[1], xdot, lower.Out(mesh.P("X", nil))))
	}),
	"dot_contract_xy":    xb("f.DotGeneral(x, y, dims)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.DotGeneral(a[0], a[1], xdot)) }),
	"dot_illegal_result": xb("f.DotGeneral(x, y, dims)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.DotGeneral(a[0], a[1], xdot)) }),
	"dot_batch":          xb("f.DotGeneral(x, y, batch dims)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.DotGeneral(a[0], a[1], xbdot)) }),
	"dot_batch_mismatch": xb("f.DotGeneral(x, y, batch dims)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.DotGeneral(a[0], a[1], xbdot)) }),
	"dot_unreduced": xb("f.Reshard(f.DotGeneralOut(x, y, dims, lower.Out(P(nil, nil), \"X\")), P())", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Reshard(e.p(partialSum(e, a)), e.sh()))
	}),
	"dot_unreduced_wrong_axes": xb("f.DotGeneralOut(x, y, dims, lower.Out(P(nil, nil), \"Y\"))", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.DotGeneralOut(a[0], a[1], xdot, lower.Out(mesh.P(nil, nil), "Y")))
	}),
	"dot_unreduced_input": xb("f.DotGeneral(partial sum, z, dims)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.DotGeneral(partialSum(e, a), a[2], xdot))
	}),
	"add_unreduced": xb("f.Reshard(f.Add(partial, partial), P(\"Y\"))", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Reshard(e.p(e.f.Add(partialSum(e, a), partialSum(e, a))), e.sh("Y")))
	}),
	"add_unreduced_one_side": xb("f.Add(partial, f.DotGeneralOut(x, y, dims, lower.Out(P(nil, nil))))", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Add(partialSum(e, a), e.f.DotGeneralOut(a[0], a[1], xdot, lower.Out(mesh.P(nil, nil)))))
	}),
	"mul_unreduced_both": xb("f.Mul(partial, partial)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Mul(partialSum(e, a), partialSum(e, a)))
	}),
	"exp_unreduced": xb("f.Exp(partial)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Exp(partialSum(e, a))) }),
	"sum_unreduced": xb("f.Reshard(f.Sum(partial, 0), P())", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Reshard(e.p(e.f.Sum(partialSum(e, a), 0)), e.sh()))
	}),
	"sum_sharded_dim": xb("f.Sum(x, 0)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Sum(a[0], 0)) }),
	"max_dim1":        xb("f.Reduce(x, lower.Max, 1)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reduce(a[0], lower.Max, 1)) }),
	"sum_all":         xb("f.Sum(x, 0, 1)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Sum(a[0], 0, 1)) }),
	"min_3d":          xb("f.Reduce(x, lower.Min, 1)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reduce(a[0], lower.Min, 1)) }),
	"sum_out_unreduced": xb("f.Reshard(f.ReduceOut(x, lower.Sum, lower.Out(P(\"Y\"), \"X\"), 0), P(\"Y\"))", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Reshard(e.p(e.f.ReduceOut(a[0], lower.Sum, lower.Out(mesh.P("Y"), "X"), 0)), e.sh("Y")))
	}),
	"sum_out_unreduced_wrong": xb("f.ReduceOut(x, lower.Sum, lower.Out(P(nil), \"Y\"), 0)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.ReduceOut(a[0], lower.Sum, lower.Out(mesh.P(nil), "Y"), 0))
	}),
	"transpose":    xb("f.Transpose(x, 1, 0)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Transpose(a[0], 1, 0)) }),
	"transpose_3d": xb("f.Transpose(x, 2, 0, 1)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Transpose(a[0], 2, 0, 1)) }),
	"broadcast_new_dim": xb("f.BroadcastInDim(x, [3 4], [1])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.BroadcastInDim(a[0], []int{3, 4}, []int{1}))
	}),
	"broadcast_keep": xb("f.BroadcastInDim(x, [8 2 4], [0 2])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.BroadcastInDim(a[0], []int{8, 2, 4}, []int{0, 2}))
	}),
	"reshape_split":             xb("f.Reshape(x, 2, 4)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 2, 4)) }),
	"reshape_split_two_axes":    xb("f.Reshape(x, 2, 8)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 2, 8)) }),
	"reshape_split_minor":       xb("f.Reshape(x, 2, 4, 4)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 2, 4, 4)) }),
	"reshape_split_indivisible": xb("f.Reshape(x, 2, 4)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 2, 4)) }),
	"reshape_merge":             xb("f.Reshape(x, 16)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 16)) }),
	"reshape_merge_both":        xb("f.Reshape(x, 32)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 32)) }),
	"reshape_merge_minor":       xb("f.Reshape(x, 16)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 16)) }),
	"reshape_add_one":           xb("f.Reshape(x, 8, 1, 4)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 8, 1, 4)) }),
	"reshape_drop_one":          xb("f.Reshape(x, 8, 4)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 8, 4)) }),
	"reshape_replicated":        xb("f.Reshape(x, 4, 8)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 4, 8)) }),
	"reshape_two_splits":        xb("f.Reshape(x, 2, 4, 2, 2)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 2, 4, 2, 2)) }),
	"reshape_out": xb("f.ReshapeOut(x, lower.Out(P(nil, \"Y\")), 2, 4)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.ReshapeOut(a[0], lower.Out(mesh.P(nil, "Y")), 2, 4))
	}),
	"slice_even": xb("f.Slice(x, [0 0], [4 4], nil)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Slice(a[0], []int{0, 0}, []int{4, 4}, nil))
	}),
	"slice_unsharded_dim": xb("f.Slice(x, [0 1], [8 3], nil)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Slice(a[0], []int{0, 1}, []int{8, 3}, nil))
	}),
	"slice_indivisible": xb("f.Slice(x, [0 0], [3 4], nil)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Slice(a[0], []int{0, 0}, []int{3, 4}, nil))
	}),
	"slice_to_one": xb("f.Slice(x, [2 1], [3 2], nil)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Slice(a[0], []int{2, 1}, []int{3, 2}, nil))
	}),
	"concat_same":     xb("f.Concatenate(1, x, y)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Concatenate(1, a[0], a[1])) }),
	"concat_mismatch": xb("f.Concatenate(0, x, y)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Concatenate(0, a[0], a[1])) }),
	"rev":             xb("f.Reverse(x, 0)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reverse(a[0], 0)) }),
	"sort_unsharded_dim": xb("f.Sort([x], 1, true, less)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Sort(a[:1], 1, true, xless)[0])
	}),
	"sort_sharded_dim": xb("f.Sort([x], 0, true, less)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Sort(a[:1], 0, true, xless)[0])
	}),
	"cumsum_unsharded_dim": xb("f.Cumsum(x, 1, false)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Cumsum(a[0], 1, false)) }),
	"cumsum_sharded_dim":   xb("f.Cumsum(x, 0, false)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Cumsum(a[0], 0, false)) }),
	"iota_replicated": xb("f.Add(f.Iota(f32[8,4], 0), x)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Add(e.p(e.f.Iota(lower.NewShape(dtypes.Float32, 8, 4), 0)), a[0]))
	}),
	"iota_out": xb("f.Add(f.IotaOut(f32[8,4], 1, lower.Out(P(\"X\", \"Y\"))), x)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Add(e.p(e.f.IotaOut(lower.NewShape(dtypes.Float32, 8, 4), 1, lower.Out(mesh.P("X", "Y")))), a[0]))
	}),
	"reshard":            xb("f.Reshard(x, P(\"Y\", \"X\"))", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshard(a[0], e.sh("Y", "X"))) }),
	"reshard_short_spec": xb("f.Reshard(x, P(\"Y\"))", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshard(a[0], e.sh("Y"))) }),
	"reshard_then_dot": xb("f.DotGeneral(f.Reshard(x, P()), y, dims)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.DotGeneral(e.p(e.f.Reshard(a[0], e.sh())), a[1], xdot))
	}),
	"wsc_assert_match": xb("f.Neg(f.ShardingConstraint(x, P(\"X\", \"Y\")))", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Neg(e.f.ShardingConstraint(a[0], e.sh("X", "Y"))))
	}),
	"wsc_assert_mismatch": xb("f.ShardingConstraint(x, P(\"Y\", nil))", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.ShardingConstraint(a[0], e.sh("Y", nil)))
	}),
	"pad_unsharded_dim": xb("f.Pad(x, z, [0 1], [0 2], [0 0])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Pad(a[0], a[1], []int{0, 1}, []int{0, 2}, []int{0, 0}))
	}),
	"pad_even": xb("f.Pad(x, z, [2 0], [2 0], [0 0])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Pad(a[0], a[1], []int{2, 0}, []int{2, 0}, []int{0, 0}))
	}),
	"pad_indivisible": xb("f.Pad(x, z, [1 0], [0 0], [0 0])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Pad(a[0], a[1], []int{1, 0}, []int{0, 0}, []int{0, 0}))
	}),
	"dynamic_slice": xb("f.DynamicSlice(x, [i j], [8 2])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.DynamicSlice(a[0], a[1:3], []int{8, 2}))
	}),
	"dynamic_slice_indivisible": xb("f.DynamicSlice(x, [i j], [3 4])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.DynamicSlice(a[0], a[1:3], []int{3, 4}))
	}),
	"dynamic_update_slice": xb("f.DynamicUpdateSlice(x, u, [i j])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.DynamicUpdateSlice(a[0], a[1], a[2:4]))
	}),
	"dynamic_update_slice_mismatch": xb("f.DynamicUpdateSlice(x, u, [i j])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.DynamicUpdateSlice(a[0], a[1], a[2:4]))
	}),
	"clamp":              xb("f.Clamp(lo, x, hi)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Clamp(a[0], a[1], a[2])) }),
	"argmax_sharded_dim": xb("f.Argmax(x, 0, dtypes.Int32)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Argmax(a[0], 0, dtypes.Int32)) }),
	"argmin_dim1":        xb("f.Argmin(x, 1, dtypes.Int32)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Argmin(a[0], 1, dtypes.Int32)) }),
	"top_k": {"f.TopK(x, 2)", func(e *xenv, a []lower.Value) []lower.Value {
		v, i := e.f.TopK(a[0], 2)
		return []lower.Value{e.p(v), e.p(i)}
	}},
	"top_k_sharded_axis": {"f.TopK(x, 2)", func(e *xenv, a []lower.Value) []lower.Value {
		v, i := e.f.TopK(a[0], 2)
		return []lower.Value{e.p(v), e.p(i)}
	}},
	"reduce_window_max": xb("f.ReduceWindow(x, lower.Max, {Window: [1 2], Strides: [1 2]})", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.ReduceWindow(a[0], lower.Max, stablehlo.ReduceWindowParams{Window: []int{1, 2}, Strides: []int{1, 2}}))
	}),
	"reduce_window_indivisible": xb("f.ReduceWindow(x, lower.Sum, {Window: [4 1], Strides: [4 1]})", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.ReduceWindow(a[0], lower.Sum, stablehlo.ReduceWindowParams{Window: []int{4, 1}, Strides: []int{4, 1}}))
	}),
	"while_carry": xb("f.While([0, x], c[0] < 3, [c[0] + 1, c[1] * y])[1]", func(e *xenv, a []lower.Value) lower.Value {
		out := e.f.While([]lower.Value{e.f.Constant(int32(0)), a[0]},
			func(g *stablehlo.Function, c []lower.Value) lower.Value { return g.Less(c[0], g.Constant(int32(3))) },
			func(g *stablehlo.Function, c []lower.Value) []lower.Value {
				return []lower.Value{g.Add(c[0], g.Constant(int32(1))), e.p(g.Mul(c[1], a[1]))}
			})
		return e.p(out[1])
	}),
	"while_carry_changes_type": xb("f.While whose body reshards its carry", func(e *xenv, a []lower.Value) lower.Value {
		out := e.f.While([]lower.Value{e.f.Constant(int32(0)), a[0]},
			func(g *stablehlo.Function, c []lower.Value) lower.Value { return g.Less(c[0], g.Constant(int32(3))) },
			func(g *stablehlo.Function, c []lower.Value) []lower.Value {
				return []lower.Value{g.Add(c[0], g.Constant(int32(1))), lower.FunctionOf(g).Reshard(c[1], e.sh(nil, "Y"))}
			})
		return out[1]
	}),
	"fori_loop": xb("f.ForLoop(3, [x], c * y)", func(e *xenv, a []lower.Value) lower.Value {
		out := e.f.ForLoop(3, []lower.Value{a[0]}, func(g *stablehlo.Function, _ lower.Value, c []lower.Value) []lower.Value {
			return []lower.Value{e.p(g.Mul(c[0], a[1]))}
		})
		return e.p(out[0])
	}),
	"fori_loop_changes_type": xb("f.ForLoop whose body reshards its carry", func(e *xenv, a []lower.Value) lower.Value {
		return e.f.ForLoop(3, []lower.Value{a[0]}, func(g *stablehlo.Function, _ lower.Value, c []lower.Value) []lower.Value {
			return []lower.Value{lower.FunctionOf(g).Reshard(c[0], e.sh(nil, "Y"))}
		})[0]
	}),
	"scan": {"f.Scan(body (c + x, -c), [c0], [xs])", func(e *xenv, a []lower.Value) []lower.Value {
		c, ys := e.f.Scan(func(g *stablehlo.Function, c, x []lower.Value) ([]lower.Value, []lower.Value) {
			return []lower.Value{e.p(g.Add(e.p(c[0]), e.p(x[0])))}, []lower.Value{e.p(g.Neg(c[0]))}
		}, a[:1], a[1:], stablehlo.ScanOptions{})
		return []lower.Value{e.p(c[0]), e.p(ys[0])}
	}},
	"scan_carry_changes_type": xb("f.Scan whose body reshards its carry", func(e *xenv, a []lower.Value) lower.Value {
		c, _ := e.f.Scan(func(g *stablehlo.Function, c, x []lower.Value) ([]lower.Value, []lower.Value) {
			return []lower.Value{lower.FunctionOf(g).Reshard(g.Add(c[0], x[0]), e.sh())}, []lower.Value{c[0]}
		}, a[:1], a[1:], stablehlo.ScanOptions{})
		return c[0]
	}),
	"cond": xb("f.If(p, x * y, -x)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.If(a[0], func(g *stablehlo.Function) []lower.Value { return []lower.Value{e.p(g.Mul(a[1], a[2]))} },
			func(g *stablehlo.Function) []lower.Value { return []lower.Value{e.p(g.Neg(a[1]))} })[0])
	}),
	"cond_false": xb("f.If(p, x * y, -x)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.If(a[0], func(g *stablehlo.Function) []lower.Value { return []lower.Value{g.Mul(a[1], a[2])} },
			func(g *stablehlo.Function) []lower.Value { return []lower.Value{g.Neg(a[1])} })[0])
	}),
	"cond_branches_differ": xb("f.If(p, -x, -y)", func(e *xenv, a []lower.Value) lower.Value {
		return e.f.If(a[0], func(g *stablehlo.Function) []lower.Value { return []lower.Value{g.Neg(a[1])} },
			func(g *stablehlo.Function) []lower.Value { return []lower.Value{g.Neg(a[2])} })[0]
	}),
	"auto_axes_all": xb(`f.AutoAxes(nil, [P("X", nil)], a + b, x, y)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.AutoAxes(nil, []mesh.NamedSharding{e.sh("X", nil)}, func(in []lower.Value) []lower.Value {
			return []lower.Value{e.p(e.f.Add(e.p(in[0]), e.p(in[1])))}
		}, a[0], a[1])[0])
	}),
	"auto_axes_x": xb(`f.AutoAxes(["X"], [P("X", "Y")], -a, x)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.AutoAxes([]string{"X"}, []mesh.NamedSharding{e.sh("X", "Y")}, func(in []lower.Value) []lower.Value {
			return []lower.Value{e.p(e.f.Neg(e.p(in[0])))}
		}, a[0])[0])
	}),
	"auto_axes_take": xb(`f.AutoAxes(nil, [P("X", nil)], f.Take(a, i, 0), x, i)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.AutoAxes(nil, []mesh.NamedSharding{e.sh("X", nil)}, func(in []lower.Value) []lower.Value {
			return []lower.Value{e.f.Take(in[0], in[1], 0)}
		}, a[0], a[1])[0])
	}),
	"auto_axes_no_out": xb(`f.AutoAxes(nil, nil, -a, x)`, func(e *xenv, a []lower.Value) lower.Value {
		out := e.f.AutoAxes(nil, nil, func(in []lower.Value) []lower.Value { return []lower.Value{e.f.Neg(in[0])} }, a[0])
		if len(out) == 0 {
			return lower.Value{}
		}
		return out[0]
	}),
	"explicit_axes_all": xb(`f.ExplicitAxes(nil, [P("X", nil)], -a, x)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.f.ExplicitAxes(nil, []mesh.NamedSharding{e.sh("X", nil)}, func(in []lower.Value) []lower.Value {
			return []lower.Value{e.p(e.f.Neg(e.p(in[0])))}
		}, a[0])[0]
	}),
	"explicit_axes_x": xb(`f.ExplicitAxes(["X"], [P("X", nil)], -a, x)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.f.ExplicitAxes([]string{"X"}, []mesh.NamedSharding{e.sh("X", nil)}, func(in []lower.Value) []lower.Value {
			return []lower.Value{e.p(e.f.Neg(e.p(in[0])))}
		}, a[0])[0]
	}),
	"shard_map_infer": xb(`f.ShardMap(mesh, nil, [P(nil, "Y")], nil, g.Psum(b, "X"), x)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.ShardMap(e.m.Abstract(), nil, []mesh.PartitionSpec{mesh.P(nil, "Y")}, nil, func(g *lower.Function, b []lower.Value) []lower.Value {
			return []lower.Value{e.p(g.Psum(e.p(b[0]), "X"))}
		}, a[0])[0])
	}),
	"shard_map_given": xb(`f.ShardMap(mesh, [P("X", "Y")], [P(nil, "Y")], nil, g.Psum(b, "X"), x)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.ShardMap(e.m.Abstract(), []mesh.PartitionSpec{mesh.P("X", "Y")}, []mesh.PartitionSpec{mesh.P(nil, "Y")}, nil, func(g *lower.Function, b []lower.Value) []lower.Value {
			return []lower.Value{e.p(g.Psum(e.p(b[0]), "X"))}
		}, a[0])[0])
	}),
	"shard_map_in_specs_differ": xb(`f.ShardMap(mesh, [P("Y", nil)], [P(nil, "Y")], nil, g.Psum(b, "X"), x)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.f.ShardMap(e.m.Abstract(), []mesh.PartitionSpec{mesh.P("Y", nil)}, []mesh.PartitionSpec{mesh.P(nil, "Y")}, nil, func(g *lower.Function, b []lower.Value) []lower.Value {
			return []lower.Value{g.Psum(b[0], "X")}
		}, a[0])[0]
	}),
	"shard_map_all_gather": xb(`f.ShardMap(mesh, nil, [P("X", "Y")], nil, g.AllGatherOver(b * b, 1, "Y"), x)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.ShardMap(e.m.Abstract(), nil, []mesh.PartitionSpec{mesh.P("X", "Y")}, nil, func(g *lower.Function, b []lower.Value) []lower.Value {
			return []lower.Value{e.p(g.AllGatherOver(e.p(g.Mul(b[0], b[0])), 1, "Y"))}
		}, a[0])[0])
	}),
	"shard_map_then_dot": xb(`f.DotGeneral(f.ShardMap(mesh, nil, [P("X", nil)], nil, -b, x), w, dims)`, func(e *xenv, a []lower.Value) lower.Value {
		s := e.f.ShardMap(e.m.Abstract(), nil, []mesh.PartitionSpec{mesh.P("X", nil)}, nil, func(g *lower.Function, b []lower.Value) []lower.Value {
			return []lower.Value{g.Neg(b[0])}
		}, a[0])[0]
		return e.p(e.f.DotGeneral(s, a[1], xdot))
	}),
	"gather_rows":                xb("f.Gather(x, i, rows, [1 4])", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Gather(a[0], a[1], xrows)) }),
	"gather_cols":                xb("f.Gather(x, i, columns, [8 1])", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Gather(a[0], a[1], xcols)) }),
	"gather_indexed_dim_sharded": xb("f.Gather(x, i, rows, [1 4])", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Gather(a[0], a[1], xrows)) }),
	"gather_indices_sharded":     xb("f.Gather(x, i, rows, [1 4])", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Gather(a[0], a[1], xrows)) }),
	"gather_replicated":          xb("f.Gather(x, i, rows, [1 4])", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Gather(a[0], a[1], xrows)) }),
	"div":                        xbin("f.Div(x, y)", (*stablehlo.Function).Div),
	"pow":                        xbin("f.Pow(x, y)", (*stablehlo.Function).Pow),
	"rem":                        xbin("f.Rem(x, y)", (*stablehlo.Function).Rem),
	"atan2":                      xbin("f.Atan2(x, y)", (*stablehlo.Function).Atan2),
	"max_3d":                     xbin("f.Max(x, y)", (*stablehlo.Function).Max),
	"add_incompatible_multi":     xbin("f.Add(x, y)", (*stablehlo.Function).Add),
	"compare_eq_int":             xbin("f.Equal(a, b)", (*stablehlo.Function).Equal),
	"and_or": xb("f.Or(f.And(a, b), b)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Or(e.p(e.f.And(a[0], a[1])), a[1]))
	}),
	"not":       xb("f.Not(a)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Not(a[0])) }),
	"sqrt_log":  xb("f.Log(f.Sqrt(x))", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Log(e.p(e.f.Sqrt(a[0])))) }),
	"tanh_exp":  xb("f.Exp(f.Tanh(x))", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Exp(e.p(e.f.Tanh(a[0])))) }),
	"floor_neg": xb("f.Neg(f.Floor(x))", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Neg(e.p(e.f.Floor(a[0])))) }),
	"select_scalar_pred": xb("f.Select(p, x, y)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Select(a[0], a[1], a[2]))
	}),
	"dot_vector_matrix": xb("f.DotGeneral(v, w, [0]x[0])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.DotGeneral(a[0], a[1], lower.DotDims{LhsContracting: []int{0}, RhsContracting: []int{0}}))
	}),
	"dot_matrix_vector": xb("f.DotGeneral(w, v, [1]x[0])", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.DotGeneral(a[0], a[1], xdot)) }),
	"dot_batch_unreduced": xb("f.Reshard(f.DotGeneralOut(x, y, batch, lower.Out(P(\"X\", nil, nil), \"Y\")), P(\"X\"))", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Reshard(e.p(e.f.DotGeneralOut(a[0], a[1], xbdot, lower.Out(mesh.P("X", nil, nil), "Y"))), e.sh("X")))
	}),
	"dot_two_free_same_axis": xb("f.DotGeneral(x, y, dims)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.DotGeneral(a[0], a[1], xdot)) }),
	"prod_dim0":              xb("f.Reduce(x, lower.Prod, 0)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reduce(a[0], lower.Prod, 0)) }),
	"sum_dim1":               xb("f.Sum(x, 1)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Sum(a[0], 1)) }),
	"sum_3d_two_dims":        xb("f.Sum(x, 0, 2)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Sum(a[0], 0, 2)) }),
	"reshape_merge_multi":    xb("f.Reshape(x, 32)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 32)) }),
	"reshape_split_three":    xb("f.Reshape(x, 2, 2, 4)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 2, 2, 4)) }),
	"reshape_out_merge": xb("f.ReshapeOut(x, lower.Out(P(\"Y\")), 32)", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.ReshapeOut(a[0], lower.Out(mesh.P("Y")), 32))
	}),
	"transpose_multi_axes": xb("f.Transpose(x, 1, 0)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Transpose(a[0], 1, 0)) }),
	"broadcast_3d": xb("f.BroadcastInDim(x, [2 8 4], [1 2])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.BroadcastInDim(a[0], []int{2, 8, 4}, []int{1, 2}))
	}),
	"concat_three": xb("f.Concatenate(0, x, y, z)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Concatenate(0, a[0], a[1], a[2])) }),
	"slice_strided": xb("f.Slice(x, [0 0], [8 4], [1 2])", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Slice(a[0], []int{0, 0}, []int{8, 4}, []int{1, 2}))
	}),
	"rev_both":        xb("f.Reverse(x, 0, 1)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reverse(a[0], 0, 1)) }),
	"mixed_sum":       xb("f.Sum(x, 1)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Sum(a[0], 1)) }),
	"mixed_reshape":   xb("f.Reshape(x, 2, 4, 4)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Reshape(a[0], 2, 4, 4)) }),
	"mixed_transpose": xb("f.Transpose(x, 1, 0)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Transpose(a[0], 1, 0)) }),
	"sub_unreduced": xb("f.Reshard(f.Sub(partial, partial), P())", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Reshard(e.p(e.f.Sub(partialSum(e, a), partialSum(e, a))), e.sh()))
	}),
	"neg_unreduced": xb("f.Reshard(f.Neg(partial), P())", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Reshard(e.p(e.f.Neg(partialSum(e, a))), e.sh()))
	}),
	"transpose_unreduced": xb("f.Reshard(f.Transpose(partial, 1, 0), P())", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Reshard(e.p(e.f.Transpose(partialSum(e, a), 1, 0)), e.sh()))
	}),
	"reshape_unreduced": xb("f.Reshard(f.Reshape(partial, 128), P())", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Reshard(e.p(e.f.Reshape(partialSum(e, a), 128)), e.sh()))
	}),
	"scatter_rows":                  xb("f.Scatter(x, i, u, rows, Sum)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Scatter(a[0], a[1], a[2], xsrows)) }),
	"scatter_updates_sharded_alone": xb("f.Scatter(x, i, u, rows, Sum)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Scatter(a[0], a[1], a[2], xsrows)) }),
	"scatter_inserted_dim_sharded":  xb("f.Scatter(x, i, u, rows, Sum)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Scatter(a[0], a[1], a[2], xsrows)) }),
	"scatter_window_differs":        xb("f.Scatter(x, i, u, rows, Sum)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Scatter(a[0], a[1], a[2], xsrows)) }),
	"scatter_replicated":            xb("f.Scatter(x, i, u, rows, Sum)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Scatter(a[0], a[1], a[2], xsrows)) }),
	"shard_map_pcast": xb(`f.ShardMap(mesh, nil, [P(nil, "Y")], nil, g.Psum(g.Pcast(b, "X"), "X"), x)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.ShardMap(e.m.Abstract(), nil, []mesh.PartitionSpec{mesh.P(nil, "Y")}, nil, func(g *lower.Function, b []lower.Value) []lower.Value {
			return []lower.Value{e.p(g.Psum(e.p(g.Pcast(e.p(b[0]), "X")), "X"))}
		}, a[0])[0])
	}),
	"grad_shard_map_pcast": xb("autodiff.ValueAndGrad of f.Sum(f.ShardMap(..., g.Mul(g.Psum(g.Pcast(b, \"X\"), \"X\"), b)))", func(e *xenv, a []lower.Value) lower.Value {
		s := e.f.ShardMap(e.m.Abstract(), nil, []mesh.PartitionSpec{mesh.P("X", "Y")}, nil, func(g *lower.Function, b []lower.Value) []lower.Value {
			return []lower.Value{g.Mul(g.Psum(g.Pcast(b[0], "X"), "X"), b[0])}
		}, a[0])[0]
		return e.f.Sum(s)
	}),
	"zeros_out": xb(`f.Add(f.FullOut(f32[8,4], 0, lower.Out(P("X", "Y"))), x)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Add(e.p(e.f.FullOut(lower.NewShape(dtypes.Float32, 8, 4), float32(0), lower.Out(mesh.P("X", "Y")))), a[0]))
	}),
	"full_out_row": xb(`f.Mul(f.FullOut(f32[8,4], 2.5, lower.Out(P(nil, "Y"))), x)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Mul(e.p(e.f.FullOut(lower.NewShape(dtypes.Float32, 8, 4), float32(2.5), lower.Out(mesh.P(nil, "Y")))), a[0]))
	}),
	"einsum_free": xb(`f.Einsum("ij,jk->ik", x, y)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Einsum("ij,jk->ik", a[0], a[1]))
	}),
	"einsum_out": xb(`f.EinsumOut("ij,jk->ik", lower.Out(P("X", "Y")), x, y)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.EinsumOut("ij,jk->ik", lower.Out(mesh.P("X", "Y")), a[0], a[1]))
	}),
	"einsum_out_batch": xb(`f.EinsumOut("bij,bjk->bik", lower.Out(P("X", nil, "Y")), x, y)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.EinsumOut("bij,bjk->bik", lower.Out(mesh.P("X", nil, "Y")), a[0], a[1]))
	}),
	"einsum_needs_out": xb(`f.Einsum("ij,jk->ik", x, y)`, func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Einsum("ij,jk->ik", a[0], a[1]))
	}),
	"grad_mul_sum": xb("autodiff.ValueAndGrad of f.Sum(f.Mul(x, y))", func(e *xenv, a []lower.Value) lower.Value {
		return e.f.Sum(e.f.Mul(a[0], a[1]))
	}),
	"grad_dot": xb("autodiff.ValueAndGrad of f.Sum(f.DotGeneral(x, w, dims))", func(e *xenv, a []lower.Value) lower.Value {
		return e.f.Sum(e.p(e.f.DotGeneral(a[0], a[1], xdot)))
	}),
	"grad_mlp": xb("autodiff.ValueAndGrad of y = f.DotGeneralOut(f.Tanh(f.DotGeneral(x, w1)), w2, P(\"X\", nil)); f.Sum(f.Mul(y, y))", func(e *xenv, a []lower.Value) lower.Value {
		h := e.p(e.f.Tanh(e.p(e.f.DotGeneral(a[0], a[1], xdot))))
		y := e.p(e.f.DotGeneralOut(h, a[2], xdot, lower.Out(mesh.P("X", nil))))
		return e.f.Sum(e.f.Mul(y, y))
	}),
	"grad_fsdp": xb("autodiff.ValueAndGrad of d = f.DotGeneral(x, f.Reshard(w, P())); f.Sum(f.Mul(d, d))", func(e *xenv, a []lower.Value) lower.Value {
		d := e.p(e.f.DotGeneral(a[0], e.p(e.f.Reshard(a[1], e.sh())), xdot))
		return e.f.Sum(e.f.Mul(d, d))
	}),
	"grad_reshape_transpose": xb("autodiff.ValueAndGrad through Reshape, Transpose and BroadcastInDim", func(e *xenv, a []lower.Value) lower.Value {
		t := e.p(e.f.Transpose(e.p(e.f.Reshape(a[0], 2, 4, 4)), 0, 2, 1))
		return e.f.Sum(e.f.Mul(t, e.f.BroadcastInDim(e.f.Sum(a[0], 0), []int{2, 4, 4}, []int{1})))
	}),
	"mixed_type":            xb("f.Mul(x, x)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Mul(e.p(a[0]), a[0])) }),
	"mixed_unused_explicit": xb("f.Neg(x)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.Neg(e.p(a[0]))) }),
	"mixed_dot":             xb("f.DotGeneral(x, y, dims)", func(e *xenv, a []lower.Value) lower.Value { return e.p(e.f.DotGeneral(a[0], a[1], xdot)) }),
	"mixed_wsc_auto": xb("f.Neg(f.ShardingConstraint(x, P(nil, \"Y\")))", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.Neg(e.f.ShardingConstraint(a[0], e.sh(nil, "Y"))))
	}),
	"mixed_wsc_explicit": xb("f.ShardingConstraint(x, P(\"X\"))", func(e *xenv, a []lower.Value) lower.Value {
		return e.p(e.f.ShardingConstraint(a[0], e.sh("X")))
	}),
}

// TestExplicit compares lower's sharding in types with JAX's (testdata/oracle/explicit.json):
// the types, the errors, the sharding constraints and entry shardings of the lowering, and
// the results of the program compiled and run on the 8 CPU devices.
func TestExplicit(t *testing.T) {
	g := loadGolden[explicitCase](t, "explicit")
	var table strings.Builder
	table.WriteString("Sharding in types: each case builds the same ops with package `lower` on the case's mesh of the pinned " +
		"CPU plugin's 8 devices (2x4 (\"X\", \"Y\"), all axes Explicit unless the JAX column says Y is Auto), the arguments " +
		"sharded as JAX's were placed. Compared: `Function.TypeOf` of each probed value with `jax.typeof`; the error " +
		"(ErrShardingType, JAX's text but for the device kind JAX's abstract mesh of concrete devices prints); the " +
		"`sdy.sharding_constraint`s of @main's body in order and the entry shardings; the outputs, bit for bit. `grad_*` " +
		"cases run jax.value_and_grad(loss, argnums=all) against autodiff.ValueAndGrad: the gradients' types and the " +
		"result shardings compare exactly, the values to 1e-5 relative (the backward ops differ from JAX's).\n\n" +
		"| case | JAX | lower |\n|---|---|---|\n")
	for _, c := range g.Cases {
		fmt.Fprintf(&table, "| %s | `%s` | `%s` |\n", c.Name, strings.ReplaceAll(c.JAX, "|", "\\|"),
			strings.ReplaceAll(explicitBodies[c.Name].call, "|", "\\|"))
	}
	report.noteGroup("explicit", strings.TrimSuffix(table.String(), "\n"))
	client := pjrttest.Client(t)
	pjrttest.NeedDevices(t, 8)
	seen := map[string]bool{}
	for _, c := range g.Cases {
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			b, ok := explicitBodies[c.Name]
			if !ok {
				t.Fatalf("explicit/%s: no body for this case", c.Name)
			}
			report.check(t, "explicit", c.Name, runExplicitCase(t, c, b))
		})
	}
	_ = client
	for name := range explicitBodies {
		if !seen[name] {
			t.Errorf("explicit: body %q has no case in the golden (regenerate with `make oracle`)", name)
		}
	}
}

// mainConstraint finds the sharding of each `sdy.sharding_constraint` of @main's body (not
// of nested regions), as the generator does.
var mainConstraint = regexp.MustCompile(`(?m)^    %[\w#]+ = sdy\.sharding_constraint %[\w#]+ (<@.*?>) :`)

// jaxMeshDetail is what JAX's AbstractMesh of concrete devices prints beyond the axes.
var jaxMeshDetail = regexp.MustCompile(`, device_kind=[^,]*, num_cores=[^,]*, platform=[^)]*`)

func runExplicitCase(t *testing.T, c explicitCase, b explicitBody) []string {
	client := pjrttest.Client(t)
	devs := make([]mesh.Device, 8)
	for i, d := range client.Devices()[:8] {
		devs[i] = d
	}
	m, err := mesh.New(devs, c.Mesh.Shape, c.Mesh.Names...)
	if err != nil {
		return []string{"mesh: " + err.Error()}
	}
	types, err := parseTypes(c.Mesh.Types)
	if err != nil {
		return []string{err.Error()}
	}
	if m, err = m.WithAxisTypes(types...); err != nil {
		return []string{"mesh: " + err.Error()}
	}
	mod := lower.NewModule("jit_" + c.Name)
	f := mod.Main()
	e := &xenv{f: f, m: m}
	var args []lower.Value
	var argTypes []string
	for i, in := range c.Inputs {
		s, err := mesh.NewNamedSharding(m, specOf(c.Specs[i]))
		if err != nil {
			return []string{"sharding: " + err.Error()}
		}
		a := f.ShardedArg(stablehlo.NewShape(opsDTypes[in.DType], in.Shape...), s)
		args = append(args, a)
		argTypes = append(argTypes, f.TypeOf(a).String())
	}
	var d []string
	eq(&d, "argument types", c.ArgTypes, argTypes)
	outs := b.build(e, args)
	if c.Grad {
		// The body is the loss: the program returns it and its gradient with respect to every
		// argument, as jax.value_and_grad(loss, argnums=all), and probes each gradient.
		l, gs := autodiff.ValueAndGrad(f.Function, outs[0], args...)
		outs = []lower.Value{l}
		for _, g := range gs {
			outs = append(outs, e.p(g))
		}
	}
	f.Return(outs...)
	if mod.Err() == nil && !slices.Contains(types, mesh.Auto) {
		// on an all-Explicit mesh the results' types are their shardings (Build writes them)
	} else if mod.Err() == nil {
		// with an Auto axis JAX leaves the results to XLA; the test reads them replicated
		rs := make([]mesh.NamedSharding, len(outs))
		for i := range outs {
			rs[i] = e.sh()
		}
		f.ShardResults(rs...)
	}
	prog, err := mod.Build()
	if c.ExpectError {
		return append(d, explicitErrDiffs(c, err)...)
	}
	if err != nil {
		return append(d, "xlamesh: "+err.Error())
	}
	eq(&d, "types", c.Types, e.types)
	var cons []string
	for _, mm := range mainConstraint.FindAllStringSubmatch(prog.Text(), -1) {
		cons = append(cons, mm[1])
	}
	want := c.Constraints
	if !c.ScalarConstraints {
		want, cons = slices.DeleteFunc(slices.Clone(want), isScalarSharding), slices.DeleteFunc(cons, isScalarSharding)
	}
	if !c.Grad && !c.OwnLowering { // a backward pass's ops are autodiff's, not JAX's: types and numbers compare
		eq(&d, "constraints", want, cons)
	}
	argSh, resSh := entryShardings(prog.Text())
	eq(&d, "argument shardings", c.ArgShardings, argSh)
	if !slices.Contains(types, mesh.Auto) {
		eq(&d, "result shardings", c.ResultShardings, resSh)
	}
	got, err := runSharded(client, m, prog, c.Inputs)
	if err != nil {
		return append(d, "xlamesh: "+err.Error())
	}
	if len(got) != len(c.Outputs) {
		return append(d, fmt.Sprintf("JAX has %d outputs, xlamesh %d", len(c.Outputs), len(got)))
	}
	for i, want := range c.Outputs {
		wantRaw, err := opsEncode(want)
		if err != nil {
			return append(d, fmt.Sprintf("output %d: %v", i, err))
		}
		if len(wantRaw) != len(got[i]) {
			d = append(d, fmt.Sprintf("output %d: JAX %d bytes, xlamesh %d", i, len(wantRaw), len(got[i])))
			continue
		}
		tol := 0.0
		if c.Grad {
			tol = 1e-5 // the backward ops are autodiff's: float32 sums in another order
		}
		d = append(d, opsCompare(i, opsDTypes[want.DType], wantRaw, got[i], tol)...)
	}
	return d
}

// isScalarSharding reports whether s is the sharding of a rank-0 value.
func isScalarSharding(s string) bool { return strings.HasSuffix(s, ", []>") }

var entrySharding = regexp.MustCompile(`sdy\.sharding = #sdy\.sharding(<@[^>]*>)`)

// entryShardings reads the `sdy.sharding` of @main's arguments and results.
func entryShardings(text string) (args, results []string) {
	i := strings.Index(text, "func.func public @main")
	if i < 0 {
		return nil, nil
	}
	head := text[i:]
	head = head[:strings.Index(head, "{\n")+2]
	sig, res, _ := strings.Cut(head, ") -> ")
	for _, mm := range entrySharding.FindAllStringSubmatch(sig, -1) {
		args = append(args, mm[1])
	}
	for _, mm := range entrySharding.FindAllStringSubmatch(res, -1) {
		results = append(results, mm[1])
	}
	return args, results
}

// explicitErrDiffs compares lower's error with JAX's: ErrShardingType and JAX's message,
// but for the device kind, core count and platform that JAX's abstract mesh of concrete
// devices prints.
func explicitErrDiffs(c explicitCase, err error) []string {
	if c.Error == nil {
		return []string{"golden has no JAX error for an error case"}
	}
	if err == nil {
		return []string{fmt.Sprintf("JAX raises %s(%q); xlamesh builds the program", c.Error.Class, c.Error.Message)}
	}
	var d []string
	if !errors.Is(err, lower.ErrShardingType) {
		d = append(d, fmt.Sprintf("error kind: want wrapping lower.ErrShardingType, got %q", err))
	}
	want := jaxMeshDetail.ReplaceAllString(c.Error.Message, "")
	got := err.Error()
	if c.FirstLine {
		got, _, _ = strings.Cut(got, "\n")
	}
	if !strings.HasSuffix(got, ": "+want) {
		d = append(d, fmt.Sprintf("message: JAX %q, xlamesh %q", want, err))
	}
	return d
}
