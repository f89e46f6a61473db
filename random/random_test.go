package random_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/internal/optest"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/random"
	"github.com/xlamesh/xlamesh/stablehlo"
)

var shp = optest.Shape

// TestMain fails the run if the integration tests leaked device buffers.
func TestMain(m *testing.M) {
	code := m.Run()
	if n := pjrt.LiveBuffers(); code == 0 && n != 0 {
		fmt.Fprintf(os.Stderr, "random tests leaked %d PJRT buffers\n", n)
		code = 1
	}
	os.Exit(code)
}

// The result shapes and errors of Bits and Uniform; their values are checked against JAX
// by internal/oracletest's ops_data group.
func TestShapes(t *testing.T) {
	u32 := dtypes.Uint32
	optest.Run(t, "xor", []optest.Case{
		{Name: "bits", Args: []stablehlo.Shape{shp(u32, 2)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return random.Bits(f, a[0], dtypes.Uint32, 4, 0, 2)
		}, Want: shp(u32, 4, 0, 2)},
	})
	optest.Run(t, "random_bits", []optest.Case{
		{Name: "signed", Args: []stablehlo.Shape{shp(u32, 2)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return random.Bits(f, a[0], dtypes.Int32, 4)
		}, Sentinel: stablehlo.ErrDType, Err: "random bits are u8, u16, u32 or u64, not s32"},
		{Name: "key shape", Args: []stablehlo.Shape{shp(u32, 4)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return random.Bits(f, a[0], dtypes.Uint32, 4)
		}, Sentinel: stablehlo.ErrShape, Err: "a key is jax.random's raw key data, u32[2]; got tensor<4xui32>"},
	})
	optest.Run(t, "random_uniform", []optest.Case{
		{Name: "int", Args: []stablehlo.Shape{shp(u32, 2)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return random.Uniform(f, a[0], dtypes.Int32, 0, 1, 4)
		}, Sentinel: stablehlo.ErrDType, Err: "uniform floats of s32: need a float type"},
	})
}

// Threefry2x32 against the Random123 known answers that JAX's own tests use.
func TestThreefryKnownAnswers(t *testing.T) {
	c := pjrttest.Client(t)
	m := stablehlo.NewModule("m")
	f := m.Main()
	k1, k2 := f.Arg(shp(dtypes.Uint32, 3)), f.Arg(shp(dtypes.Uint32, 3))
	x1, x2 := f.Arg(shp(dtypes.Uint32, 3)), f.Arg(shp(dtypes.Uint32, 3))
	y1, y2 := random.Threefry2x32(f, k1, k2, x1, x2)
	f.Return(y1, y2)
	text, err := m.Build()
	require.NoError(t, err)
	dev := c.Devices()[0]
	exe, err := c.Compile(text, pjrt.CompileOptions{NumPartitions: 1, DeviceAssignment: []int{dev.ID()}})
	require.NoError(t, err, "module:\n%s", text)
	defer exe.Close()
	var args []*pjrt.Buffer
	for _, in := range [][]uint32{{0, 0xFFFFFFFF, 0x13198a2e}, {0, 0xFFFFFFFF, 0x03707344}, {0, 0xFFFFFFFF, 0x243f6a88}, {0, 0xFFFFFFFF, 0x85a308d3}} {
		b, err := c.BufferFromHost(dev, in, []int{3})
		require.NoError(t, err)
		defer b.Close()
		args = append(args, b)
	}
	outs, err := exe.Execute([][]*pjrt.Buffer{args})
	require.NoError(t, err)
	var got []any
	for _, b := range outs[0] {
		h, err := b.ToHost()
		require.NoError(t, err)
		got = append(got, h)
		b.Close()
	}
	require.Equal(t, []any{[]uint32{0x6b200159, 0x1cb996fc, 0xc4923a9c}, []uint32{0x99ba4efe, 0xbb002be7, 0x483df7a0}}, got)
}
