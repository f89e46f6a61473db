package stablehlo_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func TestBitOpShapes(t *testing.T) {
	i32, f32, u8 := dtypes.Int32, dtypes.Float32, dtypes.Uint8
	bc := func(d stablehlo.DType) func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.BitcastConvert(a[0], d) }
	}
	runOpCases(t, "bitcast_convert", []opCase{
		{name: "same width", args: []stablehlo.Shape{shp(f32, 2, 3)}, build: bc(i32), want: shp(i32, 2, 3)},
		{name: "narrower", args: []stablehlo.Shape{shp(f32, 2, 3)}, build: bc(u8), want: shp(u8, 2, 3, 4)},
		{name: "narrower scalar", args: []stablehlo.Shape{shp(dtypes.Float64)}, build: bc(dtypes.BFloat16), want: shp(dtypes.BFloat16, 4)},
		{name: "wider", args: []stablehlo.Shape{shp(u8, 5, 2)}, build: bc(dtypes.Int16), want: shp(dtypes.Int16, 5)},
		{name: "wider wrong last dim", args: []stablehlo.Shape{shp(u8, 5, 3)}, build: bc(dtypes.Int16),
			sentinel: stablehlo.ErrShape, err: "bitcasting tensor<5x3xui8> to the wider s16 needs a last dimension of 2"},
		{name: "wider scalar", args: []stablehlo.Shape{shp(u8)}, build: bc(dtypes.Int16),
			sentinel: stablehlo.ErrShape, err: "needs a last dimension of 2"},
		{name: "pred", args: []stablehlo.Shape{shp(dtypes.Bool, 8)}, build: bc(u8), sentinel: stablehlo.ErrDType, err: "cannot bitcast pred"},
		{name: "to pred", args: []stablehlo.Shape{shp(u8, 8)}, build: bc(dtypes.Bool), sentinel: stablehlo.ErrDType, err: "invalid target type pred"},
	})
	runOpCases(t, "shift_left", []opCase{
		{name: "ints", args: []stablehlo.Shape{shp(i32, 4), shp(i32, 4)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.ShiftLeft(a[0], a[1])
		}, want: shp(i32, 4)},
		{name: "floats", args: []stablehlo.Shape{shp(f32, 4), shp(f32, 4)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.ShiftLeft(a[0], a[1])
		}, sentinel: stablehlo.ErrDType, err: "shift_left needs integer operands, got f32"},
	})
	runOpCases(t, "popcnt", []opCase{
		{name: "pred", args: []stablehlo.Shape{shp(dtypes.Bool, 4)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.PopulationCount(a[0])
		}, sentinel: stablehlo.ErrDType, err: "popcnt needs integer operands, got pred"},
	})
}

// Bitcasts and shifts on the CPU plugin: XLA's layout is little-endian.
func TestBitOpsRun(t *testing.T) {
	c := pjrttest.Client(t)
	m := stablehlo.NewModule("m")
	f := m.Main()
	x := f.Arg(shp(dtypes.Uint32, 2))
	bytes := f.BitcastConvert(x, dtypes.Uint8)
	f.Return(bytes, f.BitcastConvert(bytes, dtypes.Int32), f.ShiftRightLogical(x, f.Constant(4)), f.PopulationCount(x))
	text, err := m.Build()
	require.NoError(t, err)
	got := run1(t, c, program{text, []stablehlo.Shape{shp(dtypes.Uint32, 2)}}, []uint32{0x12345678, 0xFFFFFFFF})
	require.Equal(t, []any{[]uint8{0x78, 0x56, 0x34, 0x12, 0xFF, 0xFF, 0xFF, 0xFF}, []int32{0x12345678, -1},
		[]uint32{0x01234567, 0x0FFFFFFF}, []uint32{13, 32}}, got)
}
