package lower_test

import (
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
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
