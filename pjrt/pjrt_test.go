package pjrt_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// seedModuleOn returns the seed program on the mesh x, y (seedModule on 4, 2): the 8x2 array
// sharded P("x", "y") over x*y partitions.
func seedModuleOn(x, y int) string {
	return fmt.Sprintf(`module @jit_f attributes {mhlo.num_partitions = %d : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=%d, "y"=%d]>
  func.func public @main(%%arg0: tensor<8x2xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x2xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %%c = stablehlo.constant dense<2> : tensor<8x2xi64>
    %%0 = stablehlo.multiply %%arg0, %%c : tensor<8x2xi64>
    return %%0 : tensor<8x2xi64>
  }
}`, x*y, x, y)
}

// TestOpenDeviceCountsCPUOnly: the CPU plugin makes as many devices as its cpu_device_count
// create option asks for (a GPU plugin has the GPUs it sees).
func TestOpenDeviceCountsCPUOnly(t *testing.T) {
	for _, n := range []int{4, 8} {
		c, err := pjrttest.Open(n)
		require.NoError(t, err)
		defer c.Close()
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
	id := c.Devices()[min(3, len(c.Devices())-1)].ID() // 3 on 8 devices
	d, err := c.Device(id)
	require.NoError(t, err)
	assert.Equal(t, id, d.ID())
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

// runSeed puts the seed input on the devices of exe (the seed program on the mesh s), runs exe,
// checks every output shard and closes every buffer.
func runSeed(t testing.TB, c *pjrt.Client, exe *pjrt.Executable, s seedMesh) {
	args := make([][]*pjrt.Buffer, s.parts())
	for p, d := range exe.Devices() {
		b, err := c.BufferFromHost(d, s.shard(p), s.dims())
		require.NoError(t, err)
		args[p] = []*pjrt.Buffer{b}
	}
	outs, err := exe.Execute(args)
	require.NoError(t, err)
	for p := range outs {
		require.Len(t, outs[p], 1)
		got, err := outs[p][0].ToHost()
		require.NoError(t, err)
		require.Equal(t, doubled(s.shard(p)), got, "shard on position %d", p)
		require.Equal(t, exe.Devices()[p], outs[p][0].Device())
		require.NoError(t, outs[p][0].Close())
		require.NoError(t, args[p][0].Close())
	}
}

// compileSeed compiles the seed program for c's mesh on its first devices.
func compileSeed(t testing.TB, c *pjrt.Client) (*pjrt.Executable, seedMesh) {
	s := seedFor(c)
	exe, err := c.Compile(s.module(), pjrt.CompileOptions{DeviceAssignment: s.ids(c)})
	require.NoError(t, err)
	return exe, s
}

func TestSeedProgram(t *testing.T) {
	c := pjrttest.Client(t)
	before := pjrt.LiveBuffers()
	exe, s := compileSeed(t, c)
	defer exe.Close()
	assert.Equal(t, s.parts(), exe.NumPartitions())
	assert.Equal(t, []pjrt.Shape{shapes.Make(dtypes.Int64, s.dims()...)}, exe.OutputShapes())
	assert.Equal(t, s.ids(c), exe.DeviceAssignment())
	runSeed(t, c, exe, s)
	assert.Equal(t, before, pjrt.LiveBuffers(), "buffers leaked")
}

func TestSeedProgramPermutedAssignment(t *testing.T) {
	c := pjrttest.Client(t)
	s := seedFor(c)
	perm := s.ids(c) // reversed: 7, 6, ..., 0 on 8 devices
	slices.Reverse(perm)
	exe, err := c.Compile(s.module(), pjrt.CompileOptions{DeviceAssignment: perm})
	require.NoError(t, err)
	defer exe.Close()
	for i, d := range exe.Devices() {
		assert.Equal(t, perm[i], d.ID())
	}
	runSeed(t, c, exe, s)
}

// TestExecuteConcurrent runs one executable from 8 goroutines at once (run it with -race).
func TestExecuteConcurrent(t *testing.T) {
	c := pjrttest.Client(t)
	exe, s := compileSeed(t, c)
	defer exe.Close()
	before := pjrt.LiveBuffers()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				runSeed(t, c, exe, s)
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
	exe, s := compileSeed(t, c)
	defer exe.Close()
	args := make([][]*pjrt.Buffer, s.parts())
	for p, d := range exe.Devices() {
		b, err := c.BufferFromHost(d, s.shard(p), s.dims())
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
					assert.Equal(t, doubled(in.([]int64)), got)
					assert.NoError(t, outs[p][0].Close())
				}
			}
		}()
	}
	wg.Wait()
}

