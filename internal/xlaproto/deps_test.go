package xlaproto_test

import (
	"testing"

	"github.com/xlamesh/xlamesh/internal/reftest"
)

// TestLeaf proves the package is a leaf below pjrt and jaxexport: no other xlamesh package and
// no cgo, only protowire and the standard library. Bazel does not run it (no module there; see
// BUILD.bazel): //internal/xlaproto's deps say the same.
func TestLeaf(t *testing.T) { reftest.CheckLeaf(t, "github.com/xlamesh/xlamesh/internal/xlaproto") }
