package stablehlo_test

import (
	"os"
	"testing"

	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestMain fails the run if the integration tests leaked device buffers.
func TestMain(m *testing.M) { os.Exit(pjrttest.CheckLeaks(m, "stablehlo")) }
