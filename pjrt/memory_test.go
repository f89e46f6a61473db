package pjrt_test

import (
	"fmt"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// cpuMemoryKinds are the memory kinds of every device of XLA's CPU plugins, as JAX lists them.
var cpuMemoryKinds = []string{"device", "pinned_host", "unpinned_host"}

// memoryKindsOf returns the kinds of ms in order.
func memoryKindsOf(ms []*pjrt.Memory) []string {
	kinds := make([]string, len(ms))
	for i, m := range ms {
		kinds[i] = m.Kind()
	}
	return kinds
}

// requireMemory returns d's memory of the given kind.
func requireMemory(t *testing.T, d *pjrt.Device, kind string) *pjrt.Memory {
	t.Helper()
	m, err := d.Memory(kind)
	require.NoError(t, err)
	require.Equal(t, kind, m.Kind())
	return m
}

// TestMemoryList: every addressable device lists its memories, "device" (the default),
// "pinned_host" and "unpinned_host" on the CPU plugins, each addressed by that device alone
// there; the client hands out the same *Memory every time.
func TestMemoryList(t *testing.T) {
	c := pjrttest.Client(t)
	require.True(t, c.Plugin().Has("PJRT_Device_AddressableMemories"))
	require.True(t, c.Plugin().Has("PJRT_Memory_Kind"))
	seen := map[string]map[int]*pjrt.Memory{} // kind -> id -> memory: ids are unique per kind
	for _, d := range c.AddressableDevices() {
		ms, err := d.Memories()
		require.NoError(t, err, "%s", d)
		kinds := memoryKindsOf(ms)
		if c.Platform() == "cpu" {
			assert.ElementsMatch(t, cpuMemoryKinds, kinds, "%s", d)
		} else {
			assert.Contains(t, kinds, "device", "%s", d)
		}
		def, err := d.DefaultMemory()
		require.NoError(t, err)
		assert.Equal(t, "device", def.Kind(), "%s", d)
		assert.Contains(t, ms, def, "the default memory is one of the device's memories")
		for _, m := range ms {
			assert.Same(t, c, m.Client())
			assert.Contains(t, m.Devices(), d, "%s is addressable by %s", m, d)
			if c.Platform() == "cpu" {
				assert.Equal(t, []*pjrt.Device{d}, m.Devices(), "a CPU memory belongs to one device")
			}
			assert.NotEmpty(t, m.String())
			byKind, err := d.Memory(m.Kind())
			require.NoError(t, err)
			assert.Same(t, m, byKind, "Memory(kind) is the listed memory")
			if seen[m.Kind()] == nil {
				seen[m.Kind()] = map[int]*pjrt.Memory{}
			}
			if other, dup := seen[m.Kind()][m.ID()]; dup {
				assert.Same(t, other, m, "two memories of kind %q with id %d", m.Kind(), m.ID())
			}
			seen[m.Kind()][m.ID()] = m
		}
		again, err := d.Memories()
		require.NoError(t, err)
		assert.Equal(t, ms, again, "memories are read once and kept")
		again[0] = nil
		kept, _ := d.Memories()
		assert.NotNil(t, kept[0], "Memories returns a copy")
	}
	if c.Platform() == "cpu" {
		m := requireMemory(t, c.AddressableDevices()[0], "pinned_host")
		assert.Regexp(t, `^PINNED_HOST_\d+$`, m.String())
	}
}

// memoryCase is an array put into a memory and read back.
type memoryCase struct {
	name    string
	dtype   dtypes.DType
	dims    []int
	flat    any
	strides []int64 // of a strided transfer of the block [0:dims[0], 0:dims[1]] of a wider array
	src     any     // the wider array of a strided transfer
}

// memoryCases are float32 and int8 arrays, small (PJRT's copy) and of 64 KiB or more (staged
// on CPU), dense and strided.
func memoryCases() []memoryCase {
	f32 := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(i)*0.25 - 3
		}
		return out
	}
	i8 := func(n int) []int8 {
		out := make([]int8, n)
		for i := range out {
			out[i] = int8(i*7 - 128)
		}
		return out
	}
	// A 6x4 block of a 6x10 int8 array, sent in place with strides.
	wide := i8(60)
	block := make([]int8, 0, 24)
	for r := range 6 {
		block = append(block, wide[r*10:r*10+4]...)
	}
	return []memoryCase{
		{name: "f32[2,3]", dtype: dtypes.Float32, dims: []int{2, 3}, flat: []float32{1.5, -2, 0, 3.25, 1e-7, -1e30}},
		{name: "i8[5]", dtype: dtypes.Int8, dims: []int{5}, flat: []int8{-128, -1, 0, 1, 127}},
		{name: "f32[128,160]", dtype: dtypes.Float32, dims: []int{128, 160}, flat: f32(128 * 160)},
		{name: "i8[256,300]", dtype: dtypes.Int8, dims: []int{256, 300}, flat: i8(256 * 300)},
		{name: "i8[6,4]strided", dtype: dtypes.Int8, dims: []int{6, 4}, flat: block, strides: []int64{10, 1}, src: wide},
	}
}

