package jit_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// noArgsModule takes no arguments and returns iota over 8 int32s, as JAX writes a jitted
// function of no arguments.
const noArgsModule = `module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<8xi32> {jax.result_info = "result"}) {
    %0 = stablehlo.iota dim = 0 : tensor<8xi32>
    return %0 : tensor<8xi32>
  }
}
`

// TestNoArguments runs functions that take no arguments: a module as written on one device,
// the client's first (as JAX runs it on its default device); the same module re-sharded onto
// the mesh WithMesh gives, with OutSpecs; a function built in Go on that mesh; and refuses
// arguments on another mesh than WithMesh's.
func TestNoArguments(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	want := []int32{0, 1, 2, 3, 4, 5, 6, 7}

	f, err := jit.FromText("f", noArgsModule)
	require.NoError(t, err)
	defer f.Close()
	for range 2 {
		out, err := f.Call(c)
		require.NoError(t, err)
		require.Len(t, out, 1)
		got, err := out[0].ToHost()
		require.NoError(t, err)
		assert.Equal(t, want, got)
		one, err := mesh.New(jit.Devices(c)[:1], []int{1}, "device")
		require.NoError(t, err)
		assert.True(t, out[0].Sharding().Equal(sharding(t, one, mesh.P())), "%v", out[0].Sharding())
		require.NoError(t, out[0].Close())
	}
	assert.Equal(t, jit.CacheStats{LoweringHits: 1, LoweringMisses: 1, CompileHits: 1, CompileMisses: 1}, f.Stats())

	m := fitMesh(t, jit.Devices(c), []int{4, 2}, "x", "y")
	g, err := jit.FromText("g", noArgsModule, jit.WithMesh(m), jit.OutSpecs(mesh.P("x")))
	require.NoError(t, err)
	defer g.Close()
	out, err := g.Call(c)
	require.NoError(t, err)
	got, err := out[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.True(t, out[0].Sharding().Equal(sharding(t, m, mesh.P("x"))), "%v", out[0].Sharding())
	require.NoError(t, out[0].Close())

	h := jit.New("h", func(f *lower.Function, _ []lower.Value) []lower.Value {
		i := f.Iota(lower.NewShape(dtypes.Int32, 8, 4), 1)
		return []lower.Value{f.Add(i, i)}
	}, jit.WithMesh(m), jit.OutSpecs(mesh.P("x", "y")))
	defer h.Close()
	out, err = h.Call(c)
	require.NoError(t, err)
	got, err = out[0].ToHost()
	require.NoError(t, err)
	wantH := make([]int32, 32)
	for i := range wantH {
		wantH[i] = int32(2 * (i % 4))
	}
	assert.Equal(t, wantH, got)
	assert.True(t, out[0].Sharding().Equal(sharding(t, m, mesh.P("x", "y"))), "%v", out[0].Sharding())
	require.NoError(t, out[0].Close())

	// Arguments on another mesh than WithMesh's.
	other := fitMeshReversed(t, jit.Devices(c), []int{4, 2}, "x", "y")
	x, err := jit.Put(c, want, []int{8}, sharding(t, other, mesh.P()))
	require.NoError(t, err)
	defer x.Close()
	k := jit.New("k", func(f *lower.Function, a []lower.Value) []lower.Value { return a }, jit.WithMesh(m))
	defer k.Close()
	out, err = k.Call(c, x)
	if other.Equal(m) {
		require.NoError(t, err) // one device: both meshes are the same
		require.Len(t, out, 1)
		got, err = out[0].ToHost()
		require.NoError(t, err)
		assert.Equal(t, want, got)
		require.NoError(t, out[0].Close())
		return
	}
	assert.Nil(t, out)
	require.ErrorIs(t, err, jit.ErrArguments)
	assert.ErrorContains(t, err, "WithMesh gave")
}

// gspmdNoPartitions is a GSPMD module sharded over 4 devices that does not say
// mhlo.num_partitions, as hand-written and older modules do.
const gspmdNoPartitions = `module @gspmd {
  func.func public @main(%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> (tensor<8x2xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}
`

// TestNumPartitions runs a module that does not say how many partitions it has on 4 devices
// with NumPartitions(4); without it the module counts as written for one device; a module
// that says another number is refused.
func TestNumPartitions(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	pjrttest.NeedDevices(t, 4)
	m, err := mesh.New(jit.Devices(c)[:4], []int{4}, "x")
	require.NoError(t, err)
	x, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(t, m, mesh.P("x")))
	require.NoError(t, err)
	defer x.Close()

	f, err := jit.FromText("f", gspmdNoPartitions)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Call(c, x)
	require.ErrorIs(t, err, jit.ErrArguments)
	assert.ErrorContains(t, err, "the module was written for 1 devices, the arguments are on a mesh of 4")

	g, err := jit.FromText("g", gspmdNoPartitions, jit.NumPartitions(4))
	require.NoError(t, err)
	defer g.Close()
	out, err := g.Call(c, x)
	require.NoError(t, err)
	got, err := out[0].ToHost()
	require.NoError(t, err)
	want := arange[float32](16)
	for i := range want {
		want[i] *= 2
	}
	assert.Equal(t, want, got)
	assert.True(t, out[0].Sharding().Equal(sharding(t, m, mesh.P("x", nil))), "%v", out[0].Sharding())
	require.NoError(t, out[0].Close())

	h, err := jit.FromText("h", externalModule, jit.NumPartitions(4))
	require.NoError(t, err)
	defer h.Close()
	_, err = callExternal(t, c, h, m, mesh.P("x"), mesh.P())
	require.ErrorIs(t, err, jit.ErrArguments)
	assert.ErrorContains(t, err, "NumPartitions(4) for a module that says mhlo.num_partitions = 8")
}
