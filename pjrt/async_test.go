package pjrt_test

import (
	"sync"
	"testing"
	"time"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
)

// incModule adds 1 to an f32[4] on one device.
const incModule = `module @jit_inc attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %one = stablehlo.constant dense<1.0> : tensor<4xf32>
    %0 = stablehlo.add %arg0, %one : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}`

// TestChainedExecutions feeds each result into the next execution without waiting in between:
// the executions queue inside XLA and the last result is exact.
func TestChainedExecutions(t *testing.T) {
	c := pjrttest.Client(t)
	before := pjrt.LiveBuffers()
	exe, err := c.Compile(incModule, pjrt.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	assert.Equal(t, []pjrt.Shape{shapes.Make(dtypes.Float32, 4)}, exe.InputShapes())
	x, err := c.BufferFromHost(exe.Devices()[0], []float32{0, 1, 2, 3}, []int{4})
	require.NoError(t, err)
	for range 1000 {
		outs, err := exe.Execute([][]*pjrt.Buffer{{x}}, pjrt.Donate(0))
		require.NoError(t, err)
		x = outs[0][0]
	}
	require.NoError(t, x.Wait())
	got, err := x.ToHost()
	require.NoError(t, err)
	assert.Equal(t, []float32{1000, 1001, 1002, 1003}, got)
	require.NoError(t, x.Close())
	assert.Equal(t, before, pjrt.LiveBuffers(), "buffers leaked")
}

// TestConcurrentAsyncExecutions runs 8 goroutines x 1,000 asynchronous executions sharing one
// input, each checking its result.
func TestConcurrentAsyncExecutions(t *testing.T) {
	c := pjrttest.Client(t)
	before := pjrt.LiveBuffers()
	exe, err := c.Compile(incModule, pjrt.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	x, err := c.BufferFromHost(exe.Devices()[0], []float32{1, 2, 3, 4}, []int{4})
	require.NoError(t, err)
	defer x.Close()
	n := 1000
	if testing.Short() {
		n = 100
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pending := make([]*pjrt.Buffer, 0, n)
			for range n {
				outs, err := exe.Execute([][]*pjrt.Buffer{{x}})
				if err != nil {
					errs <- err
					return
				}
				pending = append(pending, outs[0][0])
			}
			for _, b := range pending {
				got, err := b.ToHost()
				if err == nil && !assert.ObjectsAreEqual([]float32{2, 3, 4, 5}, got) {
					t.Errorf("got %v", got)
				}
				if err != nil {
					errs <- err
				}
				_ = b.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.NoError(t, x.Close())
	assert.Equal(t, before, pjrt.LiveBuffers(), "buffers leaked")
}

// TestAsyncExecutionError runs a program on an error buffer: Execute returns at once, the
// failure reaches Wait and ToHost of the result as a typed error, and the executable and client
// keep working.
func TestAsyncExecutionError(t *testing.T) {
	c := pjrttest.Client(t)
	before := pjrt.LiveBuffers()
	exe, err := c.Compile(incModule, pjrt.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	dev := exe.Devices()[0]
	bad, err := c.NewErrorBuffer(dev, shapes.Make(dtypes.Float32, 4), pjrt.DataLoss, "sensor offline")
	if !c.Plugin().Has("PJRT_Client_CreateErrorBuffer") {
		require.ErrorIs(t, err, pjrt.ErrUnimplemented)
		t.Logf("%s has no error buffers: the asynchronous error path is shown by the second plugin's pass", c.Plugin())
		return
	}
	require.NoError(t, err)
	outs, err := exe.Execute([][]*pjrt.Buffer{{bad}})
	require.NoError(t, err, "the failure is asynchronous")
	y := outs[0][0]
	err = y.Wait()
	require.ErrorIs(t, err, pjrt.ErrExecute)
	assert.ErrorContains(t, err, "sensor offline")
	_, err = y.ToHost()
	require.ErrorIs(t, err, pjrt.ErrExecute)
	require.NoError(t, y.Close())
	require.NoError(t, bad.Close())

	// Still usable.
	x, err := c.BufferFromHost(dev, []float32{1, 2, 3, 4}, []int{4})
	require.NoError(t, err)
	outs, err = exe.Execute([][]*pjrt.Buffer{{x}})
	require.NoError(t, err)
	got, err := outs[0][0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 3, 4, 5}, got)
	require.NoError(t, outs[0][0].Close())
	require.NoError(t, x.Close())
	assert.Equal(t, before, pjrt.LiveBuffers(), "buffers leaked")
}

// TestExecuteChecksArguments shows arguments that do not fit the program rejected before the
// plugin sees them, and the executable usable afterwards (a wrong dtype used to wedge it).
func TestExecuteChecksArguments(t *testing.T) {
	c := pjrttest.Client(t)
	exe, err := c.Compile(incModule, pjrt.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	dev := exe.Devices()[0]
	for _, tc := range []struct {
		flat any
		dims []int
		want string
	}{
		{[]int32{1, 2, 3, 4}, []int{4}, "argument 0 on device 0 is i32[4], the program takes f32[4]"},
		{[]float32{1, 2, 3, 4}, []int{2, 2}, "is f32[2,2], the program takes f32[4]"},
		{[]float32{1, 2}, []int{2}, "is f32[2], the program takes f32[4]"},
	} {
		b, err := c.BufferFromHost(dev, tc.flat, tc.dims)
		require.NoError(t, err)
		_, err = exe.Execute([][]*pjrt.Buffer{{b}})
		assert.ErrorIs(t, err, pjrt.ErrExecute)
		assert.ErrorContains(t, err, tc.want)
		require.NoError(t, b.Close())
	}
	x, err := c.BufferFromHost(dev, []float32{1, 2, 3, 4}, []int{4})
	require.NoError(t, err)
	defer x.Close()
	_, err = exe.Execute([][]*pjrt.Buffer{{x, x}})
	assert.ErrorContains(t, err, "2 arguments, the program takes 1")
	_, err = exe.Execute([][]*pjrt.Buffer{{x}}, pjrt.Donate(0, 0))
	assert.ErrorContains(t, err, "argument 0 is donated twice")
	assert.False(t, x.IsClosed())
	outs, err := exe.Execute([][]*pjrt.Buffer{{x}})
	require.NoError(t, err)
	got, err := outs[0][0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 3, 4, 5}, got)
	require.NoError(t, outs[0][0].Close())
}

// TestBuffersFromHostStrided sends the columns of a host matrix in place (byte strides), and
// gathers results with one wait.
func TestBuffersFromHostStrided(t *testing.T) {
	c := pjrttest.Client(t)
	devs := []*pjrt.Device{deviceAt(c, 0), deviceAt(c, 1)} // one device twice on a 1-device host
	// A 2x4 int32 matrix; device k gets columns 2k..2k+1.
	host := []int32{0, 1, 2, 3, 10, 11, 12, 13}
	raw, _, err := pjrt.HostBytes(host)
	require.NoError(t, err)
	bs, err := c.BuffersFromHost([]pjrt.HostTransfer{
		{Device: devs[0], DType: dtypes.Int32, Dims: []int{2, 2}, Data: raw[0:], ByteStrides: []int64{16, 4}},
		{Device: devs[1], DType: dtypes.Int32, Dims: []int{2, 2}, Data: raw[8:], ByteStrides: []int64{16, 4}},
	})
	require.NoError(t, err)
	dst := [][]byte{make([]byte, 16), make([]byte, 16)}
	require.NoError(t, c.CopyToHostAll([]pjrt.HostCopy{{Buffer: bs[0], Dst: dst[0]}, {Buffer: bs[1], Dst: dst[1]}}))
	got0, _ := pjrt.FlatFromBytes(dtypes.Int32, dst[0])
	got1, _ := pjrt.FlatFromBytes(dtypes.Int32, dst[1])
	assert.Equal(t, []int32{0, 1, 10, 11}, got0)
	assert.Equal(t, []int32{2, 3, 12, 13}, got1)
	for _, b := range bs {
		require.NoError(t, b.Close())
	}
	// Strides that reach past the data are refused before the plugin reads anything.
	_, err = c.BuffersFromHost([]pjrt.HostTransfer{{Device: devs[0], DType: dtypes.Int32, Dims: []int{2, 2}, Data: raw[12:], ByteStrides: []int64{16, 4}}})
	assert.ErrorIs(t, err, pjrt.ErrHostData)
	assert.ErrorContains(t, err, "reads 24 bytes, got 20")
}

// TestMaxInFlightCPUOnly bounds the executions in flight: with a limit of 2, a chain of 200
// executions never has more than 2 started and unfinished, its result is exact, and Close waits
// for the ones still running. It opens a CPU client of its own.
func TestMaxInFlightCPUOnly(t *testing.T) {
	if p, _ := pjrttest.Platform(); p != "cpu" {
		t.Skip("opens a CPU client of its own")
	}
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(1), pjrt.WithMaxInFlight(2))
	require.NoError(t, err)
	defer c.Close()
	exe, err := c.Compile(incModule, pjrt.CompileOptions{})
	require.NoError(t, err)
	x, err := c.BufferFromHost(exe.Devices()[0], []float32{0, 1, 2, 3}, []int{4})
	require.NoError(t, err)
	most := 0
	for range 200 {
		outs, err := exe.Execute([][]*pjrt.Buffer{{x}}, pjrt.Donate(0))
		require.NoError(t, err)
		most = max(most, pjrt.InFlight(c))
		x = outs[0][0]
	}
	assert.LessOrEqual(t, most, 2)
	got, err := x.ToHost()
	require.NoError(t, err)
	assert.Equal(t, []float32{200, 201, 202, 203}, got)
	require.Eventually(t, func() bool { return pjrt.InFlight(c) == 0 }, 10*time.Second, time.Millisecond)
	// Executions still running when Close starts finish before the client goes.
	for range 50 {
		outs, err := exe.Execute([][]*pjrt.Buffer{{x}}, pjrt.Donate(0))
		require.NoError(t, err)
		x = outs[0][0]
	}
	require.NoError(t, c.Close())
	assert.Equal(t, 0, pjrt.InFlight(c))
}

// TestWaitAll waits for several buffers in one call; the error of a failed execution names the
// buffer, and closed buffers are refused.
func TestWaitAll(t *testing.T) {
	c := pjrttest.Client(t)
	exe, err := c.Compile(incModule, pjrt.CompileOptions{})
	require.NoError(t, err)
	defer exe.Close()
	dev := exe.Devices()[0]
	x, err := c.BufferFromHost(dev, []float32{1, 2, 3, 4}, []int{4})
	require.NoError(t, err)
	defer x.Close()
	var outs []*pjrt.Buffer
	for range 10 {
		o, err := exe.Execute([][]*pjrt.Buffer{{x}})
		require.NoError(t, err)
		outs = append(outs, o[0][0])
	}
	require.NoError(t, pjrt.WaitAll(outs...))
	if c.Plugin().Has("PJRT_Client_CreateErrorBuffer") {
		bad, err := c.NewErrorBuffer(dev, shapes.Make(dtypes.Float32, 4), pjrt.DataLoss, "sensor offline")
		require.NoError(t, err)
		o, err := exe.Execute([][]*pjrt.Buffer{{bad}})
		require.NoError(t, err)
		err = pjrt.WaitAll(append(outs, o[0][0])...)
		require.ErrorIs(t, err, pjrt.ErrExecute)
		assert.ErrorContains(t, err, "sensor offline")
		assert.ErrorContains(t, err, "wait for Buffer(f32[4]")
		require.NoError(t, o[0][0].Close())
		require.NoError(t, bad.Close())
	}
	require.NoError(t, outs[3].Close())
	assert.ErrorIs(t, pjrt.WaitAll(outs...), pjrt.ErrClosed)
	for _, o := range outs {
		require.NoError(t, o.Close())
	}
	assert.NoError(t, pjrt.WaitAll())
}
