package plugins_test

import (
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/internal/reftest"
)

// TestDeps proves that the plugin table reads paths only: no networking (net and everything
// above it), no archives, no cgo, and no xlamesh package but internal/regfile, so that pjrt can
// import it without linking the installer's dependencies. Bazel does not run it (no module
// there; see BUILD.bazel): //pjrt/plugins's deps say the same.
func TestDeps(t *testing.T) {
	const pkg = "github.com/xlamesh/xlamesh/pjrt/plugins"
	for _, d := range reftest.GoDeps(t, pkg) {
		switch {
		case d == "net" || strings.HasPrefix(d, "net/") || strings.HasPrefix(d, "archive/") || d == "runtime/cgo":
			t.Errorf("%s depends on %s", pkg, d)
		case strings.HasPrefix(d, "github.com/xlamesh/") && d != pkg && d != "github.com/xlamesh/xlamesh/internal/regfile":
			t.Errorf("%s depends on %s", pkg, d)
		}
	}
}
