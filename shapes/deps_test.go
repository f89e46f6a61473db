package shapes_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeaf proves the package is a leaf: it imports no other xlamesh package and no cgo, only
// gopjrt's dtypes and the standard library, so stablehlo, pjrt and jaxexport can all share it.
// Bazel does not run it (no module there; see BUILD.bazel): //shapes's deps say the same.
func TestLeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/xlamesh/xlamesh/shapes").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 2 {
		t.Fatalf("go list -deps listed %q", deps)
	}
	for _, d := range deps {
		if (strings.HasPrefix(d, "github.com/xlamesh/") && d != "github.com/xlamesh/xlamesh/shapes") || d == "runtime/cgo" {
			t.Errorf("shapes depends on %s", d)
		}
	}
}
