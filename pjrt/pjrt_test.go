package pjrt_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
)

// seedModule is the program of JAX's Shardy announcement: f(x) = x * 2 on an 8x2 int64 array,
// mesh x=4, y=2, input and output sharded P("x", "y").
const seedModule = `module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(%arg0: tensor<8x2xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x2xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %c = stablehlo.constant dense<2> : tensor<8x2xi64>
    %0 = stablehlo.multiply %arg0, %c : tensor<8x2xi64>
    return %0 : tensor<8x2xi64>
  }
}`

// seedShard returns the 2x1 shard of arange(16).reshape(8, 2) held by mesh position p
// (x = p/2 selects rows 2x..2x+1, y = p%2 selects the column).
func seedShard(p int) []int64 {
	x, y := p/2, p%2
	return []int64{int64((2*x)*2 + y), int64((2*x+1)*2 + y)}
}

func TestOpenDeviceCounts(t *testing.T) {
	for _, n := range []int{4, 8} {
		c := pjrttest.ClientWithDevices(t, n)
		require.Len(t, c.Devices(), n)
		require.Len(t, c.AddressableDevices(), n)
		assert.Equal(t, "cpu", c.Platform())
		for i, d := range c.Devices() {
			assert.Equal(t, i, d.ID())
			assert.Equal(t, 0, d.ProcessIndex())
			assert.Equal(t, "cpu", d.Platform())
			assert.Equal(t, "cpu", d.Kind())
			assert.Equal(t, i, d.LocalHardwareID())
			assert.True(t, d.IsAddressable())
			assert.Nil(t, d.Coords(), "CPU devices have no coords attribute")
			assert.Equal(t, fmt.Sprintf("CpuDevice(id=%d)", i), d.String())
		}
	}
}

func TestPluginInfo(t *testing.T) {
	c := pjrttest.Client(t)
	major, minor := c.Plugin().APIVersion()
	assert.Equal(t, 0, major)
	assert.GreaterOrEqual(t, minor, pjrt.MinAPIMinor)
	assert.GreaterOrEqual(t, c.Plugin().APIStructSize(), 984)
	assert.True(t, c.Plugin().Has("PJRT_Client_Compile"))
	assert.False(t, c.Plugin().Has("PJRT_No_Such_Function"))
	assert.Contains(t, c.Plugin().Attributes(), "stablehlo_current_version")
	d, err := c.Device(3)
	require.NoError(t, err)
	assert.Equal(t, 3, d.ID())
	_, err = c.Device(99)
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	assert.ErrorContains(t, err, "99")
}

func TestLoadPluginErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.so")
	require.NoError(t, os.WriteFile(corrupt, []byte("\x7fELF this is not a shared object"), 0o644))
	notPlugin := findSystemLibrary(t)

	_, err := pjrt.LoadPlugin(filepath.Join(dir, "missing.so"))
	assert.ErrorIs(t, err, pjrt.ErrPluginNotFound)
	assert.ErrorContains(t, err, "missing.so")
	assert.ErrorContains(t, err, "make setup")

	_, err = pjrt.LoadPlugin(corrupt)
	assert.ErrorIs(t, err, pjrt.ErrNotPlugin)
	assert.ErrorContains(t, err, corrupt)

	_, err = pjrt.LoadPlugin(notPlugin)
	assert.ErrorIs(t, err, pjrt.ErrNotPlugin)
	assert.ErrorContains(t, err, "GetPjrtApi")

	// By name: gopjrt's own discovery crashes on a bad file matching its pattern; ours reports it.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pjrt_c_api_broken_plugin.so"), []byte("junk"), 0o644))
	t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", dir)
	_, err = pjrt.LoadPlugin("broken")
	assert.ErrorIs(t, err, pjrt.ErrNotPlugin)
	_, err = pjrt.LoadPlugin("absent")
	assert.ErrorIs(t, err, pjrt.ErrPluginNotFound)

	_, err = pjrt.Open(pjrt.WithPlugin(corrupt))
	assert.ErrorIs(t, err, pjrt.ErrNotPlugin)
}

