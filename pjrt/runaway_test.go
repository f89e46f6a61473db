package pjrt_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// countModule adds 1 to an i64[4] n times, in a stablehlo.while counting i up from 0 until it
// equals n, on one device (where the CPU plugin runs the program on the calling thread, inside
// Execute). With n = -1 the loop has 2^64-1 iterations: it never ends in the life of a test.
const countModule = `module @jit_count attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<4xi64>, %n: tensor<i64>) -> tensor<4xi64> {
    %zero = stablehlo.constant dense<0> : tensor<i64>
    %0:3 = stablehlo.while(%i = %zero, %m = %n, %v = %x) : tensor<i64>, tensor<i64>, tensor<4xi64>
     cond {
      %c = stablehlo.compare NE, %i, %m : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i64>
      %i1 = stablehlo.add %i, %one : tensor<i64>
      %ones = stablehlo.constant dense<1> : tensor<4xi64>
      %v1 = stablehlo.add %v, %ones : tensor<4xi64>
      stablehlo.return %i1, %m, %v1 : tensor<i64>, tensor<i64>, tensor<4xi64>
    }
    return %0#2 : tensor<4xi64>
  }
}`

// runCount executes countModule on x with n and returns the result on the host.
func runCount(t *testing.T, c *pjrt.Client, exe *pjrt.Executable, x []int64, n int64) ([]int64, error) {
	t.Helper()
	dev := exe.Devices()[0]
	xb, err := c.BufferFromHost(dev, x, []int{4})
	require.NoError(t, err)
	defer xb.Close()
	nb, err := c.BufferFromHost(dev, []int64{n}, nil)
	require.NoError(t, err)
	defer nb.Close()
	outs, err := exe.Execute([][]*pjrt.Buffer{{xb, nb}})
	if err != nil {
		return nil, err
	}
	defer outs[0][0].Close()
	got, err := outs[0][0].ToHost()
	if err != nil {
		return nil, err
	}
	return got.([]int64), nil
}

// startRunaway starts countModule with n on a goroutine of its own and waits until the
// execution is in flight; the channel gets the error of Execute or of the copy of its result.
func startRunaway(t *testing.T, c *pjrt.Client, exe *pjrt.Executable, n int64) <-chan error {
	t.Helper()
	dev := exe.Devices()[0]
	xb, err := c.BufferFromHost(dev, []int64{0, 1, 2, 3}, []int{4})
	require.NoError(t, err)
	nb, err := c.BufferFromHost(dev, []int64{n}, nil)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		defer xb.Close()
		defer nb.Close()
		outs, err := exe.Execute([][]*pjrt.Buffer{{xb, nb}})
		if err == nil {
			_, err = outs[0][0].ToHost()
			_ = outs[0][0].Close()
		}
		done <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); pjrt.InFlight(c) == 0; time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the execution did not start")
	}
	return done
}

