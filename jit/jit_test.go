package jit_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// fitMesh returns a mesh with the given axes over the first of devs, of shape pjrttest.FitShape(want,
// len(devs)).
func fitMesh(t testing.TB, devs []mesh.Device, want []int, names ...string) mesh.Mesh {
	t.Helper()
	shape := pjrttest.FitShape(want, len(devs))
	m, err := mesh.New(devs[:pjrttest.MeshSize(shape)], shape, names...)
	require.NoError(t, err)
	return m
}

// fitMeshReversed is fitMesh over the same devices in reverse order.
func fitMeshReversed(t testing.TB, devs []mesh.Device, want []int, names ...string) mesh.Mesh {
	t.Helper()
	rev := slices.Clone(devs[:pjrttest.MeshSize(pjrttest.FitShape(want, len(devs)))])
	slices.Reverse(rev)
	return fitMesh(t, rev, want, names...)
}

// mesh42 returns the ("x", "y") mesh of the tests over the client's devices: (4, 2) on 8 devices,
// as small as fitShape makes it on fewer.
func mesh42(t testing.TB, c *pjrt.Client) mesh.Mesh {
	t.Helper()
	return fitMesh(t, jit.Devices(c), []int{4, 2}, "x", "y")
}

// axis returns the size of mesh axis name.
func axis(t testing.TB, m mesh.Mesh, name string) int {
	t.Helper()
	n, ok := m.AxisSize(name)
	require.True(t, ok, "mesh %v has no axis %q", m, name)
	return n
}

// chosen returns spec as an array reads back a sharding XLA chose for it on m: an axis of size 1
// splits nothing and reads as None, and a spec with no axis left reads as P(). On the (4, 2) mesh
// it is spec itself.
func chosen(m mesh.Mesh, spec mesh.PartitionSpec) mesh.PartitionSpec {
	var dims []any
	split := false
	for _, d := range spec.Dims() {
		var axes []string
		for _, a := range d.Axes() {
			if n, _ := m.AxisSize(a); n > 1 {
				axes = append(axes, a)
			}
		}
		switch len(axes) {
		case 0:
			dims = append(dims, nil)
		case 1:
			dims = append(dims, axes[0])
		default:
			dims = append(dims, axes)
		}
		split = split || len(axes) > 0
	}
	if !split {
		return mesh.P()
	}
	return mesh.P(dims...)
}

// is42 says whether m is the (4, 2) mesh mesh42 makes on 8 devices, where the tests also hold
// the values they held before they followed the device count.
func is42(m mesh.Mesh) bool { return slices.Equal(m.AxisSizes(), []int{4, 2}) }

func sharding(t testing.TB, m mesh.Mesh, spec mesh.PartitionSpec) mesh.NamedSharding {
	s, err := mesh.NewNamedSharding(m, spec)
	require.NoError(t, err)
	return s
}

func arange[T int32 | int64 | float32](n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = T(i)
	}
	return out
}

var double = func(f *lower.Function, args []lower.Value) []lower.Value {
	return []lower.Value{f.Mul(args[0], f.Constant(2))}
}

// checkNoLeak fails the test if it ends with more live device buffers than it started with.
func checkNoLeak(t *testing.T) {
	before := pjrt.LiveBuffers()
	t.Cleanup(func() { assert.Equal(t, before, pjrt.LiveBuffers(), "device buffers leaked") })
}

