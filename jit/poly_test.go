package jit_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir/bytecode"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/refine"
)

// polyLayout returns the artifact of poly_layout in the shape-polymorphism corpus
// (testdata/oracle/programs_poly.json): f(x: f32[4*b, t, 4]) whose first result is
// concatenate([x.reshape(4*b, -1), 2 * that], axis=1), exported for a 4x2 mesh, and its module
// as JAX printed it.
func polyLayout(t *testing.T) (*jaxexport.Exported, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "oracle", "programs_poly.json"))
	require.NoError(t, err)
	var f struct {
		Programs []struct{ Name, Exported, Text string }
	}
	require.NoError(t, json.Unmarshal(raw, &f))
	for _, p := range f.Programs {
		if p.Name == "poly_layout" {
			b, err := base64.StdEncoding.DecodeString(p.Exported)
			require.NoError(t, err)
			e, err := jaxexport.Read(b)
			require.NoError(t, err)
			return e, p.Text
		}
	}
	t.Fatal("no poly_layout in programs_poly.json")
	return nil, ""
}

// TestPolymorphicModules runs a module with symbolic shapes from its bytecode, from the text
// mlir/bytecode writes and from the text JAX printed, at two batch sizes (one executable
// each); refuses a batch that breaks the specification with ErrArguments and JAX's message,
// and a module with an op refinement cannot read with ErrExternal.
func TestPolymorphicModules(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	pjrttest.NeedDevices(t, 8)
	e, printed := polyLayout(t)
	m := mesh42(t, c)
	for _, from := range []string{"bytecode", "text", "printed"} {
		t.Run(from, func(t *testing.T) {
			var f *jit.Function
			var err error
			switch from {
			case "bytecode":
				f, err = jit.FromBytecode("poly_layout", e.Module())
			case "text":
				f, err = jit.FromText("poly_layout", moduleTextOf(t, e))
			default:
				f, err = jit.FromText("poly_layout", printed)
			}
			require.NoError(t, err)
			defer f.Close()
			for _, bt := range [][2]int{{8, 3}, {4, 5}, {8, 3}} {
				n := bt[0] * bt[1] * 4
				x, err := jit.Put(c, arange[float32](n), []int{bt[0], bt[1], 4}, sharding(t, m, mesh.P("x")))
				require.NoError(t, err)
				out, err := f.Call(c, x)
				x.Close()
				require.NoError(t, err)
				require.Len(t, out, 5)
				got, err := out[0].ToHost()
				require.NoError(t, err)
				want := []float32{}
				row := bt[1] * 4
				for r := range bt[0] {
					for k := range row {
						want = append(want, float32(r*row+k))
					}
					for k := range row {
						want = append(want, 2*float32(r*row+k))
					}
				}
				assert.Equal(t, want, got, "b=%d t=%d", bt[0], bt[1])
				assert.Equal(t, []int{bt[0], 2 * row}, out[0].Shape())
				for _, o := range out {
					o.Close()
				}
			}
			assert.Equal(t, jit.CacheStats{LoweringHits: 1, LoweringMisses: 2, CompileHits: 1, CompileMisses: 2}, f.Stats())

			x, err := jit.Put(c, arange[float32](6*3*4), []int{6, 3, 4}, sharding(t, m, mesh.P()))
			require.NoError(t, err)
			defer x.Close()
			_, err = f.Call(c, x)
			require.ErrorIs(t, err, jit.ErrArguments)
			assert.ErrorContains(t, err, "Division had remainder 2 when computing the value of 'b'")
		})
	}
	einsum := "module @m attributes {jax.uses_shape_polymorphism = true} {\n  func.func public @main(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {\n" +
		"    %0 = stablehlo.einsum %arg0, config = \"ij->ij\" : (tensor<?x4xf32>) -> tensor<?x4xf32>\n    return %0 : tensor<?x4xf32>\n  }\n}\n"
	_, err := jit.FromText("einsum", einsum)
	require.ErrorIs(t, err, jit.ErrExternal)
	require.ErrorIs(t, err, refine.ErrUnsupported)
	assert.ErrorContains(t, err, "stablehlo.einsum in its custom form")
	assert.True(t, slices.Contains(e.InDims()[0], "4*b"), "%v", e.InDims())
}

// moduleTextOf returns an artifact's module as the text mlir/bytecode writes.
func moduleTextOf(t *testing.T, e *jaxexport.Exported) string {
	t.Helper()
	text, err := bytecode.ToText(e.Module())
	require.NoError(t, err)
	return text
}