// TestCloseAbandonedRunaway closes an executable and its client while an execution that never
// ends runs: both CloseContexts return in time with a *StillRunningError, later calls on them
// fail with ErrClosed at once, and other executables and clients keep working. The runaway
// spins until the process ends, so the test runs in a child process of its own. It is about the
// CPU plugin, which runs a 1-device program on the calling thread, and its clients of 8 devices.
func TestCloseAbandonedRunawayCPUOnly(t *testing.T) {
	if !pjrttest.IsChild() {
		pjrttest.RunChild(t, "TestCloseAbandonedRunawayCPUOnly")
		return
	}
	c, err := pjrttest.Open(8)
	require.NoError(t, err)
	exe, err := c.Compile(countModule, pjrt.CompileOptions{})
	require.NoError(t, err)
	got, err := runCount(t, c, exe, []int64{0, 1, 2, 3}, 3)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 4, 5, 6}, got)
	other, err := c.Compile(incModule, pjrt.CompileOptions{DeviceAssignment: []int{1}})
	require.NoError(t, err)

	runaway := startRunaway(t, c, exe, -1)
	err = pjrttest.Within(t, 300*time.Millisecond, exe.CloseContext)
	var still *pjrt.StillRunningError
	require.ErrorAs(t, err, &still)
	assert.ErrorIs(t, err, pjrt.ErrStillRunning)
	assert.Equal(t, pjrt.StillRunningError{What: exe.String(), Calls: 1, Executions: 1}, *still)
	assert.Equal(t, "pjrt: close: "+exe.String()+": 1 call in flight, 1 execution unfinished: still running (released when they end)", err.Error())
	assert.True(t, exe.IsClosed())

	start := time.Now()
	_, err = runCount(t, c, exe, []int64{0, 1, 2, 3}, 3)
	assert.ErrorIs(t, err, pjrt.ErrClosed, "a later call on the closed executable")
	assert.EqualError(t, err, "pjrt: execute: executable already closed")
	assert.Less(t, time.Since(start), time.Second)

	// Another executable of the same client runs, on another device.
	x, err := c.BufferFromHost(other.Devices()[0], []float32{1, 2, 3, 4}, []int{4})
	require.NoError(t, err)
	outs, err := other.Execute([][]*pjrt.Buffer{{x}})
	require.NoError(t, err)
	host, err := outs[0][0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 3, 4, 5}, host)
	require.NoError(t, outs[0][0].Close())

	err = pjrttest.Within(t, 300*time.Millisecond, c.CloseContext)
	require.ErrorAs(t, err, &still)
	assert.Equal(t, pjrt.StillRunningError{What: "Client(cpu, 8 devices)", Calls: 1, Executions: 1}, *still)
	start = time.Now()
	_, err = c.Compile(incModule, pjrt.CompileOptions{})
	assert.ErrorIs(t, err, pjrt.ErrClosed, "a later call on the closed client")
	_, err = other.Execute([][]*pjrt.Buffer{{x}})
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	assert.Less(t, time.Since(start), time.Second)
	err = pjrttest.Within(t, 100*time.Millisecond, c.CloseContext)
	assert.ErrorIs(t, err, pjrt.ErrStillRunning, "a second Close waits again, and reports again")

	// Another client is untouched.
	c2 := pjrttest.Client(t)
	exe2, err := c2.Compile(countModule, pjrt.CompileOptions{})
	require.NoError(t, err)
	defer exe2.Close()
	got, err = runCount(t, c2, exe2, []int64{5, 6, 7, 8}, 10)
	require.NoError(t, err)
	assert.Equal(t, []int64{15, 16, 17, 18}, got)
	select {
	case err := <-runaway:
		t.Fatalf("the runaway returned: %v", err)
	default:
	}
}

// TestAbandonedRunawayReleasedCPUOnly: an execution that outlives its closes (here one of a few
// seconds) releases the executable and then the client when it ends: ownership passes to it. Its
// client of 8 CPU devices is its own.
func TestAbandonedRunawayReleasedCPUOnly(t *testing.T) {
	c, err := pjrttest.Open(8)
	require.NoError(t, err)
	exe, err := c.Compile(countModule, pjrt.CompileOptions{})
	require.NoError(t, err)
	live, buffers := pjrt.LiveExecutables(), pjrt.LiveBuffers()
	n := calibrate(t, c, exe, 2*time.Second)

	runaway := startRunaway(t, c, exe, n)
	var still *pjrt.StillRunningError
	require.ErrorAs(t, pjrttest.Within(t, 50*time.Millisecond, exe.CloseContext), &still)
	assert.Equal(t, 1, still.Calls)
	assert.Equal(t, live, pjrt.LiveExecutables(), "the running call still holds the executable")
	require.ErrorAs(t, pjrttest.Within(t, 50*time.Millisecond, c.CloseContext), &still)
	assert.Equal(t, 1, still.Calls)

	// The call ends with its result, or with ErrClosed once its client closed: it cannot copy
	// the result to the host of a closed client.
	err = <-runaway
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	require.NoError(t, c.CloseContext(context.Background()), "the last call destroyed the client")
	assert.Equal(t, live-1, pjrt.LiveExecutables(), "the executable was destroyed")
	assert.Equal(t, buffers, pjrt.LiveBuffers(), "the client destroyed its buffers")
}

