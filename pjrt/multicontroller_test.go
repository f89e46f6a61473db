package pjrt_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// globalSum is a program over 4 partitions: x sharded over "x", its sum replicated (an
// all-reduce across every partition, so across processes when the devices are).
const globalSum = `module @m attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}) {
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    return %r : tensor<f32>
  }
}`

// TestMultiControllerCPURefused compiles, in each process of a 2-process CPU job, one program
// over the job's 4 devices (2 per process): the global device assignment reaches the plugin,
// which refuses it; the error is typed and names the devices of the other process.
func TestMultiControllerCPURefused(t *testing.T) {
	pjrttest.CacheDir()
	plugin, err := pjrt.MultiProcessCPUPlugin()
	require.NoError(t, err)
	clients, errs := openJob(t, plugin, 2, 2)
	for p, c := range clients {
		require.NoError(t, errs[p], "process %d", p)
		var ids []int
		for _, d := range c.Devices() {
			ids = append(ids, d.ID())
		}
		require.Equal(t, []int{0, 1, 2048, 2049}, ids)
		remote := []int{2048, 2049}
		if p == 1 {
			remote = []int{0, 1}
		}
		_, err := c.Compile(globalSum, pjrt.CompileOptions{DeviceAssignment: ids})
		require.ErrorIs(t, err, pjrt.ErrMultiController, "process %d", p)
		assert.Equal(t, fmt.Sprintf("pjrt: compile: multi-controller compile refused by the plugin: the plugin pjrt_c_api_cpu_plugin.so "+
			"cannot compile for devices of other processes: devices %v of the device assignment are not addressable from process %d: "+
			"pjrt: compile: Multiprocess computations aren't implemented on the CPU backend. (InvalidArgument)", remote, p), err.Error())
		var na *pjrt.NotAddressableError
		require.True(t, errors.As(err, &na))
		assert.Equal(t, p, na.Process)
		assert.Equal(t, remote, na.Devices)
		var perr *pjrt.Error
		require.True(t, errors.As(err, &perr))
		assert.Equal(t, pjrt.Code(3), perr.Code) // INVALID_ARGUMENT

		// Interleaved, the same refusal: the assignment's order is kept.
		_, err = c.Compile(globalSum, pjrt.CompileOptions{DeviceAssignment: []int{0, 2048, 1, 2049}})
		require.ErrorIs(t, err, pjrt.ErrMultiController)
		require.True(t, errors.As(err, &na))
		assert.Equal(t, remote, na.Devices)

		// Only other processes' devices: nothing to run here, refused before the plugin.
		_, err = c.Compile(globalSum, pjrt.CompileOptions{DeviceAssignment: []int{remote[0]}, NumPartitions: 1})
		require.ErrorIs(t, err, pjrt.ErrDevice)
		assert.Equal(t, fmt.Sprintf("pjrt: compile: invalid device: no device of the device assignment [%d] is addressable from process %d",
			remote[0], p), err.Error())
		assert.False(t, errors.Is(err, pjrt.ErrMultiController))
	}
	assert.Equal(t, int64(0), pjrt.LiveExecutables())
}
