package pjrt_test

import (
	"testing"

	"github.com/xlamesh/xlamesh/internal/reftest"
)

// TestDepsNoInstaller proves that the binding does not link the plugin installer: pjrt finds
// plugin files through pjrt/plugins, which reads paths, and never imports pjrt/install, so a
// program that opens a client links neither net/http nor archive/zip. Bazel does not run it (no
// module there; see BUILD.bazel): //pjrt's deps say the same.
func TestDepsNoInstaller(t *testing.T) {
	for _, d := range reftest.GoDeps(t, "github.com/xlamesh/xlamesh/pjrt") {
		switch d {
		case "net/http", "archive/zip", "github.com/xlamesh/xlamesh/pjrt/install":
			t.Errorf("pjrt depends on %s", d)
		}
	}
}
