package lower_test

import (
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// A sharding constraint in the forward program has its transpose, the same constraint on the
// cotangent, in the backward program: with Shardy an sdy.sharding_constraint, with GSPMD an
// @Sharding custom call.
func TestGradKeepsConstraints(t *testing.T) {
	s, err := mesh.NewNamedSharding(mesh42, mesh.P(nil, "y"))
	require.NoError(t, err)
	for _, tc := range []struct {
		p    lower.Partitioner
		want string
	}{
		{lower.Shardy, `sdy.sharding_constraint %`},
		{lower.GSPMD, `@Sharding(`},
	} {
		t.Run(tc.p.String(), func(t *testing.T) {
			m := lower.NewModule("g", lower.WithPartitioner(tc.p))
			f := m.Main()
			x := f.Arg(lower.NewShape(dtypes.Float32, 8, 4))
			y := f.ShardingConstraint(f.Tanh(x), s)
			g := autodiff.Grad(f.Function, f.Sum(f.Mul(y, y)), x)
			f.Return(g...)
			prog, err := m.Build()
			require.NoError(t, err)
			require.Equal(t, 2, strings.Count(prog.Text(), tc.want), prog.Text())
			ops := f.Ops()
			var constraints []any
			for _, op := range ops {
				if op.Name() == "sdy.sharding_constraint" || op.Name() == "stablehlo.custom_call" {
					constraints = append(constraints, op.Params())
				}
			}
			require.Len(t, constraints, 2)
			require.Equal(t, constraints[0], constraints[1], "the backward constraint has the forward one's sharding")
		})
	}
}

// Ops without a transpose rule record ErrNotDifferentiable naming them.
func TestGradShardMapErrors(t *testing.T) {
	abs := mesh42.Abstract()
	for _, tc := range []struct {
		name, op, msg string
		body          func(f *lower.Function, x lower.Value) lower.Value
	}{
		{"pmax", "stablehlo.all_reduce", "all_reduce with Max has no transpose rule", func(f *lower.Function, x lower.Value) lower.Value {
			return f.ShardMap(abs, []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P()}, nil,
				func(g *lower.Function, a []lower.Value) []lower.Value { return []lower.Value{g.Pmax(a[0], "x", "y")} }, x)[0]
		}},
		{"unchecked", "sdy.manual_computation", "ShardMapUnchecked", func(f *lower.Function, x lower.Value) lower.Value {
			return f.ShardMapUnchecked(abs, []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x")}, nil,
				func(g *lower.Function, a []lower.Value) []lower.Value { return a }, x)[0]
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := lower.NewModule("g")
			f := m.Main()
			x := f.Arg(lower.NewShape(dtypes.Float32, 8, 4))
			g := autodiff.Grad(f.Function, f.Sum(tc.body(f, x)), x)
			f.Return(g...)
			_, err := m.Build()
			require.ErrorIs(t, err, autodiff.ErrNotDifferentiable)
			require.ErrorContains(t, err, tc.msg)
			var oe *stablehlo.OpError
			require.ErrorAs(t, err, &oe)
			require.Equal(t, tc.op, oe.Op)
		})
	}
}

// The transpose of a shard_map is a shard_map with the operands' in_specs as out_specs; a
// replicated weight's cotangent is summed over the axis its contribution varies along.
func TestGradShardMapText(t *testing.T) {
	abs := mesh42.Abstract()
	m := lower.NewModule("g")
	f := m.Main()
	x := f.Arg(lower.NewShape(dtypes.Float32, 8, 4))
	w := f.Arg(lower.NewShape(dtypes.Float32, 4, 2))
	y := f.ShardMap(abs, []mesh.PartitionSpec{mesh.P("x"), mesh.P()}, []mesh.PartitionSpec{mesh.P("x")}, nil,
		func(g *lower.Function, a []lower.Value) []lower.Value {
			return []lower.Value{g.Tanh(g.MatMul(a[0], a[1]))}
		}, x, w)[0]
	f.Return(autodiff.Grad(f.Function, f.Sum(y), x, w)...)
	prog, err := m.Build()
	require.NoError(t, err)
	text := prog.Text()
	require.Equal(t, 2, strings.Count(text, "sdy.manual_computation("), text)
	// The backward shard_map: operands x, w and the cotangent; results the cotangents of x
	// and w with their in_specs; w's summed over "x" inside.
	require.Contains(t, text, `in_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>, <@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>]`)
	require.Contains(t, text, `"stablehlo.all_reduce"`)
}
