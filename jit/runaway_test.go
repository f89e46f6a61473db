package jit_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// count adds 1 to args[0] args[1] times: a stablehlo.while counting i up from 0 until it equals
// n. With n = -1 the loop has 2^64-1 iterations: it never ends in the life of a test.
var count jit.Body = func(f *lower.Function, args []lower.Value) []lower.Value {
	r := f.While([]lower.Value{f.Constant(int64(0)), args[1], args[0]},
		func(g *stablehlo.Function, c []stablehlo.Value) stablehlo.Value {
			return g.Compare(c[0], c[1], stablehlo.NE)
		},
		func(g *stablehlo.Function, c []stablehlo.Value) []stablehlo.Value {
			return []stablehlo.Value{g.Add(c[0], g.Constant(int64(1))), c[1], g.Add(c[2], g.Constant(int64(1)))}
		})
	return r[2:]
}

// onOneDevice returns the arrays x = arange(16) as int64[8, 2] and n, replicated on a mesh of
// device 0 alone, where the CPU plugin runs a program on the calling thread.
func onOneDevice(t *testing.T, c *pjrt.Client, n int64) (x, nArr *jit.Array) {
	t.Helper()
	m, err := mesh.New(jit.Devices(c)[:1], []int{1}, "x")
	require.NoError(t, err)
	s := sharding(t, m, mesh.P())
	x, err = jit.Put(c, arange[int64](16), []int{8, 2}, s)
	require.NoError(t, err)
	nArr, err = jit.Put(c, []int64{n}, []int{}, s)
	require.NoError(t, err)
	return x, nArr
}

// plus returns arange(16) + k.
func plus(k int64) []int64 {
	out := arange[int64](16)
	for i := range out {
		out[i] += k
	}
	return out
}

