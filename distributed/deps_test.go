package distributed_test

import (
	"testing"

	"github.com/xlamesh/xlamesh/internal/reftest"
)

// TestDepsNoCgo proves that a job links no cgo: distributed meets pjrt through the pure-Go
// package pjrt/kv, never through the binding itself. Bazel does not run it (no module there;
// see BUILD.bazel): //distributed's deps say the same.
func TestDepsNoCgo(t *testing.T) { reftest.CheckNoCgo(t, "github.com/xlamesh/xlamesh/distributed") }
