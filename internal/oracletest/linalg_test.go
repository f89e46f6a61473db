package oracletest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/linalg"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// linalgFile is testdata/oracle/linalg.json (tools/oracle/linalg.py): jnp.linalg and lax.linalg
// functions exported by JAX for CPU, where they call jaxlib's LAPACK kernels.
type linalgFile struct {
	JAXVersion string           `json:"jax_version"`
	Artifacts  []linalgArtifact `json:"artifacts"`
	Grads      []linalgGrad     `json:"grads"`
}

// linalgGrad is jax.grad of sum(real(function(inputs) * weights)) with respect to every input.
type linalgGrad struct {
	Name     string      `json:"name"`
	Function string      `json:"function"`
	Inputs   []arrayJSON `json:"inputs"`
	Weights  []arrayJSON `json:"weights"`
	Grads    []arrayJSON `json:"grads"`
}

// linalgArtifact is one function on one dtype, on a matrix or a batch of two.
type linalgArtifact struct {
	Name              string      `json:"name"` // function/dtype[/batched]
	Function          string      `json:"function"`
	About             string      `json:"about"`
	CustomCallTargets []string    `json:"custom_call_targets"`
	Exported          string      `json:"exported"` // base64 of jax.export's serialization
	Text              string      `json:"text"`     // for one matrix only
	Batched           bool        `json:"batched"`
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
	f := loadLinalg(t)
	report.noteGroup("linalg", fmt.Sprintf("jnp.linalg, lax.linalg and jax.scipy.linalg functions exported by jax %s "+
		"for CPU (`testdata/oracle/linalg.json`, tools/oracle/linalg.py), where they call jaxlib's LAPACK kernels: each on "+
		"float32, float64, complex64 and complex128, on one matrix and on a batch of two, run on one device with the "+
		"kernels xlamesh registers (`pjrt.Plugin.LAPACK`): **exported**: `jit.FromExported`; **text**: `jit.FromText` of "+
		"the module as JAX printed it (on one matrix: a batch's module differs only in its shapes). Float outputs are compared within the tolerances of JAX's own tests of the kernels "+
		"(rtol 1e-3 and atol 1e-4 for f32 and c64, 1e-5 and 1e-12 for f64 and c128); where a result is not unique "+
		"(eigenvectors, singular vectors, Schur vectors) the program returns what is: magnitudes, or the matrix rebuilt "+
		"from its factors. **package linalg**: the same function built in Go with package `linalg` (TestLinalgBuilderCPUOnly); "+
		"**gradient**: package autodiff's gradient of sum(real(f(inputs) * weights)) through package linalg's build, compared with "+
		"jax.grad's (TestLinalgGradCPUOnly).", f.JAXVersion))
	c, m := linalgClient(t)
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
			if !a.Batched { // the printed module of one matrix only
				fn, err = jit.FromText(a.Name, a.Text, jit.WithMesh(m))
				run("text", fn, err)
			}
		})
	}
}

// linalgBuilders build with package linalg what linalg.py's functions compute, for the
// functions it has: the same outputs in the same order (magnitudes where JAX's program returns
// them).
var linalgBuilders = map[string]func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value{
	"cholesky": func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value {
		return []stablehlo.Value{linalg.Cholesky(f, x[0])}
	},
	"solve": func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value {
		return []stablehlo.Value{linalg.Solve(f, x[0], x[1])}
	},
	"triangular_solve": func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value {
		o := linalg.TriangularOptions{LeftSide: true, Lower: true, TransposeA: true}
		return []stablehlo.Value{linalg.TriangularSolve(f, x[0], x[1], o)}
	},
	"triangular_solve_adjoint": func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value {
		o := linalg.TriangularOptions{TransposeA: true, ConjugateA: true, UnitDiagonal: true}
		return []stablehlo.Value{linalg.TriangularSolve(f, x[0], x[1], o)}
	},
	"lu": func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value {
		lu, pivots, perm := linalg.LU(f, x[0])
		return []stablehlo.Value{lu, pivots, perm}
	},
	"qr": func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value {
		q, r := linalg.QR(f, x[0], false)
		return []stablehlo.Value{q, r}
	},
	"qr_complete": func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value {
		q, r := linalg.QR(f, x[0], true)
		return []stablehlo.Value{q, r}
	},
	"eigh": func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value {
		w, v := linalg.Eigh(f, x[0])
		return []stablehlo.Value{w, f.Abs(v)}
	},
	"svd": func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value {
		u, s, vh := linalg.SVD(f, x[0], false)
		return []stablehlo.Value{f.Abs(u), s, f.Abs(vh)}
	},
	"svd_wide": func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value {
		u, s, vh := linalg.SVD(f, x[0], false)
		return []stablehlo.Value{f.Abs(u), s, f.Abs(vh)}
	},
	"svd_full": func(f *stablehlo.Function, x []stablehlo.Value) []stablehlo.Value {
		u, s, vh := linalg.SVD(f, x[0], true)
		return []stablehlo.Value{f.Abs(u), s, f.Abs(vh)}
	},
}

