package pjrt_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// The tests follow the device count of pjrttest.Client: 8 CPU devices by default, 1 or 2 with
// XLAMESH_TEST_DEVICES, every GPU of a GPU host. A test written for a mesh of 8 devices runs on
// the largest mesh of the same axes that fits (pjrttest.FitShape), on the first devices of the client.

// firstIDs returns the ids of the first k devices of c, a device assignment of k partitions.
func firstIDs(c *pjrt.Client, k int) []int {
	ids := make([]int, k)
	for i, d := range c.Devices()[:k] {
		ids[i] = d.ID()
	}
	return ids
}

// deviceAt returns the addressable device i of c, counting around on a client with i or fewer
// devices: a test that spreads buffers over devices 0 and 1 puts both on the one device of a
// 1-device host, and the test of device 5 uses device 1 of a 2-device host.
func deviceAt(c *pjrt.Client, i int) *pjrt.Device {
	devs := c.AddressableDevices()
	return devs[i%len(devs)]
}

// seedMesh is the mesh (x, y) the seed program runs on: (4, 2) on 8 devices or more (JAX's
// Shardy announcement), else pjrttest.FitShape's smaller one.
type seedMesh struct{ x, y int }

// seedFor returns the seed program's mesh on c.
func seedFor(c *pjrt.Client) seedMesh {
	s := pjrttest.FitShape([]int{4, 2}, len(c.Devices()))
	return seedMesh{s[0], s[1]}
}

// parts returns the number of partitions (devices) of the seed program on the mesh.
func (s seedMesh) parts() int { return s.x * s.y }

// module returns the seed program on the mesh: seedModule on (4, 2).
func (s seedMesh) module() string { return seedModuleOn(s.x, s.y) }

// dims returns the dims of one shard of the 8x2 input or output.
func (s seedMesh) dims() []int { return []int{8 / s.x, 2 / s.y} }

// ids returns the default device assignment of the seed program on c: its first devices.
func (s seedMesh) ids(c *pjrt.Client) []int { return firstIDs(c, s.parts()) }

// shard returns the shard of arange(16).reshape(8, 2) held by mesh position p, row-major: x =
// p/y selects its rows, y = p%y its columns.
func (s seedMesh) shard(p int) []int64 {
	d := s.dims()
	r0, c0 := (p/s.y)*d[0], (p%s.y)*d[1]
	var out []int64
	for r := r0; r < r0+d[0]; r++ {
		for col := c0; col < c0+d[1]; col++ {
			out = append(out, int64(r*2+col))
		}
	}
	return out
}

// doubled returns 2*v elementwise, the seed program's output for input v.
func doubled(v []int64) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = 2 * x
	}
	return out
}

// TestSeedMesh pins the seed program's shards on the meshes it runs on.
func TestSeedMesh(t *testing.T) {
	assert.Equal(t, []int64{9, 11}, seedMesh{4, 2}.shard(5))
	assert.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, seedMesh{1, 1}.shard(0))
	assert.Equal(t, []int64{8, 9, 10, 11, 12, 13, 14, 15}, seedMesh{2, 1}.shard(1))
	assert.Equal(t, seedModule, seedMesh{4, 2}.module())
}
