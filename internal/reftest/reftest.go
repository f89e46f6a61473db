// Package reftest holds the inputs and the plain-Go reference results that the integration
// tests of several packages (stablehlo, lower) compare XLA's output with. It imports no
// xlamesh package, so any package's tests may use it.
package reftest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// SmallFloats returns n small floats, -5 to 7 repeating: exact in every float type, with
// negative, zero and positive values.
func SmallFloats(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(i%13) - 5
	}
	return out
}

// MatMul multiplies a [m,k] by b [k,n], both row-major, summing in index order.
func MatMul(a, b []float32, m, k, n int) []float32 {
	out := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var s float32
			for l := range k {
				s += a[i*k+l] * b[l*n+j]
			}
			out[i*n+j] = s
		}
	}
	return out
}

// GoDeps returns every package pkg imports, directly or not, pkg included, as `go list -deps`
// lists them; the layering tests (a leaf package, a builder without the sharding model) check
// it. It needs the module and the go command, so Bazel does not run those tests.
func GoDeps(t testing.TB, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 2 {
		t.Fatalf("go list -deps %s listed %q", pkg, deps)
	}
	return deps
}

// CheckLeaf fails t unless pkg is a leaf of the module: it imports no other package of
// github.com/xlamesh/ and no cgo (GoDeps).
func CheckLeaf(t testing.TB, pkg string) {
	t.Helper()
	for _, d := range GoDeps(t, pkg) {
		if (strings.HasPrefix(d, "github.com/xlamesh/") && d != pkg) || d == "runtime/cgo" {
			t.Errorf("%s depends on %s", pkg, d)
		}
	}
}

// CheckNoCgo fails t if pkg links cgo: if any package it imports, directly or not, has cgo files,
// or is runtime/cgo. The standard library's net and os/user use cgo by default on some systems
// and have pure-Go versions the tags netgo and osusergo select; the check lists the packages with
// those tags (and CGO_ENABLED=1, so that a cgo package shows its cgo files), so that they do not
// count and every other package does.
func CheckNoCgo(t testing.TB, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-tags", "netgo,osusergo", "-f", "{{.ImportPath}} {{len .CgoFiles}}", pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 {
		t.Fatalf("go list -deps %s listed %q", pkg, lines)
	}
	for _, line := range lines {
		path, n, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("go list -deps %s: unexpected line %q", pkg, line)
		}
		if n != "0" || path == "runtime/cgo" {
			t.Errorf("%s links cgo through %s (%s cgo files)", pkg, path, n)
		}
	}
}
