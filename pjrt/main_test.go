package pjrt_test

import (
	"os"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestMain points the package's tests at the checkout's plugin cache before any of them opens a
// client directly with pjrt.Open (pjrttest does that on first use; without this, a test that runs
// alone would look in the user cache instead).
func TestMain(m *testing.M) {
	_, _ = pjrttest.CacheDir()
	os.Exit(m.Run())
}
