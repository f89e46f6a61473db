package refine_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/mlir/bytecode"
	"github.com/xlamesh/xlamesh/refine"
	"github.com/xlamesh/xlamesh/shapes"
)

type goldenArray struct {
	Shape []int  `json:"shape"`
	DType string `json:"dtype"`
}

// shapeOf returns a golden array's shape, its dtype a NumPy name.
func shapeOf(t *testing.T, a goldenArray) shapes.Shape {
	t.Helper()
	for d := range 64 {
		if shapes.NumPyName(dtypeOf(d)) == a.DType && shapes.Supported(dtypeOf(d)) {
			return shapes.Make(dtypeOf(d), a.Shape...)
		}
	}
	t.Fatalf("dtype %q", a.DType)
	return shapes.Shape{}
}

// mainResults returns the result types of @main in a refined module, as written.
func mainResults(t *testing.T, text string) []string {
	t.Helper()
	_, results, _, err := refine.Signature(text)
	require.NoError(t, err)
	out := make([]string, len(results))
	for i, r := range results {
		out[i] = r.String()
	}
	return out
}

// TestCorpus refines every module of the shape-polymorphism corpora
// (testdata/oracle/programs_poly.json, programs_poly081.json) for each size JAX called it at,
// and the modules of JAX's back-compat data with dynamic shapes (backcompat.json) for their
// inputs, each as its bytecode reads and as JAX printed it: the result is static, mlir.Check
// accepts it, and @main's results have the shapes of JAX's outputs.
func TestCorpus(t *testing.T) {
	n := 0
	for _, file := range []string{"programs_poly.json", "programs_poly081.json"} {
		var poly struct {
			Programs []struct {
				Name, Exported, Text string
				Calls                []struct {
					Inputs, Outputs []goldenArray
				}
			}
		}
		readGolden(t, file, &poly)
		for _, p := range poly.Programs {
			b, err := base64.StdEncoding.DecodeString(p.Exported)
			require.NoError(t, err)
			e, err := jaxexport.Read(b)
			require.NoError(t, err)
			text, err := bytecode.ToText(e.Module())
			require.NoError(t, err)
			require.NotEmpty(t, p.Text)
			for k, call := range p.Calls {
				t.Run(fmt.Sprintf("%s/%s/%d", file, p.Name, k), func(t *testing.T) {
					checkRefined(t, text, call.Inputs, call.Outputs, e.NrDevices())
					checkRefined(t, p.Text, call.Inputs, call.Outputs, e.NrDevices())
				})
				n++
			}
		}
	}
	var bc struct {
		Artifacts []struct {
			Name, Module, Text string
			NrDevices          int `json:"nr_devices"`
			Inputs, Outputs    []goldenArray
		}
	}
	readGolden(t, "backcompat.json", &bc)
	for _, a := range bc.Artifacts {
		b, err := base64.StdEncoding.DecodeString(a.Module)
		require.NoError(t, err)
		text, err := bytecode.ToText(b)
		require.NoError(t, err)
		if !refine.Polymorphic(text) {
			continue
		}
		t.Run(a.Name, func(t *testing.T) {
			checkRefined(t, text, a.Inputs, a.Outputs, max(1, a.NrDevices))
			checkRefined(t, a.Text, a.Inputs, a.Outputs, max(1, a.NrDevices))
		})
		n++
	}
	assert.GreaterOrEqual(t, n, 33, "refined modules")
}

func checkRefined(t *testing.T, text string, inputs, outputs []goldenArray, devices int) {
	t.Helper()
	var in []shapes.Shape
	for _, a := range inputs {
		in = append(in, shapeOf(t, a))
	}
	out, err := refine.Module(text, in)
	require.NoError(t, err)
	assert.False(t, refine.Polymorphic(strings.Replace(out, "jax.uses_shape_polymorphism = true", "", 1)), "dynamic types left")
	require.NoError(t, mlir.Check(out, mlir.Partitions(devices)))
	var want []string
	for _, a := range outputs {
		want = append(want, shapeOf(t, a).String())
	}
	assert.Equal(t, want, mainResults(t, out))
}

func readGolden(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "oracle", name))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, v))
}

func dtypeOf(d int) dtypes.DType { return dtypes.DType(d) }
