package pjrt_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// globalSum2 is globalSum over 2 partitions: one per node of a 2-node job.
const globalSum2 = `module @m attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}) {
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %r = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
    return %r : tensor<f32>
  }
}`

// TestGPUOnlyMockTwoNodeCompile lets one GPU stand in for node 0 of a 2-node job, with the CUDA
// plugin's mock options as JAX's multi-node GPU tests set them (jax_mock_gpu_topology "1x2x1":
// enable_mock_nccl, num_nodes 2, mock_gpu_topology): the client lists both nodes' GPUs and
// addresses one, and a program over both compiles with the global device assignment and runs on
// the addressable one. No job is joined: JAX's mock GPU client is made without a distributed
// client too (unverified here: no GPU).
//
// GPU only: the CPU passes (make unit) exclude it by its name with -skip GPUOnly; run it with
// XLAMESH_TEST_PLATFORM=gpu (make test-gpu, the GPU bundle).
func TestGPUOnlyMockTwoNodeCompile(t *testing.T) {
	if platform, err := pjrttest.Platform(); err != nil || platform != "gpu" {
		t.Fatalf("a GPU-only test: run it with %s=gpu and %s set to the CUDA plugin; CPU runs exclude it by name (-skip GPUOnly)",
			pjrttest.EnvPlatform, pjrt.EnvPlugin)
	}
	path := os.Getenv(pjrt.EnvPlugin)
	if path == "" {
		path = cudaPluginPath(t)
	}
	c, err := pjrt.Open(pjrt.WithPlugin(path),
		pjrt.WithCreateOption("enable_mock_nccl", true),
		pjrt.WithCreateOption("num_nodes", int64(2)),
		pjrt.WithCreateOption("node_id", int64(0)),
		pjrt.WithCreateOption("mock_gpu_topology", "1x2x1"),
		pjrt.WithCreateOption("visible_devices", []int64{0})) // one GPU stands in, however many the host has
	require.NoError(t, err)
	defer c.Close()
	all, local := c.Devices(), c.AddressableDevices()
	require.Len(t, all, 2, "devices %v", all)
	require.Len(t, local, 1, "addressable %v", local)
	assert.Equal(t, 0, c.ProcessIndex())
	var ids []int
	for _, d := range all {
		ids = append(ids, d.ID())
	}
	e, err := c.Compile(globalSum2, pjrt.CompileOptions{DeviceAssignment: ids})
	require.NoError(t, err)
	defer e.Close()
	assert.Equal(t, 2, e.NumPartitions())
	assert.Equal(t, ids, e.DeviceAssignment())
	require.Len(t, e.Devices(), 1)
	assert.Same(t, local[0], e.Devices()[0])
	require.Len(t, e.OutputShapes(), 1)
	assert.Equal(t, 0, e.OutputShapes()[0].Rank())
	t.Logf("mock 2-node client: devices %v, addressable %v; executable on %v of assignment %v", all, local, e.Devices(), e.DeviceAssignment())
}
