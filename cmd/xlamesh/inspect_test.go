package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func inspectJSON(t *testing.T, args ...string) inspectReport {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, inspect(&out, io.Discard, append(args, "-format", "json")))
	var r inspectReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &r), out.String())
	return r
}

func TestInspectMatMul(t *testing.T) {
	// The model-parallel matmul: the contracted dimension split over y of a 2x4 mesh, so each
	// device holds a partial f32[32,64] product that an all-reduce sums in groups of 4.
	r := inspectJSON(t, "-n", "64", "-strategy", "contract y")
	assert.Equal(t, "matmul f32[64,64] x f32[64,64] -> f32[64,64]", r.Program)
	assert.Equal(t, "Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto))", r.Mesh)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, r.Devices)
	require.Len(t, r.Programs, 1)
	p := r.Programs[0]
	assert.Equal(t, "contract y", p.Strategy)
	assert.Equal(t, []string{"P('x', 'y')", "P('y', None)"}, p.In)
	assert.Equal(t, []string{"P('x', None)"}, p.Out)
	require.Len(t, p.Collectives, 1)
	c := p.Collectives[0]
	assert.Equal(t, "all-reduce", c.Kind)
	assert.Equal(t, []string{"f32[32,64]"}, c.Operands)
	assert.Equal(t, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}, c.ReplicaGroups)
	assert.Equal(t, int64(32*64*4), c.Bytes)
	assert.Equal(t, int64(2*3*32*64*4/4), c.BytesMoved)
	assert.Equal(t, c.BytesMoved, p.BytesMoved)
	// Each device keeps its rows of C, replicated over y.
	require.Len(t, p.Outputs, 1)
	assert.Equal(t, outputJSON{Shard: "f32[32,64]", Sharding: "{devices=[2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}", Memory: "device"}, p.Outputs[0])
	require.NotNil(t, p.Memory, p.MemoryError)
	assert.Equal(t, int64((32*16+16*64)*4), p.Memory.Arguments, "a 32x16 block of A and a 16x64 block of B")
	assert.Equal(t, int64(32*64*4), p.Memory.Outputs)

	// On a 1-D mesh of all 8 devices, one group of all.
	r = inspectJSON(t, "-n", "64", "-mesh", "x=8", "-in", "_,x;x,_", "-out", "_,_")
	require.Len(t, r.Programs, 1)
	assert.Equal(t, "custom", r.Programs[0].Strategy)
	require.Len(t, r.Programs[0].Collectives, 1)
	c = r.Programs[0].Collectives[0]
	assert.Equal(t, "all-reduce", c.Kind)
	assert.Equal(t, [][]int{{0, 1, 2, 3, 4, 5, 6, 7}}, c.ReplicaGroups)
	assert.Equal(t, int64(2*7*64*64*4/8), c.BytesMoved)
	assert.Equal(t, "{replicated}", r.Programs[0].Outputs[0].Sharding)
}

func TestInspectTable(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, inspect(&out, io.Discard, []string{"-n", "64", "-devices", "4"}))
	text := out.String()
	assert.True(t, strings.HasPrefix(text, "matmul f32[64,64] x f32[64,64] -> f32[64,64] on Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto)): cpu devices [0 1 2 3]"), text)
	sections := strings.Split(strings.TrimSuffix(text, "\n"), "\n\n")
	require.Len(t, sections, 1+len(matmulKernel.strategies), text)
	// Every strategy of the kernel, in order, each with its collectives, memory and outputs.
	for i, s := range matmulKernel.strategies {
		lines := strings.Split(sections[1+i], "\n")
		assert.Equal(t, s.name+": "+s.String(), lines[0])
		assert.Contains(t, sections[1+i], "\n  memory per device: arguments ")
		assert.Contains(t, sections[1+i], "\n  output 0: ")
	}
	assert.Contains(t, sections[1], "  collectives: none", "rows: A split by rows, B replicated")
	contract := strings.Split(sections[3], "\n")
	assert.Equal(t, "  collectives: 1; each device sends 8.0 KiB in all", contract[1])
	assert.Equal(t, []string{"kind", "operands", "dims", "replica", "groups", "bytes", "sent/device", "instruction"}, strings.Fields(contract[2]))
	f := strings.Fields(contract[3])
	assert.Equal(t, []string{"all-reduce", "f32[32,64]", "-", "[[0", "1]", "[2", "3]]", "8192", "8192"}, f[:9])
}

