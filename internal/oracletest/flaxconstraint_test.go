package oracletest

import (
	"fmt"
	"testing"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/shardy"
)

type flaxConstraintCase struct {
	caseHead
	Rules    any    `json:"rules"`
	Names    []any  `json:"names"`
	Fallback string `json:"fallback"`
	Shape    []int  `json:"shape"`
	JAX      struct {
		Constraint *string   `json:"constraint"`
		Error      *jaxError `json:"error,omitempty"`
	} `json:"jax"`
}

var fallbacks = map[string]mesh.RulesFallback{
	"AXIS_IS_UNSHARDED": mesh.AxisIsUnsharded, "RAISE_ERROR": mesh.RaiseError, "NO_CONSTRAINT": mesh.NoConstraint,
}

// TestFlaxConstraint compares mesh.LogicalConstraint, turned into Shardy text
// by shardy.FromNamedSharding, with the sdy.sharding_constraint that flax's
// with_logical_constraint lowers to under jit (or its absence).
func TestFlaxConstraint(t *testing.T) {
	g := loadGolden[flaxConstraintCase](t, "flax_constraint")
	report.noteGroup("flax_constraint", "`mesh.LogicalConstraint(names, rules, fallback)` on a 4x2 ('data', 'model') mesh, printed with `shardy.FromNamedSharding(...).Stripped()`, against the `sdy.sharding_constraint` that `flax.linen.spmd.with_logical_constraint(x, names, rules, mesh, fallback)` lowers to under `jax.jit` (none when flax leaves x unconstrained).")
	m, err := buildMesh(meshJSON{Shape: []int{4, 2}, Names: []string{"data", "model"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			rules, why := flaxRules(c.Rules)
			if why != "" {
				report.skip("flax_constraint", c.Name, why)
				return
			}
			var names []string
			if c.Names != nil {
				names = make([]string, len(c.Names))
				for i, n := range c.Names {
					if s, ok := n.(string); ok {
						names[i] = s
					}
				}
			}
			spec, constrain, err := mesh.LogicalConstraint(names, rules, fallbacks[c.Fallback])
			var d []string
			switch {
			case c.ExpectError:
				d = errDiffs(c.caseHead, c.JAX.Error, err)
			case err != nil:
				d = okDiffs(c.JAX, err)
			case !constrain && c.JAX.Constraint != nil:
				d = append(d, fmt.Sprintf("JAX constrains to %s; xlamesh leaves the value unconstrained", *c.JAX.Constraint))
			case constrain && c.JAX.Constraint == nil:
				d = append(d, fmt.Sprintf("JAX leaves the value unconstrained; xlamesh constrains to %s", spec))
			case constrain:
				s, err := mesh.NewNamedSharding(m, spec)
				if err != nil {
					d = append(d, fmt.Sprintf("NewNamedSharding(%s): %v", spec, err))
					break
				}
				ts, err := shardy.FromNamedSharding(s, "mesh", len(c.Shape))
				if err != nil {
					d = append(d, fmt.Sprintf("shardy.FromNamedSharding: %v", err))
					break
				}
				eq1(&d, "constraint", *c.JAX.Constraint, ts.Stripped())
			}
			report.check(t, "flax_constraint", c.Name, d)
		})
	}
}