func TestPutShardsAndToHost(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	cases := []struct {
		spec     mesh.PartitionSpec
		idx5     string // the index device 5 holds, on the (4, 2) mesh
		replica  []int  // on the (4, 2) mesh
		distinct int    // on the (4, 2) mesh
	}{
		{mesh.P("x", "y"), "[4:6, 2:4]", []int{0, 0, 0, 0, 0, 0, 0, 0}, 8},
		{mesh.P("x"), "[4:6, 0:4]", []int{0, 1, 0, 1, 0, 1, 0, 1}, 4},
		{mesh.P("y"), "[4:8, 0:4]", []int{0, 0, 1, 1, 2, 2, 3, 3}, 2},
		{mesh.P(), "[0:8, 0:4]", []int{0, 1, 2, 3, 4, 5, 6, 7}, 1},
		{mesh.P(mesh.Axes("y", "x")), "[6:7, 0:4]", []int{0, 0, 0, 0, 0, 0, 0, 0}, 8},
		{mesh.P(mesh.Axes("x", "y")), "[5:6, 0:4]", []int{0, 0, 0, 0, 0, 0, 0, 0}, 8},
	}
	x := arange[int32](32)
	for _, tc := range cases {
		t.Run(tc.spec.String(), func(t *testing.T) {
			a, err := jit.Put(c, x, []int{8, 4}, sharding(t, m, tc.spec))
			require.NoError(t, err)
			defer a.Close()
			sh := a.AddressableShards()
			require.Len(t, sh, m.Size())
			if is42(m) {
				assert.Equal(t, tc.idx5, fmt.Sprint(sh[5].Index))
			}
			// On any mesh: each device's index and replica id as the sharding's geometry says, and
			// as many distinct shards as the spec's axes make.
			ns := sharding(t, m, tc.spec)
			indices, err := ns.DevicesIndicesMap([]int{8, 4})
			require.NoError(t, err)
			replicas, err := ns.ReplicaIDs()
			require.NoError(t, err)
			distinct := 1
			for _, name := range m.AxisNames() {
				if slices.Contains(tc.spec.UsedAxes(), name) {
					distinct *= axis(t, m, name)
				}
			}
			var rep []int
			for i, s := range sh {
				rep = append(rep, s.ReplicaID)
				assert.Equal(t, m.Devices()[i], mesh.Device(s.Device))
				assert.Equal(t, fmt.Sprint(indices[i]), fmt.Sprint(s.Index), "shard %d", i)
				// Each shard holds exactly its block of x.
				got, err := s.Data.ToHost()
				require.NoError(t, err)
				var want []int32
				for r := s.Index[0].Start; r < s.Index[0].Stop; r++ {
					for col := s.Index[1].Start; col < s.Index[1].Stop; col++ {
						want = append(want, x[r*4+col])
					}
				}
				assert.Equal(t, want, got, "shard %d", i)
			}
			assert.Equal(t, replicas, rep)
			assert.Equal(t, distinct, a.Sharding().NumShards())
			if is42(m) {
				assert.Equal(t, tc.replica, rep)
				assert.Equal(t, tc.distinct, a.Sharding().NumShards())
			}
			got, err := a.ToHost()
			require.NoError(t, err)
			assert.Equal(t, x, got)
			assert.Equal(t, distinct == 1, a.IsFullyReplicated())
			if is42(m) {
				assert.Equal(t, tc.spec.Len() == 0, a.IsFullyReplicated())
			}
		})
	}
}

func TestPutRank3AndScalar(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := fitMesh(t, jit.Devices(c), []int{2, 2, 2}, "a", "b", "c")
	x := arange[float32](4 * 8 * 2)
	a, err := jit.Put(c, x, []int{4, 8, 2}, sharding(t, m, mesh.P("c", mesh.Axes("a", "b"))))
	require.NoError(t, err)
	defer a.Close()
	got, err := a.ToHost()
	require.NoError(t, err)
	assert.Equal(t, x, got)
	// [2, 2, 2] on the (2, 2, 2) mesh.
	assert.Equal(t, []int{4 / axis(t, m, "c"), 8 / (axis(t, m, "a") * axis(t, m, "b")), 2}, a.AddressableShards()[0].Data.Dims())

	s, err := jit.Put(c, []int64{42}, []int{}, sharding(t, m, mesh.P()))
	require.NoError(t, err)
	defer s.Close()
	got, err = s.ToHost()
	require.NoError(t, err)
	assert.Equal(t, []int64{42}, got)
}

