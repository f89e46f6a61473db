package pjrt_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// cudaPluginPath is where `make setup` puts the CUDA plugin of jax-cuda12-pjrt==0.12.0.1, the
// newest CUDA plugin on PyPI (PJRT C API 0.116).
func cudaPluginPath(t *testing.T) string {
	dir, err := pjrttest.CacheDir()
	require.NoError(t, err)
	p, err := plugins.Lookup("cuda12")
	require.NoError(t, err)
	path := p.Path(dir)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the CUDA plugin is not installed at %s (%v): run `make setup` or `xlamesh install-plugin -plugin cuda12`", path, err)
	}
	return path
}

// TestCUDAPluginWithoutGPU loads today's newest CUDA plugin on this GPU-less machine: it loads,
// reports its version and attributes, and fails client creation with a typed error.
func TestCUDAPluginWithoutGPU(t *testing.T) {
	path := cudaPluginPath(t)
	p, err := pjrt.LoadPlugin(path)
	require.NoError(t, err)
	major, minor := p.APIVersion()
	assert.Equal(t, 0, major)
	assert.GreaterOrEqual(t, minor, 116)
	assert.Equal(t, 1144, p.APIStructSize())
	assert.Contains(t, p.Attributes(), "xla_version")
	assert.True(t, p.Has("PJRT_Executable_Serialize"))
	t.Logf("%s: attributes %v", p, p.Attributes())

	c, err := pjrt.Open(pjrt.WithPlugin(path))
	if os.Getenv("XLAMESH_TEST_PLATFORM") == "gpu" { // make test-gpu, on a machine with a GPU
		require.NoError(t, err)
		t.Logf("%s: %v", c, c.Devices())
		require.NoError(t, c.Close())
		return
	}
	require.ErrorIs(t, err, pjrt.ErrCreateClient)
	var perr *pjrt.Error
	require.ErrorAs(t, err, &perr)
	assert.NotEqual(t, pjrt.Code(0), perr.Code)
	t.Logf("open without a GPU: %v", err)

	// The GPU plugin validates option names: a CPU device count is refused, typed.
	_, err = pjrt.Open(pjrt.WithPlugin(path), pjrt.WithCPUDeviceCount(2))
	assert.ErrorIs(t, err, pjrt.ErrCreateClient)
}

// TestCUDAPluginGPUMemoryEnv opens the CUDA plugin with JAX's GPU memory variables set. The plugin
// checks option names and types before it looks for a GPU: here the client still fails only for
// want of a GPU, so it took every option the variables give; a value JAX would refuse is refused
// before the plugin is asked, naming the variable. The CPU plugins never see the variables.
func TestCUDAPluginGPUMemoryEnv(t *testing.T) {
	path := cudaPluginPath(t)
	t.Setenv(pjrt.EnvGPUPreallocate, "false")
	t.Setenv(pjrt.EnvGPUMemFraction, "0.5")
	t.Setenv(pjrt.EnvGPUAllocator, "platform")
	t.Setenv(pjrt.EnvGPUCollectiveMemMB, "16")
	c, err := pjrt.Open(pjrt.WithPlugin(path))
	if os.Getenv("XLAMESH_TEST_PLATFORM") == "gpu" { // make test-gpu: the client opens with them
		require.NoError(t, err)
		require.NoError(t, c.Close())
		return
	}
	var perr *pjrt.Error
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, pjrt.FailedPrecondition, perr.Code, "%v", err)
	assert.Contains(t, perr.Msg, "No visible GPU devices")

	// The plugin does check: an option of the wrong type is refused by name.
	_, err = pjrt.Open(pjrt.WithPlugin(path), pjrt.WithCreateOption("preallocate", 1))
	require.ErrorAs(t, err, &perr)
	assert.Equal(t, pjrt.InvalidArgument, perr.Code, "%v", err)
	assert.Contains(t, perr.Msg, "preallocate")

	t.Setenv(pjrt.EnvGPUAllocator, "malloc")
	_, err = pjrt.Open(pjrt.WithPlugin(path))
	assert.ErrorIs(t, err, pjrt.ErrCreateOption)
	assert.ErrorContains(t, err, pjrt.EnvGPUAllocator)

	assert.NotEmpty(t, pjrttest.Client(t).Devices()) // the CPU plugin: the variables play no part
}