func TestInspectReplicatedAndFile(t *testing.T) {
	// Everything replicated: nothing to communicate.
	r := inspectJSON(t, "-n", "64", "-in", "_,_;_,_", "-out", "_,_", "-devices", "4")
	require.Len(t, r.Programs, 1)
	assert.Empty(t, r.Programs[0].Collectives)
	assert.Zero(t, r.Programs[0].BytesMoved)
	assert.Equal(t, "{replicated}", r.Programs[0].Outputs[0].Sharding)

	path := filepath.Join(t.TempDir(), "mp.mlir")
	require.NoError(t, os.WriteFile(path, []byte(modelParallelMLIR), 0o644))
	r = inspectJSON(t, "-kernel", path)
	assert.Equal(t, path, r.Program)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, r.Devices)
	require.Len(t, r.Programs, 1)
	p := r.Programs[0]
	assert.Equal(t, []string{"f32[64,8]", "f32[8,64]"}, p.In)
	assert.Equal(t, []string{"f32[64,64]"}, p.Out)
	require.Len(t, p.Collectives, 1)
	assert.Equal(t, "all-reduce", p.Collectives[0].Kind)
	assert.Equal(t, [][]int{{0, 1, 2, 3, 4, 5, 6, 7}}, p.Collectives[0].ReplicaGroups)
}

func TestInspectUsageErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mp.mlir")
	require.NoError(t, os.WriteFile(path, []byte(modelParallelMLIR), 0o644))
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"-format", "csv"}, `-format "csv": want table or json`},
		{[]string{"-n", "0"}, "-n must be positive"},
		{[]string{"-in", "x,_;_,y"}, "-in and -out go together"},
		{[]string{"-in", "x,_;_,y", "-out", "x,y", "-strategy", "rows"}, "use one"},
		{[]string{"-in", "x,_", "-out", "x,y"}, `-in "x,_" has 1 specs; matmul has 2 inputs`},
		{[]string{"-strategy", "diagonal"}, `-strategy "diagonal": matmul has rows, rows x cols, contract y, 2-D blocks`},
		{[]string{"-mesh", "a=2,b=4"}, "the kernels' strategies use the axes x and y"},
		{[]string{"-mesh", "x=4,y=4"}, `-mesh "x=4,y=4" has 16 devices; the client has 8`},
		{[]string{"-mesh", "x=four"}, "want name=size"},
		{[]string{"-kernel", path, "-mesh", "x=8"}, "-mesh applies to the built-in kernels"},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		err := inspect(io.Discard, io.Discard, tc.args)
		var ue *usageErr
		require.ErrorAs(t, err, &ue, "%v: %v", tc.args, err)
		assert.ErrorContains(t, err, tc.err, tc.args)
	}
}

// hostMemoryMLIR is JAX 0.12's lowering of a function whose argument is in pinned host memory
// and whose second result goes to unpinned host memory, on a 4x2 mesh.
const hostMemoryMLIR = `module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(%arg0: tensor<8x4xf32> {mhlo.memory_kind = "pinned_host", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x4xf32> {mhlo.memory_kind = "device", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, tensor<8x4xf32> {mhlo.memory_kind = "unpinned_host", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x4xf32>
    %1 = stablehlo.custom_call @annotate_device_placement(%0) {backend_config = "", has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "device"}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %2 = stablehlo.custom_call @annotate_device_placement(%0) {backend_config = "", has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "unpinned_host"}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %1, %2 : tensor<8x4xf32>, tensor<8x4xf32>
  }
}
`

// TestInspectMemoryKinds: inspect says which memory each argument and result of a program is in,
// as the plugin reports them.
func TestInspectMemoryKinds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.mlir")
	require.NoError(t, os.WriteFile(path, []byte(hostMemoryMLIR), 0o644))
	r := inspectJSON(t, "-kernel", path)
	require.Len(t, r.Programs, 1)
	p := r.Programs[0]
	assert.Equal(t, []string{"pinned_host"}, p.InMemory)
	require.Len(t, p.Outputs, 2)
	assert.Equal(t, "device", p.Outputs[0].Memory)
	assert.Equal(t, "unpinned_host", p.Outputs[1].Memory)
	var out bytes.Buffer
	require.NoError(t, inspect(&out, io.Discard, []string{"-kernel", path, "-q"}))
	assert.Contains(t, out.String(), "\n  arguments in memory: pinned_host\n")
	assert.Contains(t, out.String(), "sharding {devices=[4,2]0,1,2,3,4,5,6,7}, in unpinned_host memory\n")
}
