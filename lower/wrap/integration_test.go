package wrap_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/internal/lowertest"
	"github.com/xlamesh/xlamesh/internal/reftest"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/lower/wrap"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestIntegrationWrap compiles and runs wrapped foreign modules in both modes, sharded on
// lowertest.RealMesh.
func TestIntegrationWrap(t *testing.T) {
	c := pjrttest.Client(t)
	m := lowertest.RealMesh(t, c)
	x, b := reftest.SmallFloats(16), []float32{10, 20}
	for _, p := range []lower.Partitioner{lower.Shardy, lower.GSPMD} {
		t.Run("jax_export/"+p.String(), func(t *testing.T) {
			prog, err := wrap.Module(jaxExported, []mesh.NamedSharding{on(m, "x", "y"), on(m, "y")}, []mesh.NamedSharding{on(m, "x", "y")},
				wrap.WithPartitioner(p))
			require.NoError(t, err)
			got := lowertest.Run(t, c, m, prog, [][]float32{x, b})
			want := make([]float32, 16)
			for i, v := range x {
				want[i] = v + b[i%2]
			}
			require.Equal(t, [][]float32{want}, got)
		})
		t.Run("bare/"+p.String(), func(t *testing.T) {
			prog, err := wrap.Module(bareModule, []mesh.NamedSharding{on(m, "x")}, []mesh.NamedSharding{on(m, nil, "y")}, wrap.WithPartitioner(p))
			require.NoError(t, err)
			got := lowertest.Run(t, c, m, prog, [][]float32{x})
			want := make([]float32, 16)
			for i, v := range x {
				want[i] = v * v
			}
			require.Equal(t, [][]float32{want}, got)
		})
	}
}
