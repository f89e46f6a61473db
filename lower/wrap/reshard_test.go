package wrap_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/internal/lowertest"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/lower/wrap"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// shardyExported is what jax.export's mlir_module() prints for a function on a 4x2 ("x", "y")
// mesh with a sharding constraint (locations shortened).
const shardyExported = `#loc1 = loc("a")
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> loc(#loc)
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>} loc("a"), %arg1: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>} loc("b")) -> (tensor<8xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, tensor<8x6xi32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32> loc(#loc)
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x6xf32> loc(#loc)
    %2 = stablehlo.tanh %1 : tensor<8x6xf32> loc(#loc)
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x6xf32>, tensor<f32>) -> tensor<8xf32> loc(#loc)
    %4 = stablehlo.convert %1 : (tensor<8x6xf32>) -> tensor<8x6xi32> loc(#loc)
    return %3, %4 : tensor<8xf32>, tensor<8x6xi32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
`

// gspmdExported is the same function exported with GSPMD.
const gspmdExported = `module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x4xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg1: tensor<4x6xf32> {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}) -> (tensor<8xf32> {jax.result_info = "result[0]", mhlo.sharding = "{devices=[4,2]<=[8] last_tile_dim_replicate}"}, tensor<8x6xi32> {jax.result_info = "result[1]", mhlo.sharding = "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<8x6xf32>) -> tensor<8x6xf32>
    %2 = stablehlo.tanh %1 : tensor<8x6xf32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x6xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.convert %1 : (tensor<8x6xf32>) -> tensor<8x6xi32>
    return %3, %4 : tensor<8xf32>, tensor<8x6xi32>
  }
}
`

// roundTripExported is the same function in Shardy's round-trip form: shardings in
// mhlo.frontend_attributes strings, result shardings on xla.sdy.FuncResultSharding calls (as
// XLA's HLO to StableHLO conversion prints it).
const roundTripExported = `module @jit_f attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22x\22=4, \22y\22=2]>}"}, mhlo.is_dynamic = false} {
  func.func @main(%arg0: tensor<8x4xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22x\22}, {\22y\22}]>"}, mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg1: tensor<4x6xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22y\22}, {}]>"}, mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}) -> (tensor<8xf32> {mhlo.sharding = "{devices=[4,2]<=[8] last_tile_dim_replicate}"}, tensor<8x6xi32> {mhlo.sharding = "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22x\22}, {}]>]>"}, mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<8x6xf32>) -> tensor<8x6xf32>
    %2 = stablehlo.tanh %1 : tensor<8x6xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x6xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%3) {backend_config = "", has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22x\22}]>]>"}} : (tensor<8xf32>) -> tensor<8xf32>
    %5 = stablehlo.reshape %4 {mhlo.sharding = "{devices=[4,2]<=[8] last_tile_dim_replicate}"} : (tensor<8xf32>) -> tensor<8xf32>
    %6 = stablehlo.convert %1 : (tensor<8x6xf32>) -> tensor<8x6xi32>
    return %4, %6 : tensor<8xf32>, tensor<8x6xi32>
  }
}
`

// meshR24 is a 2x4 ("x", "y") mesh over the 8 test devices in reverse order, and meshAB a 2x4
// mesh with other axis names.
var (
	meshR24 = mesh.MustNew(lowertest.Reversed(mesh.SimDevices(8)), []int{2, 4}, "x", "y")
	meshAB  = mesh.MustNew(mesh.SimDevices(8), []int{2, 4}, "a", "b")
)

