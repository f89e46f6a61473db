package wrap_test

import (
	"os"
	"testing"

	"github.com/xlamesh/xlamesh/internal/lowertest"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestMain fails the run if the integration tests leaked device buffers.
func TestMain(m *testing.M) { os.Exit(pjrttest.CheckLeaks(m, "wrap")) }

// The shorthands for shardings, as lower's tests have them: ns on mesh42 (lowertest.Mesh42, 8
// devices as x=4, y=2, lower's golden mesh), on on any mesh.
var (
	ns = lowertest.NS
	on = lowertest.On
)
