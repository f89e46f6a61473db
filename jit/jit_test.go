package jit_test

import (
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

func mesh42(t testing.TB, c *pjrt.Client) mesh.Mesh {
	m, err := mesh.New(jit.Devices(c), []int{4, 2}, "x", "y")
	require.NoError(t, err)
	return m
}

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
		idx5     string // the index device 5 holds
		replica  []int
		distinct int
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
			require.Len(t, sh, 8)
			assert.Equal(t, tc.idx5, fmt.Sprint(sh[5].Index))
			var rep []int
			for i, s := range sh {
				rep = append(rep, s.ReplicaID)
				assert.Equal(t, m.Devices()[i], mesh.Device(s.Device))
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
			assert.Equal(t, tc.replica, rep)
			assert.Equal(t, tc.distinct, a.Sharding().NumShards())
			got, err := a.ToHost()
			require.NoError(t, err)
			assert.Equal(t, x, got)
			assert.Equal(t, tc.spec.Len() == 0, a.IsFullyReplicated())
		})
	}
}

func TestPutRank3AndScalar(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m, err := mesh.New(jit.Devices(c), []int{2, 2, 2}, "a", "b", "c")
	require.NoError(t, err)
	x := arange[float32](4 * 8 * 2)
	a, err := jit.Put(c, x, []int{4, 8, 2}, sharding(t, m, mesh.P("c", mesh.Axes("a", "b"))))
	require.NoError(t, err)
	defer a.Close()
	got, err := a.ToHost()
	require.NoError(t, err)
	assert.Equal(t, x, got)
	assert.Equal(t, []int{2, 2, 2}, a.AddressableShards()[0].Data.Dims())

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
	// Once per addressable device in mesh order, replicas included (like JAX).
	assert.Equal(t, []string{"[0:2, 0:2]", "[0:2, 0:2]", "[2:4, 0:2]", "[2:4, 0:2]", "[4:6, 0:2]", "[4:6, 0:2]", "[6:8, 0:2]", "[6:8, 0:2]"}, calls)
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
	assert.ErrorContains(t, err, "expected shard shape [2 2] (4 elements), callback returned 3 elements")
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

func TestFromShards(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	s := sharding(t, m, mesh.P("x", "y"))
	var bufs []*pjrt.Buffer
	for i, d := range c.Devices() {
		b, err := c.BufferFromHost(d, []int32{int32(i), int32(i)}, []int{2, 1})
		require.NoError(t, err)
		bufs = append(bufs, b)
	}
	swapped := slices.Clone(bufs)
	swapped[0], swapped[1] = bufs[1], bufs[0]
	_, err := jit.FromShards(c, []int{8, 2}, s, swapped)
	assert.ErrorIs(t, err, jit.ErrShard)
	assert.ErrorContains(t, err, "buffer 0 is on device 1")
	_, err = jit.FromShards(c, []int{8, 4}, s, bufs)
	assert.ErrorIs(t, err, jit.ErrShard)
	assert.ErrorContains(t, err, "expected shard shape [2 2]")
	_, err = jit.FromShards(c, []int{8, 2}, s, bufs[:7])
	assert.ErrorIs(t, err, jit.ErrShard)

	a, err := jit.FromShards(c, []int{8, 2}, s, bufs)
	require.NoError(t, err)
	got, err := a.ToHost()
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7}, got)
	require.NoError(t, a.Close())
	assert.True(t, bufs[3].IsClosed(), "the array owns its buffers")
}

func TestPutErrors(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	x := arange[float32](12)
	_, err := jit.Put(c, x, []int{3, 4}, sharding(t, m, mesh.P("x")))
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
	sim, err := mesh.New(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	require.NoError(t, err)
	_, err = jit.Put(c, x, []int{4, 3}, sharding(t, sim, mesh.P("x")))
	assert.ErrorIs(t, err, jit.ErrDevice)
	abs, err := mesh.NewAbstractSharding(m.Abstract(), mesh.P("x"))
	require.NoError(t, err)
	_, err = jit.Put(c, x, []int{4, 3}, abs)
	assert.ErrorIs(t, err, mesh.ErrNoDevices)
}

func TestCallErrors(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	rev := jit.Devices(c)
	slices.Reverse(rev)
	other, err := mesh.New(rev, []int{4, 2}, "x", "y")
	require.NoError(t, err)
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

	moved, err := jit.ReshardArray(c, xr, sharding(t, m, mesh.P(nil, "x")))
	require.Error(t, err, "dimension 1 (size 2) cannot split 4 ways")
	assert.Nil(t, moved)
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
	assert.Contains(t, prog.Text(), `mhlo.sharding = "{devices=[4,2]<=[8]}"`)
	assert.NotContains(t, prog.Text(), "sdy.")
	outs, err := f.Call(c, x)
	require.NoError(t, err)
	defer outs[0].Close()
	got, err := outs[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, int32(30), got.([]int32)[15])
	assert.Equal(t, []int{2, 2}, outs[0].AddressableShards()[3].Data.Dims())
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
	assert.Equal(t, "P('x', 'y')", outs[0].Sharding().Spec().String())
	assert.Equal(t, "P('y', 'x')", outs[1].Sharding().Spec().String())
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
	assert.Equal(t, "P('y', 'x')", outs[1].Sharding().Spec().String())
	got, err := outs[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, int64(45), got.([]int64)[15])
}
