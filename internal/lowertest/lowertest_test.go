package lowertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/mesh"
)

// TestMeshSizes pins the fitted sizes the integration tests' expected values assume.
func TestMeshSizes(t *testing.T) {
	for n, want := range [][2]int{{1, 1}, {1, 1}, {2, 1}, {2, 1}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, {4, 2}, {4, 2}, {4, 2}, {4, 2}, {4, 2}, {4, 2}, {4, 2}, {4, 2}, {4, 2}} {
		x, y := MeshSizes(n)
		require.Equal(t, want, [2]int{x, y}, "%d devices", n)
	}
}

func TestMesh42(t *testing.T) {
	m := Mesh42()
	require.Equal(t, []int{4, 2}, m.AxisSizes())
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, m.DeviceIDs())
	require.True(t, NS("x", "y").Equal(On(m, "x", "y")))
}

func TestReversed(t *testing.T) {
	d := mesh.SimDevices(3)
	require.Equal(t, []mesh.Device{d[2], d[1], d[0]}, Reversed(d))
	require.Equal(t, mesh.SimDevices(3), d, "the argument is unchanged")
}

func TestTiles(t *testing.T) {
	require.Nil(t, Tiles([]int{1, 1}, 8))
	require.Equal(t, []int{4, 2}, Tiles([]int{4, 2}, 1))
	require.Equal(t, []int{1, 2, 4}, Tiles([]int{1, 2}, 4))
}

// TestSliceIndex copies the blocks of a 4x3 array and visits them in row-major order.
func TestSliceIndex(t *testing.T) {
	flat := make([]float32, 12)
	for i := range flat {
		flat[i] = float32(i)
	}
	dims := []int{4, 3}
	for _, tc := range []struct {
		name  string
		idx   mesh.Index
		data  []float32
		shard []int
	}{
		{"all", mesh.Index{{Start: 0, Stop: 4}, {Start: 0, Stop: 3}}, flat, []int{4, 3}},
		{"rows 1-2", mesh.Index{{Start: 1, Stop: 3}, {Start: 0, Stop: 3}}, []float32{3, 4, 5, 6, 7, 8}, []int{2, 3}},
		{"corner", mesh.Index{{Start: 2, Stop: 4}, {Start: 1, Stop: 3}}, []float32{7, 8, 10, 11}, []int{2, 2}},
		{"empty", mesh.Index{{Start: 0, Stop: 4}, {Start: 2, Stop: 2}}, nil, []int{4, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, shard := sliceIndex(flat, dims, tc.idx)
			require.Equal(t, tc.data, data)
			require.Equal(t, tc.shard, shard)
		})
	}
}
