package lower_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

// Shape and type errors of single ops: each names the op and the cause.
func TestOpErrors(t *testing.T) {
	f32 := func(dims ...int) lower.Shape { return lower.NewShape(dtypes.Float32, dims...) }
	tests := []struct {
		name     string
		body     func(f *lower.Function, x lower.Value) lower.Value // x is an f32[4, 6] argument
		sentinel error
		msg      string
	}{
		{"broadcast rank", func(f *lower.Function, x lower.Value) lower.Value { return f.BroadcastInDim(x, []int{4, 6}, []int{0}) },
			lower.ErrShape, "broadcast_in_dim: operand 0 (%arg0): shape mismatch: broadcast_dimensions [0] has 1 entries for operand rank 2"},
		{"broadcast size", func(f *lower.Function, x lower.Value) lower.Value {
			return f.BroadcastInDim(x, []int{4, 5}, []int{0, 1})
		}, lower.ErrShape, "operand dimension 1 (size 6) cannot broadcast to result dimension 1 (size 5)"},
		{"broadcast to lower rank", func(f *lower.Function, x lower.Value) lower.Value { return f.BroadcastTo(x, 6) },
			lower.ErrShape, "cannot broadcast rank 2 to rank 1"},
		{"concatenate dims", func(f *lower.Function, x lower.Value) lower.Value {
			return f.Concatenate(0, x, f.Full(f32(4, 5), float32(0)))
		}, lower.ErrShape, "concatenate: operand 1 (%0): shape mismatch: dimension 1 is 5, want 6 (tensor<4x5xf32> vs tensor<4x6xf32>)"},
		{"concatenate no operands", func(f *lower.Function, x lower.Value) lower.Value { return f.Concatenate(0) },
			lower.ErrShape, "concatenate: shape mismatch: no operands"},
		{"dynamic slice float index", func(f *lower.Function, x lower.Value) lower.Value {
			return f.DynamicSlice(x, []lower.Value{f.ConstantOf(dtypes.Float32, 1), f.ConstantOf(dtypes.Float32, 1)}, []int{2, 2})
		}, lower.ErrShape, "start index must be an integer scalar, got tensor<f32>"},
		{"dynamic slice too big", func(f *lower.Function, x lower.Value) lower.Value {
			return f.DynamicSlice(x, []lower.Value{f.Constant(0), f.Constant(0)}, []int{5, 2})
		}, lower.ErrShape, "slice size 5 out of range for dimension 0 of size 4"},
		{"dynamic update too big", func(f *lower.Function, x lower.Value) lower.Value {
			return f.DynamicUpdateSlice(x, f.Full(f32(5, 1), float32(0)), []lower.Value{f.Constant(0), f.Constant(0)})
		}, lower.ErrShape, "update tensor<5x1xf32> larger than operand tensor<4x6xf32> in dimension 0"},
		{"select predicate type", func(f *lower.Function, x lower.Value) lower.Value { return f.Select(x, x, x) },
			lower.ErrDType, "select: operand 0 (%arg0): element type mismatch: predicate must be pred, got tensor<4x6xf32>"},
		{"iota dimension", func(f *lower.Function, x lower.Value) lower.Value { return f.Iota(lower.NewShape(dtypes.Int32, 3), 1) },
			lower.ErrShape, "iota dimension 1 out of range for tensor<3xi32>"},
		{"slice range", func(f *lower.Function, x lower.Value) lower.Value { return f.Slice(x, []int{0, 2}, []int{4, 7}, nil) },
			lower.ErrShape, "dimension 1: slice [2:7:1] out of range for size 6"},
		{"pad interior", func(f *lower.Function, x lower.Value) lower.Value {
			return f.Pad(x, f.Constant(0), []int{0, 0}, []int{0, 0}, []int{0, -1})
		}, lower.ErrShape, "negative interior padding -1 in dimension 1"},
		{"pad value", func(f *lower.Function, x lower.Value) lower.Value {
			return f.Pad(x, f.ConstantOf(dtypes.Int32, 0), []int{0, 0}, []int{0, 0}, nil)
		}, lower.ErrShape, "padding value must be a f32 scalar, got tensor<i32>"},
		{"reduce repeated dim", func(f *lower.Function, x lower.Value) lower.Value { return f.Reduce(x, lower.Sum, 1, 1) },
			lower.ErrShape, "dimension 1 out of range or repeated for tensor<4x6xf32>"},
		{"transpose", func(f *lower.Function, x lower.Value) lower.Value { return f.Transpose(x, 0, 0) },
			lower.ErrShape, "permutation [0 0] is not a permutation of rank 2"},
		{"matmul rank", func(f *lower.Function, x lower.Value) lower.Value { return f.MatMul(x, f.Full(f32(6), float32(1))) },
			lower.ErrShape, "MatMul needs rank-2 operands, got tensor<4x6xf32> and tensor<6xf32>"},
		{"dot batch lists", func(f *lower.Function, x lower.Value) lower.Value {
			return f.DotGeneral(x, x, lower.DotDims{LhsBatch: []int{0}})
		}, lower.ErrShape, "dimension lists differ in length"},
		{"float op on ints", func(f *lower.Function, x lower.Value) lower.Value { return f.Exp(f.Convert(x, dtypes.Int32)) },
			lower.ErrDType, "exponential: operand 0 (%0): element type mismatch: exponential needs float operands, got s32"},
		{"bitwise on floats", func(f *lower.Function, x lower.Value) lower.Value { return f.And(x, x) },
			lower.ErrDType, "and needs integer or pred operands, got f32"},
		{"bool constant for float", func(f *lower.Function, x lower.Value) lower.Value { return f.Add(x, f.Constant(true)) },
			lower.ErrDType, "constant: element type mismatch: bool constant for f32"},
		{"fractional constant for int", func(f *lower.Function, x lower.Value) lower.Value {
			return f.Add(f.Convert(x, dtypes.Int8), f.Constant(2.5))
		}, lower.ErrDType, "constant 2.5 is not an integer (element type s8)"},
		{"array length", func(f *lower.Function, x lower.Value) lower.Value { return f.Array([]float32{1, 2, 3}, 2, 2) },
			lower.ErrShape, "3 elements for shape tensor<2x2xf32> (4 elements)"},
		{"array type", func(f *lower.Function, x lower.Value) lower.Value { return f.Array([]string{"a"}, 1) },
			lower.ErrDType, "unsupported slice type []string"},
		{"scalar type", func(f *lower.Function, x lower.Value) lower.Value { return f.Constant("two") },
			lower.ErrDType, "unsupported Go type string for a scalar constant"},
		{"zero value", func(f *lower.Function, x lower.Value) lower.Value { return f.Neg(lower.Value{}) },
			lower.ErrInvalidValue, "negate: operand 0: invalid value: zero Value"},
		{"all_to_all indivisible", func(f *lower.Function, x lower.Value) lower.Value {
			out := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x")}, nil,
				func(g *lower.Function, a []lower.Value) []lower.Value {
					return []lower.Value{g.AllToAll(g.Slice(a[0], []int{0, 0}, []int{1, 6}, nil), 0, 1, "y")}
				}, x)
			return out[0]
		}, lower.ErrIndivisible, "split dimension 0 of size 1 is not divisible by the group size 2"},
		{"permute pair", func(f *lower.Function, x lower.Value) lower.Value {
			out := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x")}, nil,
				func(g *lower.Function, a []lower.Value) []lower.Value {
					return []lower.Value{g.CollectivePermute(a[0], [][2]int{{0, 2}}, "y")}
				}, x)
			return out[0]
		}, lower.ErrShape, `permutation pair [0 2] out of range for 2 devices along ["y"]`},
		{"shard_map result count", func(f *lower.Function, x lower.Value) lower.Value {
			out := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x"), mesh.P()}, nil,
				func(g *lower.Function, a []lower.Value) []lower.Value { return a }, x)
			return out[0]
		}, lower.ErrSharding, "body returned 1 values for 2 out_specs"},
		{"manual after free axis", func(f *lower.Function, x lower.Value) lower.Value {
			out := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P(mesh.Axes("y", "x"))}, []mesh.PartitionSpec{mesh.P("x")}, []string{"x"},
				func(g *lower.Function, a []lower.Value) []lower.Value { return a }, f.Full(f32(8, 6), float32(0)))
			return out[0]
		}, lower.ErrSharding, "dim 0: must have all manual axes come before free axes in its dimension sharding"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := lower.NewModule("ops")
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

