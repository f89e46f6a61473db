package stablehlo_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoMeshImports proves the layering: the builder imports neither mesh nor shardy (nor
// lower), directly or through another package, so it can be used, and read, without the
// sharding model. Bazel does not run it (no module there; see BUILD.bazel): //stablehlo's deps say the same.
func TestNoMeshImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/xlamesh/xlamesh/stablehlo").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 2 {
		t.Fatalf("go list -deps listed %q", deps)
	}
	for _, d := range deps {
		switch d {
		case "github.com/xlamesh/xlamesh/mesh", "github.com/xlamesh/xlamesh/shardy", "github.com/xlamesh/xlamesh/lower":
			t.Errorf("stablehlo depends on %s", d)
		}
	}
}
