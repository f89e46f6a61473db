package oracletest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// backCompatFile is testdata/oracle/backcompat.json (tools/oracle/backcompat.py): the modules of
// JAX's export backward-compatibility test data, with JAX's inputs and expected outputs.
type backCompatFile struct {
	JAXVersion string               `json:"jax_version"`
	Artifacts  []backCompatArtifact `json:"artifacts"`
}

// backCompatArtifact is one module of backcompat.json.
type backCompatArtifact struct {
	Name              string      `json:"name"`
	Platform          string      `json:"platform"`
	BytecodeVersion   int         `json:"bytecode_version"`
	NrDevices         int         `json:"nr_devices"`
	CustomCallTargets []string    `json:"custom_call_targets"`
	Module            string      `json:"module"`
	Text              string      `json:"text"`
	Inputs            []arrayJSON `json:"inputs"`
	Outputs           []arrayJSON `json:"outputs"`
}

// xlaTargets are the custom calls the plain XLA CPU plugin runs itself (the partitioner's
// markers and Shardy's round-trip calls); an artifact that calls only these runs on CPU.
var xlaTargets = []string{"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "xla.sdy.FuncResultSharding",
	"annotate_device_placement",
	// What package refine makes of a module with symbolic shapes.
	"shape_assertion", "stablehlo.dynamic_top_k", "stablehlo.dynamic_approx_top_k", "stablehlo.dynamic_rng_bit_generator", "stablehlo.dynamic_reduce_window"}