func TestFromCallback(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	var calls []string
	a, err := jit.FromCallback(c, []int{8, 2}, dtypes.Int64, sharding(t, m, mesh.P("x")), func(idx mesh.Index) (any, error) {
		calls = append(calls, fmt.Sprint(idx))
		var out []int64
		for r := idx[0].Start; r < idx[0].Stop; r++ {
			out = append(out, int64(10*r), int64(10*r+1))
		}
		return out, nil
	})
	require.NoError(t, err)
	defer a.Close()
	// Once per addressable device in mesh order, replicas included (like JAX): on the (4, 2) mesh
	// "[0:2, 0:2]", "[0:2, 0:2]", "[2:4, 0:2]", "[2:4, 0:2]", ..., "[6:8, 0:2]".
	nx, ny := axis(t, m, "x"), axis(t, m, "y")
	var want []string
	for i := range nx {
		for range ny {
			want = append(want, fmt.Sprintf("[%d:%d, 0:2]", i*8/nx, (i+1)*8/nx))
		}
	}
	assert.Equal(t, want, calls)
	got, err := a.ToHost()
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51, 60, 61, 70, 71}, got)

	calls = nil
	r, err := jit.FromCallback(c, []int{3}, dtypes.Float32, sharding(t, m, mesh.P()), func(idx mesh.Index) (any, error) {
		calls = append(calls, fmt.Sprint(idx))
		return []float32{1, 2, 3}, nil
	})
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, []string{"[0:3]"}, calls, "one call for a fully replicated sharding")

	_, err = jit.FromCallback(c, []int{8, 2}, dtypes.Int64, sharding(t, m, mesh.P("x")), func(mesh.Index) (any, error) {
		return []int64{1, 2, 3}, nil
	})
	assert.ErrorIs(t, err, jit.ErrShard)
	assert.ErrorContains(t, err, fmt.Sprintf("expected shard shape [%d 2] (%d elements), callback returned 3 elements", 8/nx, 16/nx))
	_, err = jit.FromCallback(c, []int{8, 2}, dtypes.Int64, sharding(t, m, mesh.P("x")), func(mesh.Index) (any, error) {
		return []float32{1, 2, 3, 4}, nil
	})
	assert.ErrorIs(t, err, jit.ErrShard)
	assert.ErrorContains(t, err, "callback returned dtype Float32, want Int64")
	boom := errors.New("boom")
	_, err = jit.FromCallback(c, []int{8, 2}, dtypes.Int64, sharding(t, m, mesh.P("x")), func(mesh.Index) (any, error) {
		return nil, boom
	})
	assert.ErrorIs(t, err, boom)
}

// TestFromCallbackInto fills shards in place: once per distinct index (concurrently, so the
// calls are counted under a lock), replicas copied from one fill; large shards and small, exact
// values; a fill's error names its index, and an element XLA cannot hold is refused.
func TestFromCallbackInto(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	nx, ny := axis(t, m, "x"), axis(t, m, "y")
	for _, cols := range []int{2, 8192} { // shards of a few bytes and of 64 KiB or more (staged)
		for split, spec := range []mesh.PartitionSpec{mesh.P("x"), mesh.P("x", "y")} { // replicas over y, or none
			var mu sync.Mutex
			calls := map[string]int{}
			a, err := jit.FromCallbackInto(c, []int{8, cols}, dtypes.Int32, sharding(t, m, spec), func(idx mesh.Index, dst []byte) error {
				mu.Lock()
				calls[fmt.Sprint(idx)]++
				mu.Unlock()
				at := 0
				for r := idx[0].Start; r < idx[0].Stop; r++ {
					for k := idx[1].Start; k < idx[1].Stop; k++ {
						binary.LittleEndian.PutUint32(dst[at:], uint32(1000*r+k))
						at += 4
					}
				}
				return nil
			})
			require.NoError(t, err)
			want := map[string]int{}
			parts := 1
			if split == 1 {
				parts = ny
			}
			for i := range nx {
				for j := range parts {
					want[fmt.Sprintf("[%d:%d, %d:%d]", i*8/nx, (i+1)*8/nx, j*cols/parts, (j+1)*cols/parts)] = 1
				}
			}
			assert.Equal(t, want, calls, "one fill per distinct index")
			got, err := a.ToHost()
			require.NoError(t, err)
			expect := make([]int32, 8*cols)
			for r := range 8 {
				for k := range cols {
					expect[r*cols+k] = int32(1000*r + k)
				}
			}
			assert.Equal(t, expect, got)
			require.NoError(t, a.Close())
		}
	}
	boom := errors.New("boom")
	for _, spec := range []mesh.PartitionSpec{mesh.P("x"), mesh.P("x", "y")} {
		_, err := jit.FromCallbackInto(c, []int{8, 2}, dtypes.Int32, sharding(t, m, spec), func(idx mesh.Index, _ []byte) error {
			if idx[0].Stop == 8 { // the last rows (on one device, all of them)
				return boom
			}
			return nil
		})
		assert.ErrorIs(t, err, boom)
		assert.ErrorContains(t, err, fmt.Sprintf("index [%d:8, ", 8-8/nx))
	}
	_, err := jit.FromCallbackInto(c, []int{8}, dtypes.S4, sharding(t, m, mesh.P()), func(_ mesh.Index, dst []byte) error {
		clear(dst)
		dst[3] = 0x30
		return nil
	})
	assert.ErrorIs(t, err, pjrt.ErrHostData)
	_, err = jit.FromCallbackInto(c, []int{8}, dtypes.Int32, sharding(t, m, mesh.P()), nil)
	assert.ErrorIs(t, err, jit.ErrNil)
}