// findSystemLibrary returns a shared library that surely is not a PJRT plugin.
func findSystemLibrary(t *testing.T) string {
	for _, p := range []string{"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6", "/lib64/libm.so.6", "/lib/aarch64-linux-gnu/libm.so.6"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("no libm.so.6 found to use as a non-plugin shared library")
	return ""
}

// runSeed puts the seed input on the 8 devices, runs exe, checks the 8 output shards and
// closes every buffer.
func runSeed(t testing.TB, c *pjrt.Client, exe *pjrt.Executable) {
	args := make([][]*pjrt.Buffer, 8)
	for p, d := range exe.Devices() {
		b, err := c.BufferFromHost(d, seedShard(p), []int{2, 1})
		require.NoError(t, err)
		args[p] = []*pjrt.Buffer{b}
	}
	outs, err := exe.Execute(args)
	require.NoError(t, err)
	for p := range outs {
		require.Len(t, outs[p], 1)
		got, err := outs[p][0].ToHost()
		require.NoError(t, err)
		in := seedShard(p)
		require.Equal(t, []int64{2 * in[0], 2 * in[1]}, got, "shard on position %d", p)
		require.Equal(t, exe.Devices()[p], outs[p][0].Device())
		require.NoError(t, outs[p][0].Close())
		require.NoError(t, args[p][0].Close())
	}
}

func compileSeed(t testing.TB, c *pjrt.Client) *pjrt.Executable {
	exe, err := c.Compile(seedModule, pjrt.CompileOptions{DeviceAssignment: []int{0, 1, 2, 3, 4, 5, 6, 7}})
	require.NoError(t, err)
	return exe
}

func TestSeedProgram(t *testing.T) {
	c := pjrttest.Client(t)
	before := pjrt.LiveBuffers()
	exe := compileSeed(t, c)
	defer exe.Close()
	assert.Equal(t, 8, exe.NumPartitions())
	assert.Equal(t, []pjrt.Shape{shapes.Make(dtypes.Int64, 2, 1)}, exe.OutputShapes())
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, exe.DeviceAssignment())
	runSeed(t, c, exe)
	assert.Equal(t, before, pjrt.LiveBuffers(), "buffers leaked")
}

func TestSeedProgramPermutedAssignment(t *testing.T) {
	c := pjrttest.Client(t)
	perm := []int{7, 6, 5, 4, 3, 2, 1, 0}
	exe, err := c.Compile(seedModule, pjrt.CompileOptions{DeviceAssignment: perm})
	require.NoError(t, err)
	defer exe.Close()
	for i, d := range exe.Devices() {
		assert.Equal(t, perm[i], d.ID())
	}
	runSeed(t, c, exe)
}

// TestExecuteConcurrent runs one executable from 8 goroutines at once (run it with -race).
func TestExecuteConcurrent(t *testing.T) {
	c := pjrttest.Client(t)
	exe := compileSeed(t, c)
	defer exe.Close()
	before := pjrt.LiveBuffers()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				runSeed(t, c, exe)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, before, pjrt.LiveBuffers(), "buffers leaked")
}

// TestSharedInputConcurrent reads the same input buffers from many concurrent executions and
// host copies.
func TestSharedInputConcurrent(t *testing.T) {
	c := pjrttest.Client(t)
	exe := compileSeed(t, c)
	defer exe.Close()
	args := make([][]*pjrt.Buffer, 8)
	for p, d := range exe.Devices() {
		b, err := c.BufferFromHost(d, seedShard(p), []int{2, 1})
		require.NoError(t, err)
		defer b.Close()
		args[p] = []*pjrt.Buffer{b}
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				outs, err := exe.Execute(args)
				if !assert.NoError(t, err) {
					return
				}
				for p := range outs {
					got, err := outs[p][0].ToHost()
					assert.NoError(t, err)
					in, err := args[p][0].ToHost()
					assert.NoError(t, err)
					assert.Equal(t, []int64{2 * in.([]int64)[0], 2 * in.([]int64)[1]}, got)
					assert.NoError(t, outs[p][0].Close())
				}
			}
		}()
	}
	wg.Wait()
}

