package lower_test

import (
	"errors"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

var mesh24 = mesh.MustNew(mesh.SimDevices(8), []int{2, 4}, "x", "y")

func TestBuildErrors(t *testing.T) {
	f32 := func(dims ...int) lower.Shape { return lower.NewShape(dtypes.Float32, dims...) }
	specs := func(ps ...mesh.PartitionSpec) []mesh.PartitionSpec { return ps }
	tests := []struct {
		name     string
		opts     []lower.Option
		build    func(m *lower.Module)
		sentinel error
		msg      string // the whole error text
		op       string
		operand  int
	}{
		{
			name: "shape mismatch",
			build: func(m *lower.Module) {
				f := m.Main()
				x, y := f.Arg(f32(4, 2)), f.Arg(f32(2, 4))
				f.Return(f.Add(x, y))
			},
			sentinel: lower.ErrShape, op: "add", operand: 1,
			msg: "lower: @main: add: operand 1 (%arg1): shape mismatch: add got incompatible shapes for broadcasting: (4, 2), (2, 4).",
		},
		{
			name: "outer value in shard_map body",
			build: func(m *lower.Module) {
				f := m.Main()
				x := f.ShardedArg(f32(8, 4), ns("x"))
				outs := f.ShardMap(mesh42.Abstract(), specs(mesh.P("x")), specs(mesh.P("x")), nil,
					func(g *lower.Function, args []lower.Value) []lower.Value {
						return []lower.Value{g.Add(args[0], x)}
					}, x)
				f.Return(outs...)
			},
			sentinel: lower.ErrForeignValue, op: "add", operand: 1,
			msg: "lower: @main: add: operand 1 (%arg0): value from another function: using value defined outside the region",
		},
		{
			name: "wrong rank for argument sharding",
			build: func(m *lower.Module) {
				f := m.Main()
				f.Return(f.ShardedArg(f32(8), ns("x", "y")))
			},
			sentinel: mesh.ErrRank, op: "func.func argument", operand: 0,
		},
		{
			name: "wrong rank for constraint",
			build: func(m *lower.Module) {
				f := m.Main()
				x := f.Arg(f32(8))
				f.Return(f.ShardingConstraint(x, ns("x", "y")))
			},
			sentinel: lower.ErrSharding, op: "sdy.sharding_constraint", operand: 0,
			msg: "lower: @main: sdy.sharding_constraint: operand 0 (%arg0): invalid sharding: spec P('x', 'y') has 2 entries for a rank-1 value tensor<8xf32>",
		},
		{
			name: "unknown manual axis",
			build: func(m *lower.Module) {
				f := m.Main()
				x := f.Arg(f32(8, 4))
				outs := f.ShardMap(mesh42.Abstract(), specs(mesh.P()), specs(mesh.P()), []string{"z"},
					func(g *lower.Function, args []lower.Value) []lower.Value { return args }, x)
				f.Return(outs...)
			},
			sentinel: lower.ErrUnknownAxis, op: "sdy.manual_computation", operand: -1,
			msg: `lower: @main: sdy.manual_computation: unknown mesh axis: unknown manual axis "z" (mesh has ("x", "y"))`,
		},
		{
			name: "unknown collective axis",
			build: func(m *lower.Module) {
				f := m.Main()
				x := f.Arg(f32(8, 4))
				outs := f.ShardMap(mesh42.Abstract(), specs(mesh.P("x")), specs(mesh.P()), nil,
					func(g *lower.Function, args []lower.Value) []lower.Value {
						return []lower.Value{g.Psum(g.Sum(args[0]), "x", "w")}
					}, x)
				f.Return(outs...)
			},
			sentinel: lower.ErrUnknownAxis, op: "all_reduce", operand: 0,
			msg: `lower: @main: all_reduce: operand 0 (%2): unknown mesh axis: unknown axis "w" (mesh has ("x", "y"))`,
		},
		{
			name: "unknown axis in spec",
			build: func(m *lower.Module) {
				f := m.Main()
				x := f.Arg(f32(8, 4))
				outs := f.ShardMap(mesh42.Abstract(), specs(mesh.P("q")), specs(mesh.P()), nil,
					func(g *lower.Function, args []lower.Value) []lower.Value { return args }, x)
				f.Return(outs...)
			},
			sentinel: mesh.ErrUnknownAxis, op: "sdy.manual_computation", operand: 0,
		},
		{
			name: "non-divisible manual dimension",
			build: func(m *lower.Module) {
				f := m.Main()
				x := f.Arg(f32(6, 4))
				outs := f.ShardMap(mesh42.Abstract(), specs(mesh.P("x")), specs(mesh.P("x")), nil,
					func(g *lower.Function, args []lower.Value) []lower.Value { return args }, x)
				f.Return(outs...)
			},
			sentinel: lower.ErrIndivisible, op: "sdy.manual_computation", operand: 0,
			msg: "lower: @main: sdy.manual_computation: operand 0 (%arg0): not divisible: dim 0: dimension size 6 is not divisible by the manual axes size 4",
		},
		{
			name: "meshes of different shapes",
			build: func(m *lower.Module) {
				f := m.Main()
				x := f.ShardedArg(f32(8, 8), ns("x"))
				f.Return(f.ShardingConstraint(x, mesh.MustNamedSharding(mesh24, mesh.P("y"))))
			},
			sentinel: lower.ErrMeshMismatch, op: "sdy.sharding_constraint", operand: 0,
			msg: "lower: @main: sdy.sharding_constraint: operand 0 (%arg0): mesh mismatch: sharding on mesh AbstractMesh('x': 2, 'y': 4, axis_types=(Auto, Auto)), but the module already uses mesh AbstractMesh('x': 4, 'y': 2, axis_types=(Auto, Auto)) (one mesh shape per module; see WithMultipleMeshes)",
		},
		{
			name: "collective outside shard_map",
			build: func(m *lower.Module) {
				f := m.Main()
				f.Return(f.Psum(f.Arg(f32(4)), "x"))
			},
			sentinel: lower.ErrNotManual, op: "all_reduce", operand: 0,
		},
		{
			name: "collective over a free axis",
			build: func(m *lower.Module) {
				f := m.Main()
				x := f.Arg(f32(8, 4))
				outs := f.ShardMap(mesh42.Abstract(), specs(mesh.P("x")), specs(mesh.P("x")), []string{"x"},
					func(g *lower.Function, args []lower.Value) []lower.Value {
						return []lower.Value{g.AllGatherOver(args[0], 1, "y")}
					}, x)
				f.Return(outs...)
			},
			sentinel: lower.ErrNotManual, op: "all_gather", operand: 0,
		},
		{
			name: "constraint on a manual axis inside the body",
			build: func(m *lower.Module) {
				f := m.Main()
				x := f.Arg(f32(8, 4))
				outs := f.ShardMap(mesh42.Abstract(), specs(mesh.P("x")), specs(mesh.P("x")), []string{"x"},
					func(g *lower.Function, args []lower.Value) []lower.Value {
						return []lower.Value{g.ShardingConstraint(args[0], ns("x"))}
					}, x)
				f.Return(outs...)
			},
			sentinel: lower.ErrSharding, op: "sdy.sharding_constraint", operand: 0,
		},
		{
			name: "partial shard_map in GSPMD mode",
			opts: []lower.Option{lower.WithPartitioner(lower.GSPMD)},
			build: func(m *lower.Module) {
				f := m.Main()
				x := f.Arg(f32(8, 4))
				outs := f.ShardMap(mesh42.Abstract(), specs(mesh.P("x")), specs(mesh.P("x")), []string{"x"},
					func(g *lower.Function, args []lower.Value) []lower.Value { return args }, x)
				f.Return(outs...)
			},
			sentinel: lower.ErrPartitioner, op: "sdy.manual_computation", operand: -1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := lower.NewModule("bad", tc.opts...)
			tc.build(m)
			prog, err := m.Build()
			require.Nil(t, prog)
			require.Error(t, err)
			require.ErrorIs(t, err, tc.sentinel)
			if tc.msg != "" {
				require.Equal(t, tc.msg, err.Error())
			}
			var oe *lower.OpError
			require.True(t, errors.As(err, &oe))
			require.Equal(t, tc.op, oe.Op)
			require.Equal(t, tc.operand, oe.Operand)
			require.Equal(t, err, m.Err())
		})
	}
}