func TestFromShards(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	s := sharding(t, m, mesh.P("x", "y"))
	// Device i of the mesh holds a block of [8, 2] filled with i: [2, 1] blocks on the (4, 2) mesh.
	nx, ny := axis(t, m, "x"), axis(t, m, "y")
	var bufs []*pjrt.Buffer
	for i, d := range c.Devices()[:m.Size()] {
		b, err := c.BufferFromHost(d, slices.Repeat([]int32{int32(i)}, 16/m.Size()), []int{8 / nx, 2 / ny})
		require.NoError(t, err)
		bufs = append(bufs, b)
	}
	if len(bufs) > 1 {
		swapped := slices.Clone(bufs)
		swapped[0], swapped[1] = bufs[1], bufs[0]
		_, err := jit.FromShards(c, []int{8, 2}, s, swapped)
		assert.ErrorIs(t, err, jit.ErrShard)
		assert.ErrorContains(t, err, fmt.Sprintf("buffer 0 is on device %d", c.Devices()[1].ID()))
	}
	_, err := jit.FromShards(c, []int{8, 4}, s, bufs)
	assert.ErrorIs(t, err, jit.ErrShard)
	assert.ErrorContains(t, err, fmt.Sprintf("expected shard shape [%d %d]", 8/nx, 4/ny))
	_, err = jit.FromShards(c, []int{8, 2}, s, bufs[:len(bufs)-1])
	assert.ErrorIs(t, err, jit.ErrShard)

	a, err := jit.FromShards(c, []int{8, 2}, s, bufs)
	require.NoError(t, err)
	got, err := a.ToHost()
	require.NoError(t, err)
	// [0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7] on the (4, 2) mesh.
	var want []int32
	for r := range 8 {
		for col := range 2 {
			want = append(want, int32(r/(8/nx)*ny+col/(2/ny)))
		}
	}
	assert.Equal(t, want, got)
	require.NoError(t, a.Close())
	assert.True(t, bufs[min(3, len(bufs)-1)].IsClosed(), "the array owns its buffers")
}

