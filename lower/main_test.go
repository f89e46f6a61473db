package lower_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt"
)

// TestMain fails the run if the integration tests leaked device buffers. Started as
// FuzzCompile's child (envCompileChild set), it compiles one module instead of testing.
func TestMain(m *testing.M) {
	if os.Getenv(envCompileChild) != "" {
		os.Exit(compileChild())
	}
	code := m.Run()
	if n := pjrt.LiveBuffers(); code == 0 && n != 0 {
		fmt.Fprintf(os.Stderr, "lower tests leaked %d PJRT buffers\n", n)
		code = 1
	}
	os.Exit(code)
}