// TestLinalgBuilderCPUOnly builds, with package linalg, the functions of the linalg corpus it
// has (Cholesky, Solve, TriangularSolve, LU, QR reduced and complete, Eigh, SVD reduced and
// full), jits them on one device of the CPU plugin and compares their results on the corpus's
// inputs with JAX's, as TestLinalgCPUOnly compares JAX's own programs: JAX's CPU lowering
// written in Go must compute what JAX computes.
func TestLinalgBuilderCPUOnly(t *testing.T) {
	f := loadLinalg(t)
	c, m := linalgClient(t)
	built := 0
	for _, a := range f.Artifacts {
		build, ok := linalgBuilders[a.Function]
		if !ok {
			continue
		}
		built++
		t.Run(a.Name, func(t *testing.T) {
			fn := jit.New(strings.NewReplacer("/", "_").Replace(a.Name), func(f *lower.Function, x []lower.Value) []lower.Value {
				return build(f.Function, x)
			}, jit.WithMesh(m))
			defer fn.Close()
			diffs, _, _ := callAndCompare(t, c, fn, m, a.Inputs, a.Outputs, true, true)
			report.check(t, "linalg", a.Name+"/package linalg", diffs)
		})
	}
	if built != 8*len(linalgBuilders) {
		t.Errorf("built %d programs, want 8 (4 dtypes, batched and not) for each of %d functions", built, len(linalgBuilders))
	}
}

// linalgClient returns the CPU client, failing when it does not serve the LAPACK kernels, and a
// mesh of its first device.
func linalgClient(t *testing.T) (*pjrt.Client, mesh.Mesh) {
	t.Helper()
	c := pjrttest.Client(t)
	if st := c.Plugin().LAPACK(); st.Err != nil {
		t.Fatalf("the LAPACK kernels are not all served (`make setup` installs a LAPACK): %v", st.Err)
	}
	m, err := mesh.New(jit.Devices(c)[:1], []int{1}, "x")
	if err != nil {
		t.Fatal(err)
	}
	return c, m
}

// loadLinalg reads testdata/oracle/linalg.json.
func loadLinalg(t *testing.T) linalgFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(goldenDir, "linalg.json"))
	if err != nil {
		t.Fatalf("%v (regenerate with `make oracle`)", err)
	}
	var f linalgFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestLinalgGradCPUOnly differentiates, with package autodiff, package linalg's builds of the
// functions whose gradients the corpus has: the loss sum(real(function(inputs) * weights)), its
// gradient with respect to every input compared with jax.grad's within JAX's LAPACK tolerances.
func TestLinalgGradCPUOnly(t *testing.T) {
	f := loadLinalg(t)
	c, m := linalgClient(t)
	if len(f.Grads) == 0 {
		t.Fatal("linalg.json has no gradients")
	}
	for _, g := range f.Grads {
		build, ok := linalgBuilders[g.Function]
		if !ok {
			t.Fatalf("%s: no builder for %s", g.Name, g.Function)
		}
		t.Run(g.Name, func(t *testing.T) {
			n := len(g.Inputs)
			fn := jit.New(strings.NewReplacer("/", "_").Replace(g.Name)+"_grad", func(lf *lower.Function, x []lower.Value) []lower.Value {
				f := lf.Function
				outs := build(f, x[:n])
				var loss stablehlo.Value
				for i, o := range outs {
					if !shapes.IsInexact(o.DType()) {
						continue // pivots and permutations: integers, no gradient
					}
					term := f.Sum(f.Real(f.Mul(o, x[n+i])))
					if !loss.Valid() {
						loss = term
					} else {
						loss = f.Add(loss, term)
					}
				}
				return autodiff.Grad(f, loss, x[:n]...)
			}, jit.WithMesh(m))
			defer fn.Close()
			diffs, _, _ := callAndCompare(t, c, fn, m, append(append([]arrayJSON(nil), g.Inputs...), g.Weights...), g.Grads, true, true)
			report.check(t, "linalg", g.Name+"/gradient", diffs)
		})
	}
}