func TestPutErrors(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	x := arange[float32](12)
	sim, err := mesh.New(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	require.NoError(t, err)
	// 3 rows that "x" cannot split: on the client's mesh where "x" splits at all, else on simulated
	// devices (Put checks the shape before the devices).
	split := m
	if axis(t, m, "x") == 1 {
		split = sim
	}
	_, err = jit.Put(c, x, []int{3, 4}, sharding(t, split, mesh.P("x")))
	assert.ErrorIs(t, err, mesh.ErrIndivisible)
	var ie *mesh.IndivisibleError
	assert.ErrorAs(t, err, &ie)
	_, err = jit.Put(c, x, []int{12}, sharding(t, m, mesh.P("x", "y")))
	assert.ErrorIs(t, err, mesh.ErrRank)
	_, err = jit.Put(c, x, []int{4, 4}, sharding(t, m, mesh.P("x")))
	assert.ErrorIs(t, err, pjrt.ErrHostData)
	assert.ErrorContains(t, err, "needs 64 bytes (16 elements), got 48 bytes")
	_, err = jit.Put(c, []string{"a"}, []int{1}, sharding(t, m, mesh.P()))
	assert.ErrorIs(t, err, pjrt.ErrHostData)
	_, err = jit.Put(c, x, []int{4, 3}, sharding(t, sim, mesh.P("x")))
	assert.ErrorIs(t, err, jit.ErrDevice)
	abs, err := mesh.NewAbstractSharding(m.Abstract(), mesh.P("x"))
	require.NoError(t, err)
	_, err = jit.Put(c, x, []int{4, 3}, abs)
	assert.ErrorIs(t, err, mesh.ErrNoDevices)
}

// otherMesh returns a mesh other than m, an ("x", "y") mesh, of the same size: m's devices in
// reverse order, or, where that is m itself (one device), m's axes named the other way round.
func otherMesh(t testing.TB, m mesh.Mesh) mesh.Mesh {
	t.Helper()
	devs := m.Devices()
	slices.Reverse(devs)
	other, err := mesh.New(devs, m.AxisSizes(), "x", "y")
	require.NoError(t, err)
	if other.Equal(m) {
		other, err = mesh.New(devs, m.AxisSizes(), "y", "x")
		require.NoError(t, err)
	}
	return other
}

func TestCallErrors(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	other := otherMesh(t, m)
	x, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x.Close()
	xr, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(t, m, mesh.P("y")))
	require.NoError(t, err)
	defer xr.Close()
	y, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(t, other, mesh.P("x", "y")))
	require.NoError(t, err)
	defer y.Close()
	xi, err := jit.Put(c, arange[int32](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer xi.Close()

	add := jit.New("add", func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Add(a[0], a[1])}
	}, jit.InSpecs(mesh.P("x", "y"), mesh.P("x", "y")), jit.OutSpecs(mesh.P("x", "y")))

	_, err = add.Call(c, x)
	assert.ErrorIs(t, err, jit.ErrArguments)
	assert.ErrorContains(t, err, "1 arguments for 2 InSpecs")
	_, err = add.Call(c, x, y)
	assert.ErrorIs(t, err, jit.ErrArguments)
	assert.ErrorContains(t, err, "argument 1 is on")
	_, err = add.Call(c, x, xr)
	assert.ErrorIs(t, err, jit.ErrArguments)
	assert.ErrorContains(t, err, "the sharding passed to jit does not match")
	_, err = add.Call(c, x, xi) // f32 + i32: the builder rejects it
	assert.ErrorIs(t, err, jit.ErrLowering)
	assert.ErrorIs(t, err, lower.ErrDType)
	_, err = add.Call(c, x, nil)
	assert.ErrorIs(t, err, jit.ErrArguments)
	_, err = add.Call(nil, x, x)
	assert.ErrorIs(t, err, jit.ErrDevice)
	_, err = jit.Put(nil, arange[float32](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	assert.ErrorIs(t, err, jit.ErrDevice)

	closed, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	require.NoError(t, closed.Close(), "Close is idempotent")
	_, err = add.Call(c, x, closed)
	assert.ErrorIs(t, err, jit.ErrClosed)
	_, err = closed.ToHost()
	assert.ErrorIs(t, err, jit.ErrClosed)

	panicky := jit.New("panicky", func(f *lower.Function, a []lower.Value) []lower.Value { panic("user bug") })
	_, err = panicky.Call(c, x)
	assert.ErrorIs(t, err, jit.ErrLowering)
	assert.ErrorContains(t, err, "user bug")

	bad := jit.New("bad_out", double, jit.OutSpecs(mesh.P("x", "x")))
	_, err = bad.Call(c, x)
	assert.ErrorIs(t, err, mesh.ErrDuplicateAxis)
}

func TestReshard(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	xr, err := jit.Put(c, arange[int32](16), []int{8, 2}, sharding(t, m, mesh.P("y")))
	require.NoError(t, err)
	defer xr.Close()
	f := jit.New("double_reshard", double, jit.InSpecs(mesh.P("x", "y")), jit.OutSpecs(mesh.P("x", "y")), jit.Reshard())
	outs, err := f.Call(c, xr)
	require.NoError(t, err)
	defer outs[0].Close()
	got, err := outs[0].ToHost()
	require.NoError(t, err)
	want := arange[int32](16)
	for i := range want {
		want[i] *= 2
	}
	assert.Equal(t, want, got)
	assert.Equal(t, "P('y',)", xr.Sharding().Spec().String(), "the argument keeps its layout")

	if nx := axis(t, m, "x"); 2%nx != 0 { // on 4 devices or more
		moved, err := jit.ReshardArray(c, xr, sharding(t, m, mesh.P(nil, "x")))
		require.Error(t, err, "dimension 1 (size 2) cannot split %d ways", nx)
		assert.Nil(t, moved)
	}
}

func TestDonate(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	f := jit.New("double_donate", double, jit.OutSpecs(mesh.P("x", "y")), jit.Donate(0))
	outs, err := f.Call(c, x)
	require.NoError(t, err)
	assert.True(t, x.IsClosed())
	got, err := outs[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, float32(30), got.([]float32)[15])
	require.NoError(t, outs[0].Close())
	_, err = f.Call(c, x)
	assert.ErrorIs(t, err, jit.ErrClosed)
	// The program tells XLA so: without the alias PJRT would consume the buffer and reuse nothing.
	prog, err := f.Lower(m.Abstract(), jit.ArgType{Shape: lower.NewShape(dtypes.Float32, 8, 2), Spec: mesh.P("x", "y")})
	require.NoError(t, err)
	assert.Contains(t, prog.Text(), "tf.aliasing_output = 0 : i32")
}

func TestUnspecifiedOutputReplicated(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[int32](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x.Close()
	total := jit.New("total", func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Sum(a[0])}
	})
	outs, err := total.Call(c, x)
	require.NoError(t, err)
	defer outs[0].Close()
	got, err := outs[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, []int32{120}, got)
	assert.True(t, outs[0].IsFullyReplicated())
}