func TestBufferRoundTrip(t *testing.T) {
	c := pjrttest.Client(t)
	d := c.AddressableDevices()[5]
	cases := []struct {
		flat  any
		dtype dtypes.DType
		dims  []int
	}{
		{[]bool{true, false, true}, dtypes.Bool, []int{3}},
		{[]int8{-1, 2}, dtypes.Int8, []int{2}},
		{[]int16{-300, 300}, dtypes.Int16, []int{1, 2}},
		{[]int32{1, 2, 3, 4, 5, 6}, dtypes.Int32, []int{2, 3}},
		{[]int64{-1 << 40}, dtypes.Int64, []int{}},
		{[]uint8{255}, dtypes.Uint8, []int{1}},
		{[]uint16{65535, 1}, dtypes.Uint16, []int{2}},
		{[]uint32{1 << 31}, dtypes.Uint32, []int{1, 1}},
		{[]uint64{1 << 63}, dtypes.Uint64, []int{1}},
		{[]float32{1.5, -2.25}, dtypes.Float32, []int{2, 1}},
		{[]float64{3.125}, dtypes.Float64, nil},
		{[]float32{}, dtypes.Float32, []int{0, 4}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%v%v", tc.dtype, tc.dims), func(t *testing.T) {
			b, err := c.BufferFromHost(d, tc.flat, tc.dims)
			require.NoError(t, err)
			defer b.Close()
			assert.Equal(t, tc.dtype, b.DType())
			assert.Equal(t, d, b.Device())
			got, err := b.ToHost()
			require.NoError(t, err)
			assert.Equal(t, tc.flat, got)
		})
	}
	// Raw bytes for a dtype without a Go type: bfloat16 1.0 is 0x3f80.
	b, err := c.BufferFromBytes(d, dtypes.BFloat16, []int{2}, []byte{0x80, 0x3f, 0x00, 0xc0})
	require.NoError(t, err)
	got, err := b.ToHost()
	require.NoError(t, err)
	assert.Equal(t, []uint16{0x3f80, 0xc000}, got)
	require.NoError(t, b.Close())
}

func TestBufferErrors(t *testing.T) {
	c := pjrttest.Client(t)
	other := pjrttest.ClientWithDevices(t, 4)
	d := c.AddressableDevices()[0]
	before := pjrt.LiveBuffers()

	_, err := c.BufferFromHost(d, []float32{1, 2, 3}, []int{2, 2})
	assert.ErrorIs(t, err, pjrt.ErrHostData)
	assert.ErrorContains(t, err, "f32[2,2] needs 16 bytes (4 elements), got 12 bytes")
	_, err = c.BufferFromHost(d, []string{"a"}, []int{1})
	assert.ErrorIs(t, err, pjrt.ErrHostData)
	_, err = c.BufferFromHost(d, 3.0, nil)
	assert.ErrorIs(t, err, pjrt.ErrHostData)
	_, err = c.BufferFromHost(nil, []float32{1}, []int{1})
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	_, err = c.BufferFromHost(other.AddressableDevices()[0], []float32{1}, []int{1})
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	assert.ErrorContains(t, err, "another client")
	_, err = c.BufferFromHost(d, []float32{1}, []int{-1})
	assert.ErrorIs(t, err, pjrt.ErrHostData)

	b, err := c.BufferFromHost(d, []float32{1}, []int{1})
	require.NoError(t, err)
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "Close is idempotent")
	assert.True(t, b.IsClosed())
	_, err = b.ToHost()
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	assert.Equal(t, before, pjrt.LiveBuffers())
}

func TestExecuteErrors(t *testing.T) {
	c := pjrttest.Client(t)
	exe := compileSeed(t, c)
	defer exe.Close()
	before := pjrt.LiveBuffers()
	devs := exe.Devices()

	_, err := exe.Execute(nil)
	assert.ErrorIs(t, err, pjrt.ErrExecute)
	assert.ErrorContains(t, err, "0 argument lists for 8 devices")

	args := make([][]*pjrt.Buffer, 8)
	for p := range args {
		b, err := c.BufferFromHost(devs[p], seedShard(p), []int{2, 1})
		require.NoError(t, err)
		args[p] = []*pjrt.Buffer{b}
	}
	swapped := append([][]*pjrt.Buffer(nil), args...)
	swapped[0], swapped[1] = args[1], args[0]
	_, err = exe.Execute(swapped)
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	assert.ErrorContains(t, err, "is on device 1")

	ragged := append([][]*pjrt.Buffer(nil), args...)
	ragged[3] = nil
	_, err = exe.Execute(ragged)
	assert.ErrorIs(t, err, pjrt.ErrExecute)
	assert.ErrorContains(t, err, "device 3 has 0 arguments")

	_, err = exe.Execute(args, pjrt.Donate(1))
	assert.ErrorIs(t, err, pjrt.ErrExecute)

	require.NoError(t, args[2][0].Close())
	_, err = exe.Execute(args)
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	for _, a := range args {
		require.NoError(t, a[0].Close())
	}
	assert.Equal(t, before, pjrt.LiveBuffers())

	require.NoError(t, exe.Close())
	_, err = exe.Execute(args)
	assert.ErrorIs(t, err, pjrt.ErrClosed)
}