// TestBackCompatRun runs, on the pinned CPU plugin, every module of JAX's export
// backward-compatibility data that plain XLA can run on CPU, whatever platform it was exported
// for (custom calls only of xlaTargets; symbolic shapes refined for the inputs by package
// refine), written from 2023 on in MLIR bytecode versions 0 to 6: jit.FromBytecode, as
// written, on the first nr_devices devices (NumPartitions for the modules that do not say),
// inputs replicated and moved by Reshard; outputs compared with JAX's expected ones like the
// programs corpus's. Modules that call LAPACK kernels run where xlamesh serves every kernel
// they call (pjrt.Plugin.LAPACK, over the LAPACK `make setup` installs); the others must fail to
// compile with an error that names the handler and the package that provides it (issue 32
// brings the rest).
func TestBackCompatRun(t *testing.T) {
	f := loadBackCompat(t)
	c := pjrttest.Client(t)
	report.noteGroup("backcompat", fmt.Sprintf("The modules of JAX's own export backward-compatibility test data "+
		"(`testdata/oracle/backcompat.json`, read from jax %s by tools/oracle/backcompat.py) that plain XLA runs on CPU, "+
		"whatever platform they were exported for: `jit.FromBytecode` as written, with `NumPartitions` and `Reshard`; "+
		"**text**: `jit.FromText` of the module as JAX printed it in the data, the same way; **re-sharded**: `jit.FromBytecode` "+
		"with InSpecs and OutSpecs replicating every input and result on a mesh of at least two devices (axis `a`, as the data's meshes); "+
		"outputs compared with JAX's expected outputs. The modules that call jaxlib's LAPACK kernels run where xlamesh serves every kernel "+
		"they call (`pjrt.Plugin.LAPACK`, over the LAPACK of `xlamesh install-plugin -plugin lapack`), their float outputs compared "+
		"within the tolerances of JAX's own back-compat tests of those kernels (rtol 1e-3 and atol 1e-4 for f32 and c64, "+
		"1e-5 and 1e-12 for f64 and c128: two LAPACK builds agree only to the last bits); the others are refused at compile "+
		"with an error naming the kernel.", f.JAXVersion))
	ran, eligible := map[int]int{}, map[int]int{} // modules run, and those this host and plugin can run
	for _, a := range f.Artifacts {
		runnable, lapack := true, false
		for _, cc := range a.CustomCallTargets {
			if !slices.Contains(xlaTargets, cc) {
				runnable = false
			}
			if strings.HasPrefix(cc, "lapack_") || strings.HasPrefix(cc, "blas_") {
				lapack = true
			}
		}
		if !runnable && !lapack {
			continue
		}
		t.Run(a.Name, func(t *testing.T) {
			code, err := base64.StdEncoding.DecodeString(a.Module)
			if err != nil {
				t.Fatal(err)
			}
			n := max(1, a.NrDevices)
			pjrttest.NeedDevices(t, n)
			eligible[a.BytecodeVersion]++
			name := strings.ReplaceAll(a.Name, "/", "_")
			m, err := mesh.New(jit.Devices(c)[:n], []int{n}, "x")
			if err != nil {
				t.Fatal(err)
			}
			// call runs fn on a mesh and compares its outputs with JAX's; err is the call's error.
			call := func(fn *jit.Function, on mesh.Mesh) (diffs []string, err error) {
				// Eigenvectors and Schur vectors are not unique: checked as JAX's own back-compat
				// test checks them, not value by value.
				property := propertyCheck(a.Name)
				diffs, values, err := callAndCompare(t, c, fn, on, a.Inputs, a.Outputs, lapack, property == nil)
				if property != nil && len(values) == len(a.Outputs) {
					if d := property(a, values); d != "" {
						diffs = append(diffs, d)
					}
				}
				return diffs, err
			}
			fn, err := jit.FromBytecode(name, code, jit.NumPartitions(n), jit.Reshard(), jit.WithMesh(m))
			if err != nil {
				t.Fatal(err)
			}
			defer fn.Close()
			diffs, err := call(fn, m)
			if lapack && !servesAll(c, a.CustomCallTargets) {
				if err == nil {
					t.Fatal("a LAPACK module compiled")
				}
				if !errors.Is(err, pjrt.ErrCompile) || !strings.Contains(err.Error(), a.CustomCallTargets[0]+" is a LAPACK kernel of jaxlib") {
					t.Errorf("the error does not name %s and the package that provides it: %v", a.CustomCallTargets[0], err)
				}
				eligible[a.BytecodeVersion]-- // refused, as it should be: not one that runs
				return
			}
			_, minor := c.Plugin().APIVersion()
			if err != nil && minor < pjrt.MemorySpacesMinor && slices.Contains(a.CustomCallTargets, "annotate_device_placement") &&
				errors.Is(err, pjrt.ErrUnimplemented) && strings.Contains(err.Error(), "annotate_device_placement") {
				// The API 0.81 plugin (2024) predates memory kinds: it has no implementation of
				// JAX's placement annotations, and pjrt refuses them before it sees them.
				t.Logf("refused by the API 0.%d plugin, which has no memory kinds: %v", minor, err)
				eligible[a.BytecodeVersion]--
				return
			}
			report.aboutProgram(a.Name, fmt.Sprintf("JAX's back-compat module, exported for %s, MLIR bytecode version %d", a.Platform, a.BytecodeVersion), "as written")
			report.check(t, "backcompat", a.Name+"/as written", diffs)
			if len(diffs) == 0 {
				ran[a.BytecodeVersion]++
			}

			// The module as JAX printed it when it wrote the data (when its text is of the same
			// module as its bytecode: see refine's TestPrettyForms), run the same way.
			if a.Text != "" && a.Name != "tpu_Sharding/data_2025_06_30/gspmd" {
				tf, err := jit.FromText(name, a.Text, jit.NumPartitions(n), jit.Reshard(), jit.WithMesh(m))
				if err != nil {
					diffs = []string{"jit.FromText: " + err.Error()}
				} else {
					diffs, _ = call(tf, m)
					tf.Close()
				}
				report.check(t, "backcompat", a.Name+"/text", diffs)
			}

			// Re-sharded: the module's own shardings replaced, every input and result replicated,
			// on a mesh of at least two devices whose axis is named as the data's meshes name
			// theirs (a module's shard_map moves only to a mesh with its axis names). A one-GPU
			// host has run the module as written and stops here.
			pjrttest.NeedDevices(t, max(n, 2))
			rm, err := mesh.New(jit.Devices(c)[:max(n, 2)], []int{max(n, 2)}, "a")
			if err != nil {
				t.Fatal(err)
			}
			replicated := func(k int) []mesh.PartitionSpec {
				out := make([]mesh.PartitionSpec, k)
				for i := range out {
					out[i] = mesh.P()
				}
				return out
			}
			rf, err := jit.FromBytecode(name, code, jit.WithMesh(rm), jit.InSpecs(replicated(len(a.Inputs))...),
				jit.OutSpecs(replicated(len(a.Outputs))...))
			if err != nil {
				t.Fatal(err)
			}
			defer rf.Close()
			diffs, _ = call(rf, rm)
			report.check(t, "backcompat", a.Name+"/re-sharded", diffs)
		})
	}
	// Every version among the modules this host and plugin can run: all three on 8 devices.
	t.Logf("ran, by bytecode version: %v (of %v this host and plugin can run)", ran, eligible)
	if ran[0] < min(1, eligible[0]) || ran[1] < min(1, eligible[1]) || ran[6] < min(2, eligible[6]) || eligible[0] == 0 {
		t.Errorf("ran %v by bytecode version; want modules of versions 0, 1 and 6 (those this host and plugin can run: %v)", ran, eligible)
	}
}

