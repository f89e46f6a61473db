package oracletest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/xlamesh/xlamesh/mesh"
)

type flaxCase struct {
	caseHead
	Rules any   `json:"rules"`
	Names []any `json:"names"`
	JAX   struct {
		Result []any     `json:"result"`
		Repr   string    `json:"repr"`
		Error  *jaxError `json:"error,omitempty"`
	} `json:"jax"`
}

// flaxRules converts the corpus rules to []mesh.Rule. ok is false when the
// rules cannot be written with mesh.Rule (the reason says why).
func flaxRules(v any) (rules []mesh.Rule, why string) {
	list, isList := v.([]any)
	if !isList {
		return nil, "rules that are not a sequence cannot be written with Go's typed []mesh.Rule"
	}
	for _, r := range list {
		pair := r.([]any)
		name := pair[0].(string)
		switch m := pair[1].(type) {
		case nil:
			rules = append(rules, mesh.Rule{Logical: name, Mesh: mesh.None})
		case string:
			rules = append(rules, mesh.R(name, m))
		case []any:
			var axes []string
			for _, a := range m {
				s, ok := a.(string)
				if !ok {
					return nil, "a rule whose tuple holds None (flax keeps ('x', None) inside the spec) cannot be written with mesh.Axes"
				}
				axes = append(axes, s)
			}
			rules = append(rules, mesh.R(name, axes...))
		}
	}
	return rules, ""
}

// TestFlaxRules compares mesh.LogicalToMesh with flax's logical_to_mesh_axes.
func TestFlaxRules(t *testing.T) {
	g := loadGolden[flaxCase](t, "flax")
	report.noteGroup("flax", "`mesh.LogicalToMesh(names, rules)` against `flax.linen.partitioning.logical_to_mesh_axes(names, rules)`; a None name is \"\" and P.UNCONSTRAINED is `mesh.LogicalUnconstrained`.")
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			rules, why := flaxRules(c.Rules)
			if why != "" {
				report.skip("flax", c.Name, why)
				return
			}
			names := make([]string, len(c.Names))
			for i, n := range c.Names {
				if s, ok := n.(string); ok {
					names[i] = s // "?" is mesh.LogicalUnconstrained
				}
			}
			p, err := mesh.LogicalToMesh(names, rules)
			var d []string
			if c.ExpectError {
				d = errDiffs(c.caseHead, c.JAX.Error, err)
			} else if d = okDiffs(c.JAX, err); err == nil {
				want := c.JAX.Result
				if want == nil {
					want = []any{}
				}
				if got := specJSON(p); !reflect.DeepEqual(want, got) {
					d = append(d, fmt.Sprintf("spec: JAX %s, xlamesh %s", pyRepr(c.JAX.Repr), p))
				}
			}
			report.check(t, "flax", c.Name, d)
		})
	}
}
