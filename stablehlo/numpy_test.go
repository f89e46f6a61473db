package stablehlo_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func TestBroadcastShapes(t *testing.T) {
	got, err := stablehlo.BroadcastShapes([]int{4, 1, 3}, []int{5, 1}, nil)
	require.NoError(t, err)
	require.Equal(t, []int{4, 5, 3}, got)
	got, err = stablehlo.BroadcastShapes()
	require.NoError(t, err)
	require.Empty(t, got)
	_, err = stablehlo.BroadcastShapes([]int{2, 3}, []int{4})
	require.ErrorIs(t, err, stablehlo.ErrShape)
	require.ErrorContains(t, err, "dimension -1 (from the end) is 3 in one and 4 in another")
}

// The result shapes of Broadcast2, Einsum and MatMul (jnp's and nn's helpers are tested in
// their packages).
func TestNumpyShapes(t *testing.T) {
	f32 := func(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float32, dims...) }
	tests := []struct {
		name string
		arg  stablehlo.Shape
		body func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value
		want stablehlo.Shape
	}{
		{"broadcast2", f32(4, 1, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Add(f.Broadcast2(x, f.Full(f32(5, 1), 1.0)))
		}, f32(4, 5, 3)},
		{"broadcast weak", f32(4, 1, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Add(f.Broadcast2(x, f.Constant(2.0)))
		}, f32(4, 1, 3)},
		{"einsum batch", f32(2, 3, 4), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Einsum("bij,bjk->bik", x, f.Full(f32(2, 4, 5), 1.0))
		}, f32(2, 3, 5)},
		{"einsum implicit", f32(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Einsum("Ba,ac", x, f.Full(f32(3, 4), 1.0))
		}, f32(2, 4)},
		{"einsum ellipsis broadcast", f32(5, 1, 2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Einsum("...ij,...jk", x, f.Full(f32(4, 3, 4), 1.0))
		}, f32(5, 4, 2, 4)},
		{"einsum diagonal", f32(3, 3, 2), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Einsum("iij->ji", x) }, f32(2, 3)},
		{"einsum trace", f32(3, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Einsum("ii", x) }, f32()},
		{"einsum size-1 label", f32(2, 1), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Einsum("ij,jk", x, f.Full(f32(3, 4), 1.0))
		}, f32(2, 4)},
		{"einsum chain", f32(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Einsum("ij, jk, kl -> il", x, f.Full(f32(3, 4), 1.0), f.Full(f32(4, 5), 1.0))
		}, f32(2, 5)},
		{"matmul batch broadcast", f32(2, 1, 3, 4), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.MatMul(x, f.Full(f32(5, 4, 2), 1.0))
		}, f32(2, 5, 3, 2)},
		{"matmul vector matrix", f32(4), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.MatMul(x, f.Full(f32(3, 4, 2), 1.0))
		}, f32(3, 2)},
		{"matmul matrix vector", f32(3, 2, 4), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.MatMul(x, f.Full(f32(4), 1.0))
		}, f32(3, 2)},
		{"matmul dot", f32(4), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.MatMul(x, x) }, f32()},
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

// Einsum lowers to the ops JAX emits for it, in order.
func TestNumpyOpSequence(t *testing.T) {
	names := func(build func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value, s stablehlo.Shape) string {
		m := stablehlo.NewModule("m")
		f := m.Main()
		f.Return(build(f, f.Arg(s)))
		_, err := m.Build()
		require.NoError(t, err)
		var out []string
		for _, o := range f.Ops() {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(o.Name(), "stablehlo."), "chlo."))
		}
		return strings.Join(out, " ")
	}
	f32 := stablehlo.NewShape(dtypes.Float32, 2, 3)
	require.Equal(t, "dot_general transpose",
		names(func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Einsum("ij,kj->ki", x, x) }, f32))
}

