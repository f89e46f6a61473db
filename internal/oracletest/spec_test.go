package oracletest

import (
	"fmt"
	"reflect"
	"testing"
)

type specCase struct {
	caseHead
	Spec []any `json:"spec"`
	JAX  struct {
		Canonical []any     `json:"canonical"`
		Len       int       `json:"len"`
		Repr      string    `json:"repr"`
		Error     *jaxError `json:"error,omitempty"`
	} `json:"jax"`
}

// TestSpec compares mesh.P's canonical entries and text with PartitionSpec's.
func TestSpec(t *testing.T) {
	g := loadGolden[specCase](t, "spec")
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			p := specOf(c.Spec)
			var d []string
			if c.ExpectError {
				d = errDiffs(c.caseHead, c.JAX.Error, p.Err())
			} else if d = okDiffs(c.JAX, p.Err()); p.Err() == nil {
				want := c.JAX.Canonical
				if want == nil {
					want = []any{}
				}
				if got := specJSON(p); !reflect.DeepEqual(want, got) {
					d = append(d, fmt.Sprintf("canonical entries: JAX %v, xlamesh %v", want, got))
				}
				eq1(&d, "Len", c.JAX.Len, p.Len())
				eq1(&d, "String", pyRepr(c.JAX.Repr), p.String())
			}
			report.check(t, "spec", c.Name, d)
		})
	}
}