func TestBufferRoundTrip(t *testing.T) {
	c := pjrttest.Client(t)
	d := deviceAt(c, 5)
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
	other, err := pjrttest.Open(min(4, len(c.Devices()))) // a client of its own: 4 devices on 8
	require.NoError(t, err)
	defer other.Close()
	d := c.AddressableDevices()[0]
	before := pjrt.LiveBuffers()

	_, err = c.BufferFromHost(d, []float32{1, 2, 3}, []int{2, 2})
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
	exe, s := compileSeed(t, c)
	defer exe.Close()
	before := pjrt.LiveBuffers()
	devs := exe.Devices()
	n := s.parts()

	_, err := exe.Execute(nil)
	assert.ErrorIs(t, err, pjrt.ErrExecute)
	assert.ErrorContains(t, err, fmt.Sprintf("0 argument lists for %d devices", n))

	args := make([][]*pjrt.Buffer, n)
	for p := range args {
		b, err := c.BufferFromHost(devs[p], s.shard(p), s.dims())
		require.NoError(t, err)
		args[p] = []*pjrt.Buffer{b}
	}
	if n >= 2 {
		// Positions 0 and 1 swapped: the buffer of position 0 is on the second device.
		swapped := append([][]*pjrt.Buffer(nil), args...)
		swapped[0], swapped[1] = args[1], args[0]
		_, err = exe.Execute(swapped)
		assert.ErrorIs(t, err, pjrt.ErrDevice)
		assert.ErrorContains(t, err, fmt.Sprintf("is on device %d", devs[1].ID()))

		// A position other than the first (3 on 8 devices) without arguments.
		ragged := append([][]*pjrt.Buffer(nil), args...)
		p := min(3, n-1)
		ragged[p] = nil
		_, err = exe.Execute(ragged)
		assert.ErrorIs(t, err, pjrt.ErrExecute)
		assert.ErrorContains(t, err, fmt.Sprintf("device %d has 0 arguments", p))
	}

	_, err = exe.Execute(args, pjrt.Donate(1))
	assert.ErrorIs(t, err, pjrt.ErrExecute)

	require.NoError(t, args[min(2, n-1)][0].Close())
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
	exe, s := compileSeed(t, c)
	defer exe.Close()
	before := pjrt.LiveBuffers()
	args := make([][]*pjrt.Buffer, s.parts())
	for p, d := range exe.Devices() {
		b, err := c.BufferFromHost(d, s.shard(p), s.dims())
		require.NoError(t, err)
		args[p] = []*pjrt.Buffer{b}
	}
	outs, err := exe.Execute(args, pjrt.Donate(0))
	require.NoError(t, err)
	for p := range args {
		assert.True(t, args[p][0].IsClosed(), "donated input on position %d is closed", p)
		got, err := outs[p][0].ToHost()
		require.NoError(t, err)
		assert.Equal(t, doubled(s.shard(p)), got)
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

	s := seedFor(c)
	ids := s.ids(c)
	// The assignment's last device (7 on 8 devices) replaced by one that does not exist.
	_, err = c.Compile(s.module(), pjrt.CompileOptions{DeviceAssignment: append(slices.Clone(ids[:len(ids)-1]), 42)})
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	assert.ErrorContains(t, err, "no device with id 42")
	// The first device again in the last place (of two at least): 0, 1, ..., 6, 0 on 8 devices.
	dup := append(slices.Clone(ids[:max(1, len(ids)-1)]), ids[0])
	_, err = c.Compile(s.module(), pjrt.CompileOptions{DeviceAssignment: dup})
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	assert.ErrorContains(t, err, fmt.Sprintf("device %d appears at positions 0 and %d", ids[0], len(dup)-1))
	_, err = c.Compile(s.module(), pjrt.CompileOptions{NumPartitions: 2 * len(c.Devices())})
	assert.ErrorIs(t, err, pjrt.ErrDevice)
	// XLA partitions a program of 2 partitions or more only: a program of one compiles as it is.
	t.Run("partitioned", func(t *testing.T) {
		pjrttest.NeedDevices(t, 2)
		// The partitioner is a compile option, not guessed from the text: a Shardy module compiled
		// with GSPMD reaches XLA's partitioner with Shardy's custom calls, which XLA rejects.
		_, err := c.Compile(s.module(), pjrt.CompileOptions{NumPartitions: s.parts(), Partitioner: pjrt.GSPMD})
		assert.ErrorIs(t, err, pjrt.ErrCompile)
		assert.ErrorContains(t, err, "xla.sdy")
		// A mesh of another size than the partition count is rejected by XLA itself: half of it (4
		// partitions compiled for 8 devices), or twice it where half would be one device (which
		// XLA takes as replicated: 2 partitions compiled for 1 device).
		x := s.x / 2
		if s.parts() == 2 {
			x = s.x * 2
		}
		text := strings.Replace(s.module(), fmt.Sprintf(`"x"=%d`, s.x), fmt.Sprintf(`"x"=%d`, x), 1)
		_, err = c.Compile(text, pjrt.CompileOptions{NumPartitions: s.parts()})
		assert.ErrorIs(t, err, pjrt.ErrCompile)
	})
}

// gspmdModule returns the seed program on the mesh s with GSPMD annotations instead of Shardy
// ones: {devices=[4,2]<=[8]} on (4, 2).
func gspmdModule(s seedMesh) string {
	sharding := fmt.Sprintf("{devices=[%d,%d]<=[%d]}", s.x, s.y, s.parts())
	return fmt.Sprintf(`module @jit_f attributes {mhlo.num_partitions = %d : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%%arg0: tensor<8x2xi64> {mhlo.sharding = "%s"}) -> (tensor<8x2xi64> {mhlo.sharding = "%s"}) {
    %%c = stablehlo.constant dense<2> : tensor<8x2xi64>
    %%0 = stablehlo.multiply %%arg0, %%c : tensor<8x2xi64>
    return %%0 : tensor<8x2xi64>
  }
}`, s.parts(), sharding, sharding)
}

func TestGSPMD(t *testing.T) {
	c := pjrttest.Client(t)
	s := seedFor(c)
	exe, err := c.Compile(gspmdModule(s), pjrt.CompileOptions{NumPartitions: s.parts(), Partitioner: pjrt.GSPMD})
	require.NoError(t, err)
	defer exe.Close()
	runSeed(t, c, exe, s)
	// With the Shardy option, XLA itself sees the mhlo.sharding annotations and runs GSPMD.
	exe2, err := c.Compile(gspmdModule(s), pjrt.CompileOptions{NumPartitions: s.parts()})
	require.NoError(t, err)
	defer exe2.Close()
	runSeed(t, c, exe2, s)
}

// TestClosedClient closes a client of its own (2 devices, or 1 where pjrttest.Client has 1).
func TestClosedClient(t *testing.T) {
	c, err := pjrttest.Open(min(2, len(pjrttest.Client(t).Devices())))
	require.NoError(t, err)
	b, err := c.BufferFromHost(deviceAt(c, 1), []int32{7}, []int{1})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "Close is idempotent")
	_, err = c.Compile(seedModule, pjrt.CompileOptions{})
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	_, err = b.ToHost()
	assert.True(t, errors.Is(err, pjrt.ErrClosed))
	assert.NoError(t, b.Close())
}

// TestCompileProgramsOfEveryShortLength compiles programs that mlir.Check lets through but the
// plugin cannot parse, of every length up to 40 bytes (a word of that many letters): each is a
// typed ErrCompile. The program must reach the plugin NUL-terminated: MLIR's lexer reads up to a
// NUL, and without one the API 0.115 plugin read past the buffer and crashed on every 8-byte
// program (whose allocation Go does not pad), "A0000000" as FuzzCompile found it.
func TestCompileProgramsOfEveryShortLength(t *testing.T) {
	c := pjrttest.Client(t)
	for n := 1; n <= 40; n++ {
		for _, text := range []string{strings.Repeat("a", n), "A" + strings.Repeat("0", n-1)} {
			exe, err := c.Compile(text, pjrt.CompileOptions{})
			if err == nil {
				exe.Close()
				t.Fatalf("%q compiled", text)
			}
			require.ErrorIs(t, err, pjrt.ErrCompile, "%q", text)
		}
	}
}
