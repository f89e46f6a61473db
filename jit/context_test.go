package jit_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// slowBody builds n unrolled rounds of matmul, sine and transpose of a square argument: XLA's
// CPU compiler needs about a second for n = 1000. On zeros it returns zeros.
func slowBody(n int) jit.Body {
	return func(f *lower.Function, args []lower.Value) []lower.Value {
		x := args[0]
		for range n {
			x = f.Transpose(f.Sin(f.DotGeneral(x, args[0], lower.DotDims{LhsContracting: []int{1}, RhsContracting: []int{0}})), 1, 0)
		}
		return []lower.Value{x}
	}
}

// TestCallContextCancelCompile cancels a call whose compilation takes a second: CallContext
// returns at the deadline, the compilation goes on into the cache, and the next call uses it.
func TestCallContextCancelCompile(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	checkNoLiveExecutables(t)
	m, err := mesh.New(jit.Devices(c)[:1], []int{1}, "x")
	require.NoError(t, err)
	x, err := jit.Put(c, make([]float32, 64*64), []int{64, 64}, sharding(t, m, mesh.P()))
	require.NoError(t, err)
	defer x.Close()
	// A new name each run keeps the program out of any persistent compile cache.
	f := jit.New(fmt.Sprintf("slow_%d", time.Now().UnixNano()), slowBody(800))
	defer f.Close()

	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = f.CallContext(done, c, x)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, jit.CacheStats{}, f.Stats(), "a context done before the call starts nothing")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	outs, err := f.CallContext(ctx, c, x)
	elapsed := time.Since(start)
	assert.Nil(t, outs)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorContains(t, err, ": context deadline exceeded")

	// The client and other functions stay usable meanwhile.
	y, err := jit.Put(c, arange[int64](16), []int{8, 2}, sharding(t, mesh42(t, c), mesh.P("x", "y")))
	require.NoError(t, err)
	defer y.Close()
	g := jit.New("double_meanwhile", double)
	defer g.Close()
	assert.Equal(t, doubled[int64](16), callToHost(t, g, c, y))

	got := callToHost(t, f, c, x)
	assert.Equal(t, make([]float32, 64*64), got)
	assert.Equal(t, jit.CacheStats{LoweringHits: 1, LoweringMisses: 1, CompileHits: 1, CompileMisses: 1}, f.Stats(),
		"the second call waited for the compilation the first one started")
	// Compared with the compilation's own duration, not a fixed time: on a loaded machine both grow.
	assert.Less(t, elapsed, time.Since(start)/2, "CallContext returns at the deadline, not when XLA is done")
	t.Logf("cancelled after %v; compiled and ran after %v", elapsed, time.Since(start))
}

// TestCallContextClosedWhileCompiling closes a Function whose cancelled call left a compilation
// running: the executable is freed when it arrives.
func TestCallContextClosedWhileCompiling(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	live, compiles := pjrt.LiveExecutables(), c.CompileStats().Compiles
	m, err := mesh.New(jit.Devices(c)[:1], []int{1}, "x")
	require.NoError(t, err)
	x, err := jit.Put(c, make([]float32, 64*64), []int{64, 64}, sharding(t, m, mesh.P()))
	require.NoError(t, err)
	defer x.Close()
	f := jit.New(fmt.Sprintf("slow_closed_%d", time.Now().UnixNano()), slowBody(600))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = f.CallContext(ctx, c, x)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, f.Close())
	jit.WaitBackground()
	assert.Equal(t, compiles+1, c.CompileStats().Compiles, "the compilation ran to its end")
	assert.Equal(t, live, pjrt.LiveExecutables(), "and its executable was freed")
	_, err = f.Call(c, x)
	assert.ErrorIs(t, err, jit.ErrClosed)
}

// TestTransferContextCancel cancels a 64 MiB Put and a 64 MiB ToHost: each returns at the
// deadline, the copy ends in the background and frees what it made, and the client and the
// array stay usable.
func TestTransferContextCancel(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	s := sharding(t, mesh42(t, c), mesh.P("x", "y"))
	const n = 4096 // 4096 x 4096 float32 = 64 MiB
	data := make([]float32, n*n)
	for i := range data {
		data[i] = float32(i % 1000)
	}
	live := pjrt.LiveBuffers()

	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	start := time.Now()
	a, err := jit.PutContext(ctx, c, data, []int{n, n}, s)
	elapsed := time.Since(start)
	assert.Nil(t, a)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, "jit: put: context deadline exceeded")
	jit.WaitBackground()
	assert.Equal(t, live, pjrt.LiveBuffers(), "the cancelled Put's buffers are freed when it ends")
	t.Logf("Put cancelled after %v, ended after %v", elapsed, time.Since(start))

	a, err = jit.PutContext(context.Background(), c, data, []int{n, n}, s)
	require.NoError(t, err)
	defer a.Close()

	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	start = time.Now()
	got, err := a.ToHostContext(ctx)
	elapsed = time.Since(start)
	assert.Nil(t, got)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, "jit: to host: context deadline exceeded")
	t.Logf("ToHost cancelled after %v", elapsed)

	got, err = a.ToHostContext(t.Context())
	require.NoError(t, err)
	assert.True(t, slices.Equal(data, got.([]float32)), "the array is intact")
	jit.WaitBackground()
	require.NoError(t, a.Close())
	assert.Equal(t, live, pjrt.LiveBuffers())

	var noContext context.Context // a nil context is an error, not a panic
	_, err = jit.PutContext(noContext, c, data, []int{n, n}, s)
	assert.ErrorIs(t, err, jit.ErrArguments)
}