// put places the case's array on d in m (nil: the default memory).
func (mc memoryCase) put(t *testing.T, c *pjrt.Client, d *pjrt.Device, m *pjrt.Memory) *pjrt.Buffer {
	t.Helper()
	src := mc.flat
	if mc.src != nil {
		src = mc.src
	}
	raw, dt, err := pjrt.HostBytes(src)
	require.NoError(t, err)
	require.Equal(t, mc.dtype, dt)
	bs, err := c.BuffersFromHost([]pjrt.HostTransfer{{Device: d, DType: mc.dtype, Dims: mc.dims, Data: raw, ByteStrides: mc.strides, Memory: m}})
	require.NoError(t, err)
	return bs[0]
}

// check reads b back three ways (ToHost, CopyToHost, CopyToHostAll into a strided place of a
// larger array) and compares with the case's values exactly.
func (mc memoryCase) check(t *testing.T, c *pjrt.Client, b *pjrt.Buffer) {
	t.Helper()
	got, err := b.ToHost()
	require.NoError(t, err)
	require.Equal(t, mc.flat, got)
	want, _, err := pjrt.HostBytes(mc.flat)
	require.NoError(t, err)
	dst := make([]byte, len(want))
	require.NoError(t, b.CopyToHost(dst))
	require.Equal(t, want, dst)
	// Into the left half of a row-major array twice as wide: row r lands at r*2*rowBytes.
	dims := b.Dims()
	n := 1
	for _, d := range dims {
		n *= d
	}
	elem := len(want) / n
	rowBytes := elem
	for _, d := range dims[1:] {
		rowBytes *= d
	}
	strides := make([]int64, len(dims))
	strides[0] = int64(2 * rowBytes)
	acc := int64(elem)
	for i := len(dims) - 1; i >= 1; i-- {
		strides[i] = acc
		acc *= int64(dims[i])
	}
	wide := make([]byte, 2*len(want))
	require.NoError(t, c.CopyToHostAll([]pjrt.HostCopy{{Buffer: b, Dst: wide, DstByteStrides: strides}}))
	for r := range dims[0] {
		require.Equal(t, want[r*rowBytes:(r+1)*rowBytes], wide[2*r*rowBytes:2*r*rowBytes+rowBytes], "row %d", r)
	}
}

// inHostMemory says whether a buffer in m is in the host's memory, so that the host-memory route
// of CopyToHostAll reads it in place (PJRT_Buffer_IsOnCpu): every memory of the CPU platform,
// where device memory is host memory, and on other platforms the host kinds, "pinned_host" and
// "unpinned_host", but not "device".
func inHostMemory(c *pjrt.Client, m *pjrt.Memory) bool {
	return c.Platform() == "cpu" || m.Kind() == "pinned_host" || m.Kind() == "unpinned_host"
}