func TestWrapReplace(t *testing.T) {
	tests := []struct {
		name          string
		text          string
		args, results []mesh.NamedSharding
		opts          []wrap.Option
		want          string
	}{{
		name: "shardy onto 2x4", text: shardyExported,
		args:    []mesh.NamedSharding{on(meshR24, "y", "x"), on(meshR24, "y")},
		results: []mesh.NamedSharding{on(meshR24, "y"), {}},
		want: `#loc1 = loc("a")
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>} loc("a"), %arg1: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>} loc("b")) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>, jax.result_info = "result[0]"}, tensor<8x6xi32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32> loc(#loc)
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x6xf32> loc(#loc)
    %2 = stablehlo.tanh %1 : tensor<8x6xf32> loc(#loc)
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x6xf32>, tensor<f32>) -> tensor<8xf32> loc(#loc)
    %4 = stablehlo.convert %1 : (tensor<8x6xf32>) -> tensor<8x6xi32> loc(#loc)
    return %3, %4 : tensor<8xf32>, tensor<8x6xi32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
`,
	}, {
		name: "gspmd, same device count", text: gspmdExported, opts: []wrap.Option{wrap.WithPartitioner(lower.GSPMD)},
		args:    []mesh.NamedSharding{on(meshR24, "y", "x"), on(meshR24, "y")},
		results: []mesh.NamedSharding{on(meshR24, "y"), on(meshR24)},
		want: `module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x4xf32> {mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"}, %arg1: tensor<4x6xf32> {mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}) -> (tensor<8xf32> {mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", jax.result_info = "result[0]"}, tensor<8x6xi32> {mhlo.sharding = "{replicated}", jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<8x6xf32>) -> tensor<8x6xf32>
    %2 = stablehlo.tanh %1 : tensor<8x6xf32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x6xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.convert %1 : (tensor<8x6xf32>) -> tensor<8x6xi32>
    return %3, %4 : tensor<8xf32>, tensor<8x6xi32>
  }
}
`,
	}, {
		name: "round trip onto 2x4", text: roundTripExported,
		args:    []mesh.NamedSharding{on(meshR24, "y", "x"), on(meshR24, "y")},
		results: []mesh.NamedSharding{{}, on(meshR24, "x")},
		want: `module @jit_f attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22x\22=2, \22y\22=4]>}"}, mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%arg0: tensor<8x4xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22y\22}, {\22x\22}]>"}}, %arg1: tensor<4x6xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22y\22}, {}]>"}}) -> (tensor<8xf32>, tensor<8x6xi32>) {
    %0 = stablehlo.dot %arg0, %arg1, precision = [DEFAULT, DEFAULT] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "", mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22x\22}, {}]>]>"}} : (tensor<8x6xf32>) -> tensor<8x6xf32>
    %2 = stablehlo.tanh %1 : tensor<8x6xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.reduce(%2 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x6xf32>, tensor<f32>) -> tensor<8xf32>
    %4 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%3) {backend_config = "", has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{?}]>]>"}} : (tensor<8xf32>) -> tensor<8xf32>
    %5 = stablehlo.reshape %4 {} : (tensor<8xf32>) -> tensor<8xf32>
    %6 = stablehlo.convert %1 : (tensor<8x6xf32>) -> tensor<8x6xi32>
    %xlamesh_result_sharding_1 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%6) {has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22x\22}, {}]>]>"}} : (tensor<8x6xi32>) -> tensor<8x6xi32>
    return %4, %xlamesh_result_sharding_1 : tensor<8xf32>, tensor<8x6xi32>
  }
}
`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := wrap.Module(tc.text, tc.args, tc.results, append(tc.opts, wrap.ReplaceShardings())...)
			require.NoError(t, err)
			require.Equal(t, tc.want, p.Text())
			require.Equal(t, 8, p.NumPartitions())
			// Re-sharding the result again onto the same shardings changes nothing.
			again, err := wrap.Module(p.Text(), tc.args, tc.results, append(tc.opts, wrap.ReplaceShardings())...)
			require.NoError(t, err)
			require.Equal(t, p.Text(), again.Text())
		})
	}
}