// callAndCompare puts inputs replicated on a mesh, calls fn and, with byValue, compares its
// outputs with JAX's (outputs): exactly, float32 within the programs' tolerance, or, for a module
// that calls LAPACK kernels, floats within the tolerance of JAX's own tests of them
// (lapackTolerance). It returns the differences, the outputs read back (for a check of their
// properties instead), and the call's error.
func callAndCompare(t *testing.T, c *pjrt.Client, fn *jit.Function, on mesh.Mesh, inputs, outputs []arrayJSON,
	lapack, byValue bool) (diffs []string, values []hostValue, err error) {
	t.Helper()
	args := make([]*jit.Array, len(inputs))
	defer func() {
		for _, x := range args {
			if x != nil {
				x.Close()
			}
		}
	}()
	for i, in := range inputs {
		dt, data, err := encodeArray(in)
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		s, err := mesh.NewNamedSharding(on, mesh.P())
		if err != nil {
			t.Fatal(err)
		}
		if args[i], err = jit.PutBytes(c, dt, in.Shape, data, s); err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
	}
	outs, err := fn.Call(c, args...)
	if err != nil {
		return []string{"call: " + err.Error()}, nil, err
	}
	defer func() {
		for _, o := range outs {
			o.Close()
		}
	}()
	if len(outs) != len(outputs) {
		diffs = append(diffs, fmt.Sprintf("JAX returns %d outputs, xlamesh %d", len(outputs), len(outs)))
	}
	for i := range min(len(outs), len(outputs)) {
		got, err := outs[i].ToHostBytes()
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("output %d: %v", i, err))
			continue
		}
		d, _ := compareProgramOutput(outputs[i], outs[i].DType(), outs[i].Shape(), got)
		if rtol, atol, ok := lapackTolerance(outs[i].DType()); lapack && ok {
			// LAPACK builds differ in the last bits: JAX's own test allows it.
			d = compareClose(outputs[i], outs[i].DType(), outs[i].Shape(), got, rtol, atol)
		}
		values = append(values, hostValue{outs[i].DType(), got})
		if d != "" && byValue {
			diffs = append(diffs, fmt.Sprintf("output %d: %s", i, d))
		}
	}
	return diffs, values, nil
}