func TestDonation(t *testing.T) {
	c := pjrttest.Client(t)
	exe := compileSeed(t, c)
	defer exe.Close()
	before := pjrt.LiveBuffers()
	args := make([][]*pjrt.Buffer, 8)
	for p, d := range exe.Devices() {
		b, err := c.BufferFromHost(d, seedShard(p), []int{2, 1})
		require.NoError(t, err)
		args[p] = []*pjrt.Buffer{b}
	}
	outs, err := exe.Execute(args, pjrt.Donate(0))
	require.NoError(t, err)
	for p := range args {
		assert.True(t, args[p][0].IsClosed(), "donated input on position %d is closed", p)
		got, err := outs[p][0].ToHost()
		require.NoError(t, err)
		in := seedShard(p)
		assert.Equal(t, []int64{2 * in[0], 2 * in[1]}, got)
		require.NoError(t, outs[p][0].Close())
	}
	assert.Equal(t, before, pjrt.LiveBuffers())
}

func TestCompileErrors(t *testing.T) {
	c := pjrttest.Client(t)
	_, err := c.Compile("module { this is not mlir }", pjrt.CompileOptions{})
	assert.ErrorIs(t, err, pjrt.ErrCompile)
	var perr *pjrt.Error
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, "compile", perr.Op)
	assert.NotEqual(t, pjrt.Code(0), perr.Code)

	_, err = c.Compile(seedModule, pjrt.CompileOptions{DeviceAssignment: []int{0, 1, 2, 3, 4, 5, 6, 42}})
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	assert.ErrorContains(t, err, "no device with id 42")
	_, err = c.Compile(seedModule, pjrt.CompileOptions{DeviceAssignment: []int{0, 1, 2, 3, 4, 5, 6, 0}})
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	assert.ErrorContains(t, err, "device 0 appears at positions 0 and 7")
	_, err = c.Compile(seedModule, pjrt.CompileOptions{NumPartitions: 16})
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	// The partitioner is a compile option, not guessed from the text: a Shardy module compiled
	// with GSPMD reaches XLA's partitioner with Shardy's custom calls, which XLA rejects.
	_, err = c.Compile(seedModule, pjrt.CompileOptions{NumPartitions: 8, Partitioner: pjrt.GSPMD})
	assert.ErrorIs(t, err, pjrt.ErrCompile)
	assert.ErrorContains(t, err, "xla.sdy")
	// A 4-partition mesh compiled for 8 devices is rejected by XLA itself.
	_, err = c.Compile(strings.Replace(seedModule, `"x"=4`, `"x"=2`, 1), pjrt.CompileOptions{NumPartitions: 8})
	assert.ErrorIs(t, err, pjrt.ErrCompile)
}

// gspmdModule is the seed program with GSPMD annotations instead of Shardy ones.
const gspmdModule = `module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x2xi64> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) -> (tensor<8x2xi64> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) {
    %c = stablehlo.constant dense<2> : tensor<8x2xi64>
    %0 = stablehlo.multiply %arg0, %c : tensor<8x2xi64>
    return %0 : tensor<8x2xi64>
  }
}`

func TestGSPMD(t *testing.T) {
	c := pjrttest.Client(t)
	exe, err := c.Compile(gspmdModule, pjrt.CompileOptions{NumPartitions: 8, Partitioner: pjrt.GSPMD})
	require.NoError(t, err)
	defer exe.Close()
	runSeed(t, c, exe)
	// With the Shardy option, XLA itself sees the mhlo.sharding annotations and runs GSPMD.
	exe2, err := c.Compile(gspmdModule, pjrt.CompileOptions{NumPartitions: 8})
	require.NoError(t, err)
	defer exe2.Close()
	runSeed(t, c, exe2)
}

func TestClosedClient(t *testing.T) {
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(2))
	require.NoError(t, err)
	b, err := c.BufferFromHost(c.AddressableDevices()[1], []int32{7}, []int{1})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close is idempotent")
	_, err = c.Compile(seedModule, pjrt.CompileOptions{})
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	_, err = b.ToHost()
	assert.True(t, errors.Is(err, pjrt.ErrClosed))
	assert.NoError(t, b.Close())
}