// TestConcurrentCalls runs one function from 8 goroutines, 1,000 calls each (run with -race).
func TestConcurrentCalls(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[int64](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x.Close()
	f := jit.New("double_concurrent", double, jit.InSpecs(mesh.P("x", "y")), jit.OutSpecs(mesh.P("x", "y")))
	calls := 1000
	if testing.Short() {
		calls = 50
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				outs, err := f.Call(c, x)
				if !assert.NoError(t, err) {
					return
				}
				got, err := outs[0].ToHost()
				assert.NoError(t, err)
				if v := got.([]int64); v[7] != 14 || v[15] != 30 {
					t.Errorf("call %d: got %v", i, v)
				}
				assert.NoError(t, outs[0].Close())
			}
		}()
	}
	wg.Wait()
	st := f.Stats()
	assert.Equal(t, int64(1), st.LoweringMisses)
	assert.Equal(t, int64(1), st.CompileMisses)
	assert.Equal(t, int64(8*calls-1), st.CompileHits)
}

func TestGSPMDFunction(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[int32](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x.Close()
	f := jit.New("double_gspmd", double, jit.OutSpecs(mesh.P("x", nil)), jit.WithPartitioner(lower.GSPMD))
	prog, err := f.Lower(m.Abstract(), jit.ArgType{Shape: lower.NewShape(dtypes.Int32, 8, 2), Spec: mesh.P("x", "y")})
	require.NoError(t, err)
	// {devices=[4,2]<=[8]} on the (4, 2) mesh; {replicated} on one device, where the axes of size
	// 1 shard nothing (as JAX prints it).
	want := fmt.Sprintf(`{devices=[%d,%d]<=[%d]}`, axis(t, m, "x"), axis(t, m, "y"), m.Size())
	if m.Size() == 1 {
		want = "{replicated}"
	}
	assert.Contains(t, prog.Text(), fmt.Sprintf(`mhlo.sharding = %q`, want))
	assert.NotContains(t, prog.Text(), "sdy.")
	outs, err := f.Call(c, x)
	require.NoError(t, err)
	defer outs[0].Close()
	got, err := outs[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, int32(30), got.([]int32)[15])
	sh := outs[0].AddressableShards()
	assert.Equal(t, []int{8 / axis(t, m, "x"), 2}, sh[min(3, len(sh)-1)].Data.Dims()) // [2, 2] on the (4, 2) mesh
}

// TestUnspecifiedOutputChosenByXLA leaves both results' shardings to XLA and reads back what it
// chose: x*x keeps x's P('x', 'y'); its transpose comes out P('y', 'x').
func TestUnspecifiedOutputChosenByXLA(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[int64](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x.Close()
	f := jit.New("square_and_transpose", func(f *lower.Function, a []lower.Value) []lower.Value {
		sq := f.Mul(a[0], a[0])
		return []lower.Value{sq, f.Transpose(sq, 1, 0)}
	})
	outs, err := f.Call(c, x)
	require.NoError(t, err)
	defer outs[0].Close()
	defer outs[1].Close()
	assert.Equal(t, chosen(m, mesh.P("x", "y")).String(), outs[0].Sharding().Spec().String())
	assert.Equal(t, chosen(m, mesh.P("y", "x")).String(), outs[1].Sharding().Spec().String())
	got, err := outs[1].ToHost()
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 4, 16, 36, 64, 100, 144, 196, 1, 9, 25, 49, 81, 121, 169, 225}, got)
}

// TestMixedOutputSpecs declares the first result's spec and leaves the second to XLA.
func TestMixedOutputSpecs(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[int64](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x.Close()
	f := jit.New("declared_and_open", func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Mul(a[0], f.Constant(3)), f.Transpose(a[0], 1, 0)}
	}, jit.OutSpecs(mesh.P()))
	outs, err := f.Call(c, x)
	require.NoError(t, err)
	defer outs[0].Close()
	defer outs[1].Close()
	assert.True(t, outs[0].IsFullyReplicated())
	assert.Equal(t, chosen(m, mesh.P("y", "x")).String(), outs[1].Sharding().Spec().String())
	got, err := outs[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, int64(45), got.([]int64)[15])
}
