package oracletest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/mesh"
)

type visualizeCase struct {
	caseHead
	Mesh  meshJSON `json:"mesh"`
	Spec  []any    `json:"spec"`
	Shape []int    `json:"shape"`
	JAX   struct {
		Text  string    `json:"text"`
		Error *jaxError `json:"error,omitempty"`
	} `json:"jax"`
}

// TestVisualize compares mesh.Visualize with the text
// jax.debug.visualize_sharding(shape, sharding, use_color=False) prints.
func TestVisualize(t *testing.T) {
	g := loadGolden[visualizeCase](t, "visualize")
	report.noteGroup("visualize", "`mesh.Visualize(w, sharding, shape)` against `jax.debug.visualize_sharding(shape, sharding, use_color=False)` captured from stdout (rich, non-TTY), compared byte for byte.")
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			m, err := buildMesh(c.Mesh)
			if err != nil {
				t.Fatal(err)
			}
			var d []string
			s, err := mesh.NewNamedSharding(m, specOf(c.Spec))
			var b strings.Builder
			if err == nil {
				err = mesh.Visualize(&b, s, c.Shape)
			}
			if c.ExpectError {
				d = errDiffs(c.caseHead, c.JAX.Error, err)
			} else if d = okDiffs(c.JAX, err); err == nil && b.String() != c.JAX.Text {
				d = append(d, fmt.Sprintf("text differs:\nJAX:\n%s\nxlamesh:\n%s", c.JAX.Text, b.String()))
			}
			report.check(t, "visualize", c.Name, d)
		})
	}
}