// TestCloseAbandonedRunawayCPUOnly calls a program that never ends with a short deadline, then closes
// its Function and its client with deadlines: CallContext and both CloseContexts return in
// time, the closes with a *pjrt.StillRunningError; later calls on the closed Function and
// client fail with ErrClosed at once, and other functions keep working. The runaway spins until
// the process ends, so the test runs in a child process of its own. CPU only: it opens a client
// of its own beside the shared one.
func TestCloseAbandonedRunawayCPUOnly(t *testing.T) {
	if !pjrttest.IsChild() {
		pjrttest.RunChild(t, "TestCloseAbandonedRunawayCPUOnly")
		return
	}
	n, err := pjrttest.Devices()
	require.NoError(t, err)
	c, err := pjrttest.Open(n)
	require.NoError(t, err)
	x, n3 := onOneDevice(t, c, 3)
	_, forever := onOneDevice(t, c, -1)
	f := jit.New("count", count)
	assert.Equal(t, plus(3), callToHost(t, f, c, x, n3), "the loop counts")

	err = pjrttest.Within(t, 500*time.Millisecond, func(ctx context.Context) error {
		_, err := f.CallContext(ctx, c, x, forever)
		return err
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, "jit: count: context deadline exceeded")

	err = pjrttest.Within(t, 300*time.Millisecond, f.CloseContext)
	var still *pjrt.StillRunningError
	require.ErrorAs(t, err, &still)
	assert.ErrorIs(t, err, pjrt.ErrStillRunning)
	assert.Equal(t, pjrt.StillRunningError{What: `function "count"`, Calls: 1, Executions: 1}, *still)
	assert.EqualError(t, err, `jit: close: function "count": 1 call in flight, 1 execution unfinished: still running (released when they end)`)

	start := time.Now()
	_, err = f.Call(c, x, n3)
	assert.ErrorIs(t, err, jit.ErrClosed, "a later call on the closed function")
	assert.EqualError(t, err, "jit: count: function already closed")
	assert.Less(t, time.Since(start), time.Second)

	// Another function runs on the same client, on the mesh42 devices (all 8 by default).
	m := mesh42(t, c)
	y, err := jit.Put(c, arange[int64](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	d := jit.New("double_beside_runaway", double)
	defer d.Close()
	assert.Equal(t, doubled[int64](16), callToHost(t, d, c, y))

	err = pjrttest.Within(t, 300*time.Millisecond, c.CloseContext)
	require.ErrorAs(t, err, &still)
	assert.Equal(t, pjrt.StillRunningError{What: fmt.Sprintf("Client(cpu, %d devices)", n), Calls: 1, Executions: 1}, *still)
	start = time.Now()
	_, err = d.Call(c, y)
	assert.ErrorIs(t, err, pjrt.ErrClosed, "a later call on the closed client")
	assert.Less(t, time.Since(start), time.Second)

	// Other clients are untouched, for this function and a new one.
	c2 := pjrttest.Client(t)
	y2, err := jit.Put(c2, arange[int64](16), []int{8, 2}, sharding(t, mesh42(t, c2), mesh.P("x", "y")))
	require.NoError(t, err)
	defer y2.Close()
	assert.Equal(t, doubled[int64](16), callToHost(t, d, c2, y2))
	x2, n2 := onOneDevice(t, c2, 5)
	defer x2.Close()
	defer n2.Close()
	g := jit.New("count_again", count)
	defer g.Close()
	assert.Equal(t, plus(5), callToHost(t, g, c2, x2, n2))
}

// TestCloseAbandonedRunaway8Devices calls a program that never ends on 8 devices (the mesh42
// devices; at least 2, as on one device the CPU plugin runs a program inside the call): the
// call returns and the execution runs on. Function.CloseContext waits for it until its deadline
// and reports it (0 calls, 1 execution), a second close reports it again, and closing the call's
// argument and result arrays returns at once. The runaway spins until the process ends, so the
// test runs in a child process of its own, on the child's shared client.
func TestCloseAbandonedRunaway8Devices(t *testing.T) {
	pjrttest.NeedDevices(t, 2)
	if !pjrttest.IsChild() {
		pjrttest.RunChild(t, "TestCloseAbandonedRunaway8Devices")
		return
	}
	c := pjrttest.Client(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[int64](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	forever, err := jit.Put(c, []int64{-1}, []int{}, sharding(t, m, mesh.P()))
	require.NoError(t, err)
	f := jit.New("count8", count)

	var outs []*jit.Array
	err = pjrttest.Within(t, 5*time.Second, func(ctx context.Context) error {
		outs, err = f.CallContext(ctx, c, x, forever)
		return err
	})
	require.NoError(t, err, "the call returns; the execution runs on")

	err = pjrttest.Within(t, 300*time.Millisecond, f.CloseContext)
	var still *pjrt.StillRunningError
	require.ErrorAs(t, err, &still)
	assert.Equal(t, pjrt.StillRunningError{What: `function "count8"`, Calls: 0, Executions: 1}, *still)
	assert.EqualError(t, err, `jit: close: function "count8": 0 calls in flight, 1 execution unfinished: still running (released when they end)`)
	err = pjrttest.Within(t, 100*time.Millisecond, f.CloseContext)
	require.ErrorAs(t, err, &still, "a second close waits again, and reports again")
	assert.Equal(t, 1, still.Executions)

	// A copy of the result waits for the execution; abandoned at its deadline, it waits on.
	err = pjrttest.Within(t, 200*time.Millisecond, func(ctx context.Context) error {
		_, err := outs[0].ToHostContext(ctx)
		return err
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)

	for _, a := range []*jit.Array{x, forever, outs[0]} {
		start := time.Now()
		require.NoError(t, a.Close())
		assert.Less(t, time.Since(start), time.Second, "closing an array of the running call")
		assert.True(t, a.IsClosed())
	}
	_, err = outs[0].ToHost()
	assert.ErrorIs(t, err, jit.ErrClosed)
}

// TestCloseArgumentsOfRunaway1DeviceCPUOnly: on one device the CPU plugin runs a program inside the
// call, which holds its arguments. Closing them (after the call's deadline) returns at once,
// and a later call on them fails with ErrClosed at once; the buffers stay allocated, for the
// running call, which frees them when it ends (never, here). The runaway spins until the
// process ends, so the test runs in a child process of its own. CPU only: it is about the CPU
// plugin's running of a one-device program inside the call.
func TestCloseArgumentsOfRunaway1DeviceCPUOnly(t *testing.T) {
	if !pjrttest.IsChild() {
		pjrttest.RunChild(t, "TestCloseArgumentsOfRunaway1DeviceCPUOnly")
		return
	}
	n, err := pjrttest.Devices()
	require.NoError(t, err)
	c, err := pjrttest.Open(n)
	require.NoError(t, err)
	x, forever := onOneDevice(t, c, -1)
	f := jit.New("count1", count)
	live := pjrt.LiveBuffers()
	err = pjrttest.Within(t, 500*time.Millisecond, func(ctx context.Context) error {
		_, err := f.CallContext(ctx, c, x, forever)
		return err
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)

	for _, a := range []*jit.Array{x, forever} {
		start := time.Now()
		require.NoError(t, a.Close())
		assert.Less(t, time.Since(start), time.Second, "closing an argument of the running call")
		assert.True(t, a.IsClosed())
	}
	assert.Equal(t, live, pjrt.LiveBuffers(), "the running call still holds both buffers")
	start := time.Now()
	_, err = f.Call(c, x, forever)
	assert.ErrorIs(t, err, jit.ErrClosed)
	assert.EqualError(t, err, "jit: count1: argument 0: array already closed")
	assert.Less(t, time.Since(start), time.Second)
}

// TestAbandonedCallReleasedCPUOnly: a call that outlives the deadline of its CallContext and the
// closes of its Function and client (here a loop of about 2 s) releases the executable, and then
// the client with its buffers, when it ends: ownership passes to it, and nothing leaks. CPU only:
// it opens a client of its own beside the shared one.
func TestAbandonedCallReleasedCPUOnly(t *testing.T) {
	execs, bufs := pjrt.LiveExecutables(), pjrt.LiveBuffers()
	n, err := pjrttest.Devices()
	require.NoError(t, err)
	c, err := pjrttest.Open(n)
	require.NoError(t, err)
	f := jit.New("count_released", count)
	t.Cleanup(func() {
		// After a failure below, the client and its buffers must not outlive the test: later
		// tests count live buffers and staging blocks.
		_ = f.CloseContext(context.Background())
		_ = c.CloseContext(context.Background())
	})
	x, probe := onOneDevice(t, c, 1<<22)
	_, zero := onOneDevice(t, c, 0)
	assert.Equal(t, plus(0), callToHost(t, f, c, x, zero), "compiles")
	// The fastest of three probes: on a loaded machine one may be slowed down, which would make
	// the long call too short to outlive the closes below.
	per := time.Duration(math.MaxInt64)
	for range 3 {
		start := time.Now()
		assert.Equal(t, plus(1<<22), callToHost(t, f, c, x, probe))
		per = min(per, time.Since(start)/(1<<22))
	}
	_, long := onOneDevice(t, c, int64(2*time.Second/max(per, time.Nanosecond)))

	err = pjrttest.Within(t, 100*time.Millisecond, func(ctx context.Context) error {
		_, err := f.CallContext(ctx, c, x, long)
		return err
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var still *pjrt.StillRunningError
	require.ErrorAs(t, pjrttest.Within(t, 50*time.Millisecond, f.CloseContext), &still)
	assert.Equal(t, 1, still.Calls)
	assert.Equal(t, execs+1, pjrt.LiveExecutables(), "the running call holds its executable")
	require.ErrorAs(t, pjrttest.Within(t, 50*time.Millisecond, c.CloseContext), &still)
	assert.Equal(t, 1, still.Calls)

	require.NoError(t, c.CloseContext(context.Background()), "the end of the call destroys the client")
	require.NoError(t, f.CloseContext(context.Background()))
	jit.WaitBackground()
	assert.Equal(t, execs, pjrt.LiveExecutables(), "executables leaked")
	assert.Equal(t, bufs, pjrt.LiveBuffers(), "buffers leaked")
	assert.NoError(t, x.Close(), "closing an array of the destroyed client does nothing")
}
