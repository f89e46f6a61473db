package stablehlo_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func TestCumulativeBuild(t *testing.T) {
	m := stablehlo.NewModule("t")
	f := m.Main()
	x := f.Arg(f32s(2, 3))
	empty := f.Arg(f32s(0, 2))
	s := f.Cumsum(x, 1, true)
	am := f.Argmax(x, 0, dtypes.Int64)
	require.Equal(t, f32s(2, 3), s.Shape())
	require.Equal(t, stablehlo.NewShape(dtypes.Int64, 3), am.Shape())
	require.Equal(t, empty, f.Cummax(empty, 0, false)) // nothing to scan: x itself
	f.Return(s, am)
	text, err := m.Build()
	require.NoError(t, err)
	require.NoError(t, mlir.Check(text))
	require.Contains(t, text, `"stablehlo.reduce_window"(%arg0, %0) <{padding = dense<[[0, 0], [0, 2]]> : tensor<2x2xi64>, `+
		`window_dimensions = array<i64: 1, 3>, window_strides = array<i64: 1, 1>}> ({`)
	require.Contains(t, text, `%6:2 = "stablehlo.reduce"(%arg0, %5, %3, %4) <{dimensions = array<i64: 0>}> ({`)
	w := lastOp(f, "stablehlo.reduce_window").Params().(stablehlo.CumulativeParams)
	require.Equal(t, stablehlo.Sum, w.Reduction)
	require.Equal(t, 1, w.Axis)
	require.True(t, w.Reverse)
	require.Equal(t, stablehlo.ArgReduceParams{Max: true, Axis: 0, Index: dtypes.Int64}, lastOp(f, "stablehlo.reduce").Params())
}

func TestCumulativeErrors(t *testing.T) {
	tests := []struct {
		name     string
		build    func(f *fn)
		sentinel error
		op, msg  string
	}{
		{"cumsum pred", func(f *fn) { f.Cumsum(f.Arg(stablehlo.NewShape(dtypes.Bool, 3)), 0, false) }, stablehlo.ErrDType, "cumsum", "numeric"},
		{"cumprod axis", func(f *fn) { f.Cumprod(f.Arg(f32s(3)), 1, false) }, stablehlo.ErrShape, "cumprod", "axis 1 out of range for tensor<3xf32>"},
		{"cummin scalar", func(f *fn) { f.Cummin(f.Arg(f32s()), 0, false) }, stablehlo.ErrShape, "cummin", "axis 0 out of range"},
		{"argmax index type", func(f *fn) { f.Argmax(f.Arg(f32s(3)), 0, dtypes.Float32) }, stablehlo.ErrDType, "argmax", "index type must be an integer type, got f32"},
		{"argmin axis", func(f *fn) { f.Argmin(f.Arg(f32s(3)), -1, dtypes.Int32) }, stablehlo.ErrShape, "argmin", "axis -1 out of range"},
		{"argmax empty", func(f *fn) { f.Argmax(f.Arg(f32s(2, 0)), 1, dtypes.Int32) }, stablehlo.ErrShape, "argmax", "argmax of an empty axis 1 of tensor<2x0xf32>"},
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

// TestCumulativeRun checks the small integer cases by hand on the CPU plugin (the oracle
// compares the rest with JAX), including pred argmax and unsigned cummin.
func TestCumulativeRun(t *testing.T) {
	c := pjrttest.Client(t)
	m := stablehlo.NewModule("t")
	f := m.Main()
	x := f.Arg(i32s(4))
	p := f.Arg(stablehlo.NewShape(dtypes.Bool, 4))
	u := f.Arg(stablehlo.NewShape(dtypes.Uint8, 4))
	f.Return(f.Cumsum(x, 0, false), f.Cumsum(x, 0, true), f.Cummin(u, 0, false), f.Argmax(p, 0, dtypes.Int32), f.Argmin(p, 0, dtypes.Int32))
	text, err := m.Build()
	require.NoError(t, err)
	got := run1(t, c, program{text: text, args: []stablehlo.Shape{i32s(4), stablehlo.NewShape(dtypes.Bool, 4), stablehlo.NewShape(dtypes.Uint8, 4)}},
		[]int32{1, -2, 3, 4}, []bool{false, true, true, false}, []uint8{9, 200, 3, 7})
	require.Equal(t, []any{[]int32{1, -1, 2, 6}, []int32{6, 5, 7, 4}, []uint8{9, 9, 3, 3}, []int32{1}, []int32{0}}, got)
}