func TestWrapReplaceErrors(t *testing.T) {
	four := mesh.MustNew(mesh.SimDevices(4), []int{4}, "x")
	tests := []struct {
		name          string
		text          string
		args, results []mesh.NamedSharding
		opts          []wrap.Option
		err           error
		msg           string
	}{
		{"constraint axis missing", shardyExported, []mesh.NamedSharding{on(meshAB, "a"), on(meshAB)}, []mesh.NamedSharding{{}, {}}, nil,
			lower.ErrUnknownAxis, `7:37: unknown mesh axis: sharding <@mesh, [{"x"}, {}]> names axis "x", which the new mesh <["a"=2, "b"=4]> lacks`},
		{"round trip axis missing", roundTripExported, []mesh.NamedSharding{on(meshAB, "a"), on(meshAB)}, []mesh.NamedSharding{{}, {}}, nil,
			lower.ErrUnknownAxis, `names axis "x"`},
		{"gspmd onto 4 devices", gspmdExported, []mesh.NamedSharding{on(four, "x"), on(four)}, []mesh.NamedSharding{{}, {}},
			[]wrap.Option{wrap.WithPartitioner(lower.GSPMD)}, lower.ErrMeshMismatch, "does not fit 4 devices"},
		{"gspmd body onto shardy", gspmdExported, []mesh.NamedSharding{on(meshR24, "x"), on(meshR24)}, []mesh.NamedSharding{{}, {}}, nil,
			lower.ErrPartitioner, "re-shard with the GSPMD partitioner"},
		{"shardy body onto gspmd", shardyExported, []mesh.NamedSharding{on(meshR24, "x"), on(meshR24)}, []mesh.NamedSharding{{}, {}},
			[]wrap.Option{wrap.WithPartitioner(lower.GSPMD)}, lower.ErrPartitioner, "re-shard with the Shardy partitioner"},
		{"no mesh for the body", shardyExported, []mesh.NamedSharding{{}, {}}, []mesh.NamedSharding{{}, {}}, nil,
			wrap.ErrModule, "no argument or result sharding gives the mesh"},
		{"manual computation onto other axes", shardMapExported, []mesh.NamedSharding{on(meshR24, "x")}, []mesh.NamedSharding{{}}, nil,
			lower.ErrMeshMismatch, "manual computations (shard_map)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wrap.Module(tc.text, tc.args, tc.results, append(tc.opts, wrap.ReplaceShardings())...)
			require.ErrorIs(t, err, wrap.ErrModule)
			require.ErrorIs(t, err, tc.err)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

// shardMapExported is a shard_map over "x" on the 4x2 mesh.
const shardMapExported = `module @jit_g attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%arg1: tensor<2xf32>) {
      %1 = stablehlo.add %arg1, %arg1 : tensor<2xf32>
      sdy.return %1 : tensor<2xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
`

func TestWrapReplaceManual(t *testing.T) {
	// The same mesh over other devices: the manual computation stays, mesh symbols renamed.
	other := mesh.MustNew(lowertest.Reversed(mesh.SimDevices(8)), []int{4, 2}, "x", "y")
	p, err := wrap.Module(shardMapExported, []mesh.NamedSharding{on(other, "x")}, []mesh.NamedSharding{on(other, "x")}, wrap.ReplaceShardings())
	require.NoError(t, err)
	require.Contains(t, p.Text(), `sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}`)
	require.Contains(t, p.Text(), `in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"}`)
}

func TestWrapKeep(t *testing.T) {
	for _, tc := range []struct {
		text string
		part lower.Partitioner
	}{{shardyExported, lower.Shardy}, {gspmdExported, lower.GSPMD}, {roundTripExported, lower.Shardy}, {jaxExported, lower.Shardy}} {
		p, err := wrap.Module(tc.text, nil, nil, wrap.KeepShardings())
		require.NoError(t, err)
		require.Equal(t, tc.text, p.Text())
		require.Equal(t, tc.part, p.Partitioner())
		_, ok := p.ArgSharding(0)
		require.False(t, ok)
	}
	p, err := wrap.Module(shardyExported, nil, nil, wrap.KeepShardings())
	require.NoError(t, err)
	require.Equal(t, 8, p.NumPartitions())
	require.Equal(t, "[tensor<8x4xf32> tensor<4x6xf32>] [tensor<8xf32> tensor<8x6xi32>]", fmt.Sprint(p.ArgShapes(), " ", p.ResultShapes()))
	_, err = wrap.Module(shardyExported, []mesh.NamedSharding{on(meshR24, "x"), {}}, nil, wrap.KeepShardings())
	require.ErrorIs(t, err, wrap.ErrModule)
}

// TestIntegrationWrapReplace compiles the three forms re-sharded onto a 2x4 mesh over the devices
// in reverse order (the mesh of lowertest.MeshSizes transposed, over that many devices) and reads
// back how XLA lays out the arguments and results.
func TestIntegrationWrapReplace(t *testing.T) {
	c := pjrttest.Client(t)
	ny, nx := lowertest.MeshSizes(len(c.Devices())) // x divides the result's 6 columns
	m, err := mesh.New(lowertest.Reversed(lowertest.Devices(c, nx*ny)), []int{nx, ny}, "x", "y")
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		text string
		part lower.Partitioner
		need int // devices: the GSPMD form's constraint in the body has JAX's 8-device tiling
	}{{"shardy", shardyExported, lower.Shardy, 1}, {"gspmd", gspmdExported, lower.GSPMD, 8}, {"round trip", roundTripExported, lower.Shardy, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			pjrttest.NeedDevices(t, tc.need)
			prog, err := wrap.Module(tc.text, []mesh.NamedSharding{on(m, "y", "x"), on(m, "y")}, []mesh.NamedSharding{on(m, "y"), on(m, nil, "x")},
				wrap.ReplaceShardings(), wrap.WithPartitioner(tc.part))
			require.NoError(t, err)
			exe := lowertest.Compile(t, c, m, prog)
			in, err := exe.InputShardings()
			require.NoError(t, err)
			out, err := exe.OutputShardings()
			require.NoError(t, err)
			if nx*ny == 1 {
				// One device: XLA partitions nothing and reports every value replicated (and
				// OutputShardings one sharding for the whole result tuple).
				for _, s := range append(in, out...) {
					require.True(t, s.IsReplicated(), "%v", s)
				}
				return
			}
			// P("y", "x") tiles 4x2; P(None, "x") tiles 1x2 and replicates over y (4).
			require.Equal(t, lowertest.Tiles([]int{ny, nx}, 1), in[0].TileDims(), "argument 0: %v", in[0])
			require.Equal(t, lowertest.Tiles([]int{ny, 1}, nx), in[1].TileDims(), "argument 1: %v", in[1])
			require.Equal(t, lowertest.Tiles([]int{1, nx}, ny), out[1].TileDims(), "result 1: %v", out[1])
			// Partition p holds the block of mesh position p: device order is the assignment's.
			// Tile (iy, ix) of P("y", "x") is at mesh position ix*Y + iy: 0, 4, 1, 5, ... on 2x4.
			var parts []int
			for iy := range ny {
				for ix := range nx {
					parts = append(parts, ix*ny+iy)
				}
			}
			assignment, err := in[0].Assignment()
			require.NoError(t, err)
			require.Equal(t, parts, assignment)
		})
	}
}

// TestWrapReplaceAliasing turns an argument's tf.aliasing_output into jax.buffer_donor: on the
// new mesh the argument and its result may have shards of different sizes, which XLA refuses
// to alias.
func TestWrapReplaceAliasing(t *testing.T) {
	text := strings.Replace(shardyExported, `{sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>} loc("a")`,
		`{sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>, tf.aliasing_output = 0 : i32} loc("a")`, 1)
	p, err := wrap.Module(text, []mesh.NamedSharding{on(meshR24, "y", "x"), on(meshR24, "y")}, []mesh.NamedSharding{{}, {}}, wrap.ReplaceShardings())
	require.NoError(t, err)
	require.Contains(t, p.Text(), `%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>, jax.buffer_donor = true} loc("a")`)
	require.NotContains(t, p.Text(), "tf.aliasing_output")
}

// shardMapPsum is a shard_map over "x" on the 4x2 mesh with a psum over "x".
const shardMapPsum = `module @jit_g attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{}]>] manual_axes={"x"} (%arg1: tensor<2xf32>) {
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %2 = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %2 : tensor<f32>
      }) : (tensor<2xf32>) -> tensor<2xf32>
      sdy.return %1 : tensor<2xf32>
    } : (tensor<8xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
`

func TestWrapReplaceManualRegroups(t *testing.T) {
	m41 := mesh.MustNew(mesh.SimDevices(4), []int{4, 1}, "x", "y")
	p, err := wrap.Module(shardMapPsum, []mesh.NamedSharding{on(m41, "x")}, []mesh.NamedSharding{on(m41)}, wrap.ReplaceShardings())
	require.NoError(t, err)
	require.Contains(t, p.Text(), `replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids`)
	require.Equal(t, 4, p.NumPartitions())

	// A manual axis that changes size, and partition ids computed from the old sizes, stay refused.
	m22 := mesh.MustNew(mesh.SimDevices(4), []int{2, 2}, "x", "y")
	_, err = wrap.Module(shardMapPsum, []mesh.NamedSharding{on(m22, "x")}, []mesh.NamedSharding{on(m22)}, wrap.ReplaceShardings())
	require.ErrorIs(t, err, lower.ErrMeshMismatch)
	require.ErrorContains(t, err, `manual axis "x"`)
	withID := strings.Replace(shardMapPsum, `%1 = "stablehlo.all_reduce"`, `%9 = stablehlo.partition_id : tensor<ui32>
      %1 = "stablehlo.all_reduce"`, 1)
	_, err = wrap.Module(withID, []mesh.NamedSharding{on(m41, "x")}, []mesh.NamedSharding{on(m41)}, wrap.ReplaceShardings())
	require.ErrorIs(t, err, lower.ErrMeshMismatch)
	require.ErrorContains(t, err, "stablehlo.partition_id")
}

// TestIntegrationWrapReplaceGSPMDShardMap re-shards a GSPMD module of lower's with a shard_map,
// whose body is a called private function (@shmap_body) with a 0.0 of its own, built on the mesh of
// lowertest.MeshSizes (mesh42 on 8 devices), onto the same mesh over the devices in reverse order,
// and runs it.
func TestIntegrationWrapReplaceGSPMDShardMap(t *testing.T) {
	c := pjrttest.Client(t)
	nx, ny := lowertest.MeshSizes(len(c.Devices()))
	tm := mesh.MustNew(mesh.SimDevices(nx*ny), []int{nx, ny}, "x", "y")
	mod := lower.NewModule("smap", lower.WithPartitioner(lower.GSPMD))
	f := mod.Main()
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 16, 8), on(tm, "x", "y"))
	y := f.ShardMap(tm.Abstract(), []mesh.PartitionSpec{mesh.P("x", "y")}, []mesh.PartitionSpec{mesh.P(nil, "y")}, nil,
		func(g *lower.Function, a []lower.Value) []lower.Value {
			return []lower.Value{g.Psum(g.Max(a[0], g.Constant(0.0)), "x")}
		}, f.Max(x, f.Constant(0.0)))
	f.Return(y...)
	f.ShardResults(on(tm, nil, "y"))
	built, err := mod.Build()
	require.NoError(t, err)
	require.Contains(t, built.Text(), "func.func private @shmap_body(")

	m, err := mesh.New(lowertest.Reversed(lowertest.Devices(c, tm.Size())), tm.AxisSizes(), "x", "y")
	require.NoError(t, err)
	prog, err := wrap.Module(built.Text(), []mesh.NamedSharding{on(m, "x", "y")}, []mesh.NamedSharding{on(m, nil, "y")},
		wrap.ReplaceShardings(), wrap.WithPartitioner(lower.GSPMD))
	require.NoError(t, err)
	in := make([]float32, 128)
	for i := range in {
		in[i] = float32(i%11 - 5)
	}
	nr := 16 / nx
	want := make([]float32, nr*8) // 4x8 on 4x2: the sum over the X row blocks of max(x, 0)
	for r := range 16 {
		for col := range 8 {
			want[8*(r%nr)+col] += max(in[8*r+col], 0)
		}
	}
	require.Equal(t, [][]float32{want}, lowertest.Run(t, c, m, prog, [][]float32{in}))
}
