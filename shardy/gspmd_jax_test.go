package shardy

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/mesh"
)

// TestGSPMDMatchesJAX checks GSPMD against texts JAX computed for random
// meshes, axis types, specs and ranks (testdata/gspmd_jax.json, written by
// testdata/gen_gspmd_jax.py).
func TestGSPMDMatchesJAX(t *testing.T) {
	b, err := os.ReadFile("testdata/gspmd_jax.json")
	require.NoError(t, err)
	var data struct {
		JAX   string
		Cases []struct {
			Sizes []int
			Names []string
			Types []string
			Spec  [][]string
			Rank  int
			Want  string
		}
	}
	require.NoError(t, json.Unmarshal(b, &data))
	require.NotEmpty(t, data.Cases)
	typeOf := map[string]mesh.AxisType{"Auto": mesh.Auto, "Explicit": mesh.Explicit, "Manual": mesh.Manual}
	for i, c := range data.Cases {
		types := make([]mesh.AxisType, len(c.Types))
		for j, ty := range c.Types {
			types[j] = typeOf[ty]
		}
		a, err := mesh.NewAbstract(c.Sizes, c.Names, types...)
		require.NoError(t, err)
		entries := make([]any, len(c.Spec))
		for j, e := range c.Spec {
			if e != nil {
				entries[j] = e
			}
		}
		ns, err := mesh.NewAbstractSharding(a, mesh.P(entries...))
		require.NoError(t, err, "case %d", i)
		got, err := GSPMD(ns, c.Rank)
		require.NoError(t, err, "case %d", i)
		assert.Equal(t, c.Want, got, "case %d: mesh %v %v %v, spec %v, rank %d (jax %s)",
			i, c.Sizes, c.Names, c.Types, fmt.Sprint(c.Spec), c.Rank, data.JAX)
	}
}

// TestGSPMDMatchesXLA checks TensorSharding.GSPMD against XLA's own export
// of sdy shardings to HloSharding (jaxlib's mlir_module_to_xla_computation)
// for random shardings with sub-axes, open dimensions, replicated axes and
// meshes with device_ids (testdata/gspmd_xla.json, written by
// testdata/gen_gspmd_xla.py).
func TestGSPMDMatchesXLA(t *testing.T) {
	b, err := os.ReadFile("testdata/gspmd_xla.json")
	require.NoError(t, err)
	var data struct {
		JAX   string
		Cases []struct{ Mesh, Sharding, Want string }
	}
	require.NoError(t, json.Unmarshal(b, &data))
	require.NotEmpty(t, data.Cases)
	for i, c := range data.Cases {
		m, err := ParseMesh(c.Mesh)
		require.NoError(t, err, "case %d", i)
		s, err := ParseTensorSharding(c.Sharding)
		require.NoError(t, err, "case %d", i)
		got, err := s.GSPMD(m)
		require.NoError(t, err, "case %d: %s on %s", i, c.Sharding, c.Mesh)
		assert.Equal(t, c.Want, got, "case %d: %s on %s (jax %s)", i, c.Sharding, c.Mesh, data.JAX)
	}
}