func TestNumpyErrors(t *testing.T) {
	f32 := func(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float32, dims...) }
	tests := []struct {
		name     string
		body     func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value // x is an f32[4, 6] argument
		sentinel error
		msg      string
	}{
		{"broadcast incompatible", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Add(f.Broadcast2(x, f.Full(f32(4), 1.0)))
		}, stablehlo.ErrShape, "broadcast_in_dim: shape mismatch: shapes [[4 6] [4]] cannot be broadcast together"},
		{"einsum letter", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Einsum("i1", x) },
			stablehlo.ErrEinsum, `einsum: spec "i1": invalid einsum spec: subscript "i1": character '1' is not a letter (labels are a-z and A-Z)`},
		{"einsum output label", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Einsum("ij->k", x) },
			stablehlo.ErrEinsum, "output label 'k' does not appear in the inputs"},
		{"einsum repeated output", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Einsum("ij->ii", x) },
			stablehlo.ErrEinsum, "output label 'i' appears more than once"},
		{"einsum rank", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Einsum("ijk", x) },
			stablehlo.ErrEinsum, `einsum: operand 0 (%arg0): spec "ijk": invalid einsum spec: subscript "ijk" has 3 labels for operand 0 of rank 2`},
		{"einsum operand count", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Einsum("ij,jk", x) },
			stablehlo.ErrEinsum, "2 subscripts for 1 operands"},
		{"einsum ellipsis", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Einsum("i..", x) },
			stablehlo.ErrEinsum, "invalid ellipsis"},
		{"einsum arrows", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Einsum("ij->ji->ij", x) },
			stablehlo.ErrEinsum, "more than one '->'"},
		{"einsum sizes", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.Einsum("ij,jk->ik", x, f.Full(f32(4, 4), 1.0))
		}, stablehlo.ErrShape, "label 'j' is 4 in operand 1, but 6 in another operand"},
		{"einsum diagonal sizes", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.Einsum("ii->i", x) },
			stablehlo.ErrShape, "label 'i' repeated in operand 0 has sizes 4 and 6"},
		{"matmul batch", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.MatMul(f.Full(f32(2, 4, 6), 1.0), f.Full(f32(3, 6, 2), 1.0))
		}, stablehlo.ErrShape, "MatMul batch dimensions: shape mismatch"},
		{"matmul core", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.MatMul(x, x) },
			stablehlo.ErrShape, "contracting dimension sizes differ: lhs dimension 1 is 6, rhs dimension 0 is 4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("m")
			f := m.Main()
			r := tc.body(f, f.Arg(f32(4, 6)))
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

// TestMatMulAsJAX: MatMul builds what jnp.matmul builds: a batch dimension one operand lacks
// (or has as 1) is a free dimension of the other, so a [batch, seq, d] activation times a
// [d, n] weight is one dot_general with nothing broadcast, and only a dimension order NumPy's
// differs from costs a transpose.
func TestMatMulAsJAX(t *testing.T) {
	f32 := func(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float32, dims...) }
	cases := []struct {
		name         string
		a, b         stablehlo.Shape
		want         []string
		notWant      []string
		wantShapeOut stablehlo.Shape
	}{
		{"rank 3 by matrix", f32(2, 3, 4), f32(4, 5),
			[]string{"lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]"}, []string{"broadcast_in_dim", "transpose"}, f32(2, 3, 5)},
		{"batch of one", f32(1, 3, 4), f32(2, 4, 5),
			[]string{"stablehlo.reshape", "stablehlo.transpose"}, []string{"broadcast_in_dim", "lhs_batching_dimensions"}, f32(2, 3, 5)},
		{"equal batches", f32(2, 3, 4), f32(2, 4, 5),
			[]string{"lhs_batching_dimensions = [0], rhs_batching_dimensions = [0]"}, []string{"broadcast_in_dim", "transpose", "reshape"}, f32(2, 3, 5)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("m")
			f := m.Main()
			r := f.MatMul(f.Arg(tc.a), f.Arg(tc.b))
			f.Return(r)
			text, err := m.Build()
			require.NoError(t, err)
			require.True(t, tc.wantShapeOut.Equal(r.Shape()), "want %v, got %v", tc.wantShapeOut, r.Shape())
			for _, w := range tc.want {
				require.Contains(t, text, w)
			}
			for _, w := range tc.notWant {
				require.NotContains(t, text, w)
			}
		})
	}
}
