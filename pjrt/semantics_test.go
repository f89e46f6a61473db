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
