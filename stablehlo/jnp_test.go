package stablehlo_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestJnpHelperShapes checks the result shapes of the jnp helpers and their errors; their
// values are checked against JAX by internal/oracletest's ops_broadcast group.
func TestJnpHelperShapes(t *testing.T) {
	f32, i32, u8, pred := dtypes.Float32, dtypes.Int32, dtypes.Uint8, dtypes.Bool
	runOpCases(t, "select", []opCase{
		{name: "where int cond", args: []stablehlo.Shape{shp(i32, 2, 1), shp(f32, 3), shp(f32)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Where(a[0], a[1], a[2])
		}, want: shp(f32, 2, 3)},
		{name: "tril batched", args: []stablehlo.Shape{shp(f32, 2, 3, 4)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Tril(a[0], 1)
		}, want: shp(f32, 2, 3, 4)},
		{name: "triu rank 1", args: []stablehlo.Shape{shp(f32, 4)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Triu(a[0], 0)
		}, sentinel: stablehlo.ErrShape, err: "Argument to jax.numpy.triu must be at least 2D"},
		{name: "take along broadcast", args: []stablehlo.Shape{shp(f32, 2, 1, 4), shp(i32, 1, 3, 5)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.TakeAlongAxis(a[0], a[1], -1)
		}, want: shp(f32, 2, 3, 5)},
	})
	runOpCases(t, "gather", []opCase{
		{name: "take along rank", args: []stablehlo.Shape{shp(f32, 2, 3), shp(i32, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.TakeAlongAxis(a[0], a[1], 1)
		}, sentinel: stablehlo.ErrShape, err: "indices and arr must have the same number of dimensions; 1 vs. 2"},
		{name: "take along float index", args: []stablehlo.Shape{shp(f32, 2, 3), shp(f32, 2, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.TakeAlongAxis(a[0], a[1], 1)
		}, sentinel: stablehlo.ErrDType, err: "indices must be integers"},
		{name: "take along axis", args: []stablehlo.Shape{shp(f32, 2, 3), shp(i32, 2, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.TakeAlongAxis(a[0], a[1], 2)
		}, sentinel: stablehlo.ErrShape, err: "axis 2 out of range"},
	})
	runOpCases(t, "compare", []opCase{
		{name: "one hot", args: []stablehlo.Shape{shp(u8, 2, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.OneHot(a[0], 5, pred)
		}, want: shp(pred, 2, 3, 5)},
		{name: "one hot float", args: []stablehlo.Shape{shp(f32, 2)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.OneHot(a[0], 5, f32)
		}, sentinel: stablehlo.ErrDType, err: "indices must be integers"},
	})
	runOpCases(t, "iota", []opCase{
		{name: "arange", build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return f.Arange(1, 2, 0.25, f32)
		}, want: shp(f32, 4)},
		{name: "arange zero step", build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return f.Arange(0, 1, 0, f32)
		}, sentinel: stablehlo.ErrShape, err: "step 0 must be finite and nonzero"},
		{name: "arange fractional int", build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return f.Arange(0.5, 4, 1, i32)
		}, sentinel: stablehlo.ErrDType, err: "must be whole numbers"},
		{name: "linspace", build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return f.Linspace(0, 1, 5, false, f32)
		}, want: shp(f32, 5)},
		{name: "linspace negative", build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return f.Linspace(0, 1, -1, true, f32)
		}, sentinel: stablehlo.ErrShape, err: "Number of samples, -1, must be non-negative."},
		{name: "linspace pred", build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return f.Linspace(0, 1, 3, true, pred)
		}, sentinel: stablehlo.ErrDType, err: "invalid element type"},
	})
	runOpCases(t, "maximum", []opCase{
		{name: "clip", args: []stablehlo.Shape{shp(f32, 3, 4), shp(f32, 4), shp(f32, 3, 1)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Clip(a[0], a[1], a[2])
		}, want: shp(f32, 3, 4)},
		{name: "clip incompatible", args: []stablehlo.Shape{shp(f32, 3, 4), shp(f32, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Clip(a[0], a[1], stablehlo.Value{})
		}, sentinel: stablehlo.ErrShape, err: "Incompatible shapes for broadcasting: shapes=[(3,), (3, 4)]"},
	})
}
