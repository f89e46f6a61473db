package oracletest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// linalgFile is testdata/oracle/linalg.json (tools/oracle/linalg.py): jnp.linalg and lax.linalg
// functions exported by JAX for CPU, where they call jaxlib's LAPACK kernels.
type linalgFile struct {
	JAXVersion string           `json:"jax_version"`
	Artifacts  []linalgArtifact `json:"artifacts"`
}

// linalgArtifact is one function on one dtype, on a matrix or a batch of two.
type linalgArtifact struct {
	Name              string      `json:"name"` // function/dtype[/batched]
	Function          string      `json:"function"`
	About             string      `json:"about"`
	CustomCallTargets []string    `json:"custom_call_targets"`
	Exported          string      `json:"exported"` // base64 of jax.export's serialization
	Text              string      `json:"text"`
	Inputs            []arrayJSON `json:"inputs"`
	Outputs           []arrayJSON `json:"outputs"`
}

// TestLinalgCPUOnly runs each function of the linalg corpus (cholesky, solve, triangular solve,
// LU, QR plain, complete and pivoted, ormqr, eigh, eigvalsh, eig, eigvals, SVD by divide and
// conquer, full, values only and by QR, Schur, Hessenberg, tridiagonal reduction and solve,
// perturbed or not: every target jaxlib 0.12 registers) on float32, float64, complex64 and
// complex128, on one matrix and on a batch, through jit.FromExported and through jit.FromText
// of its module as JAX printed it, on one device of the CPU plugin with xlamesh's LAPACK
// kernels, and compares the results with JAX's within the tolerances of JAX's own tests of those
// kernels. The kernels must be served: without a LAPACK the test fails, saying why.
func TestLinalgCPUOnly(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(goldenDir, "linalg.json"))
	if err != nil {
		t.Fatalf("%v (regenerate with `make oracle`)", err)
	}
	var f linalgFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	c := pjrttest.Client(t)
	if st := c.Plugin().LAPACK(); st.Err != nil {
		t.Fatalf("the LAPACK kernels are not all served (`make setup` installs a LAPACK): %v", st.Err)
	}
	report.noteGroup("linalg", fmt.Sprintf("jnp.linalg, lax.linalg and jax.scipy.linalg functions exported by jax %s "+
		"for CPU (`testdata/oracle/linalg.json`, tools/oracle/linalg.py), where they call jaxlib's LAPACK kernels: each on "+
		"float32, float64, complex64 and complex128, on one matrix and on a batch of two, run on one device with the "+
		"kernels xlamesh registers (`pjrt.Plugin.LAPACK`): **exported**: `jit.FromExported`; **text**: `jit.FromText` of "+
		"the module as JAX printed it. Float outputs are compared within the tolerances of JAX's own tests of the kernels "+
		"(rtol 1e-3 and atol 1e-4 for f32 and c64, 1e-5 and 1e-12 for f64 and c128); where a result is not unique "+
		"(eigenvectors, singular vectors, Schur vectors) the program returns what is: magnitudes, or the matrix rebuilt "+
		"from its factors.", f.JAXVersion))
	m, err := mesh.New(jit.Devices(c)[:1], []int{1}, "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range f.Artifacts {
		t.Run(a.Name, func(t *testing.T) {
			if !servesAll(c, a.CustomCallTargets) {
				t.Fatalf("calls %v; served: %v", a.CustomCallTargets, c.Plugin().LAPACK().Targets)
			}
			code, err := base64.StdEncoding.DecodeString(a.Exported)
			if err != nil {
				t.Fatal(err)
			}
			e, err := jaxexport.Read(code)
			if err != nil {
				t.Fatal(err)
			}
			report.aboutProgram(a.Function, a.About, "each dtype, on a matrix and on a batch")
			run := func(how string, fn *jit.Function, err error) {
				var diffs []string
				if err != nil {
					diffs = []string{how + ": " + err.Error()}
				} else {
					defer fn.Close()
					diffs, _, _ = callAndCompare(t, c, fn, m, a.Inputs, a.Outputs, true, true)
				}
				report.check(t, "linalg", a.Name+"/"+how, diffs)
			}
			fn, err := jit.FromExported(e, jit.WithMesh(m))
			run("exported", fn, err)
			fn, err = jit.FromText(a.Name, a.Text, jit.WithMesh(m))
			run("text", fn, err)
		})
	}
}