// WithMultipleMeshes allows a second mesh shape; each gets its own symbol.
func TestMultipleMeshes(t *testing.T) {
	m := lower.NewModule("two", lower.WithMultipleMeshes())
	f := m.Main()
	x := f.Arg(lower.NewShape(dtypes.Float32, 8, 8), ns("x"))
	y := f.ShardingConstraint(x, mesh.MustNamedSharding(mesh24, mesh.P(nil, "y")))
	f.Return(y)
	p, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, p.Text(), "  sdy.mesh @mesh = <[\"x\"=4, \"y\"=2]>\n  sdy.mesh @mesh_0 = <[\"x\"=2, \"y\"=4]>\n")
	require.Contains(t, p.Text(), "sdy.sharding_constraint %arg0 <@mesh_0, [{}, {\"y\"}]> : tensor<8x8xf32>")
	require.Equal(t, lower.Shardy, m.Partitioner())
	require.Equal(t, "GSPMD", lower.GSPMD.String())
}

// Values, functions and enums report what they are.
func TestAccessors(t *testing.T) {
	m := lower.NewModule("acc")
	f := m.Main()
	x := f.Arg(lower.NewShape(dtypes.Uint16, 3))
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
	require.Equal(t, "LT", lower.LT.String())
	require.Equal(t, "Max", lower.Max.String())
	require.Equal(t, "tensor<3xui16>", f.Add(x, c).Shape().String())
}
