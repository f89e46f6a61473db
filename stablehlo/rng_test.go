package stablehlo_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func TestRngShapes(t *testing.T) {
	u64, u32 := dtypes.Uint64, dtypes.Uint32
	rbg := func(alg stablehlo.RngAlgorithm, out stablehlo.Shape) func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			_, bits := f.RngBitGenerator(a[0], alg, out)
			return bits
		}
	}
	runOpCases(t, "rng_bit_generator", []opCase{
		{name: "three fry", args: []stablehlo.Shape{shp(u64, 2)}, build: rbg(stablehlo.RngThreeFry, shp(dtypes.Float32, 3, 4)), want: shp(dtypes.Float32, 3, 4)},
		{name: "philox 3", args: []stablehlo.Shape{shp(u64, 3)}, build: rbg(stablehlo.RngPhilox, shp(u32, 7)), want: shp(u32, 7)},
		{name: "three fry 3", args: []stablehlo.Shape{shp(u64, 3)}, build: rbg(stablehlo.RngThreeFry, shp(u32, 7)),
			sentinel: stablehlo.ErrShape, err: "THREE_FRY needs a state of u64[2], got tensor<3xui64>"},
		{name: "u32 state", args: []stablehlo.Shape{shp(u32, 4)}, build: rbg(stablehlo.RngDefault, shp(u32, 7)),
			sentinel: stablehlo.ErrShape, err: "DEFAULT needs a state of u64[2], got tensor<4xui32>"},
		{name: "pred", args: []stablehlo.Shape{shp(u64, 2)}, build: rbg(stablehlo.RngDefault, shp(dtypes.Bool, 7)),
			sentinel: stablehlo.ErrDType, err: "random bits of pred"},
		{name: "algorithm", args: []stablehlo.Shape{shp(u64, 2)}, build: rbg(9, shp(u32, 7)),
			sentinel: stablehlo.ErrDType, err: "invalid algorithm RngAlgorithm(9)"},
	})
	runOpCases(t, "xor", []opCase{
		{name: "bits", args: []stablehlo.Shape{shp(u32, 2)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.RandomBits(a[0], dtypes.Uint32, 4, 0, 2)
		}, want: shp(u32, 4, 0, 2)},
	})
	runOpCases(t, "random_bits", []opCase{
		{name: "signed", args: []stablehlo.Shape{shp(u32, 2)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.RandomBits(a[0], dtypes.Int32, 4)
		}, sentinel: stablehlo.ErrDType, err: "random bits are u8, u16, u32 or u64, not s32"},
		{name: "key shape", args: []stablehlo.Shape{shp(u32, 4)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.RandomBits(a[0], dtypes.Uint32, 4)
		}, sentinel: stablehlo.ErrShape, err: "a key is jax.random's raw key data, u32[2]; got tensor<4xui32>"},
	})
	runOpCases(t, "random_uniform", []opCase{
		{name: "int", args: []stablehlo.Shape{shp(u32, 2)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.RandomUniform(a[0], dtypes.Int32, 0, 1, 4)
		}, sentinel: stablehlo.ErrDType, err: "uniform floats of s32: need a float type"},
	})
}

func TestRngText(t *testing.T) {
	m := stablehlo.NewModule("m")
	f := m.Main()
	s, b := f.RngBitGenerator(f.Arg(shp(dtypes.Uint64, 2)), stablehlo.RngPhilox, shp(dtypes.Uint32, 3))
	f.Return(s, b)
	text, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, text, `%0:2 = "stablehlo.rng_bit_generator"(%arg0) <{rng_algorithm = #stablehlo<rng_algorithm PHILOX>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3xui32>)`)
	require.Equal(t, stablehlo.RngParams{Algorithm: stablehlo.RngPhilox}, f.Ops()[0].Params())
}

// Threefry2x32 against the Random123 known answers that JAX's own tests use.
func TestThreefryKnownAnswers(t *testing.T) {
	c := pjrttest.Client(t)
	m := stablehlo.NewModule("m")
	f := m.Main()
	k1, k2 := f.Arg(shp(dtypes.Uint32, 3)), f.Arg(shp(dtypes.Uint32, 3))
	x1, x2 := f.Arg(shp(dtypes.Uint32, 3)), f.Arg(shp(dtypes.Uint32, 3))
	y1, y2 := f.Threefry2x32(k1, k2, x1, x2)
	f.Return(y1, y2)
	text, err := m.Build()
	require.NoError(t, err)
	u := shp(dtypes.Uint32, 3)
	got := run1(t, c, program{text, []stablehlo.Shape{u, u, u, u}},
		[]uint32{0, 0xFFFFFFFF, 0x13198a2e}, []uint32{0, 0xFFFFFFFF, 0x03707344},
		[]uint32{0, 0xFFFFFFFF, 0x243f6a88}, []uint32{0, 0xFFFFFFFF, 0x85a308d3})
	require.Equal(t, []any{[]uint32{0x6b200159, 0x1cb996fc, 0xc4923a9c}, []uint32{0x99ba4efe, 0xbb002be7, 0x483df7a0}}, got)
}