// TestMemoryPlacement puts float32 and int8 arrays into each memory of a device, through both
// host routes of the CPU platform (staging and direct reads, and PJRT's own copies; a client
// on another platform is put on them too, as only a test can), and reads them back exactly;
// Buffer.Memory is the memory asked for. A direct read is made exactly for the buffers in
// host memory (inHostMemory).
func TestMemoryPlacement(t *testing.T) {
	c := pjrttest.Client(t)
	d := c.AddressableDevices()[len(c.AddressableDevices())-1]
	ms, err := d.Memories()
	require.NoError(t, err)
	for _, hostMemory := range []bool{true, false} {
		for _, m := range append([]*pjrt.Memory{nil}, ms...) {
			kind := "nil"
			if m != nil {
				kind = m.Kind()
			}
			for _, mc := range memoryCases() {
				t.Run(fmt.Sprintf("hostMemory=%v/%s/%s", hostMemory, kind, mc.name), func(t *testing.T) {
					pjrt.SetHostMemory(c, hostMemory)
					defer pjrt.SetHostMemory(c, true)
					live, direct := pjrt.LiveBuffers(), pjrt.DirectReads()
					b := mc.put(t, c, d, m)
					assert.Same(t, d, b.Device())
					got, err := b.Memory()
					require.NoError(t, err)
					want := m
					if want == nil {
						want, err = d.DefaultMemory()
						require.NoError(t, err)
					}
					assert.Same(t, want, got, "the buffer is in %s, not %s", want, got)
					mc.check(t, c, b)
					if hostMemory && inHostMemory(c, want) {
						// Every read of a buffer in host memory was a direct one: on the CPU
						// platform whatever the kind, on a GPU in a host kind.
						assert.Equal(t, direct+3, pjrt.DirectReads())
					} else {
						assert.Equal(t, direct, pjrt.DirectReads())
					}
					require.NoError(t, b.Close())
					assert.Equal(t, live, pjrt.LiveBuffers())
				})
			}
		}
	}
}

// TestMemoryCopies copies float32 and int8 arrays between every ordered pair of memory kinds of
// a device (a kind to itself included), and to each memory of another device: the copy is in
// the memory asked for, on its device, with the same values, and the source is untouched.
func TestMemoryCopies(t *testing.T) {
	c := pjrttest.Client(t)
	devs := c.AddressableDevices()
	d := devs[0]
	ms, err := d.Memories()
	require.NoError(t, err)
	cases := memoryCases()
	for _, from := range ms {
		for _, to := range ms {
			for _, mc := range []memoryCase{cases[0], cases[1], cases[3]} {
				t.Run(fmt.Sprintf("%s->%s/%s", from.Kind(), to.Kind(), mc.name), func(t *testing.T) {
					src := mc.put(t, c, d, from)
					defer src.Close()
					dst, err := src.CopyToMemory(to)
					require.NoError(t, err)
					defer dst.Close()
					assert.Same(t, d, dst.Device())
					got, err := dst.Memory()
					require.NoError(t, err)
					assert.Same(t, to, got)
					assert.Equal(t, mc.dtype, dst.DType())
					assert.Equal(t, mc.dims, dst.Dims())
					mc.check(t, c, dst)
					// The source is still there, unchanged, in its memory.
					assert.False(t, src.IsClosed())
					srcMem, err := src.Memory()
					require.NoError(t, err)
					assert.Same(t, from, srcMem)
					mc.check(t, c, src)
					// The copy lives on after its source is closed.
					require.NoError(t, src.Close())
					mc.check(t, c, dst)
				})
			}
		}
	}
	t.Run("other device", func(t *testing.T) {
		if len(devs) < 2 {
			t.Skipf("pjrttest: needs 2 devices; the %s client has %d", c.Platform(), len(devs))
		}
		other := devs[1]
		for _, from := range ms {
			for _, to := range ms {
				dstMem := requireMemory(t, other, to.Kind())
				src := cases[0].put(t, c, d, from)
				dst, err := src.CopyToMemory(dstMem)
				require.NoError(t, err, "%s -> %s", from, dstMem)
				assert.Same(t, other, dst.Device())
				got, err := dst.Memory()
				require.NoError(t, err)
				assert.Same(t, dstMem, got)
				cases[0].check(t, c, dst)
				cases[0].check(t, c, src)
				require.NoError(t, dst.Close())
				require.NoError(t, src.Close())
			}
		}
	})
}

