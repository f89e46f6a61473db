package stablehlo_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt"
)

// TestMain fails the run if the integration tests leaked device buffers.
func TestMain(m *testing.M) {
	code := m.Run()
	if n := pjrt.LiveBuffers(); code == 0 && n != 0 {
		fmt.Fprintf(os.Stderr, "stablehlo tests leaked %d PJRT buffers\n", n)
		code = 1
	}
	os.Exit(code)
}
