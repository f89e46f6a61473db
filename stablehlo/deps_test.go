package stablehlo_test

import (
	"testing"

	"github.com/xlamesh/xlamesh/internal/reftest"
)

// TestNoMeshImports proves the layering: the builder imports neither mesh nor shardy (nor
// lower), directly or through another package, so it can be used, and read, without the
// sharding model. Bazel does not run it (no module there; see BUILD.bazel): //stablehlo's deps say the same.
func TestNoMeshImports(t *testing.T) {
	for _, d := range reftest.GoDeps(t, "github.com/xlamesh/xlamesh/stablehlo") {
		switch d {
		case "github.com/xlamesh/xlamesh/mesh", "github.com/xlamesh/xlamesh/shardy", "github.com/xlamesh/xlamesh/lower":
			t.Errorf("stablehlo depends on %s", d)
		}
	}
}