// TestMemoryErrors: an unknown kind, a memory the device does not address, a memory of another
// client, closed and nil buffers and memories are refused, typed and named.
func TestMemoryErrors(t *testing.T) {
	c := pjrttest.Client(t)
	devs := c.AddressableDevices()
	d := devs[0]
	ms, err := d.Memories()
	require.NoError(t, err)

	t.Run("unknown kind", func(t *testing.T) {
		_, err := d.Memory("hbm")
		require.ErrorIs(t, err, pjrt.ErrMemoryKind)
		assert.ErrorContains(t, err, `no such memory kind "hbm"`)
		assert.ErrorContains(t, err, d.String())
		for _, m := range ms {
			assert.ErrorContains(t, err, fmt.Sprintf("%q", m.Kind()))
		}
		if c.Platform() == "cpu" {
			assert.EqualError(t, err, fmt.Sprintf(`pjrt: memory: no such memory kind "hbm" on %s (it has "device", "pinned_host", "unpinned_host")`, d))
		}
		_, err = d.Memory("")
		require.ErrorIs(t, err, pjrt.ErrMemoryKind)
	})

	raw, _, err := pjrt.HostBytes([]float32{1, 2, 3})
	require.NoError(t, err)
	t.Run("memory of another device", func(t *testing.T) {
		if len(devs) < 2 {
			t.Skipf("pjrttest: needs 2 devices; the %s client has %d", c.Platform(), len(devs))
		}
		m := requireMemory(t, devs[1], "pinned_host")
		live := pjrt.LiveBuffers()
		_, err := c.BuffersFromHost([]pjrt.HostTransfer{
			{Device: d, DType: dtypes.Float32, Dims: []int{3}, Data: raw},
			{Device: d, DType: dtypes.Float32, Dims: []int{3}, Data: raw, Memory: m},
		})
		require.ErrorIs(t, err, pjrt.ErrDevice)
		assert.ErrorContains(t, err, "transfer 1")
		assert.ErrorContains(t, err, fmt.Sprintf("memory %s is not addressable by %s (it is addressed by %s)", m, d, devs[1]))
		assert.Equal(t, live, pjrt.LiveBuffers(), "no buffer is left")
	})

	t.Run("memory of another client", func(t *testing.T) {
		c2, err := pjrttest.Open(min(2, len(devs))) // a client of its own: 2 devices on 8, 1 on 1
		require.NoError(t, err)
		defer c2.Close()
		m2 := requireMemory(t, c2.AddressableDevices()[0], "device")
		_, err = c.BuffersFromHost([]pjrt.HostTransfer{{Device: d, DType: dtypes.Float32, Dims: []int{3}, Data: raw, Memory: m2}})
		require.ErrorIs(t, err, pjrt.ErrDevice)
		assert.ErrorContains(t, err, "belongs to another client")
		b, err := c.BufferFromHost(d, []float32{1, 2, 3}, []int{3})
		require.NoError(t, err)
		defer b.Close()
		_, err = b.CopyToMemory(m2)
		require.ErrorIs(t, err, pjrt.ErrDevice)
		assert.ErrorContains(t, err, "belongs to another client")
		// A closed client's memories stay readable; its buffers do not.
		b2, err := c2.BufferFromHost(c2.AddressableDevices()[0], []float32{1}, []int{1})
		require.NoError(t, err)
		require.NoError(t, c2.Close())
		again, err := c2.AddressableDevices()[0].Memory("device")
		require.NoError(t, err)
		assert.Same(t, m2, again)
		_, err = b2.Memory()
		require.ErrorIs(t, err, pjrt.ErrClosed)
	})

	t.Run("closed buffer", func(t *testing.T) {
		b, err := c.BufferFromHost(d, []float32{1, 2, 3}, []int{3})
		require.NoError(t, err)
		require.NoError(t, b.Close())
		_, err = b.Memory()
		require.ErrorIs(t, err, pjrt.ErrClosed)
		_, err = b.CopyToMemory(requireMemory(t, d, "pinned_host"))
		require.ErrorIs(t, err, pjrt.ErrClosed)
	})

	t.Run("nil", func(t *testing.T) {
		b, err := c.BufferFromHost(d, []float32{1, 2, 3}, []int{3})
		require.NoError(t, err)
		defer b.Close()
		_, err = b.CopyToMemory(nil)
		require.ErrorIs(t, err, pjrt.ErrDevice)
		assert.ErrorContains(t, err, "nil memory")
		var nb *pjrt.Buffer
		_, err = nb.Memory()
		require.ErrorIs(t, err, pjrt.ErrHostData)
		_, err = nb.CopyToMemory(ms[0])
		require.ErrorIs(t, err, pjrt.ErrHostData)
		var nd *pjrt.Device
		_, err = nd.Memories()
		require.ErrorIs(t, err, pjrt.ErrDevice)
		_, err = nd.DefaultMemory()
		require.ErrorIs(t, err, pjrt.ErrDevice)
		_, err = nd.Memory("device")
		require.ErrorIs(t, err, pjrt.ErrDevice)
		var ne *pjrt.Executable
		_, err = ne.OutputMemoryKinds()
		require.ErrorIs(t, err, pjrt.ErrExecute)
	})
}

