package pjrt_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// potrfModule factors a batch of two 3x3 float64 matrices with uplo (76 'L' or 85 'U'), as
// jnp.linalg.cholesky lowers on CPU: column-major matrices, the info of each as a second result.
func potrfModule(uplo string) string {
	return `module @potrf {
  func.func public @main(%a: tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2xi32>) {
    %0:2 = stablehlo.custom_call @lapack_dpotrf_ffi(%a) {mhlo.backend_config = {uplo = ` + uplo + ` : ui8},
      operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>],
      result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]}
      : (tensor<2x3x3xf64>) -> (tensor<2x3x3xf64>, tensor<2xi32>)
    return %0#0, %0#1 : tensor<2x3x3xf64>, tensor<2xi32>
  }
}`
}

// runLAPACK compiles text on one device, runs it on the float64 operands and returns the
// results as host values.
func runLAPACK(t *testing.T, c *pjrt.Client, text string, args ...[]float64) ([]any, error) {
	t.Helper()
	exe, err := c.Compile(text, pjrt.CompileOptions{DeviceAssignment: []int{0}})
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	var in []*pjrt.Buffer
	defer func() {
		for _, b := range in {
			b.Close()
		}
	}()
	shapes := [][]int{{2, 3, 3}, {2, 3, 2}}
	for i, a := range args {
		b, err := c.BufferFromHost(exe.Devices()[0], a, shapes[i])
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, b)
	}
	outs, err := exe.Execute([][]*pjrt.Buffer{in})
	if err != nil {
		return nil, err
	}
	var got []any
	for _, o := range outs[0] {
		v, err := o.ToHost()
		o.Close()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	return got, nil
}

// TestLAPACKCholeskyCPUOnly checks that a CPU client serves the 61 targets jaxlib 0.12 registers
// (the 60 lapack_*_ffi of fifteen routines and tridiagonal_solve_perturbed_ffi), then runs lapack_dpotrf_ffi, over the LAPACK that `make setup`
// installs, on a batch: a matrix whose factor has small integer entries (so LAPACK
// computes it exactly) and one that is not positive definite (info 2). The factor replaces the
// uplo triangle; the other triangle keeps the operand's values, as jaxlib's kernel leaves it.
func TestLAPACKCholeskyCPUOnly(t *testing.T) {
	c := pjrttest.Client(t)
	st := c.Plugin().LAPACK()
	if st.Err != nil {
		t.Fatalf("LAPACK kernels not served: %v", st.Err)
	}
	lib, err := pjrttest.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := plugins.LAPACK.Path(lib); st.Library != want && os.Getenv(pjrt.EnvLAPACK) == "" {
		t.Errorf("library %s, want %s", st.Library, want)
	}
	if !slices.Contains(st.Targets, "tridiagonal_solve_perturbed_ffi") || len(st.Targets) != 61 {
		t.Errorf("%d targets served, want 61 with tridiagonal_solve_perturbed_ffi: %v", len(st.Targets), st.Targets)
	}
	for _, routine := range []string{"potrf", "trsm", "getrf", "geqrf", "geqp3", "orgqr", "ungqr", "ormqr", "unmqr", "syevd",
		"heevd", "gesdd", "gesvd", "gtsv", "gehrd", "sytrd", "hetrd", "geev", "gees"} {
		types := "sdcz"
		switch routine {
		case "orgqr", "ormqr", "syevd", "sytrd":
			types = "sd"
		case "ungqr", "unmqr", "heevd", "hetrd":
			types = "cz"
		}
		for _, p := range types {
			if target := "lapack_" + string(p) + routine + "_ffi"; !slices.Contains(st.Targets, target) {
				t.Errorf("%s not served (served: %v)", target, st.Targets)
			}
		}
	}
	// A = L Lᵀ with L = [[2 0 0] [1 3 0] [4 5 6]], row-major; then [[1 2 0] [2 1 0] [0 0 1]],
	// whose second leading minor is -3.
	a := []float64{4, 2, 8, 2, 10, 19, 8, 19, 77, 1, 2, 0, 2, 1, 0, 0, 0, 1}
	got, err := runLAPACK(t, c, potrfModule("76"), a)
	if err != nil {
		t.Fatal(err)
	}
	lower := []float64{2, 2, 8, 1, 3, 19, 4, 5, 6}
	if g := got[0].([]float64); !slices.Equal(g[:9], lower) {
		t.Errorf("uplo L: factor %v, want %v", g[:9], lower)
	}
	if info := got[1].([]int32); !slices.Equal(info, []int32{0, 2}) {
		t.Errorf("uplo L: info %v, want [0 2]", info)
	}
	got, err = runLAPACK(t, c, potrfModule("85"), a)
	if err != nil {
		t.Fatal(err)
	}
	upper := []float64{2, 1, 4, 2, 3, 5, 8, 19, 6} // Lᵀ above the diagonal, A's values below
	if g := got[0].([]float64); !slices.Equal(g[:9], upper) {
		t.Errorf("uplo U: factor %v, want %v", g[:9], upper)
	}
}

