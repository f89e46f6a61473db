package jit_test

import (
	"errors"
	"fmt"
	"runtime"
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

// checkNoLiveExecutables fails the test if it ends with more live executables than it started with.
func checkNoLiveExecutables(t *testing.T) {
	before := pjrt.LiveExecutables()
	t.Cleanup(func() { assert.Equal(t, before, pjrt.LiveExecutables(), "executables leaked") })
}

func doubled[T int32 | int64 | float32](n int) []T {
	out := arange[T](n)
	for i := range out {
		out[i] *= 2
	}
	return out
}

// callToHost calls f on args and returns its first result on the host, closing every result.
func callToHost(t *testing.T, f *jit.Function, c *pjrt.Client, args ...*jit.Array) any {
	t.Helper()
	outs, err := f.Call(c, args...)
	require.NoError(t, err)
	defer closeAll(outs)
	got, err := outs[0].ToHost()
	require.NoError(t, err)
	return got
}

func closeAll(as []*jit.Array) {
	for _, a := range as {
		a.Close()
	}
}

// TestCrossClientCacheCPUOnly calls one Function with two clients whose meshes have the same
// device ids: each client gets an executable of its own (the lowering is shared), Release frees
// one client's executables, and Close the rest. CPU only: it needs two clients of the plugin.
func TestCrossClientCacheCPUOnly(t *testing.T) {
	c1 := pjrttest.Client(t)
	n := len(c1.Devices())
	c2, err := pjrttest.Open(n)
	require.NoError(t, err)
	defer c2.Close()
	checkNoLeak(t)
	checkNoLiveExecutables(t)
	live := pjrt.LiveExecutables()

	m1, m2 := mesh42(t, c1), mesh42(t, c2)
	require.Equal(t, m1.DeviceIDs(), m2.DeviceIDs())
	x1, err := jit.Put(c1, arange[int64](16), []int{8, 2}, sharding(t, m1, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x1.Close()
	x2, err := jit.Put(c2, arange[int64](16), []int{8, 2}, sharding(t, m2, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x2.Close()

	f := jit.New("double_two_clients", double, jit.OutSpecs(mesh.P("x", "y")))
	defer f.Close()
	assert.Equal(t, doubled[int64](16), callToHost(t, f, c1, x1))
	assert.Equal(t, doubled[int64](16), callToHost(t, f, c2, x2), "the second client runs its own executable")
	assert.Equal(t, doubled[int64](16), callToHost(t, f, c1, x1))
	assert.Equal(t, doubled[int64](16), callToHost(t, f, c2, x2))
	assert.Equal(t, jit.CacheStats{LoweringHits: 3, LoweringMisses: 1, CompileHits: 2, CompileMisses: 2}, f.Stats())
	assert.Equal(t, live+2, pjrt.LiveExecutables())

	_, err = f.Call(c2, x1)
	assert.ErrorIs(t, err, jit.ErrDevice)
	assert.EqualError(t, err, fmt.Sprintf("jit: double_two_clients: device not usable: argument 0 is on devices of another client than Client(cpu, %d devices)", n))

	require.NoError(t, f.Release(c2))
	assert.Equal(t, live+1, pjrt.LiveExecutables(), "Release frees the executables of that client only")
	assert.Equal(t, doubled[int64](16), callToHost(t, f, c1, x1))
	assert.Equal(t, int64(2), f.Stats().CompileMisses, "the other client's executable stays")
	assert.Equal(t, doubled[int64](16), callToHost(t, f, c2, x2))
	assert.Equal(t, int64(3), f.Stats().CompileMisses, "a released client compiles again")

	require.NoError(t, f.Close())
	assert.Equal(t, live, pjrt.LiveExecutables())
}

// TestFunctionClose shows Close freeing every executable a Function made, its resharding
// identities included, and what a closed Function does.
func TestFunctionClose(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	checkNoLiveExecutables(t)
	live := pjrt.LiveExecutables()
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[int32](16), []int{8, 2}, sharding(t, m, mesh.P("y")))
	require.NoError(t, err)
	defer x.Close()

	f := jit.New("double_close", double, jit.InSpecs(mesh.P("x", "y")), jit.OutSpecs(mesh.P("x", "y")), jit.Reshard())
	outs, err := f.Call(c, x)
	require.NoError(t, err)
	defer closeAll(outs)
	assert.Equal(t, live+2, pjrt.LiveExecutables(), "the function and its identity to P('x', 'y')")

	require.NoError(t, f.Close())
	assert.Equal(t, live, pjrt.LiveExecutables(), "Close frees both")
	require.NoError(t, f.Close(), "Close is idempotent")
	require.NoError(t, f.Release(c), "Release after Close does nothing")

	got, err := outs[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, doubled[int32](16), got, "results outlive their function")

	_, err = f.Call(c, x)
	assert.ErrorIs(t, err, jit.ErrClosed)
	assert.EqualError(t, err, "jit: double_close: function already closed")
	_, err = f.Lower(m.Abstract(), jit.ArgType{Shape: lower.NewShape(dtypes.Int32, 8, 2), Spec: mesh.P("x", "y")})
	assert.ErrorIs(t, err, jit.ErrClosed)
	assert.Equal(t, live, pjrt.LiveExecutables())
}

// TestCloseWhileCalling closes a Function while 4 goroutines call it: Close waits for the calls
// in flight, every call after it fails with ErrClosed, and nothing leaks (run with -race).
func TestCloseWhileCalling(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	checkNoLiveExecutables(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[int64](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x.Close()
	f := jit.New("double_closing", double, jit.OutSpecs(mesh.P("x", "y")))
	assert.Equal(t, doubled[int64](16), callToHost(t, f, c, x))

	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok, closed int
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				outs, err := f.Call(c, x)
				if errors.Is(err, jit.ErrClosed) {
					mu.Lock()
					closed++
					mu.Unlock()
					return
				}
				if !assert.NoError(t, err) {
					return
				}
				got, err := outs[0].ToHost()
				assert.NoError(t, err)
				assert.Equal(t, doubled[int64](16), got)
				closeAll(outs)
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	for {
		mu.Lock()
		n := ok
		mu.Unlock()
		if n >= 20 {
			break
		}
		runtime.Gosched()
	}
	require.NoError(t, f.Close())
	wg.Wait()
	assert.Equal(t, 4, closed, "every goroutine ends with ErrClosed")
}

// TestBodyPanics: a runtime error in a Body goes on panicking, in the caller's goroutine; any
// other panic is an error of that call only. Neither is cached, and the Function stays usable.
func TestBodyPanics(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	checkNoLiveExecutables(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[int64](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x.Close()

	var mode string // what the Body does on its next run
	runs := 0
	boom := errors.New("boom")
	f := jit.New("moody", func(fn *lower.Function, a []lower.Value) []lower.Value {
		runs++
		switch mode {
		case "panic":
			panic("user bug")
		case "panic error":
			panic(boom)
		case "index":
			return []lower.Value{a[len(a)]} // index out of range: a runtime error
		}
		return double(fn, a)
	}, jit.InSpecs(mesh.P("x", "y")), jit.Reshard())
	defer f.Close()

	mode = "panic"
	_, err = f.Call(c, x)
	assert.ErrorIs(t, err, jit.ErrLowering)
	assert.EqualError(t, err, "jit: moody: lowering failed: body panicked: user bug")
	_, err = f.Call(c, x)
	assert.ErrorContains(t, err, "user bug")
	assert.Equal(t, 2, runs, "a panic is not cached: the Body runs again")

	mode = "panic error"
	_, err = f.Call(c, x)
	assert.ErrorIs(t, err, boom)
	assert.ErrorIs(t, err, jit.ErrLowering)

	mode = "index"
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		_, _ = f.Call(c, x)
	}()
	require.NotNil(t, recovered, "a runtime error in the Body reaches the caller as a panic")
	re, ok := recovered.(runtime.Error)
	require.True(t, ok, "the panic value is the runtime error itself, got %T", recovered)
	assert.Contains(t, re.Error(), "index out of range [1] with length 1")

	// Also when the argument was resharded first: the temporary is closed on the way up
	// (checkNoLeak), and the Function's lock is released (Close below would hang otherwise).
	xr, err := jit.Put(c, arange[int64](16), []int{8, 2}, sharding(t, m, mesh.P("x")))
	require.NoError(t, err)
	defer xr.Close()
	assert.Panics(t, func() { _, _ = f.Call(c, xr) })

	mode = ""
	assert.Equal(t, doubled[int64](16), callToHost(t, f, c, x), "the Function works once the Body does")
	assert.Equal(t, doubled[int64](16), callToHost(t, f, c, xr))
	assert.Equal(t, 6, runs)
	assert.Equal(t, doubled[int64](16), callToHost(t, f, c, x))
	assert.Equal(t, 6, runs, "the good lowering is cached")
	assert.Equal(t, jit.CacheStats{LoweringHits: 2, LoweringMisses: 6, CompileHits: 2, CompileMisses: 1}, f.Stats(),
		"every call counts one lowering look-up; five found nothing kept")
	require.NoError(t, f.Close())
}

// TestZeroResults runs functions that return nothing.
func TestZeroResults(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	checkNoLiveExecutables(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x.Close()
	nothing := func(*lower.Function, []lower.Value) []lower.Value { return nil }
	for _, f := range []*jit.Function{
		jit.New("nothing", nothing),
		jit.New("nothing_in_specs", nothing, jit.InSpecs(mesh.P("x", "y"))),
		jit.New("nothing_donated", nothing, jit.Donate(0)),
	} {
		y, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
		require.NoError(t, err)
		for range 2 {
			outs, err := f.Call(c, y)
			if errors.Is(err, jit.ErrClosed) { // the donating function consumed y on the first call
				break
			}
			require.NoError(t, err)
			assert.Empty(t, outs)
		}
		require.NoError(t, y.Close())
		require.NoError(t, f.Close())
	}
}

// TestNilValues: nil receivers and a nil callback give errors wrapping ErrNil, never a panic.
func TestNilValues(t *testing.T) {
	c := pjrttest.Client(t)
	m := mesh42(t, c)
	s := sharding(t, m, mesh.P("x"))

	var a *jit.Array
	_, err := a.ToHost()
	assert.ErrorIs(t, err, jit.ErrNil)
	_, err = a.ToHostBytes()
	assert.ErrorIs(t, err, jit.ErrNil)
	_, err = a.ToHostContext(t.Context())
	assert.ErrorIs(t, err, jit.ErrNil)
	assert.ErrorIs(t, a.Wait(), jit.ErrNil)
	assert.ErrorIs(t, a.Close(), jit.ErrNil)
	assert.EqualError(t, a.Close(), "jit: close: nil value: nil *Array")
	assert.Nil(t, a.Shape())
	assert.Equal(t, dtypes.InvalidDType, a.DType())
	assert.Nil(t, a.AddressableShards())
	assert.False(t, a.IsFullyReplicated())
	assert.True(t, a.IsClosed())
	assert.Equal(t, "Array(nil)", a.String())

	var f *jit.Function
	_, err = f.Call(c, a)
	assert.ErrorIs(t, err, jit.ErrNil)
	_, err = f.CallContext(t.Context(), c, a)
	assert.ErrorIs(t, err, jit.ErrNil)
	_, err = f.Lower(m.Abstract())
	assert.ErrorIs(t, err, jit.ErrNil)
	assert.ErrorIs(t, f.Close(), jit.ErrNil)
	assert.ErrorIs(t, f.Release(c), jit.ErrNil)
	assert.Equal(t, jit.CacheStats{}, f.Stats())

	_, err = jit.FromCallback(c, []int{8, 2}, dtypes.Int64, s, nil)
	assert.ErrorIs(t, err, jit.ErrNil)
	assert.EqualError(t, err, "jit: from callback: nil value: nil callback")
	_, err = jit.ReshardArray(c, nil, s)
	assert.ErrorIs(t, err, jit.ErrNil)

	noBody := jit.New("no_body", nil)
	defer noBody.Close()
	x, err := jit.Put(c, arange[int64](16), []int{8, 2}, s)
	require.NoError(t, err)
	defer x.Close()
	_, err = noBody.Call(c, x)
	assert.ErrorIs(t, err, jit.ErrNil)
	assert.EqualError(t, err, "jit: no_body: nil value: nil Body")
	_, err = noBody.Call(c, x, nil)
	assert.ErrorIs(t, err, jit.ErrArguments)
}

// TestCallSignatures alternates argument types and shardings: each call uses the executable of
// its own arguments (the fast path remembers only the latest call, and must not be fooled).
func TestCallSignatures(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	checkNoLiveExecutables(t)
	m := mesh42(t, c)
	put := func(flat any, shape []int, spec mesh.PartitionSpec) *jit.Array {
		a, err := jit.Put(c, flat, shape, sharding(t, m, spec))
		require.NoError(t, err)
		t.Cleanup(func() { a.Close() })
		return a
	}
	xy := put(arange[int64](16), []int{8, 2}, mesh.P("x", "y"))
	x := put(arange[int64](16), []int{8, 2}, mesh.P("x"))
	f32 := put(arange[float32](16), []int{8, 2}, mesh.P("x", "y"))
	wide := put(arange[int64](32), []int{8, 4}, mesh.P("x", "y"))
	f := jit.New("double_any", double)
	defer f.Close()
	for range 2 {
		for _, tc := range []struct {
			arg  *jit.Array
			want any
			spec mesh.PartitionSpec // as XLA chooses it on the (4, 2) mesh
		}{
			{xy, doubled[int64](16), mesh.P("x", "y")},
			{x, doubled[int64](16), mesh.P("x", nil)},
			{xy, doubled[int64](16), mesh.P("x", "y")},
			{f32, doubled[float32](16), mesh.P("x", "y")},
			{wide, doubled[int64](32), mesh.P("x", "y")},
		} {
			outs, err := f.Call(c, tc.arg)
			require.NoError(t, err)
			got, err := outs[0].ToHost()
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.arg.Shape(), outs[0].Shape())
			assert.Equal(t, chosen(m, tc.spec).String(), outs[0].Sharding().Spec().String())
			closeAll(outs)
		}
	}
	assert.Equal(t, jit.CacheStats{LoweringHits: 6, LoweringMisses: 4, CompileHits: 6, CompileMisses: 4}, f.Stats())
}

// TestLowerHitAllocatesNothing: a lowering-cache hit formats no key and allocates nothing.
func TestLowerHitAllocatesNothing(t *testing.T) {
	a, err := mesh.NewAbstract([]int{4, 2}, []string{"x", "y"})
	require.NoError(t, err)
	f := jit.New("lower_hit", double)
	defer f.Close()
	args := []jit.ArgType{{Shape: lower.NewShape(dtypes.Float32, 8, 2), Spec: mesh.P("x", "y")}}
	want, err := f.Lower(a, args...)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		got, err := f.Lower(a, args...)
		if err != nil || got != want {
			t.Fatalf("Lower: %v, %p != %p", err, got, want)
		}
	})
	assert.Zero(t, allocs)
}

// TestClientCloseFreesWhatItOwnsCPUOnly closes a client that a Function and arrays still use:
// the Function's executables for it and the arrays' buffers are freed with it (the counts drop
// back), later use fails typed, and closing the leftovers again is harmless. CPU only: it opens
// a client of its own beside the shared one.
func TestClientCloseFreesWhatItOwnsCPUOnly(t *testing.T) {
	liveExes, liveBufs := pjrt.LiveExecutables(), pjrt.LiveBuffers()
	n, err := pjrttest.Devices()
	require.NoError(t, err)
	c, err := pjrttest.Open(n)
	require.NoError(t, err)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[int64](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	f := jit.New("double_closing_client", double, jit.OutSpecs(mesh.P("x", "y")))
	defer f.Close()
	assert.Equal(t, doubled[int64](16), callToHost(t, f, c, x))
	y, err := f.Call(c, x)
	require.NoError(t, err)
	assert.Equal(t, liveExes+1, pjrt.LiveExecutables())

	require.NoError(t, c.Close())
	assert.Equal(t, liveExes, pjrt.LiveExecutables(), "the Function released its executable")
	assert.Equal(t, liveBufs, pjrt.LiveBuffers(), "the client destroyed the arrays' buffers")
	_, err = f.Call(c, x)
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	_, err = y[0].ToHost()
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	assert.NoError(t, x.Close())
	assert.NoError(t, y[0].Close())
}
