package kv_test

import (
	"testing"

	"github.com/xlamesh/xlamesh/internal/reftest"
)

// TestLeaf proves the package is a leaf: it imports no other xlamesh package and no cgo, so
// distributed implements its interfaces without linking the binding. Bazel does not run it (no
// module there; see BUILD.bazel): //pjrt/kv's deps say the same.
func TestLeaf(t *testing.T) { reftest.CheckLeaf(t, "github.com/xlamesh/xlamesh/pjrt/kv") }
