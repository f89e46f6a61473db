package pjrt_test

import (
	"errors"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestKeyValueBridge drives the C callbacks a GPU plugin calls during client creation.
func TestKeyValueBridge(t *testing.T) {
	store := &pjrttest.MemoryStore{}
	got, code, err := pjrt.KVBridgeExchange(store, "gpu:local_topology/0", "topology bytes", "gpu:absent")
	require.NoError(t, err)
	assert.Equal(t, "topology bytes", got)
	assert.Equal(t, pjrt.NotFound, code, "a missing key is PJRT's NotFound")
	v, err := store.TryGet("gpu:local_topology/0")
	require.NoError(t, err)
	assert.Equal(t, []byte("topology bytes"), v)
}

// TestKeyValueStoreCPUOnly: the CPU plugin takes a store and never calls it (it has no
// multi-process support). The client is one of its own, beside the shared one.
func TestKeyValueStoreCPUOnly(t *testing.T) {
	store := &pjrttest.MemoryStore{}
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(2), pjrt.WithKeyValueStore(store))
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

// TestCreateOptions sends a create option of every PJRT type. The 0.81 CPU plugin ignores names
// it does not use, so the client opens; newer plugins (the 0.115 CPU plugin, the GPU plugins)
// validate names and refuse the first unknown one, typed. A type PJRT cannot carry is refused
// before the plugin sees it.
func TestCreateOptions(t *testing.T) {
	_, minor := pjrttest.Client(t).Plugin().APIVersion()
	c, err := pjrt.Open(pjrt.WithCPUDeviceCount(2),
		pjrt.WithCreateOption("xlamesh_test_string", "s"),
		pjrt.WithCreateOption("xlamesh_test_int", 7),
		pjrt.WithCreateOption("xlamesh_test_int64", int64(-7)),
		pjrt.WithCreateOption("xlamesh_test_ints", []int{1, 2, 3}),
		pjrt.WithCreateOption("xlamesh_test_int64s", []int64{}),
		pjrt.WithCreateOption("xlamesh_test_float32", float32(0.5)),
		pjrt.WithCreateOption("xlamesh_test_float64", 0.25),
		pjrt.WithCreateOption("xlamesh_test_bool", true))
	if minor == 81 {
		require.NoError(t, err)
		assert.Len(t, c.Devices(), 2)
		require.NoError(t, c.Close())
	} else {
		require.ErrorIs(t, err, pjrt.ErrCreateClient)
		assert.ErrorContains(t, err, "xlamesh_test_") // options are sent in name order
		var perr *pjrt.Error
		require.ErrorAs(t, err, &perr)
		assert.Equal(t, pjrt.InvalidArgument, perr.Code)
	}

	_, err = pjrt.Open(pjrt.WithCreateOption("bad", struct{}{}))
	assert.ErrorIs(t, err, pjrt.ErrCreateOption)
	assert.ErrorContains(t, err, `"bad"`)
	_, err = pjrt.Open(pjrt.WithCreateOption("huge", 1e300))
	assert.ErrorIs(t, err, pjrt.ErrCreateOption)
	_, err = pjrt.Open(pjrt.WithCPUDeviceCount(0))
	assert.ErrorIs(t, err, pjrt.ErrDevice)
}

func TestDeviceAttributesAndMemoryStats(t *testing.T) {
	c := pjrttest.Client(t)
	d := c.AddressableDevices()[0]
	assert.Equal(t, len(d.Attributes()), d.NumAttributes())
	_, err := d.MemoryStats()
	if err != nil {
		// The CPU plugins have no allocator statistics: a typed "not implemented".
		assert.ErrorIs(t, err, pjrt.ErrUnimplemented)
	}
}

// TestErrorKinds shows each kind of plugin-side failure the binding maps, each with PJRT's code.
func TestErrorKinds(t *testing.T) {
	c := pjrttest.Client(t)
	code := func(err error) pjrt.Code {
		var perr *pjrt.Error
		require.True(t, errors.As(err, &perr), "%v is not a *pjrt.Error", err)
		return perr.Code
	}
	// Compilation: XLA rejects the program.
	_, err := c.Compile("module { func.func @main() -> tensor<f32> { %0 = stablehlo.bogus : tensor<f32> return %0 : tensor<f32> } }", pjrt.CompileOptions{})
	require.ErrorIs(t, err, pjrt.ErrCompile)
	assert.NotEqual(t, pjrt.Code(0), code(err))
	assert.NotErrorIs(t, err, pjrt.ErrExecute)

	// Loading: bytes that are no executable (a plugin failure outside compilation).
	_, err = c.LoadExecutable([]byte{1, 2, 3}, pjrt.CompileOptions{DeviceAssignment: firstIDs(c, 1)})
	require.ErrorIs(t, err, pjrt.ErrCompile)
	assert.NotEqual(t, pjrt.Code(0), code(err))

	// Host data the binding checks itself: a typed error, not an *Error from the plugin.
	_, err = c.BufferFromBytes(c.AddressableDevices()[0], dtypes.Float32, []int{2}, []byte{1})
	require.ErrorIs(t, err, pjrt.ErrHostData)
	_, err = c.BufferFromBytes(c.AddressableDevices()[0], dtypes.S4, []int{1}, []byte{0x10})
	require.ErrorIs(t, err, pjrt.ErrHostData)
	_, err = c.BufferFromBytes(c.AddressableDevices()[0], dtypes.TOKEN, []int{1}, make([]byte, 1))
	require.ErrorIs(t, err, pjrt.ErrHostData)

	// Execution: arguments that do not fit, caught before the plugin; closed executables.
	exe, s := compileSeed(t, c)
	_, err = exe.Execute(nil)
	require.ErrorIs(t, err, pjrt.ErrExecute)
	require.NoError(t, exe.Close())
	_, err = exe.Execute(make([][]*pjrt.Buffer, s.parts())) // an empty list per device
	require.ErrorIs(t, err, pjrt.ErrClosed)

	// Client creation: the plugin refuses (TestCUDAPluginWithoutGPU: ErrCreateClient).
	for kind, want := range map[error]string{
		pjrt.ErrCompile: "compile failed", pjrt.ErrExecute: "execute failed", pjrt.ErrHostData: "invalid host data",
		pjrt.ErrCreateClient: "cannot create client", pjrt.ErrUnimplemented: "not implemented by the plugin",
	} {
		e := &pjrt.Error{Op: "op", Code: pjrt.Internal, Msg: "m", Kind: kind}
		assert.ErrorIs(t, e, kind)
		assert.Equal(t, "pjrt: op: m (Internal)", e.Error())
		assert.Equal(t, want, kind.Error())
	}
}