// calibrate returns a trip count for countModule that runs about d.
func calibrate(t *testing.T, c *pjrt.Client, exe *pjrt.Executable, d time.Duration) int64 {
	// From a small probe up, 8 times longer each time, until one takes a twentieth of d: an
	// iteration costs nanoseconds on a CPU and tens of microseconds on a GPU, whose while loop
	// asks the host whether to go on every time (a fixed probe of 4M iterations took 85 s on
	// an H200).
	for probe := int64(1 << 10); ; probe *= 8 {
		start := time.Now()
		got, err := runCount(t, c, exe, []int64{0, 0, 0, 0}, probe)
		require.NoError(t, err)
		require.Equal(t, []int64{probe, probe, probe, probe}, got)
		if took := time.Since(start); took >= d/20 || probe >= 1<<40 {
			per := took / time.Duration(probe)
			return int64(d / max(per, time.Nanosecond))
		}
	}
}

// TestCloseAbandonedRunaway8DevicesCPUOnly: an execution on 8 devices that never ends runs on
// after Execute returned (the CPU plugin runs a program of 8 devices on threads of its own). The
// executable's CloseContext waits for it until its deadline and reports it (0 calls, 1
// execution); closing an argument and a result of it returns at once. The runaway spins until
// the process ends, so the test runs in a child process of its own.
func TestCloseAbandonedRunaway8DevicesCPUOnly(t *testing.T) {
	if !pjrttest.IsChild() {
		pjrttest.RunChild(t, "TestCloseAbandonedRunaway8DevicesCPUOnly")
		return
	}
	c, err := pjrttest.Open(8)
	require.NoError(t, err)
	exe, err := c.Compile(pjrttest.SpinModule(8), pjrt.CompileOptions{NumPartitions: 8})
	require.NoError(t, err)
	args := make([][]*pjrt.Buffer, 8)
	for d, dev := range exe.Devices() {
		b, err := c.BufferFromHost(dev, []float32{1, 2, 3, 4}, []int{4})
		require.NoError(t, err)
		args[d] = []*pjrt.Buffer{b}
	}
	start := time.Now()
	outs, err := exe.Execute(args)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second, "Execute returned")
	assert.Equal(t, 1, exe.Unfinished())
	assert.Equal(t, 1, pjrt.InFlight(c))

	err = pjrttest.Within(t, 300*time.Millisecond, exe.CloseContext)
	var still *pjrt.StillRunningError
	require.ErrorAs(t, err, &still)
	assert.Equal(t, pjrt.StillRunningError{What: exe.String(), Calls: 0, Executions: 1}, *still)
	assert.Equal(t, "pjrt: close: "+exe.String()+": 0 calls in flight, 1 execution unfinished: still running (released when they end)", err.Error())
	assert.Equal(t, 1, exe.Unfinished(), "a later Unfinished still counts it")
	err = pjrttest.Within(t, 100*time.Millisecond, exe.CloseContext)
	assert.ErrorIs(t, err, pjrt.ErrStillRunning, "a second Close waits again, and reports again")

	// Closing an argument and a result of the running execution returns at once.
	for _, b := range []*pjrt.Buffer{args[0][0], outs[3][0]} {
		start = time.Now()
		require.NoError(t, b.Close())
		assert.Less(t, time.Since(start), time.Second, "closing %s", b)
		assert.True(t, b.IsClosed())
	}
}

// TestCloseArgumentOfRunawayCPUOnly: on one device the CPU plugin runs a program inside
// Execute, which holds its arguments. Closing one returns at once; the buffer stays allocated
// for the call, and later operations on it fail with ErrClosed at once. The runaway spins until
// the process ends, so the test runs in a child process of its own.
func TestCloseArgumentOfRunawayCPUOnly(t *testing.T) {
	if !pjrttest.IsChild() {
		pjrttest.RunChild(t, "TestCloseArgumentOfRunawayCPUOnly")
		return
	}
	c, err := pjrttest.Open(8)
	require.NoError(t, err)
	exe, err := c.Compile(countModule, pjrt.CompileOptions{})
	require.NoError(t, err)
	dev := exe.Devices()[0]
	xb, err := c.BufferFromHost(dev, []int64{0, 1, 2, 3}, []int{4})
	require.NoError(t, err)
	nb, err := c.BufferFromHost(dev, []int64{-1}, nil)
	require.NoError(t, err)
	live := pjrt.LiveBuffers()
	go func() { _, _ = exe.Execute([][]*pjrt.Buffer{{xb, nb}}) }()
	for deadline := time.Now().Add(30 * time.Second); exe.Unfinished() == 0; time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the execution did not start")
	}
	for _, b := range []*pjrt.Buffer{xb, nb} {
		start := time.Now()
		require.NoError(t, b.Close())
		assert.Less(t, time.Since(start), time.Second, "closing an argument of the running call")
		assert.True(t, b.IsClosed())
	}
	assert.Equal(t, live, pjrt.LiveBuffers(), "the running call still holds both buffers")
	start := time.Now()
	_, err = xb.ToHost()
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	assert.EqualError(t, err, "pjrt: copy to host: buffer already closed")
	_, err = exe.Execute([][]*pjrt.Buffer{{xb, nb}})
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	assert.Less(t, time.Since(start), time.Second)
}

