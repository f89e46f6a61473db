package jit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// bufferMemories returns the memory kind of each of a's buffers.
func bufferMemories(t *testing.T, a *jit.Array) []string {
	t.Helper()
	var kinds []string
	for _, s := range a.AddressableShards() {
		m, err := s.Data.Memory()
		require.NoError(t, err)
		kinds = append(kinds, m.Kind())
	}
	return kinds
}

func repeat(kind string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = kind
	}
	return out
}

// TestPutInMemory: Put, FromCallback and FromProcessLocalData place every shard in the memory
// the sharding names, and the data reads back exactly.
func TestPutInMemory(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	pjrttest.NeedDevices(t, 8)
	m := mesh.MustNew(jit.Devices(c)[:8], []int{4, 2}, "x", "y")
	data := make([]float32, 8*4)
	for i := range data {
		data[i] = float32(i) - 3.5
	}
	for _, kind := range []string{mesh.MemoryDevice, mesh.MemoryPinnedHost, mesh.MemoryUnpinnedHost} {
		t.Run(kind, func(t *testing.T) {
			s, err := mesh.MustNamedSharding(m, mesh.P("x", "y")).WithMemoryKind(kind)
			require.NoError(t, err)
			puts := map[string]func() (*jit.Array, error){
				"Put": func() (*jit.Array, error) { return jit.Put(c, data, []int{8, 4}, s) },
				"FromProcessLocalData": func() (*jit.Array, error) {
					return jit.FromProcessLocalData(c, s, data, []int{8, 4}, []int{8, 4})
				},
			}
			for name, put := range puts {
				a, err := put()
				require.NoError(t, err, name)
				assert.Equal(t, kind, a.Sharding().MemoryKind(), name)
				assert.Equal(t, repeat(kind, 8), bufferMemories(t, a), name)
				got, err := a.ToHost()
				require.NoError(t, err, name)
				assert.Equal(t, data, got, name)
				require.NoError(t, a.Close())
			}
		})
	}
}

// TestReshardArrayMemory: ReshardArray moves an array between device and host memory, with and
// without a change of layout, on both CPU plugins (copies between memories, the identity in
// device memory).
func TestReshardArrayMemory(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	pjrttest.NeedDevices(t, 8)
	m := mesh.MustNew(jit.Devices(c)[:8], []int{4, 2}, "x", "y")
	data := make([]float32, 8*4)
	for i := range data {
		data[i] = float32(i) * 0.5
	}
	sharding := func(spec mesh.PartitionSpec, kind string) mesh.NamedSharding {
		s, err := mesh.MustNamedSharding(m, spec).WithMemoryKind(kind)
		require.NoError(t, err)
		return s
	}
	steps := []mesh.NamedSharding{
		sharding(mesh.P("x", "y"), mesh.MemoryPinnedHost),   // device -> host, same layout
		sharding(mesh.P("y", nil), mesh.MemoryPinnedHost),   // host -> host, new layout
		sharding(mesh.P("y", nil), mesh.MemoryUnpinnedHost), // host -> other host
		sharding(mesh.P(nil, "x"), mesh.MemoryDevice),       // host -> device, new layout
	}
	a, err := jit.Put(c, data, []int{8, 4}, sharding(mesh.P("x", "y"), mesh.MemoryDevice))
	require.NoError(t, err)
	for i, want := range steps {
		b, err := jit.ReshardArray(c, a, want)
		require.NoError(t, err, "step %d", i)
		require.NoError(t, a.Close())
		a = b
		assert.True(t, a.Sharding().Equal(want), "step %d: %v, want %v", i, a.Sharding(), want)
		assert.Equal(t, repeat(want.MemoryKind(), 8), bufferMemories(t, a), "step %d", i)
		got, err := a.ToHost()
		require.NoError(t, err)
		assert.Equal(t, data, got, "step %d", i)
	}
	require.NoError(t, a.Close())
}

// TestCallMemoryKinds: a host-resident argument is lowered with its memory kind, and
// OutMemoryKinds places a result in host memory; plugins older than pjrt.MemorySpacesMinor
// refuse such programs with pjrt.ErrUnimplemented (they would leave the result in device memory).
func TestCallMemoryKinds(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	pjrttest.NeedDevices(t, 8)
	m := mesh.MustNew(jit.Devices(c)[:8], []int{4, 2}, "x", "y")
	host, err := mesh.MustNamedSharding(m, mesh.P("x", "y")).WithMemoryKind(mesh.MemoryPinnedHost)
	require.NoError(t, err)
	x, err := jit.Put(c, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, []int{8, 2}, host)
	require.NoError(t, err)
	defer x.Close()
	f := jit.New("double", func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Mul(a[0], f.Constant(2)), f.Add(a[0], f.Constant(1))}
	}, jit.OutSpecs(mesh.P("x", "y"), mesh.P("x", "y")), jit.OutMemoryKinds(mesh.MemoryDevice, mesh.MemoryUnpinnedHost))
	defer f.Close()
	out, err := f.Call(c, x)
	if _, minor := c.Plugin().APIVersion(); minor < pjrt.MemorySpacesMinor {
		require.ErrorIs(t, err, pjrt.ErrUnimplemented)
		require.ErrorIs(t, err, pjrt.ErrCompile)
		assert.ErrorContains(t, err, "memory spaces")
		return
	}
	require.NoError(t, err)
	defer out[0].Close()
	defer out[1].Close()
	assert.Equal(t, mesh.MemoryDevice, out[0].Sharding().MemoryKind())
	assert.Equal(t, mesh.MemoryUnpinnedHost, out[1].Sharding().MemoryKind())
	assert.Equal(t, repeat(mesh.MemoryDevice, 8), bufferMemories(t, out[0]))
	assert.Equal(t, repeat(mesh.MemoryUnpinnedHost, 8), bufferMemories(t, out[1]))
	got0, err := out[0].ToHost()
	require.NoError(t, err)
	got1, err := out[1].ToHost()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32}, got0)
	assert.Equal(t, []float32{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, got1)
	// Too many kinds, and a kind the devices lack, are refused.
	g := jit.New("bad", func(f *lower.Function, a []lower.Value) []lower.Value { return a }, jit.OutMemoryKinds("hbm"))
	defer g.Close()
	_, err = g.Call(c, x)
	require.ErrorIs(t, err, mesh.ErrMemoryKind)
	h := jit.New("bad", func(f *lower.Function, a []lower.Value) []lower.Value { return a }, jit.OutMemoryKinds("", ""))
	defer h.Close()
	_, err = h.Call(c, x)
	require.ErrorIs(t, err, jit.ErrArguments)
}