// loadBackCompat reads testdata/oracle/backcompat.json.
func loadBackCompat(t *testing.T) backCompatFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(goldenDir, "backcompat.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f backCompatFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// servesAll reports whether the client's plugin serves every LAPACK kernel of targets.
func servesAll(c *pjrt.Client, targets []string) bool {
	served := c.Plugin().LAPACK().Targets
	for _, t := range targets {
		if (strings.HasPrefix(t, "lapack_") || strings.HasPrefix(t, "blas_")) && !slices.Contains(served, t) {
			return false
		}
	}
	return true
}

// lapackTolerance is the tolerance of JAX's own back-compat tests of its CPU LAPACK kernels
// (tests/export_back_compat_test.py: rtol and atol by dtype): two LAPACK builds agree only to
// the last bits of a float64 factorization. ok is false for the dtypes compared exactly.
func lapackTolerance(dt dtypes.DType) (rtol, atol float64, ok bool) {
	switch dt {
	case dtypes.Float32, dtypes.Complex64:
		return 1e-3, 1e-4, true
	case dtypes.Float64, dtypes.Complex128:
		return 1e-5, 1e-12, true
	}
	return 0, 0, false
}

// compareClose compares a float or complex output with JAX's as numpy.allclose does, element
// by element: |got - want| <= atol + rtol*|want| (complex moduli), NaN only against NaN. It
// returns "" or the first difference.
func compareClose(w arrayJSON, dt dtypes.DType, shape []int, got []byte, rtol, atol float64) string {
	wdt, want, err := encodeArray(w)
	if err != nil {
		return err.Error()
	}
	if dt != wdt || fmt.Sprint(shape) != fmt.Sprint(w.Shape) {
		return fmt.Sprintf("JAX %s%v, xlamesh %s%v", w.DType, w.Shape, dt, shape)
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes, JAX %d", len(got), len(want))
	}
	g, x := floatParts(dt, got), floatParts(dt, want)
	step := 1
	if dt == dtypes.Complex64 || dt == dtypes.Complex128 {
		step = 2
	}
	for i := 0; i+step <= len(x); i += step {
		var diff, mag float64
		nan := false
		for k := range step {
			diff = math.Hypot(diff, g[i+k]-x[i+k])
			mag = math.Hypot(mag, x[i+k])
			nan = nan || math.IsNaN(g[i+k]) != math.IsNaN(x[i+k])
		}
		if nan || diff > atol+rtol*mag {
			return fmt.Sprintf("element %d: JAX %v, xlamesh %v (rtol %g, atol %g)", i/step, x[i:i+step], g[i:i+step], rtol, atol)
		}
	}
	return ""
}

// floatParts reads little-endian f32, f64, c64 or c128 data as float64s (a complex number as
// its real and imaginary parts).
func floatParts(dt dtypes.DType, data []byte) []float64 {
	var out []float64
	switch dt {
	case dtypes.Float32, dtypes.Complex64:
		for i := 0; i+4 <= len(data); i += 4 {
			out = append(out, float64(math.Float32frombits(binary.LittleEndian.Uint32(data[i:]))))
		}
	default:
		for i := 0; i+8 <= len(data); i += 8 {
			out = append(out, math.Float64frombits(binary.LittleEndian.Uint64(data[i:])))
		}
	}
	return out
}

// hostValue is an output read back to the host.
type hostValue struct {
	dt   dtypes.DType
	data []byte
}

// complexes reads a float or complex value as complex numbers.
func (v hostValue) complexes() []complex128 {
	parts := floatParts(v.dt, v.data)
	if v.dt != dtypes.Complex64 && v.dt != dtypes.Complex128 {
		out := make([]complex128, len(parts))
		for i, x := range parts {
			out[i] = complex(x, 0)
		}
		return out
	}
	out := make([]complex128, len(parts)/2)
	for i := range out {
		out[i] = complex(parts[2*i], parts[2*i+1])
	}
	return out
}

// propertyCheck returns the check of JAX's own back-compat test for the modules whose outputs
// are not unique (eigenvectors, Schur vectors), or nil for the modules compared value by value.
func propertyCheck(name string) func(a backCompatArtifact, outs []hostValue) string {
	switch {
	case strings.HasPrefix(name, "cpu_eigh_lapack_syev/"):
		return checkEigh
	case strings.HasPrefix(name, "cpu_eig_lapack_geev/"):
		return checkEig
	case strings.HasPrefix(name, "cpu_schur_lapack_gees/"):
		return checkSchur
	}
	return nil
}

// matrixOf returns the n x n row-major matrix m as rows.
func matrixOf(m []complex128, n int) [][]complex128 {
	out := make([][]complex128, n)
	for i := range out {
		out[i] = m[i*n : (i+1)*n]
	}
	return out
}

// frobenius is the Frobenius norm of the n x n matrix f(i, j).
func frobenius(n int, f func(i, j int) complex128) float64 {
	var s float64
	for i := range n {
		for j := range n {
			x := f(i, j)
			s += real(x)*real(x) + imag(x)*imag(x)
		}
	}
	return math.Sqrt(s)
}

// arangeSquare is numpy.arange(n*n).reshape(n, n), the input JAX's eig test builds.
func arangeSquare(n int) [][]complex128 {
	a := make([]complex128, n*n)
	for i := range a {
		a[i] = complex(float64(i), 0)
	}
	return matrixOf(a, n)
}

// epsilon is numpy.finfo(dt).eps of a float or complex dtype.
func epsilon(dt dtypes.DType) float64 {
	if dt == dtypes.Float32 || dt == dtypes.Complex64 {
		return math.Pow(2, -23)
	}
	return math.Pow(2, -52)
}

// checkEigh checks jnp.linalg.eigh's outputs (v 8x8, w 8) as JAX's eigh back-compat test does
// (check_eigh_results): ||I - VᴴV|| <= rtol, ||A V - V diag(w)|| <= rtol ||A|| (Frobenius
// norms), and the eigenvalues close to JAX's. Its input is arange(64) made self-adjoint, which
// has six zero eigenvalues: their eigenvectors are any orthonormal basis of that space.
func checkEigh(a backCompatArtifact, outs []hostValue) string {
	if len(outs) != 2 {
		return fmt.Sprintf("%d outputs, want v and w", len(outs))
	}
	rtol, atol, _ := lapackTolerance(outs[0].dt)
	const n = 8
	v := outs[0].complexes()
	if len(v) != n*n {
		return fmt.Sprintf("output 0: %d eigenvector elements, want 64", len(v))
	}
	if d := compareClose(a.Outputs[1], outs[1].dt, a.Outputs[1].Shape, outs[1].data, rtol, atol); d != "" {
		return "output 1: " + d
	}
	w := outs[1].complexes()
	x := arangeSquare(n)
	m := matrixOf(v, n)
	orth := frobenius(n, func(i, j int) complex128 {
		var s complex128
		for k := range n {
			s += cmplx.Conj(m[k][i]) * m[k][j]
		}
		if i == j {
			s--
		}
		return s
	})
	// A = (X + Xᴴ)/2.
	resid := frobenius(n, func(i, j int) complex128 {
		var s complex128
		for k := range n {
			s += (x[i][k] + cmplx.Conj(x[k][i])) / 2 * m[k][j]
		}
		return s - m[i][j]*w[j]
	})
	norm := frobenius(n, func(i, j int) complex128 { return (x[i][j] + cmplx.Conj(x[j][i])) / 2 })
	if orth > rtol {
		return fmt.Sprintf("output 0: eigenvectors not orthonormal: ||I - VᴴV|| = %.3g > %g", orth, rtol)
	}
	if resid > rtol*norm {
		return fmt.Sprintf("output 0: not eigenvectors of the eigenvalues: ||AV - Vw|| = %.3g > %g ||A||", resid, rtol)
	}
	return ""
}

// checkEig checks jnp.linalg.eig's outputs (w, vl, vr) as JAX's eig back-compat test does
// (check_eig_results) for its input arange(16) as 4x4: every eigenvalue within tolerance of one
// of JAX's and the other way round, and ||A vr - vr w|| / ((n + 1) eps) < 100, the same for the
// left eigenvectors with Aᴴ and the conjugate eigenvalues.
func checkEig(a backCompatArtifact, outs []hostValue) string {
	if len(outs) != 3 {
		return fmt.Sprintf("%d outputs, want w, vl and vr", len(outs))
	}
	const n = 4
	_, atol, _ := lapackTolerance(outs[0].dt)
	w := outs[0].complexes()
	_, wantBytes, err := encodeArray(a.Outputs[0])
	if err != nil {
		return err.Error()
	}
	want := hostValue{outs[0].dt, wantBytes}.complexes()
	if len(w) != n || len(want) != n {
		return fmt.Sprintf("output 0: %d eigenvalues, JAX %d, want 4", len(w), len(want))
	}
	near := func(x complex128, set []complex128) bool {
		closest := math.Inf(1)
		for _, y := range set {
			closest = min(closest, cmplx.Abs(x-y))
		}
		return closest <= atol // JAX compares the distance with 0: rtol*0 adds nothing
	}
	for i := range n {
		if !near(w[i], want) || !near(want[i], w) {
			return fmt.Sprintf("output 0: eigenvalues %v, JAX %v (atol %g)", w, want, atol)
		}
	}
	x := arangeSquare(n)
	eps := epsilon(outs[1].dt)
	check := func(which string, v []complex128, op func(i, k int) complex128, ev func(j int) complex128) string {
		if len(v) != n*n {
			return fmt.Sprintf("%s: %d elements, want 16", which, len(v))
		}
		m := matrixOf(v, n)
		r := frobenius(n, func(i, j int) complex128 {
			var s complex128
			for k := range n {
				s += op(i, k) * m[k][j]
			}
			return s - ev(j)*m[i][j]
		}) / ((n + 1) * eps)
		if !(r < 100) {
			return fmt.Sprintf("%s: ||A v - w v|| is %.3g (n+1) eps, want < 100", which, r)
		}
		return ""
	}
	if d := check("output 2 (right eigenvectors)", outs[2].complexes(), func(i, k int) complex128 { return x[i][k] },
		func(j int) complex128 { return w[j] }); d != "" {
		return d
	}
	return check("output 1 (left eigenvectors)", outs[1].complexes(), func(i, k int) complex128 { return cmplx.Conj(x[k][i]) },
		func(j int) complex128 { return cmplx.Conj(w[j]) })
}

// checkSchur checks jax.lax.linalg.schur's outputs (t, s) as JAX's Schur back-compat test does
// (check_schur_results): the input equals s t sᴴ within tolerance.
func checkSchur(a backCompatArtifact, outs []hostValue) string {
	if len(outs) != 2 || len(a.Inputs) != 1 {
		return fmt.Sprintf("%d outputs and %d inputs, want t, s and one input", len(outs), len(a.Inputs))
	}
	rtol, atol, _ := lapackTolerance(outs[0].dt)
	_, inBytes, err := encodeArray(a.Inputs[0])
	if err != nil {
		return err.Error()
	}
	in := hostValue{outs[0].dt, inBytes}.complexes()
	t, s := outs[0].complexes(), outs[1].complexes()
	n := int(math.Round(math.Sqrt(float64(len(in)))))
	if n*n != len(in) || len(t) != len(in) || len(s) != len(in) {
		return fmt.Sprintf("sizes: input %d, t %d, s %d", len(in), len(t), len(s))
	}
	tm, sm := matrixOf(t, n), matrixOf(s, n)
	for i := range n {
		for j := range n {
			var r complex128
			for k := range n {
				for l := range n {
					r += sm[i][k] * tm[k][l] * cmplx.Conj(sm[j][l])
				}
			}
			if want := in[i*n+j]; cmplx.Abs(r-want) > atol+rtol*cmplx.Abs(want) {
				return fmt.Sprintf("s t sᴴ at [%d,%d] is %v, the input %v (rtol %g, atol %g)", i, j, r, want, rtol, atol)
			}
		}
	}
	return ""
}
