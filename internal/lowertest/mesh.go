package lowertest

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// mesh42 is Mesh42's value, built once.
var mesh42 = mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y")

// Mesh42 returns the test mesh of lower's golden cases: 8 simulated devices as x=4, y=2
// (device = 2*ix + iy).
func Mesh42() mesh.Mesh { return mesh42 }

// NS returns the NamedSharding of P(entries...) on Mesh42. It panics when the spec does not fit
// the mesh, as mesh.MustNamedSharding does.
func NS(entries ...any) mesh.NamedSharding {
	return mesh.MustNamedSharding(mesh42, mesh.P(entries...))
}

// On returns the NamedSharding of P(entries...) on m. It panics when the spec does not fit m, as
// mesh.MustNamedSharding does.
func On(m mesh.Mesh, entries ...any) mesh.NamedSharding {
	return mesh.MustNamedSharding(m, mesh.P(entries...))
}

// Reversed returns the devices d in reverse order, in a new slice.
func Reversed(d []mesh.Device) []mesh.Device {
	out := make([]mesh.Device, len(d))
	for i, x := range d {
		out[len(d)-1-i] = x
	}
	return out
}

// MeshSizes returns the sizes (x, y) of the integration tests' mesh on n devices: (4, 2), the
// shape of Mesh42, on 8 or more; on fewer the largest mesh whose sizes divide (4, 2), so every
// array that Mesh42 divides stays divisible: (2, 2) on 4 to 7, (2, 1) on 2 or 3, and (1, 1) on 1
// (pjrttest.FitShape of (4, 2)).
func MeshSizes(n int) (x, y int) {
	s := pjrttest.FitShape([]int{4, 2}, n)
	return s[0], s[1]
}

// Devices returns the first k devices of the client. It panics when k is over
// len(c.Devices()).
func Devices(c *pjrt.Client, k int) []mesh.Device {
	var devs []mesh.Device
	for _, d := range c.Devices()[:k] {
		devs = append(devs, d)
	}
	return devs
}

// RealMesh returns the ("x", "y") mesh of sizes MeshSizes over the client's first devices: 4x2
// over 8 devices, as Mesh42. It fails t when the mesh cannot be built.
func RealMesh(t testing.TB, c *pjrt.Client) mesh.Mesh {
	t.Helper()
	x, y := MeshSizes(len(c.Devices()))
	m, err := mesh.New(Devices(c, x*y), []int{x, y}, "x", "y")
	require.NoError(t, err)
	return m
}

// Tiles returns the TileDims XLA reports for a sharding with the given tile counts per
// dimension, each tile held by replicas devices: the counts, then replicas when it is over 1
// (last_tile_dim_replicate); none when every count is 1 ({replicated}).
func Tiles(counts []int, replicas int) []int {
	if !slices.ContainsFunc(counts, func(k int) bool { return k > 1 }) {
		return nil
	}
	if replicas > 1 {
		return append(slices.Clone(counts), replicas)
	}
	return counts
}
