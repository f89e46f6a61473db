package stablehlo_test

import (
	"math"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func TestMathOpShapes(t *testing.T) {
	f32, i32 := dtypes.Float32, dtypes.Int32
	clamp := func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Clamp(a[0], a[1], a[2]) }
	runOpCases(t, "clamp", []opCase{
		{name: "scalar bounds", args: []stablehlo.Shape{shp(f32), shp(f32, 3, 2), shp(f32)}, build: clamp, want: shp(f32, 3, 2)},
		{name: "array bounds", args: []stablehlo.Shape{shp(f32, 3, 2), shp(f32, 3, 2), shp(f32)}, build: clamp, want: shp(f32, 3, 2)},
		{name: "weak bounds", args: []stablehlo.Shape{shp(i32, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Clamp(f.Constant(0), a[0], f.Constant(9))
		}, want: shp(i32, 3)},
		{name: "broadcast bound", args: []stablehlo.Shape{shp(f32, 2), shp(f32, 3, 2), shp(f32)}, build: clamp, want: shp(f32, 3, 2)},
		{name: "broadcast operand", args: []stablehlo.Shape{shp(f32, 4, 1), shp(f32, 3), shp(f32, 1, 3)}, build: clamp, want: shp(f32, 4, 3)},
		{name: "bound shape", args: []stablehlo.Shape{shp(f32, 3), shp(f32, 3, 2), shp(f32)}, build: clamp,
			sentinel: stablehlo.ErrShape, err: "operand 1 (%arg1): shape mismatch: Incompatible shapes for broadcasting: shapes=[(3,), (3, 2)]"},
		{name: "bound type", args: []stablehlo.Shape{shp(f32), shp(f32, 3, 2), shp(i32)}, build: clamp,
			sentinel: stablehlo.ErrDType, err: "operand 2 (%arg2): element type mismatch: bound tensor<i32> differs in element type"},
	})
	runOpCases(t, "erf", []opCase{
		{name: "int", args: []stablehlo.Shape{shp(i32, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Erf(a[0]) },
			sentinel: stablehlo.ErrDType, err: "erf needs float operands, got s32"},
	})
	runOpCases(t, "is_finite", []opCase{
		{name: "pred result", args: []stablehlo.Shape{shp(dtypes.BFloat16, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.IsFinite(a[0]) },
			want: shp(dtypes.Bool, 3)},
	})
	runOpCases(t, "atan2", []opCase{
		{name: "ints", args: []stablehlo.Shape{shp(i32, 3), shp(i32, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Atan2(a[0], a[1]) },
			sentinel: stablehlo.ErrDType, err: "atan2 needs float operands"},
	})
}

// The text uses chlo.erf and chlo.erf_inv, which the CPU plugin's parser accepts and
// lowers; the run checks a few values against Go's math package.
func TestMathOpsRun(t *testing.T) {
	m := stablehlo.NewModule("m")
	f := m.Main()
	x := f.Arg(shp(dtypes.Float32, 4))
	f.Return(f.Erf(x), f.ErfInv(f.Erf(x)), f.Expm1(x), f.Log1p(x), f.Atan2(x, f.Constant(1.0)), f.Round(x), f.RoundEven(x),
		f.IsFinite(f.Div(f.Constant(1.0), x)), f.Clamp(f.Constant(0.0), x, f.Constant(1.0)), f.Tan(x), f.Cbrt(x))
	text, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, text, `"chlo.erf"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>`)
	require.Contains(t, text, `"chlo.erf_inv"`)
	c := pjrttest.Client(t)
	in := []float32{-0.5, 0, 0.5, 2.5}
	got := run1(t, c, program{text, []stablehlo.Shape{shp(dtypes.Float32, 4)}}, in)
	for k, v := range in {
		x := float64(v)
		require.InEpsilon(t, math.Erf(x)+2, float64(got[0].([]float32)[k])+2, 1e-6)
		// erf_inv(erf(2.5)) is ill-conditioned: erf(2.5) is 1 - 4e-4 in f32.
		require.InDelta(t, x, float64(got[1].([]float32)[k]), 1e-4)
		require.InDelta(t, math.Expm1(x), float64(got[2].([]float32)[k]), 1e-6)
		require.InDelta(t, math.Log1p(x), float64(got[3].([]float32)[k]), 1e-6)
		require.InDelta(t, math.Atan2(x, 1), float64(got[4].([]float32)[k]), 1e-6)
		require.InDelta(t, math.Tan(x), float64(got[9].([]float32)[k]), 1e-6)
		require.InDelta(t, math.Cbrt(x), float64(got[10].([]float32)[k]), 1e-6)
	}
	require.Equal(t, []float32{-1, 0, 1, 3}, got[5])
	require.Equal(t, []float32{-0, 0, 0, 2}, got[6])
	require.Equal(t, []bool{true, false, true, true}, got[7])
	require.Equal(t, []float32{0, 0, 0.5, 1}, got[8])
}
