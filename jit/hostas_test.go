package jit_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/gomlx/gopjrt/dtypes/bfloat16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestToHostAs reads arrays typed: a float32 array as []float32 and its one element with Item,
// bf16 put from []bfloat16.BFloat16 and f16 put from bytes read back widened to float32 and as
// bfloat16, exactly; a type the array does not read as, and Item of an array of several
// elements, are errors wrapping pjrt.ErrHostData that name the types. The arrays are split over
// a mesh of 2 devices, or of 1 on a host with one.
func TestToHostAs(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := fitMesh(t, jit.Devices(c), []int{2}, "x")
	s, err := mesh.NewNamedSharding(m, mesh.P("x"))
	require.NoError(t, err)

	x, err := jit.Put(c, []float32{1.5, -2, 3, 0.25}, []int{4}, s)
	require.NoError(t, err)
	defer x.Close()
	got, err := jit.ToHostAs[float32](x)
	require.NoError(t, err)
	assert.Equal(t, []float32{1.5, -2, 3, 0.25}, got)
	_, err = jit.ToHostAs[int32](x)
	require.ErrorIs(t, err, pjrt.ErrHostData)
	assert.ErrorContains(t, err, "to host as int32: invalid host data: the array is f32[4], whose elements read as float32")
	_, err = jit.Item[float32](x)
	require.ErrorIs(t, err, pjrt.ErrHostData)
	assert.ErrorContains(t, err, "the array is f32[4], of 4 elements; Item reads arrays of one")

	rs, err := mesh.NewNamedSharding(m, mesh.P())
	require.NoError(t, err)
	one, err := jit.Put(c, []int64{-7}, []int{1, 1}, rs)
	require.NoError(t, err)
	defer one.Close()
	v, err := jit.Item[int64](one)
	require.NoError(t, err)
	assert.Equal(t, int64(-7), v)

	// bf16: put from bfloat16 values, read as float32 (exact) and as bfloat16.
	bf := []bfloat16.BFloat16{bfloat16.FromFloat32(1), bfloat16.FromFloat32(-0.5), bfloat16.FromFloat32(3.140625), bfloat16.Inf(1)}
	b, err := jit.Put(c, bf, []int{4}, s)
	require.NoError(t, err)
	defer b.Close()
	assert.Equal(t, dtypes.BFloat16, b.DType())
	wide, err := jit.ToHostAs[float32](b)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, -0.5, 3.140625, float32(math.Inf(1))}, wide)
	back, err := jit.ToHostAs[bfloat16.BFloat16](b)
	require.NoError(t, err)
	assert.Equal(t, bf, back)
	raw, err := jit.ToHostAs[uint16](b)
	require.NoError(t, err)
	assert.Equal(t, []uint16{0x3F80, 0xBF00, 0x4049, 0x7F80}, raw)

	// f16 from its bits: 1, -2, 65504, the smallest subnormal.
	data := make([]byte, 8)
	for i, h := range []uint16{0x3C00, 0xC000, 0x7BFF, 0x0001} {
		binary.LittleEndian.PutUint16(data[2*i:], h)
	}
	h, err := jit.PutBytes(c, dtypes.Float16, []int{4}, data, s)
	require.NoError(t, err)
	defer h.Close()
	hw, err := jit.ToHostAs[float32](h)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, -2, 65504, 0x1p-24}, hw)
	_, err = jit.ToHostAs[bfloat16.BFloat16](h)
	assert.ErrorContains(t, err, "the array is f16[4], whose elements read as uint16")

	_, err = jit.ToHostAs[float32](nil)
	require.ErrorIs(t, err, jit.ErrNil)
	_, err = jit.Item[float32](nil)
	require.ErrorIs(t, err, jit.ErrNil)
}
