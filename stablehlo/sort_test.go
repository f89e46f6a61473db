package stablehlo_test

import (
	"math"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func TestSortBuild(t *testing.T) {
	m := stablehlo.NewModule("t")
	f := m.Main()
	k := f.Arg(i32s(2, 3))
	v := f.Arg(f32s(2, 3))
	r := f.Sort([]val{k, v}, 1, false, func(g *fn, lhs, rhs []val) val {
		require.Len(t, lhs, 2)
		require.Equal(t, i32s(), lhs[0].Shape())
		require.Equal(t, f32s(), rhs[1].Shape())
		return g.Greater(lhs[0], rhs[0])
	})
	require.Equal(t, []stablehlo.Shape{i32s(2, 3), f32s(2, 3)}, []stablehlo.Shape{r[0].Shape(), r[1].Shape()})
	f.Return(r...)
	text, err := m.Build()
	require.NoError(t, err)
	require.NoError(t, mlir.Check(text))
	require.Contains(t, text, `"stablehlo.sort"(%arg0, %arg1) <{dimension = 1 : i64, is_stable = false}> ({`)
	require.Contains(t, text, `^bb0(%arg2: tensor<i32>, %arg3: tensor<i32>, %arg4: tensor<f32>, %arg5: tensor<f32>):`)
	o := lastOp(f, "stablehlo.sort")
	require.Equal(t, stablehlo.SortParams{Dim: 1, Stable: false}, o.Params())
	require.Len(t, o.Regions(), 1)
}

func TestSortTotalOrderText(t *testing.T) {
	m := stablehlo.NewModule("t")
	f := m.Main()
	x := f.Arg(f32s(4))
	f.Return(f.SortAscending(x, 0), f.CompareTotalOrder(x, x, stablehlo.LE), f.CompareTotalOrder(f.Convert(x, dtypes.Int32), f.Constant(1), stablehlo.LT))
	text, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, text, "comparison_type TOTALORDER")
	require.Contains(t, text, "comparison_type SIGNED") // ints keep their compare type
	require.Contains(t, text, "dense<0x7FC00000>")      // the canonical NaN of JAX's sort keys
}

func TestSortErrors(t *testing.T) {
	less := func(g *fn, l, r []val) val { return g.Less(l[0], r[0]) }
	tests := []struct {
		name     string
		build    func(f *fn)
		sentinel error
		op, msg  string
	}{
		{"no operand", func(f *fn) { f.Sort(nil, 0, true, less) }, stablehlo.ErrFunction, "sort", "at least one operand"},
		{"nil comparator", func(f *fn) { f.Sort([]val{f.Arg(f32s(2))}, 0, true, nil) }, stablehlo.ErrFunction, "sort", "needs a comparator"},
		{"scalar", func(f *fn) { f.Sort([]val{f.Arg(f32s())}, 0, true, less) }, stablehlo.ErrShape, "sort", "cannot sort a scalar"},
		{"dims differ", func(f *fn) { f.Sort([]val{f.Arg(f32s(2)), f.Arg(i32s(3))}, 0, true, less) }, stablehlo.ErrShape, "sort",
			"operand dimensions [3] differ from operand 0's [2]"},
		{"dim out of range", func(f *fn) { f.SortAscending(f.Arg(f32s(2)), 1) }, stablehlo.ErrShape, "sort", "dimension 1 out of range for tensor<2xf32>"},
		{"negative dim", func(f *fn) { f.Argsort(f.Arg(f32s(2)), -1, false) }, stablehlo.ErrShape, "sort", "dimension -1 out of range"},
		{"comparator type", func(f *fn) {
			f.Sort([]val{f.Arg(f32s(2))}, 0, true, func(g *fn, l, r []val) val { return g.Sub(l[0], r[0]) })
		}, stablehlo.ErrDType, "sort", "comparator result 0 is tensor<f32>, want tensor<i1>"},
		{"comparator uses an outer value", func(f *fn) {
			x := f.Arg(f32s(2))
			s := f.Sum(x)
			f.Sort([]val{x}, 0, true, func(g *fn, l, r []val) val { return g.Less(g.Add(l[0], s), r[0]) })
		}, stablehlo.ErrForeignValue, "add", "outside the region"},
		{"num_keys", func(f *fn) { f.SortBy([]val{f.Arg(f32s(2))}, 0, 2, true) }, stablehlo.ErrFunction, "sort", "num_keys 2 out of range [1, 1]"},
		{"top_k k", func(f *fn) { f.TopK(f.Arg(f32s(2, 3)), 4) }, stablehlo.ErrShape, "top_k", "k = 4 out of range for tensor<2x3xf32>"},
		{"top_k scalar", func(f *fn) { f.TopK(f.Arg(f32s()), 0) }, stablehlo.ErrShape, "top_k", "out of range"},
		{"top_k pred", func(f *fn) { f.TopK(f.Arg(stablehlo.NewShape(dtypes.Bool, 3)), 1) }, stablehlo.ErrDType, "top_k", "integer or float"},
		{"reverse dim", func(f *fn) { f.Reverse(f.Arg(f32s(2, 3)), 1, 1) }, stablehlo.ErrShape, "reverse", "dimension 1 out of range or repeated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oe := opError(t, tc.build)
			require.ErrorIs(t, oe, tc.sentinel)
			require.Equal(t, tc.op, oe.Op)
			require.Contains(t, oe.Error(), tc.msg)
		})
	}
}

// TestSortRun runs a custom comparator (descending, by the second operand), Reverse and
// TopK on the CPU plugin. The JAX-order sorts are compared with JAX in the oracle
// (internal/oracletest, group ops_control).
func TestSortRun(t *testing.T) {
	c := pjrttest.Client(t)
	m := stablehlo.NewModule("t")
	f := m.Main()
	a := f.Arg(i32s(5))
	b := f.Arg(f32s(5))
	r := f.Sort([]val{a, b}, 0, true, func(g *fn, l, rr []val) val { return g.Greater(l[1], rr[1]) })
	v, i := f.TopK(b, 2)
	f.Return(r[0], r[1], f.Reverse(a, 0), v, i)
	text, err := m.Build()
	require.NoError(t, err)
	got := run1(t, c, program{text: text, args: []stablehlo.Shape{i32s(5), f32s(5)}},
		[]int32{0, 1, 2, 3, 4}, []float32{1, 5, 1, float32(math.Inf(1)), 5})
	require.Equal(t, []any{[]int32{3, 1, 4, 0, 2}, []float32{float32(math.Inf(1)), 5, 5, 1, 1}, []int32{4, 3, 2, 1, 0},
		[]float32{float32(math.Inf(1)), 5}, []int32{3, 1}}, got)
}
