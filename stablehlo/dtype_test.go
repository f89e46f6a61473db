package stablehlo_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func TestDTypes(t *testing.T) {
	tests := []struct {
		d         stablehlo.DType
		xla, mlir string
	}{
		{dtypes.Bool, "pred", "i1"}, {dtypes.Int8, "s8", "i8"}, {dtypes.Int16, "s16", "i16"},
		{dtypes.Int32, "s32", "i32"}, {dtypes.Int64, "s64", "i64"}, {dtypes.Uint8, "u8", "ui8"},
		{dtypes.Uint16, "u16", "ui16"}, {dtypes.Uint32, "u32", "ui32"}, {dtypes.Uint64, "u64", "ui64"},
		{dtypes.Float16, "f16", "f16"}, {dtypes.BFloat16, "bf16", "bf16"}, {dtypes.Float32, "f32", "f32"},
		{dtypes.Float64, "f64", "f64"}, {dtypes.Complex64, "c64", "complex<f32>"},
		{dtypes.Complex128, "c128", "complex<f64>"}, {dtypes.F8E4M3FN, "f8e4m3fn", "f8E4M3FN"},
		{dtypes.F8E8M0FNU, "f8e8m0fnu", "f8E8M0FNU"}, {dtypes.S4, "s4", "i4"}, {dtypes.U2, "u2", "ui2"},
		{dtypes.F4E2M1FN, "f4e2m1fn", "f4E2M1FN"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.mlir, stablehlo.MLIRType(tc.d))
		require.Equal(t, "tensor<"+tc.mlir+">", stablehlo.NewShape(tc.d).String())
		for _, s := range []string{tc.xla, tc.mlir} {
			d, err := stablehlo.ParseDType(s)
			require.NoError(t, err)
			require.Equal(t, tc.d, d)
		}
	}
	for _, d := range []stablehlo.DType{dtypes.InvalidDType, dtypes.TOKEN, stablehlo.DType(99)} {
		require.Equal(t, "invalid", stablehlo.MLIRType(d), "%v is not a stablehlo element type", d)
	}
	for _, name := range []string{"c32", "float32", "Float32", "i3", "complex<i32>", ""} {
		_, err := stablehlo.ParseDType(name)
		require.EqualError(t, err, `stablehlo: element type mismatch: unknown element type "`+name+`"`)
		require.ErrorIs(t, err, stablehlo.ErrDType)
	}
	s := stablehlo.NewShape(dtypes.BFloat16, 2, 3)
	require.Equal(t, "tensor<2x3xbf16>", s.String())
	require.Equal(t, 6, s.Size())
	require.Equal(t, "tensor<i1>", stablehlo.NewShape(dtypes.Bool).String())
	dims := s.Dims()
	dims[0] = 99
	require.Equal(t, []int{2, 3}, s.Dims(), "Dims returns a copy")
}

func TestSymbolQuoting(t *testing.T) {
	m := stablehlo.NewModule("my module")
	h := m.Func("helper.v2")
	h.Return(h.Arg(stablehlo.NewShape(dtypes.Float32)))
	f := m.Main()
	f.Return(f.Call(h, f.Arg(stablehlo.NewShape(dtypes.Float32)))...)
	p, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, p, `module @"my module" attributes`)
	require.Contains(t, p, `func.func private @helper.v2(`)
	require.Contains(t, p, `func.call @helper.v2(%arg0)`)
}

// ParseShape reverses Shape.String and refuses what is not a static ranked tensor type.
func TestParseShape(t *testing.T) {
	for _, s := range []stablehlo.Shape{stablehlo.NewShape(dtypes.Float32, 8, 2), stablehlo.NewShape(dtypes.Bool),
		stablehlo.NewShape(dtypes.Uint8, 0, 3, 1)} {
		got, err := stablehlo.ParseShape(s.String())
		require.NoError(t, err)
		require.True(t, s.Equal(got), "%v vs %v", s, got)
	}
	got, err := stablehlo.ParseShape("tensor<4xs32>")
	require.NoError(t, err)
	require.Equal(t, "tensor<4xi32>", got.String())
	// "complex" has an "x" in it: the element type is what follows the last dimension.
	got, err = stablehlo.ParseShape("tensor<8x8xcomplex<f32>>")
	require.NoError(t, err)
	require.True(t, got.Equal(stablehlo.NewShape(dtypes.Complex64, 8, 8)), "%v", got)
	_, err = stablehlo.ParseShape("tensor<4xc32>")
	require.EqualError(t, err, `element type mismatch: "tensor<4xc32>": unknown element type "c32"`)
	require.ErrorIs(t, err, stablehlo.ErrDType)
	for _, bad := range []string{"tensor<?x4xf32>", "tensor<-1xf32>", "memref<4xf32>", "tensor<4xc32>", "tensor<>", "tensor<4xf32, #enc>"} {
		_, err := stablehlo.ParseShape(bad)
		require.Error(t, err, bad)
	}
}
