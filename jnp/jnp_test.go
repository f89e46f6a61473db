package jnp_test

import (
	"errors"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/internal/optest"
	"github.com/xlamesh/xlamesh/jnp"
	"github.com/xlamesh/xlamesh/stablehlo"
)

var shp = optest.Shape

// TestHelperShapes checks the result shapes of the jnp helpers and their errors; their
// values are checked against JAX by internal/oracletest's ops_broadcast group.
func TestHelperShapes(t *testing.T) {
	f32, i32, pred := dtypes.Float32, dtypes.Int32, dtypes.Bool
	optest.Run(t, "select", []optest.Case{
		{Name: "where int cond", Args: []stablehlo.Shape{shp(i32, 2, 1), shp(f32, 3), shp(f32)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return jnp.Where(f, a[0], a[1], a[2])
		}, Want: shp(f32, 2, 3)},
		{Name: "tril batched", Args: []stablehlo.Shape{shp(f32, 2, 3, 4)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return jnp.Tril(f, a[0], 1)
		}, Want: shp(f32, 2, 3, 4)},
		{Name: "triu rank 1", Args: []stablehlo.Shape{shp(f32, 4)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return jnp.Triu(f, a[0], 0)
		}, Sentinel: stablehlo.ErrShape, Err: "Argument to jax.numpy.triu must be at least 2D"},
		{Name: "take along broadcast", Args: []stablehlo.Shape{shp(f32, 2, 1, 4), shp(i32, 1, 3, 5)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return jnp.TakeAlongAxis(f, a[0], a[1], -1)
		}, Want: shp(f32, 2, 3, 5)},
	})
	optest.Run(t, "gather", []optest.Case{
		{Name: "take along rank", Args: []stablehlo.Shape{shp(f32, 2, 3), shp(i32, 3)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return jnp.TakeAlongAxis(f, a[0], a[1], 1)
		}, Sentinel: stablehlo.ErrShape, Err: "indices and arr must have the same number of dimensions; 1 vs. 2"},
		{Name: "take along float index", Args: []stablehlo.Shape{shp(f32, 2, 3), shp(f32, 2, 3)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return jnp.TakeAlongAxis(f, a[0], a[1], 1)
		}, Sentinel: stablehlo.ErrDType, Err: "indices must be integers"},
		{Name: "take along axis", Args: []stablehlo.Shape{shp(f32, 2, 3), shp(i32, 2, 3)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return jnp.TakeAlongAxis(f, a[0], a[1], 2)
		}, Sentinel: stablehlo.ErrShape, Err: "axis 2 out of range"},
	})
	optest.Run(t, "iota", []optest.Case{
		{Name: "arange", Build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return jnp.Arange(f, 1, 2, 0.25, f32)
		}, Want: shp(f32, 4)},
		{Name: "arange zero step", Build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return jnp.Arange(f, 0, 1, 0, f32)
		}, Sentinel: stablehlo.ErrShape, Err: "step 0 must be finite and nonzero"},
		{Name: "arange fractional int", Build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return jnp.Arange(f, 0.5, 4, 1, i32)
		}, Sentinel: stablehlo.ErrDType, Err: "must be whole numbers"},
		{Name: "linspace", Build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return jnp.Linspace(f, 0, 1, 5, false, f32)
		}, Want: shp(f32, 5)},
		{Name: "linspace negative", Build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return jnp.Linspace(f, 0, 1, -1, true, f32)
		}, Sentinel: stablehlo.ErrShape, Err: "Number of samples, -1, must be non-negative."},
		{Name: "linspace pred", Build: func(f *stablehlo.Function, _ []stablehlo.Value) stablehlo.Value {
			return jnp.Linspace(f, 0, 1, 3, true, pred)
		}, Sentinel: stablehlo.ErrDType, Err: "invalid element type"},
	})
	optest.Run(t, "maximum", []optest.Case{
		{Name: "clip", Args: []stablehlo.Shape{shp(f32, 3, 4), shp(f32, 4), shp(f32, 3, 1)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return jnp.Clip(f, a[0], a[1], a[2])
		}, Want: shp(f32, 3, 4)},
		{Name: "clip incompatible", Args: []stablehlo.Shape{shp(f32, 3, 4), shp(f32, 3)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return jnp.Clip(f, a[0], a[1], stablehlo.Value{})
		}, Sentinel: stablehlo.ErrShape, Err: "Incompatible shapes for broadcasting: shapes=[(3,), (3, 4)]"},
	})
}

// The result shapes of the keepdims reductions, Mean and Variance.
func TestNumpyShapes(t *testing.T) {
	f32 := func(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float32, dims...) }
	bf16 := func(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.BFloat16, dims...) }
	tests := []struct {
		name string
		arg  stablehlo.Shape
		body func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value
		want stablehlo.Shape
	}{
		{"sum keepdims", f32(2, 3, 4), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return jnp.SumKeepDims(f, x, -1, 0) }, f32(1, 3, 1)},
		{"max keepdims all", f32(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return jnp.ReduceMaxKeepDims(f, x) }, f32(1, 1)},
		{"min keepdims", f32(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return jnp.ReduceMinKeepDims(f, x, 1) }, f32(2, 1)},
		{"mean", f32(2, 3, 4), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return jnp.Mean(f, x, 1) }, f32(2, 4)},
		{"mean keepdims bf16", bf16(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return jnp.MeanKeepDims(f, x) }, bf16(1, 1)},
		{"variance", f32(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return jnp.Variance(f, x) }, f32()},
		{"variance keepdims", f32(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return jnp.VarianceKeepDims(f, x, 0) }, f32(1, 3)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("m")
			f := m.Main()
			r := tc.body(f, f.Arg(tc.arg))
			f.Return(r)
			_, err := m.Build()
			require.NoError(t, err)
			require.True(t, tc.want.Equal(r.Shape()), "want %v, got %v", tc.want, r.Shape())
		})
	}
}

// MeanKeepDims lowers to the ops JAX emits for it, in order.
func TestNumpyOpSequence(t *testing.T) {
	require.Equal(t, "convert constant reduce constant broadcast_in_dim divide convert reshape",
		optest.OpNames(t, func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return jnp.MeanKeepDims(f, x, 1) },
			stablehlo.NewShape(dtypes.BFloat16, 2, 3)))
}

func TestNumpyErrors(t *testing.T) {
	tests := []struct {
		name     string
		body     func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value // x is an f32[4, 6] argument
		sentinel error
		msg      string
	}{
		{"keepdims axis", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return jnp.SumKeepDims(f, x, -3) },
			stablehlo.ErrShape, "reduce: operand 0 (%arg0): shape mismatch: dimension -3 out of range or repeated for tensor<4x6xf32>"},
		{"keepdims repeated", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return jnp.SumKeepDims(f, x, 1, -1) },
			stablehlo.ErrShape, "dimension -1 out of range or repeated"},
		{"mean of ints", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return jnp.Mean(f, f.Convert(x, dtypes.Int32))
		}, stablehlo.ErrDType, "mean: operand 0 (%0): element type mismatch: mean needs a float operand, got tensor<4x6xi32>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("m")
			f := m.Main()
			r := tc.body(f, f.Arg(stablehlo.NewShape(dtypes.Float32, 4, 6)))
			require.False(t, r.Valid())
			f.Return(r)
			_, err := m.Build()
			require.ErrorIs(t, err, tc.sentinel)
			require.ErrorContains(t, err, tc.msg)
			var oe *stablehlo.OpError
			require.True(t, errors.As(err, &oe))
		})
	}
}
