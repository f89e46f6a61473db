package pjrt_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
)

// shardedModule is a module of one op on a mesh of parts devices: args and result are (type,
// Shardy dims) pairs, body the op with %a and %b as operands.
func shardedModule(parts int, mesh string, args [][2]string, result [2]string, body string) string {
	sig := ""
	for i, a := range args {
		if i > 0 {
			sig += ", "
		}
		sig += fmt.Sprintf("%%%c: %s {sdy.sharding = #sdy.sharding<@mesh, %s>}", 'a'+i, a[0], a[1])
	}
	return fmt.Sprintf(`module @jit_f attributes {mhlo.num_partitions = %d : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <%s>
  func.func public @main(%s) -> (%s {sdy.sharding = #sdy.sharding<@mesh, %s>}) {
    %%0 = %s
    return %%0 : %s
  }
}`, parts, mesh, sig, result[0], result[1], body, result[0])
}

// matmulOp is the body of shardedModule for a matmul of tensors of types a and b into c.
func matmulOp(a, b, c string) string {
	return fmt.Sprintf("stablehlo.dot_general %%a, %%b, contracting_dims = [1] x [0] : (tensor<%s>, tensor<%s>) -> tensor<%s>", a, b, c)
}

// iota returns 0, 1, ..., n-1: the partitions of a program of n.
func iota(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestCollectives reads the collectives XLA put in programs on meshes of 8 devices, or of fewer
// where the client has fewer (fitMesh): the groups, shapes and bytes follow the mesh. A case
// whose collective runs over an axis that has one device on the client's mesh needs more
// devices (NeedDevices).
func TestCollectives(t *testing.T) {
	c := pjrttest.Client(t)
	n := len(c.Devices())
	f32 := func(dims ...int) pjrt.Shape { return shapes.Make(dtypes.Float32, dims...) }
	// A 1-D mesh of 8 devices, and the mesh x=2, y=4, on fewer where the client has fewer.
	m := pjrttest.FitShape([]int{8}, n)[0]
	mesh1 := fmt.Sprintf(`["x"=%d]`, m)
	xy := pjrttest.FitShape([]int{2, 4}, n)
	a, b := xy[0], xy[1]
	mesh2 := fmt.Sprintf(`["x"=%d, "y"=%d]`, a, b)
	// The partition groups of a reduction over y (rows of the mesh) and over x (its columns):
	// {0..3}, {4..7} and XLA's transposed iota {0, 4}, ..., {3, 7} on 2x4.
	var overY, overX [][]int
	for i := range a {
		overY = append(overY, iota(a * b)[i*b:(i+1)*b])
	}
	for j := range b {
		var g []int
		for i := range a {
			g = append(g, i*b+j)
		}
		overX = append(overX, g)
	}
	s := seedFor(c)
	for _, tc := range []struct {
		name   string
		need   int // the devices the collective needs: NeedDevices skips the case with fewer
		parts  int
		module string
		want   []pjrt.Collective // Name and Computation are not compared
	}{{
		// Model parallelism over the contracted dimension: each device multiplies its 64x8 slice
		// of A by its 8x64 slice of B, and an all-reduce over all 8 adds the partial products.
		name: "model-parallel matmul, 8 devices", need: 2, parts: m,
		module: shardedModule(m, mesh1,
			[][2]string{{"tensor<64x64xf32>", `[{}, {"x"}]`}, {"tensor<64x64xf32>", `[{"x"}, {}]`}},
			[2]string{"tensor<64x64xf32>", `[{}, {}]`}, matmulOp("64x64xf32", "64x64xf32", "64x64xf32")),
		want: []pjrt.Collective{{Kind: "all-reduce", Operands: []pjrt.Shape{f32(64, 64)}, ReplicaGroups: [][]int{iota(m)},
			Bytes: 64 * 64 * 4, BytesMoved: int64(2 * (m - 1) * 64 * 64 * 4 / m)}},
	}, {
		// The same over "y" of a 2x4 mesh: two groups of 4, rows of x's halves.
		name: "contracted dimension over y of 2x4", need: 4, parts: a * b,
		module: shardedModule(a*b, mesh2,
			[][2]string{{"tensor<16x32xf32>", `[{"x"}, {"y"}]`}, {"tensor<32x8xf32>", `[{"y"}, {}]`}},
			[2]string{"tensor<16x8xf32>", `[{"x"}, {}]`}, matmulOp("16x32xf32", "32x8xf32", "16x8xf32")),
		want: []pjrt.Collective{{Kind: "all-reduce", Operands: []pjrt.Shape{f32(16/a, 8)},
			ReplicaGroups: overY, Bytes: int64(16 / a * 8 * 4), BytesMoved: int64(2 * (b - 1) * (16 / a * 8 * 4) / b)}},
	}, {
		// Over "x" of the same mesh: groups of partitions 4 apart (XLA's transposed iota).
		name: "contracted dimension over x of 2x4", need: 2, parts: a * b,
		module: shardedModule(a*b, mesh2,
			[][2]string{{"tensor<16x32xf32>", `[{"y"}, {"x"}]`}, {"tensor<32x8xf32>", `[{"x"}, {}]`}},
			[2]string{"tensor<16x8xf32>", `[{"y"}, {}]`}, matmulOp("16x32xf32", "32x8xf32", "16x8xf32")),
		want: []pjrt.Collective{{Kind: "all-reduce", Operands: []pjrt.Shape{f32(16/b, 8)},
			ReplicaGroups: overX, Bytes: int64(16 / b * 8 * 4), BytesMoved: int64(2 * (a - 1) * (16 / b * 8 * 4) / a)}},
	}, {
		// Rows split over 8 devices, the result replicated: an all-gather of each 8x16 block.
		name: "replicate a split array", need: 2, parts: m,
		module: shardedModule(m, mesh1, [][2]string{{"tensor<64x16xf32>", `[{"x"}, {}]`}},
			[2]string{"tensor<64x16xf32>", `[{}, {}]`}, "stablehlo.add %a, %a : tensor<64x16xf32>"),
		want: []pjrt.Collective{{Kind: "all-gather", Operands: []pjrt.Shape{f32(64/m, 16)}, Dims: []int{0},
			ReplicaGroups: [][]int{iota(m)}, Bytes: int64(64 / m * 16 * 4), BytesMoved: int64((m - 1) * 64 / m * 16 * 4)}},
	}, {
		name: "replicated program", need: 1, parts: m,
		module: shardedModule(m, mesh1, [][2]string{{"tensor<64x16xf32>", `[{}, {}]`}},
			[2]string{"tensor<64x16xf32>", `[{}, {}]`}, "stablehlo.add %a, %a : tensor<64x16xf32>"),
	}, {
		name: "elementwise on a split array", need: 1, parts: s.parts(),
		module: s.module(),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pjrttest.NeedDevices(t, tc.need)
			exe, err := c.Compile(tc.module, pjrt.CompileOptions{DeviceAssignment: firstIDs(c, tc.parts)})
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
	c := pjrttest.Client(t)
	m := pjrttest.FitShape([]int{8}, len(c.Devices()))[0] // 8 devices, or fewer where the client has fewer
	exe, err := c.Compile(shardedModule(m, fmt.Sprintf(`["x"=%d]`, m),
		[][2]string{{"tensor<64x64xf32>", `[{}, {"x"}]`}, {"tensor<64x64xf32>", `[{"x"}, {}]`}},
		[2]string{"tensor<64x64xf32>", `[{}, {}]`}, matmulOp("64x64xf32", "64x64xf32", "64x64xf32")),
		pjrt.CompileOptions{NumPartitions: m})
	require.NoError(t, err)
	if !c.Plugin().Has("PJRT_Executable_GetCompiledMemoryStats") {
		_, err := exe.MemoryStats()
		require.ErrorIs(t, err, pjrt.ErrUnimplemented)
		t.Skip("the plugin has no PJRT_Executable_GetCompiledMemoryStats")
	}
	st, err := exe.MemoryStats()
	require.NoError(t, err)
	// Per device: a 64x8 and an 8x64 f32 slice in (on 8 devices), the whole 64x64 f32 product out.
	assert.Equal(t, int64(2*64*(64/m)*4), st.Arguments)
	assert.Equal(t, int64(64*64*4), st.Outputs)
	assert.Zero(t, st.Alias)
	assert.GreaterOrEqual(t, st.Peak, st.Outputs, "%+v", st)
	assert.Equal(t, st.Arguments+st.Outputs+st.Temp, st.Device())
	if _, minor := c.Plugin().APIVersion(); minor == pjrt.MinAPIMinor {
		assert.Equal(t, int64(-1), st.Total, "total_size_in_bytes is newer than API 0.81: not reported")
	} else {
		assert.GreaterOrEqual(t, st.Total, int64(-1))
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
	c := pjrttest.Client(t)
	s := seedFor(c) // the mesh (4, 2) on 8 devices
	text := shardedModule(s.parts(), fmt.Sprintf(`["x"=%d, "y"=%d]`, s.x, s.y), [][2]string{{"tensor<8x4xf32>", `[{"x"}, {"y"}]`}, {"tensor<4x6xf32>", `[{}, {}]`}},
		[2]string{"tensor<8x6xf32>", `[{"x"}, {}]`}, matmulOp("8x4xf32", "4x6xf32", "8x6xf32"))
	exe, err := c.Compile(text, pjrt.CompileOptions{NumPartitions: s.parts()})
	require.NoError(t, err)
	defer exe.Close()
	in, err := exe.InputShardings()
	require.NoError(t, err)
	require.Len(t, in, 2)
	ids := make([]string, s.parts()) // 0,1,2,3,4,5,6,7 on 8 devices
	for p := range ids {
		ids[p] = fmt.Sprint(p)
	}
	want := fmt.Sprintf("{devices=[%d,%d]%s}", s.x, s.y, strings.Join(ids, ","))
	if s.parts() == 1 {
		want = "{replicated}" // a program of one device: see below
	}
	assert.Equal(t, want, in[0].String())
	assert.Equal(t, "{replicated}", in[1].String())

	one, err := c.Compile("module {\n  func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {\n    %0 = stablehlo.add %a, %b : tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n}\n", pjrt.CompileOptions{})
	require.NoError(t, err)
	defer one.Close()
	in, err = one.InputShardings()
	require.NoError(t, err)
	require.Len(t, in, 2)
	assert.True(t, in[1].IsReplicated(), "%v", in[1])
	require.NoError(t, one.Close())
	_, err = one.InputShardings()
	require.ErrorIs(t, err, pjrt.ErrClosed)
}
