package stablehlo_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Shape and type errors of single ops: each names the op and the cause.
func TestOpErrors(t *testing.T) {
	f32 := func(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float32, dims...) }
	tests := []struct {
		name     string
		body     func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value // x is an f32[4, 6] argument
		sentinel error
		msg      string
	}{
		{"broadcast rank", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.BroadcastInDim(x, []int{4, 6}, []int{0})
		},
			stablehlo.ErrShape, "broadcast_in_dim: operand 0 (%arg0): shape mismatch: broadcast_dimensions [0] has 1 entries for operand rank 2"},
		{"broadcast size", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.BroadcastInDim(x, []int{4, 5}, []int{0, 1})
		}, stablehlo.ErrShape, "operand dimension 1 (size 6) cannot broadcast to result dimension 1 (size 5)"},
		{"broadcast to lower rank", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.BroadcastTo(x, 6) },
			stablehlo.ErrShape, "cannot broadcast rank 2 to rank 1"},
		{"concatenate dims", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Concatenate(0, x, f.Full(f32(4, 5), float32(0)))
		}, stablehlo.ErrShape, "concatenate: operand 1 (%0): shape mismatch: dimension 1 is 5, want 6 (tensor<4x5xf32> vs tensor<4x6xf32>)"},
		{"concatenate no operands", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Concatenate(0) },
			stablehlo.ErrShape, "concatenate: shape mismatch: no operands"},
		{"dynamic slice float index", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.DynamicSlice(x, []stablehlo.Value{f.ConstantOf(dtypes.Float32, 1), f.ConstantOf(dtypes.Float32, 1)}, []int{2, 2})
		}, stablehlo.ErrShape, "start index must be an integer scalar, got tensor<f32>"},
		{"dynamic slice too big", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.DynamicSlice(x, []stablehlo.Value{f.Constant(0), f.Constant(0)}, []int{5, 2})
		}, stablehlo.ErrShape, "slice size 5 out of range for dimension 0 of size 4"},
		{"dynamic update too big", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.DynamicUpdateSlice(x, f.Full(f32(5, 1), float32(0)), []stablehlo.Value{f.Constant(0), f.Constant(0)})
		}, stablehlo.ErrShape, "update tensor<5x1xf32> larger than operand tensor<4x6xf32> in dimension 0"},
		{"select predicate type", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Select(x, x, x) },
			stablehlo.ErrDType, "select: operand 0 (%arg0): element type mismatch: predicate must be pred, got tensor<4x6xf32>"},
		{"iota dimension", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Iota(stablehlo.NewShape(dtypes.Int32, 3), 1)
		},
			stablehlo.ErrShape, "iota dimension 1 out of range for tensor<3xi32>"},
		{"slice range", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Slice(x, []int{0, 2}, []int{4, 7}, nil)
		},
			stablehlo.ErrShape, "dimension 1: slice [2:7:1] out of range for size 6"},
		{"pad interior", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Pad(x, f.Constant(0), []int{0, 0}, []int{0, 0}, []int{0, -1})
		}, stablehlo.ErrShape, "negative interior padding -1 in dimension 1"},
		{"pad value", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Pad(x, f.ConstantOf(dtypes.Int32, 0), []int{0, 0}, []int{0, 0}, nil)
		}, stablehlo.ErrShape, "padding value must be a f32 scalar, got tensor<i32>"},
		{"reduce repeated dim", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Reduce(x, stablehlo.Sum, 1, 1)
		},
			stablehlo.ErrShape, "dimension 1 out of range or repeated for tensor<4x6xf32>"},
		{"transpose", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Transpose(x, 0, 0) },
			stablehlo.ErrShape, "permutation [0 0] is not a permutation of rank 2"},
		{"matmul rank", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.MatMul(x, f.Full(f32(), float32(1)))
		},
			stablehlo.ErrShape, "MatMul needs operands of rank 1 or more, got tensor<4x6xf32> and tensor<f32>"},
		{"dot batch lists", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.DotGeneral(x, x, stablehlo.DotDims{LhsBatch: []int{0}})
		}, stablehlo.ErrShape, "dimension lists differ in length"},
		{"float op on ints", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Exp(f.Convert(x, dtypes.Int32))
		},
			stablehlo.ErrDType, "exponential: operand 0 (%0): element type mismatch: exponential needs float or complex operands, got s32"},
		{"bitwise on floats", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.And(x, x) },
			stablehlo.ErrDType, "and needs integer or pred operands, got f32"},
		{"bool constant for float", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Add(x, f.Constant(true)) },
			stablehlo.ErrDType, "constant: element type mismatch: bool constant for f32"},
		{"fractional constant for int", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Add(f.Convert(x, dtypes.Int8), f.Constant(2.5))
		}, stablehlo.ErrDType, "constant 2.5 is not an integer (element type s8)"},
		{"array length", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Array([]float32{1, 2, 3}, 2, 2)
		},
			stablehlo.ErrShape, "3 elements for shape tensor<2x2xf32> (4 elements)"},
		{"array type", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Array([]string{"a"}, 1) },
			stablehlo.ErrDType, "unsupported slice type []string"},
		{"scalar type", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Constant("two") },
			stablehlo.ErrDType, "unsupported Go type string for a scalar constant"},
		{"zero value", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Neg(stablehlo.Value{}) },
			stablehlo.ErrInvalidValue, "negate: operand 0: invalid value: zero Value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("ops")
			f := m.Main()
			x := f.Arg(f32(4, 6))
			y := tc.body(f, x)
			require.False(t, y.Valid())
			f.Return(x)
			_, err := m.Build()
			require.ErrorIs(t, err, tc.sentinel)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

// Values, functions and enums report what they are.
func TestAccessors(t *testing.T) {
	m := stablehlo.NewModule("acc")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Uint16, 3))
	c := f.Constant(2)
	require.Equal(t, "%arg0", x.String())
	require.Equal(t, "<constant 2>", c.String())
	require.Equal(t, dtypes.Int64, c.DType(), "a weak int constant alone is s64")
	require.Equal(t, dtypes.Uint16, x.DType())
	require.True(t, x.DType().IsUnsigned())
	require.Equal(t, 3, x.Shape().Dim(0))
	require.Equal(t, "main", f.Name())
	require.Same(t, m, f.Module())
	require.Len(t, f.Args(), 1)
	require.Equal(t, "LT", stablehlo.LT.String())
	require.Equal(t, "Max", stablehlo.Max.String())
	require.Equal(t, "tensor<3xui16>", f.Add(x, c).Shape().String())
}
