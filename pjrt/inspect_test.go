package pjrt_test

import (
	"fmt"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
)

// shardedModule is a module of one op on an 8-device mesh: args and result are
// (type, Shardy dims) pairs, body the op with %a and %b as operands.
func shardedModule(mesh string, args [][2]string, result [2]string, body string) string {
	sig := ""
	for i, a := range args {
		if i > 0 {
			sig += ", "
		}
		sig += fmt.Sprintf("%%%c: %s {sdy.sharding = #sdy.sharding<@mesh, %s>}", 'a'+i, a[0], a[1])
	}
	return fmt.Sprintf(`module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <%s>
  func.func public @main(%s) -> (%s {sdy.sharding = #sdy.sharding<@mesh, %s>}) {
    %%0 = %s
    return %%0 : %s
  }
}`, mesh, sig, result[0], result[1], body, result[0])
}

// matmulOp is the body of shardedModule for a matmul of tensors of types a and b into c.
func matmulOp(a, b, c string) string {
	return fmt.Sprintf("stablehlo.dot_general %%a, %%b, contracting_dims = [1] x [0] : (tensor<%s>, tensor<%s>) -> tensor<%s>", a, b, c)
}

func TestCollectives(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	f32 := func(dims ...int) pjrt.Shape { return shapes.Make(dtypes.Float32, dims...) }
	for _, tc := range []struct {
		name   string
		module string
		want   []pjrt.Collective // Name and Computation are not compared
	}{{
		// Model parallelism over the contracted dimension: each device multiplies its 64x8 slice
		// of A by its 8x64 slice of B, and an all-reduce over all 8 adds the partial products.
		name: "model-parallel matmul, 8 devices",
		module: shardedModule(`["x"=8]`,
			[][2]string{{"tensor<64x64xf32>", `[{}, {"x"}]`}, {"tensor<64x64xf32>", `[{"x"}, {}]`}},
			[2]string{"tensor<64x64xf32>", `[{}, {}]`}, matmulOp("64x64xf32", "64x64xf32", "64x64xf32")),
		want: []pjrt.Collective{{Kind: "all-reduce", Operands: []pjrt.Shape{f32(64, 64)}, ReplicaGroups: [][]int{all},
			Bytes: 64 * 64 * 4, BytesMoved: 2 * 7 * 64 * 64 * 4 / 8}},
	}, {
		// The same over "y" of a 2x4 mesh: two groups of 4, rows of x's halves.
		name: "contracted dimension over y of 2x4",
		module: shardedModule(`["x"=2, "y"=4]`,
			[][2]string{{"tensor<16x32xf32>", `[{"x"}, {"y"}]`}, {"tensor<32x8xf32>", `[{"y"}, {}]`}},
			[2]string{"tensor<16x8xf32>", `[{"x"}, {}]`}, matmulOp("16x32xf32", "32x8xf32", "16x8xf32")),
		want: []pjrt.Collective{{Kind: "all-reduce", Operands: []pjrt.Shape{f32(8, 8)},
			ReplicaGroups: [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}, Bytes: 256, BytesMoved: 2 * 3 * 256 / 4}},
	}, {
		// Over "x" of the same mesh: groups of partitions 4 apart (XLA's transposed iota).
		name: "contracted dimension over x of 2x4",
		module: shardedModule(`["x"=2, "y"=4]`,
			[][2]string{{"tensor<16x32xf32>", `[{"y"}, {"x"}]`}, {"tensor<32x8xf32>", `[{"x"}, {}]`}},
			[2]string{"tensor<16x8xf32>", `[{"y"}, {}]`}, matmulOp("16x32xf32", "32x8xf32", "16x8xf32")),
		want: []pjrt.Collective{{Kind: "all-reduce", Operands: []pjrt.Shape{f32(4, 8)},
			ReplicaGroups: [][]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}}, Bytes: 128, BytesMoved: 128}},
	}, {
		// Rows split over 8 devices, the result replicated: an all-gather of each 8x16 block.
		name: "replicate a split array",
		module: shardedModule(`["x"=8]`, [][2]string{{"tensor<64x16xf32>", `[{"x"}, {}]`}},
			[2]string{"tensor<64x16xf32>", `[{}, {}]`}, "stablehlo.add %a, %a : tensor<64x16xf32>"),
		want: []pjrt.Collective{{Kind: "all-gather", Operands: []pjrt.Shape{f32(8, 16)}, Dims: []int{0},
			ReplicaGroups: [][]int{all}, Bytes: 512, BytesMoved: 7 * 512}},
	}, {
		name: "replicated program",
		module: shardedModule(`["x"=8]`, [][2]string{{"tensor<64x16xf32>", `[{}, {}]`}},
			[2]string{"tensor<64x16xf32>", `[{}, {}]`}, "stablehlo.add %a, %a : tensor<64x16xf32>"),
	}, {
		name:   "elementwise on a split array",
		module: seedModule,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			exe, err := c.Compile(tc.module, pjrt.CompileOptions{DeviceAssignment: all})
			require.NoError(t, err)
			defer exe.Close()
			got, err := exe.Collectives()
			require.NoError(t, err)
			require.Len(t, got, len(tc.want), "%v", got)
			for i := range got {
				assert.NotEmpty(t, got[i].Name)
				assert.NotEmpty(t, got[i].Computation)
				got[i].Name, got[i].Computation = "", ""
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCollectiveString(t *testing.T) {
	c := pjrt.Collective{Kind: "all-reduce", Operands: []pjrt.Shape{shapes.Make(dtypes.Float32, 8, 8)},
		ReplicaGroups: [][]int{{0, 1}, {2, 3}}, Bytes: 256, BytesMoved: 256}
	assert.Equal(t, "all-reduce f32[8,8] groups [[0 1] [2 3]] moves 256 B/device", c.String())
	assert.Equal(t, 2, c.GroupSize())
	p := pjrt.Collective{Kind: "collective-permute", Operands: []pjrt.Shape{shapes.Make(dtypes.Int32, 4)},
		Pairs: [][2]int{{0, 1}, {1, 0}}, Bytes: 16, BytesMoved: 16}
	assert.Equal(t, "collective-permute i32[4] pairs [[0 1] [1 0]] moves 16 B/device", p.String())
	assert.Equal(t, 0, p.GroupSize())
}

func TestMemoryStats(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	exe, err := c.Compile(shardedModule(`["x"=8]`,
		[][2]string{{"tensor<64x64xf32>", `[{}, {"x"}]`}, {"tensor<64x64xf32>", `[{"x"}, {}]`}},
		[2]string{"tensor<64x64xf32>", `[{}, {}]`}, matmulOp("64x64xf32", "64x64xf32", "64x64xf32")),
		pjrt.CompileOptions{NumPartitions: 8})
	require.NoError(t, err)
	if !c.Plugin().Has("PJRT_Executable_GetCompiledMemoryStats") {
		_, err := exe.MemoryStats()
		require.ErrorIs(t, err, pjrt.ErrUnimplemented)
		t.Skip("the plugin has no PJRT_Executable_GetCompiledMemoryStats")
	}
	m, err := exe.MemoryStats()
	require.NoError(t, err)
	// Per device: a 64x8 and an 8x64 f32 slice in, the whole 64x64 f32 product out.
	assert.Equal(t, int64(2*64*8*4), m.Arguments)
	assert.Equal(t, int64(64*64*4), m.Outputs)
	assert.Zero(t, m.Alias)
	assert.GreaterOrEqual(t, m.Peak, m.Outputs, "%+v", m)
	assert.Equal(t, m.Arguments+m.Outputs+m.Temp, m.Device())
	if _, minor := c.Plugin().APIVersion(); minor == pjrt.MinAPIMinor {
		assert.Equal(t, int64(-1), m.Total, "total_size_in_bytes is newer than API 0.81: not reported")
	} else {
		assert.GreaterOrEqual(t, m.Total, int64(-1))
	}

	require.NoError(t, exe.Close())
	_, err = exe.MemoryStats()
	assert.ErrorIs(t, err, pjrt.ErrClosed)
	_, err = exe.Collectives()
	assert.ErrorIs(t, err, pjrt.ErrClosed)
}

// TestInputShardings reads back the layout XLA expects of each argument: tiled as annotated,
// replicated when not, and every argument replicated in a program of one device.
func TestInputShardings(t *testing.T) {
	c := pjrttest.ClientWithDevices(t, 8)
	text := shardedModule(`["x"=4, "y"=2]`, [][2]string{{"tensor<8x4xf32>", `[{"x"}, {"y"}]`}, {"tensor<4x6xf32>", `[{}, {}]`}},
		[2]string{"tensor<8x6xf32>", `[{"x"}, {}]`}, matmulOp("8x4xf32", "4x6xf32", "8x6xf32"))
	exe, err := c.Compile(text, pjrt.CompileOptions{NumPartitions: 8})
	require.NoError(t, err)
	defer exe.Close()
	in, err := exe.InputShardings()
	require.NoError(t, err)
	require.Len(t, in, 2)
	assert.Equal(t, "{devices=[4,2]0,1,2,3,4,5,6,7}", in[0].String())
	assert.Equal(t, "{replicated}", in[1].String())

	one, err := c.Compile("module {\n  func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {\n    %0 = stablehlo.add %a, %b : tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n}\n", pjrt.CompileOptions{})
	require.NoError(t, err)
	defer one.Close()
	in, err = one.InputShardings()
	require.NoError(t, err)
	require.Len(t, in, 2)
	assert.Equal(t, pjrt.ShardingReplicated, in[1].Type)
	require.NoError(t, one.Close())
	_, err = one.InputShardings()
	require.ErrorIs(t, err, pjrt.ErrClosed)
}
