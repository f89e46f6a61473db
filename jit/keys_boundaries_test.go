package jit_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestLoweringCacheKeysOnSpecs calls one function on the same data sharded P('x') and then
// P('y'): specs that differ only in their axis names share a hash bucket, so only a key that
// compares the specs tells them apart. Two lowerings, and exact results both times.
func TestLoweringCacheKeysOnSpecs(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	f := jit.New("double_by_spec", double)
	defer f.Close()
	want := arange[float32](16)
	for i := range want {
		want[i] *= 2
	}
	for _, spec := range []mesh.PartitionSpec{mesh.P("x", nil), mesh.P("y", nil), mesh.P("x", nil)} {
		x, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(t, m, spec))
		require.NoError(t, err)
		outs, err := f.Call(c, x)
		require.NoError(t, err, "%v", spec)
		got, err := outs[0].ToHost()
		require.NoError(t, err)
		assert.Equal(t, want, got, "%v", spec)
		assert.True(t, outs[0].Sharding().Equal(sharding(t, m, chosen(m, spec))), "%v: result sharding %v", spec, outs[0].Sharding())
		require.NoError(t, outs[0].Close())
		require.NoError(t, x.Close())
	}
	st := f.Stats()
	assert.Equal(t, int64(2), st.LoweringMisses, "P('x') and P('y') are two lowerings")
	assert.Equal(t, int64(1), st.LoweringHits, "the second P('x') is a hit")
}

// TestReshardArrayOtherMesh: ReshardArray moves data within its mesh only; a target on
// another mesh (the same devices in another order) is refused, and a is left as it was.
func TestReshardArrayOtherMesh(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	other := otherMesh(t, m)
	require.False(t, other.Equal(m))
	x, err := jit.Put(c, arange[int32](16), []int{8, 2}, sharding(t, m, mesh.P("x")))
	require.NoError(t, err)
	defer x.Close()
	moved, err := jit.ReshardArray(c, x, sharding(t, other, mesh.P("x")))
	require.ErrorIs(t, err, jit.ErrArguments)
	assert.ErrorContains(t, err, "array is on ")
	assert.Nil(t, moved)
	got, err := x.ToHost()
	require.NoError(t, err)
	assert.Equal(t, arange[int32](16), got)

	moved, err = jit.ReshardArray(c, x, sharding(t, m, mesh.P("y")))
	require.NoError(t, err, "the same mesh")
	defer moved.Close()
	assert.True(t, moved.Sharding().Equal(sharding(t, m, mesh.P("y"))))
	got, err = moved.ToHost()
	require.NoError(t, err)
	assert.Equal(t, arange[int32](16), got)
}

// TestExportedForCUDAOnCPUCPUOnly: an artifact JAX exported for cuda is refused by a CPU client
// with ErrExternal (a CUDA client runs it). The JAX 0.8.1 corpus artifact's platform string
// "cpu" (a FlatBuffers string: length 3, the bytes, a NUL; the only one of its kind there,
// where a version 12 artifact has several) is rewritten in place as "cuda" (length 4, the
// NUL's byte taken).
func TestExportedForCUDAOnCPUCPUOnly(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	raw, _ := corpusProgramIn(t, "programs081.json", "donate")
	cpu := []byte("\x03\x00\x00\x00cpu\x00")
	require.Equal(t, 1, bytes.Count(raw, cpu), "one platform string")
	raw = bytes.Replace(raw, cpu, []byte("\x04\x00\x00\x00cuda"), 1)
	e, err := jaxexport.Read(raw)
	require.NoError(t, err)
	require.Equal(t, []string{"cuda"}, e.Platforms())
	// As exported on the (4, 2) mesh of 8 devices; re-sharded onto a smaller mesh there is.
	var opts []jit.Option
	if !is42(m) {
		opts = append(opts, jit.InSpecs(mesh.P("x", "y"), mesh.P("x", "y")))
	}
	f, err := jit.FromExported(e, opts...)
	require.NoError(t, err)
	defer f.Close()
	a, err := jit.Put(c, arange[float32](64), []int{8, 8}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer a.Close()
	out, err := f.Call(c, a, a)
	require.ErrorIs(t, err, jit.ErrExternal)
	assert.ErrorContains(t, err, "the module was exported for [cuda], the client runs cpu")
	assert.Nil(t, out)
}
