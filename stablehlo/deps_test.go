package stablehlo_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNoMeshImports proves the layering: the builder imports neither mesh nor shardy (nor
// lower), directly or through another package, so it can be used, and read, without the
// sharding model.
func TestNoMeshImports(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil && os.Getenv("TEST_SRCDIR") != "" {
		// Under Bazel the deps of //stablehlo in its generated BUILD file say the same.
		t.Skip("no go command in the Bazel sandbox; //stablehlo's BUILD deps carry the layering")
	}
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