// TestLAPACKTriangularSolveCPUOnly runs lapack_dtrsm_ffi on a batch of two systems op(x) a = y,
// op(x) the transpose of a unit-diagonal upper x (x's diagonal is not read), exactly.
func TestLAPACKTriangularSolveCPUOnly(t *testing.T) {
	c := pjrttest.Client(t)
	const text = `module @trsm {
  func.func public @main(%x: tensor<2x3x3xf64>, %y: tensor<2x3x2xf64>) -> tensor<2x3x2xf64> {
    %0 = stablehlo.custom_call @lapack_dtrsm_ffi(%x, %y) {
      mhlo.backend_config = {diag = 85 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 85 : ui8},
      operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 2, 0]> : tensor<3xindex>],
      result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]}
      : (tensor<2x3x3xf64>, tensor<2x3x2xf64>) -> tensor<2x3x2xf64>
    return %0 : tensor<2x3x2xf64>
  }
}`
	// Solve Uᵀ a = y, U unit upper triangular: U = [[1 2 3] [0 1 4] [0 0 1]] (the 9s on the
	// diagonal are ignored), then the identity.
	x := []float64{9, 2, 3, 0, 9, 4, 0, 0, 9, 1, 0, 0, 0, 1, 0, 0, 0, 1}
	// Uᵀ [[1 0] [2 1] [3 -1]] = [[1 0] [4 1] [14 3]]
	y := []float64{1, 0, 4, 1, 14, 3, 5, 6, 7, 8, 9, 10}
	got, err := runLAPACK(t, c, text, x, y)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0, 2, 1, 3, -1, 5, 6, 7, 8, 9, 10}
	if g := got[0].([]float64); !slices.Equal(g, want) {
		t.Errorf("solution %v, want %v", g, want)
	}
}

