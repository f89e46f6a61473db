package pjrt

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGPUEnvOptions reads JAX's GPU memory variables into create options as jaxlib's
// generate_pjrt_gpu_plugin_options does, and refuses what it refuses, naming the variable.
func TestGPUEnvOptions(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want map[string]any
		err  string
	}{
		{env: nil, want: map[string]any{}},
		{env: map[string]string{EnvGPUPreallocate: "false"}, want: map[string]any{"preallocate": false}},
		{env: map[string]string{EnvGPUPreallocate: "False"}, want: map[string]any{"preallocate": false}},
		{env: map[string]string{EnvGPUPreallocate: "0"}, want: map[string]any{"preallocate": false}},
		{env: map[string]string{EnvGPUPreallocate: "true"}, want: map[string]any{"preallocate": true}},
		{env: map[string]string{EnvGPUPreallocate: "no"}, want: map[string]any{"preallocate": true}}, // as JAX: only the three spellings say no
		{env: map[string]string{EnvGPUMemFraction: ".25"}, want: map[string]any{"memory_fraction": float32(0.25)}},
		{env: map[string]string{EnvGPUMemFractionOld: "1"}, want: map[string]any{"memory_fraction": float32(1)}},
		{env: map[string]string{EnvGPUAllocator: "Platform"}, want: map[string]any{"allocator": "platform"}},
		{env: map[string]string{EnvGPUCollectiveMemMB: "3"}, want: map[string]any{"collective_memory_size": int64(3 << 20)}},
		{env: map[string]string{EnvGPUPreallocate: "false", EnvGPUMemFraction: "0.5", EnvGPUAllocator: "bfc"},
			want: map[string]any{"preallocate": false, "memory_fraction": float32(0.5), "allocator": "bfc"}},
		{env: map[string]string{EnvGPUMemFraction: "0.5", EnvGPUMemFractionOld: "0.5"}, err: "XLA_CLIENT_MEM_FRACTION and XLA_PYTHON_CLIENT_MEM_FRACTION are both set"},
		{env: map[string]string{EnvGPUMemFraction: "0"}, err: `XLA_CLIENT_MEM_FRACTION="0": want a fraction in (0, 1]`},
		{env: map[string]string{EnvGPUMemFractionOld: "1.5"}, err: `XLA_PYTHON_CLIENT_MEM_FRACTION="1.5": want a fraction in (0, 1]`},
		{env: map[string]string{EnvGPUMemFraction: "half"}, err: `XLA_CLIENT_MEM_FRACTION="half"`},
		{env: map[string]string{EnvGPUMemFraction: "NaN"}, err: `XLA_CLIENT_MEM_FRACTION="NaN"`},
		{env: map[string]string{EnvGPUAllocator: "malloc"}, err: `XLA_PYTHON_CLIENT_ALLOCATOR="malloc": want one of default, platform, bfc, cuda_async, vmm, address`},
		{env: map[string]string{EnvGPUCollectiveMemMB: "-1"}, err: `XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB="-1"`},
		{env: map[string]string{EnvGPUCollectiveMemMB: "1e3"}, err: `XLA_PYTHON_CLIENT_COLLECTIVE_MEM_SIZE_MB="1e3"`},
	} {
		got, err := gpuEnvOptions(func(k string) string { return c.env[k] })
		if c.err != "" {
			require.Error(t, err, "%v", c.env)
			assert.True(t, errors.Is(err, ErrCreateOption), "%v", err)
			assert.Contains(t, err.Error(), c.err)
			continue
		}
		require.NoError(t, err, "%v", c.env)
		assert.Equal(t, c.want, got, "%v", c.env)
	}
}

// TestWithGPUEnv: an option given by name wins over its variable; the others are added.
func TestWithGPUEnv(t *testing.T) {
	t.Setenv(EnvGPUPreallocate, "false")
	t.Setenv(EnvGPUAllocator, "platform")
	got, err := withGPUEnv(map[string]any{"preallocate": true, "visible_devices": []int64{0}})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"preallocate": true, "allocator": "platform", "visible_devices": []int64{0}}, got)
	t.Setenv(EnvGPUAllocator, "x")
	_, err = withGPUEnv(nil)
	assert.ErrorIs(t, err, ErrCreateOption)
}
