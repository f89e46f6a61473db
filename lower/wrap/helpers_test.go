package wrap_test

import (
	"os"
	"testing"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestMain fails the run if the integration tests leaked device buffers.
func TestMain(m *testing.M) { os.Exit(pjrttest.CheckLeaks(m, "wrap")) }

// The test mesh: 8 devices as x=4, y=2 (device = 2*ix + iy), lower's golden mesh.
var mesh42 = mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y")

// ns returns a NamedSharding on mesh42.
func ns(entries ...any) mesh.NamedSharding {
	return mesh.MustNamedSharding(mesh42, mesh.P(entries...))
}

// on returns a NamedSharding on m.
func on(m mesh.Mesh, entries ...any) mesh.NamedSharding {
	return mesh.MustNamedSharding(m, mesh.P(entries...))
}

// reversed returns the devices d in reverse order.
func reversed(d []mesh.Device) []mesh.Device {
	out := make([]mesh.Device, len(d))
	for i, x := range d {
		out[len(d)-1-i] = x
	}
	return out
}
