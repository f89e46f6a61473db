package stablehlo_test

import (
	"math"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestShapeOverflow: shape arithmetic whose element count, byte size or dimension overflows
// int64 is a sticky error wrapping ErrShape, never a wrapped size XLA aborts on.
func TestShapeOverflow(t *testing.T) {
	f32 := func(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float32, dims...) }
	const big = 1 << 40
	tests := []struct {
		name  string
		build func(f *stablehlo.Function) stablehlo.Value
		op    string
		msg   string
	}{
		{"reshape", func(f *stablehlo.Function) stablehlo.Value {
			return f.Reshape(f.Arg(f32(4)), big, big)
		}, "reshape", "the element count overflows int64 at dimension 1"},
		{"reshape wrapping to the same count", func(f *stablehlo.Function) stablehlo.Value {
			// (2^61+1) * 8 wraps to 8 in int64 arithmetic.
			return f.Reshape(f.Arg(f32(8)), 1<<61+1, 8)
		}, "reshape", "overflows int64"},
		{"full", func(f *stablehlo.Function) stablehlo.Value {
			return f.Full(f32(big, big), 1.0)
		}, "constant", "the element count overflows int64 at dimension 1"},
		{"full byte size", func(f *stablehlo.Function) stablehlo.Value {
			return f.Full(f32(1<<62), 1.0) // 2^62 elements fit, 2^64 bytes do not
		}, "constant", "4611686018427387904 elements of 4 bytes overflow int64 bytes"},
		{"iota", func(f *stablehlo.Function) stablehlo.Value {
			return f.Iota(f32(big, big), 0)
		}, "iota", "overflows int64"},
		{"broadcast", func(f *stablehlo.Function) stablehlo.Value {
			return f.BroadcastInDim(f.Arg(f32(2)), []int{big, big, 2}, []int{2})
		}, "broadcast_in_dim", "overflows int64"},
		{"pad interior", func(f *stablehlo.Function) stablehlo.Value {
			return f.Pad(f.Arg(f32(3)), f.Constant(0), []int{0}, []int{0}, []int{math.MaxInt64 / 2})
		}, "pad", "overflows int64"},
		{"pad edge", func(f *stablehlo.Function) stablehlo.Value {
			return f.Pad(f.Arg(f32(3)), f.Constant(0), []int{math.MaxInt64}, []int{math.MaxInt64}, nil)
		}, "pad", "overflows int64"},
		{"pad count", func(f *stablehlo.Function) stablehlo.Value {
			return f.Pad(f.Arg(f32(3, 3)), f.Constant(0), []int{big, big}, []int{0, 0}, nil)
		}, "pad", "the element count overflows int64"},
		{"concatenate", func(f *stablehlo.Function) stablehlo.Value {
			x := f.Arg(stablehlo.NewShape(dtypes.Int8, math.MaxInt64/2+1))
			return f.Concatenate(0, x, x)
		}, "concatenate", "overflows int64"},
		{"argument", func(f *stablehlo.Function) stablehlo.Value {
			return f.Arg(f32(big, big))
		}, "func.func argument", "overflows int64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("m")
			f := m.Main()
			v := tc.build(f)
			require.False(t, v.Valid())
			f.Return(v)
			_, err := m.Build()
			require.ErrorIs(t, err, stablehlo.ErrShape)
			var oe *stablehlo.OpError
			require.ErrorAs(t, err, &oe)
			require.Equal(t, tc.op, oe.Op)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

// TestSliceHugeStride: a stride near MaxInt64 gives one element, not an overflow.
func TestSliceHugeStride(t *testing.T) {
	m := stablehlo.NewModule("m")
	f := m.Main()
	y := f.Slice(f.Arg(stablehlo.NewShape(dtypes.Float32, 5)), []int{1}, []int{5}, []int{math.MaxInt64})
	require.True(t, y.Valid(), "%v", m.Err())
	require.Equal(t, []int{1}, y.Shape().Dims())
}

// TestSymbolNames: names that are not MLIR identifiers print quoted with MLIR's escapes;
// names XLA cannot survive are errors wrapping mlir.ErrName.
func TestSymbolNames(t *testing.T) {
	m := stablehlo.NewModule("jit_my-fn")
	h := m.Func(`helper "one"`)
	h.Return(h.Arg(stablehlo.NewShape(dtypes.Float32, 2)))
	f := m.Main()
	f.Return(f.Call(h, f.Arg(stablehlo.NewShape(dtypes.Float32, 2)))...)
	p, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, p, `module @"jit_my-fn" attributes`)
	require.Contains(t, p, `func.func private @"helper \22one\22"(`)
	require.Contains(t, p, `func.call @"helper \22one\22"(`)
	require.NoError(t, mlir.Check(p, mlir.Partitions(1)), p)

	for _, name := range []string{"jit_é", `jit_a\b`, "jit_\n"} {
		_, err := stablehlo.NewModule(name).Build()
		require.ErrorIs(t, err, mlir.ErrName, name)
	}
	m = stablehlo.NewModule("m")
	m.Func("f\x00")
	_, err = m.Build()
	require.ErrorIs(t, err, stablehlo.ErrFunction)
	require.ErrorIs(t, err, mlir.ErrName)
	require.ErrorContains(t, err, `stablehlo: @f`+"\x00"+`: func.func: invalid function: mlir: unsupported name: function "f\00": byte 1 is a NUL byte`)
}
