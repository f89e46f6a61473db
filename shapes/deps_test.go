package shapes_test

import (
	"testing"

	"github.com/xlamesh/xlamesh/internal/reftest"
)

// TestLeaf proves the package is a leaf: it imports no other xlamesh package and no cgo, only
// gopjrt's dtypes and the standard library, so stablehlo, pjrt and jaxexport can all share it.
// Bazel does not run it (no module there; see BUILD.bazel): //shapes's deps say the same.
func TestLeaf(t *testing.T) { reftest.CheckLeaf(t, "github.com/xlamesh/xlamesh/shapes") }
