package stablehlo_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
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