// TestLAPACKBadCallCPUOnly: a custom call whose operands do not match jaxlib's signature is an
// execution error naming the target and what is wrong, not a bad read.
func TestLAPACKBadCallCPUOnly(t *testing.T) {
	c := pjrttest.Client(t)
	const text = `module @bad {
  func.func public @main(%a: tensor<2x3x2xf64>) -> (tensor<2x3x2xf64>, tensor<2xi32>) {
    %0:2 = stablehlo.custom_call @lapack_dpotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8},
      operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>],
      result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : tensor<1xindex>]}
      : (tensor<2x3x2xf64>) -> (tensor<2x3x2xf64>, tensor<2xi32>)
    return %0#0, %0#1 : tensor<2x3x2xf64>, tensor<2xi32>
  }
}`
	exe, err := c.Compile(text, pjrt.CompileOptions{DeviceAssignment: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	in, err := c.BufferFromHost(exe.Devices()[0], make([]float64, 12), []int{2, 3, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	outs, err := exe.Execute([][]*pjrt.Buffer{{in}})
	for _, o := range outs {
		for _, b := range o {
			b.Close()
		}
	}
	if err == nil || !strings.Contains(err.Error(), "lapack_dpotrf_ffi: want square matrices") {
		t.Fatalf("non-square operand: %v, want an error naming the target and the shapes", err)
	}
	bad := strings.Replace(potrfModule("76"), "uplo = 76", "uplo = 88", 1)
	if _, err := runLAPACK(t, c, bad, make([]float64, 18)); err == nil || !strings.Contains(err.Error(), "attribute uplo is 88") {
		t.Fatalf("uplo 'X': %v, want an error naming the attribute", err)
	}
}

// TestLAPACKMissingCPUOnly runs, in child processes, a client whose LAPACK library does not exist
// (XLAMESH_LAPACK) and one opened WithoutLAPACK: Open succeeds, Plugin.LAPACK says why nothing
// is served, and a program calling a LAPACK kernel is refused at compile with that reason. A
// client opened after the WithoutLAPACK one, without the option, serves them.
func TestLAPACKMissingCPUOnly(t *testing.T) {
	if mode := os.Getenv("XLAMESH_TEST_LAPACK_CHILD"); mode != "" {
		lapackChild(t, mode)
		return
	}
	for _, mode := range []string{"missing", "without"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLAPACKMissingCPUOnly$", "-test.v")
		cmd.Env = append(os.Environ(), "XLAMESH_TEST_LAPACK_CHILD="+mode,
			pjrt.EnvLAPACK+"="+filepath.Join(t.TempDir(), "no-liblapack.so"))
		if mode == "without" {
			cmd.Env = append(os.Environ(), "XLAMESH_TEST_LAPACK_CHILD="+mode)
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestLAPACKMissingCPUOnly") {
			t.Errorf("%s: child failed: %v\n%s", mode, err, out)
		}
	}
}

func lapackChild(t *testing.T, mode string) {
	opts, err := pjrttest.Options(1)
	if err != nil {
		t.Fatal(err)
	}
	if mode == "without" {
		opts = append(opts, pjrt.WithoutLAPACK())
	}
	c, err := pjrt.Open(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := c.Plugin().LAPACK()
	if len(st.Targets) != 0 {
		t.Errorf("%s: served %v", mode, st.Targets)
	}
	_, err = c.Compile(potrfModule("76"), pjrt.CompileOptions{DeviceAssignment: []int{0}})
	if !errors.Is(err, pjrt.ErrCompile) {
		t.Fatalf("%s: compile: %v, want ErrCompile", mode, err)
	}
	switch mode {
	case "missing":
		if !errors.Is(st.Err, pjrt.ErrNoLAPACK) || !strings.Contains(st.Err.Error(), pjrt.EnvLAPACK) {
			t.Errorf("status error %v, want ErrNoLAPACK naming %s", st.Err, pjrt.EnvLAPACK)
		}
		if !strings.Contains(err.Error(), "lapack_dpotrf_ffi is a LAPACK kernel of jaxlib") || !strings.Contains(err.Error(), pjrt.EnvLAPACK) {
			t.Errorf("compile error does not say why: %v", err)
		}
	case "without":
		if st.Err != nil {
			t.Errorf("status error %v, want none", st.Err)
		}
		if !strings.Contains(err.Error(), "WithoutLAPACK") {
			t.Errorf("compile error does not say why: %v", err)
		}
		// A client opened later without the option registers them, though the first one
		// looked at the plugin's (empty) status.
		opts, err := pjrttest.Options(1)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := pjrt.Open(opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		if st := c2.Plugin().LAPACK(); len(st.Targets) == 0 || st.Err != nil {
			t.Errorf("second client: served %v, error %v; want the kernels", st.Targets, st.Err)
		}
		got, err := runLAPACK(t, c2, potrfModule("76"), []float64{4, 2, 8, 2, 10, 19, 8, 19, 77, 1, 0, 0, 0, 1, 0, 0, 0, 1})
		if err != nil {
			t.Fatalf("second client: %v", err)
		}
		if info := got[1].([]int32); !slices.Equal(info, []int32{0, 0}) {
			t.Errorf("second client: info %v, want [0 0]", info)
		}
	}
}

// TestLAPACKUnservedCPUOnly: a lapack_ kernel xlamesh does not serve (xlamesh serves every one
// jaxlib 0.12 registers; this one stands for a kernel a later jaxlib adds) is refused at compile
// with ErrCompile, naming it and the kernels that are served.
func TestLAPACKUnservedCPUOnly(t *testing.T) {
	c := pjrttest.Client(t)
	const text = `module @later {
  func.func public @main(%a: tensor<3x3xf32>, %p: tensor<3xi32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<3xf32>) {
    %0:3 = stablehlo.custom_call @lapack_sgeqp4_ffi(%a, %p) {mhlo.backend_config = {},
      operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>],
      result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]}
      : (tensor<3x3xf32>, tensor<3xi32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<3xf32>)
    return %0#0, %0#1, %0#2 : tensor<3x3xf32>, tensor<3xi32>, tensor<3xf32>
  }
}`
	_, err := c.Compile(text, pjrt.CompileOptions{DeviceAssignment: []int{0}})
	if !errors.Is(err, pjrt.ErrCompile) {
		t.Fatalf("compile: %v, want ErrCompile", err)
	}
	for _, want := range []string{"lapack_sgeqp4_ffi is a LAPACK kernel of jaxlib", "xlamesh serves lapack_spotrf_ffi", "not this one yet"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("compile error %q does not say %q", err, want)
		}
	}
}

// TestLAPACKILP64CPUOnly points XLAMESH_LAPACK, in a child process, at a real ILP64 LAPACK
// (Debian's libopenblas64, 64-bit integers under the usual names; tools/setup/ilp64-lapack.sh
// installs it, `make setup` runs it): pjrt refuses it at load with ErrNoLAPACK saying why, and a
// program calling a kernel is refused at compile, where the kernels would otherwise have passed
// 32-bit sizes to it (wrong factors, then a segmentation fault in trsm).
func TestLAPACKILP64CPUOnly(t *testing.T) {
	if os.Getenv("XLAMESH_TEST_LAPACK_CHILD") == "ilp64" {
		lapackILP64Child(t)
		return
	}
	cache, err := pjrttest.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "fixtures", "openblas64-0.3.21", "usr", "lib", "x86_64-linux-gnu")
	lib := filepath.Join(dir, "openblas64-pthread", "libopenblas64.so.0")
	if _, err := os.Stat(lib); err != nil {
		t.Fatalf("the ILP64 LAPACK fixture is missing (run `make setup` or tools/setup/ilp64-lapack.sh): %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLAPACKILP64CPUOnly$", "-test.v")
	cmd.Env = append(os.Environ(), "XLAMESH_TEST_LAPACK_CHILD=ilp64", pjrt.EnvLAPACK+"="+lib,
		"LD_LIBRARY_PATH="+dir) // its libgfortran
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestLAPACKILP64CPUOnly") {
		t.Errorf("child failed: %v\n%s", err, out)
	}
}

func lapackILP64Child(t *testing.T) {
	opts, err := pjrttest.Options(1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := pjrt.Open(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := c.Plugin().LAPACK()
	if len(st.Targets) != 0 || !errors.Is(st.Err, pjrt.ErrNoLAPACK) || !strings.Contains(st.Err.Error(), "takes 64-bit integers") {
		t.Fatalf("served %v, error %v; want none served and ErrNoLAPACK saying the library takes 64-bit integers", st.Targets, st.Err)
	}
	_, err = c.Compile(potrfModule("76"), pjrt.CompileOptions{DeviceAssignment: []int{0}})
	if !errors.Is(err, pjrt.ErrCompile) || !strings.Contains(err.Error(), "takes 64-bit integers") {
		t.Fatalf("compile: %v, want ErrCompile saying why no kernel is served", err)
	}
}
