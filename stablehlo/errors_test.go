package stablehlo_test

import (
	"errors"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func TestBuildErrors(t *testing.T) {
	f32 := func(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float32, dims...) }
	tests := []struct {
		name     string
		build    func(m *stablehlo.Module)
		sentinel error
		msg      string // the whole error text
		op       string
		operand  int
	}{
		{
			name: "shape mismatch",
			build: func(m *stablehlo.Module) {
				f := m.Main()
				x, y := f.Arg(f32(4, 2)), f.Arg(f32(2, 4))
				f.Return(f.Add(x, y))
			},
			sentinel: stablehlo.ErrShape, op: "add", operand: 1,
			msg: "stablehlo: @main: add: operand 1 (%arg1): shape mismatch: add got incompatible shapes for broadcasting: (4, 2), (2, 4).",
		},
		{
			name: "dtype mismatch",
			build: func(m *stablehlo.Module) {
				f := m.Main()
				x, y := f.Arg(f32(4)), f.Arg(stablehlo.NewShape(dtypes.Int32, 4))
				f.Return(f.Mul(x, y))
			},
			sentinel: stablehlo.ErrDType, op: "multiply", operand: 1,
			msg: "stablehlo: @main: multiply: operand 1 (%arg1): element type mismatch: operand types differ: tensor<4xf32> vs tensor<4xi32>",
		},
		{
			name: "value from another function",
			build: func(m *stablehlo.Module) {
				h := m.Func("helper")
				hx := h.Arg(f32(4))
				h.Return(hx)
				f := m.Main()
				x := f.Arg(f32(4))
				f.Return(f.Add(x, hx))
			},
			sentinel: stablehlo.ErrForeignValue, op: "add", operand: 1,
			msg: "stablehlo: @main: add: operand 1 (%arg0): value from another function: value is defined in @helper, not in @main",
		},
		{
			name: "dot_general contracting sizes differ",
			build: func(m *stablehlo.Module) {
				f := m.Main()
				f.Return(f.MatMul(f.Arg(f32(4, 3)), f.Arg(f32(4, 3))))
			},
			sentinel: stablehlo.ErrShape, op: "dot_general", operand: 1,
			msg: "stablehlo: @main: dot_general: operand 1 (%arg1): shape mismatch: contracting dimension sizes differ: lhs dimension 1 is 3, rhs dimension 0 is 4",
		},
		{
			name: "reshape element count",
			build: func(m *stablehlo.Module) {
				f := m.Main()
				f.Return(f.Reshape(f.Arg(f32(4, 3)), 5))
			},
			sentinel: stablehlo.ErrShape, op: "reshape", operand: 0,
			msg: "stablehlo: @main: reshape: operand 0 (%arg0): shape mismatch: cannot reshape tensor<4x3xf32> (12 elements) to tensor<5xf32> (5 elements)",
		},
		{
			name: "constant overflow",
			build: func(m *stablehlo.Module) {
				f := m.Main()
				f.Return(f.ConstantOf(dtypes.Uint8, 300))
			},
			sentinel: stablehlo.ErrDType, op: "constant", operand: -1,
			msg: "stablehlo: @main: constant: element type mismatch: constant 300 overflows u8",
		},
		{
			name: "unsupported element type",
			build: func(m *stablehlo.Module) {
				f := m.Main()
				f.Return(f.Arg(stablehlo.NewShape(dtypes.TOKEN, 4)))
			},
			sentinel: stablehlo.ErrDType, op: "func.func argument", operand: 0,
			msg: "stablehlo: @main: func.func argument: operand 0: element type mismatch: invalid element type TOKEN",
		},
		{
			name: "convert to invalid type",
			build: func(m *stablehlo.Module) {
				f := m.Main()
				f.Return(f.Convert(f.Arg(f32(4)), dtypes.InvalidDType))
			},
			sentinel: stablehlo.ErrDType, op: "convert", operand: -1,
			msg: "stablehlo: @main: convert: element type mismatch: invalid target type InvalidDType",
		},
		{
			name: "no return",
			build: func(m *stablehlo.Module) {
				m.Main().Arg(f32(4))
			},
			sentinel: stablehlo.ErrFunction, op: "func.func", operand: -1,
			msg: "stablehlo: @main: func.func: invalid function: @main has no return",
		},
		{
			name: "call before callee returns",
			build: func(m *stablehlo.Module) {
				h := m.Func("helper")
				h.Arg(f32(4))
				f := m.Main()
				f.Return(f.Call(h, f.Arg(f32(4)))...)
			},
			sentinel: stablehlo.ErrFunction, op: "func.call", operand: -1,
		},
		{
			name: "first error sticks",
			build: func(m *stablehlo.Module) {
				f := m.Main()
				x := f.Arg(f32(4))
				bad := f.Transpose(x, 1, 0)      // first error
				y := f.Add(bad, f.Reshape(x, 7)) // no-ops: zero Values
				f.Return(y)
			},
			sentinel: stablehlo.ErrShape, op: "transpose", operand: 0,
			msg: "stablehlo: @main: transpose: operand 0 (%arg0): shape mismatch: permutation [1 0] is not a permutation of rank 1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("bad")
			tc.build(m)
			text, err := m.Build()
			require.Empty(t, text)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.sentinel)
			if tc.msg != "" {
				require.Equal(t, tc.msg, err.Error())
			}
			var oe *stablehlo.OpError
			require.True(t, errors.As(err, &oe))
			require.Equal(t, tc.op, oe.Op)
			require.Equal(t, tc.operand, oe.Operand)
			require.Equal(t, err, m.Err())
		})
	}
}

// After an error every op returns the zero Value.
func TestStickyZeroValues(t *testing.T) {
	m := stablehlo.NewModule("sticky")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4))
	bad := f.Reshape(x, 3)
	require.False(t, bad.Valid())
	for _, v := range []stablehlo.Value{f.Add(x, x), f.Constant(1.0), f.Iota(stablehlo.NewShape(dtypes.Int32, 3), 0), f.Exp(x)} {
		require.False(t, v.Valid())
		require.Equal(t, "<invalid>", v.String())
	}
	_, err := m.Build()
	require.ErrorIs(t, err, stablehlo.ErrShape)
}
