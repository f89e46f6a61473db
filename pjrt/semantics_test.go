package pjrt_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// nanMaxModule reduces [NaN, 4, -1, 2] with maximum and also takes an elementwise maximum
// with 4: JAX (jnp.max, lax.max) propagates NaN in both.
const nanMaxModule = `module @nan_max {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
    %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %r = stablehlo.reduce(%arg0 init: %init) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %c = stablehlo.constant dense<4.0> : tensor<4xf32>
    %m = stablehlo.maximum %arg0, %c : tensor<4xf32>
    return %r, %m : tensor<f32>, tensor<4xf32>
  }
}`

// TestMaxPropagatesNaN proves that programs compile with JAX's NaN semantics for max on
// every plugin, including the pinned xla-cpu-pjrt 0.0.1 whose default is fast min/max.
func TestMaxPropagatesNaN(t *testing.T) {
	c := pjrttest.Client(t)
	exe, err := c.Compile(nanMaxModule, pjrt.CompileOptions{DeviceAssignment: firstIDs(c, 1)})
	require.NoError(t, err)
	defer exe.Close()
	in, err := c.BufferFromHost(exe.Devices()[0], []float32{float32(math.NaN()), 4, -1, 2}, []int{4})
	require.NoError(t, err)
	defer in.Close()
	outs, err := exe.Execute([][]*pjrt.Buffer{{in}})
	require.NoError(t, err)
	r, err := outs[0][0].ToHost()
	require.NoError(t, err)
	m, err := outs[0][1].ToHost()
	require.NoError(t, err)
	for _, b := range outs[0] {
		require.NoError(t, b.Close())
	}
	require.True(t, math.IsNaN(float64(r.([]float32)[0])), "reduce max = %v, want NaN", r)
	got := m.([]float32)
	require.True(t, math.IsNaN(float64(got[0])), "max(NaN, 4) = %v, want NaN", got[0])
	require.Equal(t, []float32{4, 4, 4}, got[1:])
}

// TestCompilerOptions: a compile's own XLA options reach XLA's option parser: a known option
// compiles, XLA refuses a name it does not know and a value of another type than the option's,
// and xlamesh refuses a Go type the options cannot carry before the plugin sees it. (They are
// part of the compile cache's key, which covers the compile options' bytes.)
func TestCompilerOptions(t *testing.T) {
	c := pjrttest.Client(t)
	compile := func(opts map[string]any) error {
		exe, err := c.Compile(nanMaxModule, pjrt.CompileOptions{DeviceAssignment: firstIDs(c, 1), CompilerOptions: opts})
		if err == nil {
			require.NoError(t, exe.Close())
		}
		return err
	}
	require.NoError(t, compile(map[string]any{"xla_cpu_enable_fast_min_max": false, "xla_gpu_autotune_level": int64(0)}))
	err := compile(map[string]any{"xla_no_such_option_here": true})
	require.ErrorIs(t, err, pjrt.ErrCompile)
	require.ErrorContains(t, err, "xla_no_such_option_here")
	err = compile(map[string]any{"xla_gpu_autotune_level": "high"})
	require.ErrorIs(t, err, pjrt.ErrCompile)
	require.ErrorContains(t, err, "xla_gpu_autotune_level")
	err = compile(map[string]any{"xla_gpu_autotune_level": float32(1)})
	require.ErrorIs(t, err, pjrt.ErrCompile)
	require.ErrorContains(t, err, "compiler option xla_gpu_autotune_level=1 is a float32; want a string, bool, int, int64 or float64")
}
