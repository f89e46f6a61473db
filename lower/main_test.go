package lower_test

import (
	"os"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestMain fails the run if the integration tests leaked device buffers. Started as
// FuzzCompile's child (envCompileChild set), it compiles one module instead of testing.
func TestMain(m *testing.M) {
	if os.Getenv(envCompileChild) != "" {
		os.Exit(compileChild())
	}
	os.Exit(pjrttest.CheckLeaks(m, "lower"))
}
