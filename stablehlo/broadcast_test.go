package stablehlo_test

import (
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestBinaryBroadcast checks the result shapes of binary and ternary ops on operands that
// broadcast with NumPy's rule, and JAX's messages for those that do not.
func TestBinaryBroadcast(t *testing.T) {
	f32, i32, pred := dtypes.Float32, dtypes.Int32, dtypes.Bool
	add := func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Add(a[0], a[1]) }
	runOpCases(t, "add", []opCase{
		{name: "bias", args: []stablehlo.Shape{shp(f32, 2, 3, 4), shp(f32, 4)}, build: add, want: shp(f32, 2, 3, 4)},
		{name: "rank promotion left", args: []stablehlo.Shape{shp(f32, 3), shp(f32, 2, 3)}, build: add, want: shp(f32, 2, 3)},
		{name: "stretch both", args: []stablehlo.Shape{shp(f32, 4, 1, 3), shp(f32, 5, 1)}, build: add, want: shp(f32, 4, 5, 3)},
		{name: "same rank stretch", args: []stablehlo.Shape{shp(f32, 1, 3), shp(f32, 2, 1)}, build: add, want: shp(f32, 2, 3)},
		{name: "scalar", args: []stablehlo.Shape{shp(f32), shp(f32, 2, 3)}, build: add, want: shp(f32, 2, 3)},
		{name: "weak", args: []stablehlo.Shape{shp(i32, 2)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Add(f.Constant(1), a[0])
		}, want: shp(i32, 2)},
		{name: "rank differs", args: []stablehlo.Shape{shp(f32, 2, 3), shp(f32, 4)}, build: add, sentinel: stablehlo.ErrShape,
			err: "operand 1 (%arg1): shape mismatch: Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]"},
		{name: "same rank", args: []stablehlo.Shape{shp(f32, 4, 2), shp(f32, 2, 4)}, build: add, sentinel: stablehlo.ErrShape,
			err: "shape mismatch: add got incompatible shapes for broadcasting: (4, 2), (2, 4)."},
		{name: "type before shape", args: []stablehlo.Shape{shp(f32, 2, 3), shp(i32, 4)}, build: add, sentinel: stablehlo.ErrDType,
			err: "operand types differ"},
	})
	runOpCases(t, "multiply", []opCase{
		{name: "lax name", args: []stablehlo.Shape{shp(f32, 3, 2), shp(f32, 2, 2)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Mul(a[0], a[1])
		}, sentinel: stablehlo.ErrShape, err: "mul got incompatible shapes for broadcasting: (3, 2), (2, 2)."},
	})
	runOpCases(t, "compare", []opCase{
		{name: "broadcast", args: []stablehlo.Shape{shp(f32, 3, 1), shp(f32, 4)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Less(a[0], a[1])
		}, want: shp(pred, 3, 4)},
		{name: "direction in message", args: []stablehlo.Shape{shp(f32, 4, 2), shp(f32, 2, 4)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.Less(a[0], a[1])
		}, sentinel: stablehlo.ErrShape, err: "lt got incompatible shapes for broadcasting: (4, 2), (2, 4)."},
	})
	sel := func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Select(a[0], a[1], a[2]) }
	runOpCases(t, "select", []opCase{
		{name: "all three", args: []stablehlo.Shape{shp(pred, 3, 1), shp(f32, 4), shp(f32, 2, 1, 1)}, build: sel, want: shp(f32, 2, 3, 4)},
		{name: "scalar pred", args: []stablehlo.Shape{shp(pred), shp(f32, 4), shp(f32, 3, 1)}, build: sel, want: shp(f32, 3, 4)},
		{name: "pred bigger", args: []stablehlo.Shape{shp(pred, 2, 3), shp(f32), shp(f32, 3)}, build: sel, want: shp(f32, 2, 3)},
		{name: "incompatible", args: []stablehlo.Shape{shp(pred, 2, 3), shp(f32, 4), shp(f32)}, build: sel, sentinel: stablehlo.ErrShape,
			err: "operand 1 (%arg1): shape mismatch: Incompatible shapes for broadcasting: shapes=[(2, 3), (4,), ()]"},
		{name: "scalar pred left out", args: []stablehlo.Shape{shp(pred), shp(f32, 2, 3), shp(f32, 2)}, build: sel, sentinel: stablehlo.ErrShape,
			err: "operand 2 (%arg2): shape mismatch: Incompatible shapes for broadcasting: shapes=[(2, 3), (2,)]"},
	})
}

// TestBroadcastOps checks that a broadcast operand becomes one stablehlo.broadcast_in_dim
// with trailing-aligned dimensions, and that a scalar predicate of select stays a scalar.
func TestBroadcastOps(t *testing.T) {
	m := stablehlo.NewModule("m")
	f := m.Main()
	x := f.Arg(shp(dtypes.Float32, 2, 3, 4))
	b := f.Arg(shp(dtypes.Float32, 3, 1))
	p := f.Arg(shp(dtypes.Bool))
	f.Return(f.Select(p, f.Add(x, b), x))
	text, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, text, `"stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<3x1xf32>) -> tensor<2x3x4xf32>`)
	require.Equal(t, 1, strings.Count(text, "broadcast_in_dim"), text)
	require.Contains(t, text, `"stablehlo.select"(%arg2, %1, %arg0) : (tensor<i1>, `)
}