// memoryKindsModule returns x * 2 for an f32[8,2] argument in memory kind in, its result in
// memory kind out, on one device.
func memoryKindsModule(in, out string) string {
	return fmt.Sprintf(`module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%%arg0: tensor<8x2xf32> {mhlo.memory_kind = %q}) -> (tensor<8x2xf32> {mhlo.memory_kind = %q}) {
    %%c = stablehlo.constant dense<2.0> : tensor<8x2xf32>
    %%0 = stablehlo.multiply %%arg0, %%c : tensor<8x2xf32>
    return %%0 : tensor<8x2xf32>
  }
}`, in, out)
}

// TestMemoryKindsOfExecutable: an executable says which memory kinds its results are made in
// and its parameters are expected in, where the plugin can (API 0.81's has neither: its
// PJRT_Executable_OutputMemoryKinds answers Unimplemented, and it lacks
// PJRT_Executable_ParameterMemoryKinds); an argument in the memory kind the program declares
// runs and gives exact results, and so, on the CPU platform only, does one in another kind.
func TestMemoryKindsOfExecutable(t *testing.T) {
	c := pjrttest.Client(t)
	d := c.AddressableDevices()[0]
	exe, err := c.Compile(memoryKindsModule("device", "device"), pjrt.CompileOptions{DeviceAssignment: []int{d.ID()}})
	require.NoError(t, err)
	defer exe.Close()
	kinds, err := exe.OutputMemoryKinds()
	if _, minor := c.Plugin().APIVersion(); minor == 81 {
		// The slot is there, but XLA of API 0.81 says "GetOutputMemoryKinds is not supported."
		require.ErrorIs(t, err, pjrt.ErrUnimplemented)
		var perr *pjrt.Error
		require.ErrorAs(t, err, &perr)
		assert.Equal(t, pjrt.Unimplemented, perr.Code)
		assert.Nil(t, kinds)
	} else {
		require.NoError(t, err)
		assert.Equal(t, []string{"device"}, kinds)
	}
	in, err := exe.InputMemoryKinds()
	if c.Plugin().Has("PJRT_Executable_ParameterMemoryKinds") {
		require.NoError(t, err)
		assert.Equal(t, []string{"device"}, in)
	} else {
		require.ErrorIs(t, err, pjrt.ErrUnimplemented)
		assert.ErrorContains(t, err, "PJRT_Executable_ParameterMemoryKinds")
		assert.Nil(t, in)
	}

	x := make([]float32, 16)
	want := make([]float32, 16)
	for i := range x {
		x[i] = float32(i) - 7.5
		want[i] = 2 * x[i]
	}
	ms, err := d.Memories()
	require.NoError(t, err)
	for _, kind := range memoryKindsOf(ms) {
		t.Run("argument in "+kind, func(t *testing.T) {
			raw, _, err := pjrt.HostBytes(x)
			require.NoError(t, err)
			bs, err := c.BuffersFromHost([]pjrt.HostTransfer{{Device: d, DType: dtypes.Float32, Dims: []int{8, 2}, Data: raw, Memory: requireMemory(t, d, kind)}})
			require.NoError(t, err)
			defer bs[0].Close()
			live := pjrt.LiveBuffers()
			out, err := exe.Execute([][]*pjrt.Buffer{{bs[0]}})
			if kind != "device" && c.Platform() != "cpu" {
				// The program takes its argument in device memory. On the CPU platform every
				// memory is host memory and any kind runs; XLA's GPU plugin refuses another
				// kind ("E0102: RuntimeProgramInputMismatch: Executable(jit_f) got a parameter
				// buffer for parameter 0 in an unexpected memory space 'pinned_host'"): a
				// program that takes a host kind declares it (mhlo.memory_kind), as the one of
				// "result in pinned_host" does.
				require.ErrorIs(t, err, pjrt.ErrExecute)
				var perr *pjrt.Error
				require.ErrorAs(t, err, &perr)
				assert.Equal(t, pjrt.InvalidArgument, perr.Code)
				assert.ErrorContains(t, err, "'"+kind+"'")
				assert.Nil(t, out)
				assert.Equal(t, live, pjrt.LiveBuffers(), "no result is left")
				return
			}
			require.NoError(t, err)
			defer out[0][0].Close()
			got, err := out[0][0].ToHost()
			require.NoError(t, err)
			assert.Equal(t, want, got)
			m, err := out[0][0].Memory()
			require.NoError(t, err)
			assert.Equal(t, "device", m.Kind())
		})
	}

	t.Run("result in pinned_host", func(t *testing.T) {
		// API 0.115 makes the result where mhlo.memory_kind says; API 0.81 ignores the attribute
		// and makes it in device memory.
		ph, err := c.Compile(memoryKindsModule("pinned_host", "pinned_host"), pjrt.CompileOptions{DeviceAssignment: []int{d.ID()}})
		require.NoError(t, err)
		defer ph.Close()
		wantKind := "pinned_host"
		if _, minor := c.Plugin().APIVersion(); minor == 81 {
			wantKind = "device"
			_, err := ph.OutputMemoryKinds()
			require.ErrorIs(t, err, pjrt.ErrUnimplemented)
		} else {
			kinds, err := ph.OutputMemoryKinds()
			require.NoError(t, err)
			assert.Equal(t, []string{"pinned_host"}, kinds)
			in, err := ph.InputMemoryKinds()
			require.NoError(t, err)
			assert.Equal(t, []string{"pinned_host"}, in)
		}
		raw, _, err := pjrt.HostBytes(x)
		require.NoError(t, err)
		bs, err := c.BuffersFromHost([]pjrt.HostTransfer{{Device: d, DType: dtypes.Float32, Dims: []int{8, 2}, Data: raw, Memory: requireMemory(t, d, "pinned_host")}})
		require.NoError(t, err)
		defer bs[0].Close()
		out, err := ph.Execute([][]*pjrt.Buffer{{bs[0]}})
		require.NoError(t, err)
		defer out[0][0].Close()
		got, err := out[0][0].ToHost()
		require.NoError(t, err)
		assert.Equal(t, want, got)
		m, err := out[0][0].Memory()
		require.NoError(t, err)
		assert.Equal(t, wantKind, m.Kind())
	})

	require.NoError(t, exe.Close())
	_, err = exe.OutputMemoryKinds()
	require.ErrorIs(t, err, pjrt.ErrClosed)
	_, err = exe.InputMemoryKinds()
	if c.Plugin().Has("PJRT_Executable_ParameterMemoryKinds") {
		require.ErrorIs(t, err, pjrt.ErrClosed)
	} else {
		require.ErrorIs(t, err, pjrt.ErrUnimplemented)
	}
}