// TestClosedArgumentFreedByLastUser: an argument closed while a call of about a second uses it
// is freed when the call returns, not before, and the call's result is right.
func TestClosedArgumentFreedByLastUser(t *testing.T) {
	c := pjrttest.Client(t)
	exe, err := c.Compile(countModule, pjrt.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	n := calibrate(t, c, exe, time.Second)
	dev := exe.Devices()[0]
	xb, err := c.BufferFromHost(dev, []int64{0, 1, 2, 3}, []int{4})
	require.NoError(t, err)
	nb, err := c.BufferFromHost(dev, []int64{n}, nil)
	require.NoError(t, err)
	defer nb.Close()
	live := pjrt.LiveBuffers()
	type result struct {
		got []int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		outs, err := exe.Execute([][]*pjrt.Buffer{{xb, nb}})
		if err != nil {
			done <- result{nil, err}
			return
		}
		got, err := outs[0][0].ToHost()
		assert.NoError(t, outs[0][0].Close())
		if err != nil {
			done <- result{nil, err}
			return
		}
		done <- result{got.([]int64), nil}
	}()
	for deadline := time.Now().Add(30 * time.Second); exe.Unfinished() == 0; time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the execution did not start")
	}
	require.NoError(t, xb.Close())
	assert.Equal(t, live, pjrt.LiveBuffers(), "the call holds the closed argument")
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, []int64{n, n + 1, n + 2, n + 3}, r.got)
	assert.Equal(t, live-1, pjrt.LiveBuffers(), "the call freed the argument when it returned")
}

// TestResultsBatchCleanup: the results of one execution share one cleanup, which frees those
// still open once none of them is reachable; those closed by hand stay closed once.
func TestResultsBatchCleanup(t *testing.T) {
	s := seedFor(pjrttest.Client(t))
	n := s.parts()
	exe, args := benchProgram(t, seedF32(s), n, s.dims()...)
	before := pjrt.LiveBuffers()
	outs, err := exe.Execute(args)
	require.NoError(t, err)
	require.Len(t, outs, n)
	assert.Equal(t, before+int64(n), pjrt.LiveBuffers())
	// Results 2 and 5 closed by hand, 7 kept, on 8 devices; on 2 result 0 closed and 1 kept; on
	// 1 the one result kept.
	var closed []int
	for _, p := range []int{2, 5} {
		if p < n-1 {
			closed = append(closed, p)
		}
	}
	if len(closed) == 0 && n > 1 {
		closed = []int{0}
	}
	for _, p := range closed {
		require.NoError(t, outs[p][0].Close())
	}
	open := before + int64(n-len(closed))
	assert.Equal(t, open, pjrt.LiveBuffers())
	keep := outs[n-1][0]
	outs = nil
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, open, pjrt.LiveBuffers(), "one reachable result keeps its execution's block")
	got, err := keep.ToHost()
	require.NoError(t, err)
	size := pjrttest.MeshSize(s.dims()) // benchProgram puts d*size+i on device d: 2*(7*2+i) is 28, 30 on 8
	want := make([]float32, size)
	for i := range want {
		want[i] = float32(2 * ((n-1)*size + i))
	}
	assert.Equal(t, want, got)
	keep = nil
	for deadline := time.Now().Add(10 * time.Second); pjrt.LiveBuffers() != before; {
		require.True(t, time.Now().Before(deadline), "the forgotten results were not freed: %d live, want %d", pjrt.LiveBuffers(), before)
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
