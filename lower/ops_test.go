package lower_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Errors of lower's ops in shard_map bodies: each names the op and the cause.
func TestOpErrors(t *testing.T) {
	f32 := func(dims ...int) lower.Shape { return lower.NewShape(dtypes.Float32, dims...) }
	tests := []struct {
		name     string
		body     func(f *lower.Function, x lower.Value) lower.Value // x is an f32[4, 6] argument
		sentinel error
		msg      string
	}{
		{"all_to_all indivisible", func(f *lower.Function, x lower.Value) lower.Value {
			out := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x")}, nil,
				func(g *lower.Function, a []lower.Value) []lower.Value {
					return []lower.Value{g.AllToAllOver(g.Slice(a[0], []int{0, 0}, []int{1, 6}, nil), 0, 1, "y")}
				}, x)
			return out[0]
		}, lower.ErrIndivisible, "split dimension 0 of size 1 is not divisible by the group size 2"},
		{"permute pair", func(f *lower.Function, x lower.Value) lower.Value {
			out := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x")}, nil,
				func(g *lower.Function, a []lower.Value) []lower.Value {
					return []lower.Value{g.Ppermute(a[0], [][2]int{{0, 2}}, "y")}
				}, x)
			return out[0]
		}, lower.ErrShape, `permutation pair [0 2] out of range for 2 devices along ["y"]`},
		{"shard_map result count", func(f *lower.Function, x lower.Value) lower.Value {
			out := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x"), mesh.P()}, nil,
				func(g *lower.Function, a []lower.Value) []lower.Value { return a }, x)
			return out[0]
		}, lower.ErrSharding, "body returned 1 values for 2 out_specs"},
		{"manual after free axis", func(f *lower.Function, x lower.Value) lower.Value {
			out := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P(mesh.Axes("y", "x"))}, []mesh.PartitionSpec{mesh.P("x")}, []string{"x"},
				func(g *lower.Function, a []lower.Value) []lower.Value { return a }, f.Full(f32(8, 6), float32(0)))
			return out[0]
		}, lower.ErrSharding, "dim 0: must have all manual axes come before free axes in its dimension sharding"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := lower.NewModule("ops")
			f := m.Main()
			x := f.Arg(f32(4, 6))
			y := tc.body(f, x)
			require.False(t, y.Valid())
			f.Return(x)
			_, err := m.Build()
			require.ErrorIs(t, err, tc.sentinel)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

// WithMultipleMeshes allows a second mesh shape; each gets its own symbol.
func TestMultipleMeshes(t *testing.T) {
	m := lower.NewModule("two", lower.WithMultipleMeshes())
	f := m.Main()
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 8), ns("x"))
	y := f.ShardingConstraint(x, mesh.MustNamedSharding(mesh24, mesh.P(nil, "y")))
	f.Return(y)
	p, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, p.Text(), `  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  sdy.mesh @mesh_0 = <["x"=2, "y"=4]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 4 : i64}]}}
`)
	require.Contains(t, p.Text(), "sdy.sharding_constraint %arg0 <@mesh_0, [{}, {\"y\"}]> : tensor<8x8xf32>")
	require.Equal(t, lower.Shardy, m.Partitioner())
	require.Equal(t, "GSPMD", lower.GSPMD.String())
}

// Values, functions and enums report what they are.
func TestAccessors(t *testing.T) {
	m := lower.NewModule("acc")
	f := m.Main()
	x := f.Arg(lower.NewShape(dtypes.Uint16, 3))
	c := f.Constant(2)
	require.Equal(t, "%arg0", x.String())
	require.Equal(t, "<constant 2>", c.String())
	require.Equal(t, dtypes.Int64, c.DType(), "a weak int constant alone is s64")
	require.Equal(t, dtypes.Uint16, x.DType())
	require.True(t, x.DType().IsUnsigned())
	require.Equal(t, 3, x.Shape().Dim(0))
	require.Equal(t, "main", f.Name())
	require.Same(t, m.StableHLO(), f.Module())
	require.Same(t, m, lower.ModuleOf(f.Module()))
	require.Len(t, f.Args(), 1)
	require.Equal(t, "LT", lower.LT.String())
	require.Equal(t, "Max", lower.Max.String())
	require.Equal(t, "tensor<3xui16>", f.Add(x, c).Shape().String())
}

// FunctionOf gives lower's methods to a region body that a stablehlo op builds: inside a
// shard_map, such a body still reaches the manual axes for axis-named collectives.
func TestFunctionOf(t *testing.T) {
	require.Nil(t, lower.FunctionOf(nil))
	require.Nil(t, lower.FunctionOf(stablehlo.NewModule("plain").Main()))
	require.Nil(t, lower.ModuleOf(nil))
	require.Nil(t, lower.ModuleOf(stablehlo.NewModule("plain")))
	m := lower.NewModule("fof")
	f := m.Main()
	require.Same(t, f, lower.FunctionOf(f.Function))
	require.Same(t, m.StableHLO(), f.Module())
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8), ns("x"))
	out := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x")}, nil,
		func(g *lower.Function, a []lower.Value) []lower.Value {
			s := a[0].Shape()
			body := g.BuildRegion([]lower.Shape{s}, func(h *stablehlo.Function, b []lower.Value) []lower.Value {
				return []lower.Value{lower.FunctionOf(h).Psum(b[0], "x")}
			})
			return g.AddOp(stablehlo.OpSpec{Name: "test.apply", Operands: a, Results: []lower.Shape{s},
				Regions: []*stablehlo.Function{body}})
		}, x)
	f.Return(out...)
	p, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, p.Text(), `replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "x">]>`)
	require.Contains(t, p.Text(), `= "test.apply"(%arg1) ({`)
}
