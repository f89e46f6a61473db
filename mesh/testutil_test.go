package mesh

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeDev is a minimal Device for tests: an id, a process and a platform.
type fakeDev struct {
	id, proc int
}

func (d fakeDev) ID() int           { return d.id }
func (d fakeDev) ProcessIndex() int { return d.proc }
func (d fakeDev) Platform() string  { return "cpu" }
func (d fakeDev) Kind() string      { return "cpu" }

// devs returns fake devices with the given ids, all in process 0.
func devs(ids ...int) []Device {
	out := make([]Device, len(ids))
	for i, id := range ids {
		out[i] = fakeDev{id: id}
	}
	return out
}

// seq returns 0..n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// mustMesh builds a mesh over fake devices with the given ids (iota when nil).
func mustMesh(t testing.TB, ids []int, shape []int, names ...string) Mesh {
	t.Helper()
	if ids == nil {
		n := 1
		for _, s := range shape {
			n *= s
		}
		ids = seq(n)
	}
	m, err := New(devs(ids...), shape, names...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// indexStrings formats indices as "[0:2, 0:8]" strings.
func indexStrings(idx []Index) []string {
	out := make([]string, len(idx))
	for i, x := range idx {
		out[i] = x.String()
	}
	return out
}

// wantErr checks err against a wanted substring ("" = no error).
func wantErr(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return false
	}
	if err == nil {
		t.Fatalf("got no error, want %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
	return true
}

// jaxIndices computes devices_indices_map the way JAX does it (reference
// §4): drop size-1 axes, build the tile assignment by transposing
// arange(N).reshape(mesh) to (used axes by dim, then unused axes), visit
// data tiles row-major taking R devices each. It is an independent oracle
// for PositionIndices: the mesh is given by its axis names and sizes, the
// spec by the axis names of each array dimension (dims), as the test wrote
// them, and the shape must be divisible (see wantTiling).
func jaxIndices(names []string, sizes []int, dims [][]string, shape []int) []string {
	n := 1
	for _, s := range sizes {
		n *= s
	}
	dimAxes := make([][]int, len(dims))
	for d, axes := range dims {
		for _, name := range axes {
			dimAxes[d] = append(dimAxes[d], slices.Index(names, name))
		}
	}
	var perm []int
	tile := make([]int, len(shape))
	for d := range shape {
		tile[d] = 1
		if d < len(dimAxes) {
			for _, a := range dimAxes[d] {
				if sizes[a] == 1 {
					continue
				}
				perm = append(perm, a)
				tile[d] *= sizes[a]
			}
		}
	}
	for a := range sizes {
		if !slices.Contains(perm, a) && sizes[a] > 1 {
			perm = append(perm, a)
		}
	}
	// transposed order: iterate over perm axes row-major, emitting the flat
	// mesh position.
	var order []int
	coords := make([]int, len(sizes))
	var rec func(k int)
	rec = func(k int) {
		if k == len(perm) {
			p := 0
			for i, s := range sizes {
				p = p*s + coords[i]
			}
			order = append(order, p)
			return
		}
		for c := range sizes[perm[k]] {
			coords[perm[k]] = c
			rec(k + 1)
		}
	}
	rec(0)
	ntiles := 1
	for _, t := range tile {
		ntiles *= t
	}
	r := n / ntiles
	out := make([]string, n)
	tc := make([]int, len(shape))
	for ti := range ntiles {
		// tile coords row-major
		x := ti
		for d := len(shape) - 1; d >= 0; d-- {
			tc[d] = x % tile[d]
			x /= tile[d]
		}
		parts := make([]string, len(shape))
		for d := range shape {
			if tile[d] == 1 {
				parts[d] = fmt.Sprintf("0:%d", shape[d])
			} else {
				k := shape[d] / tile[d]
				parts[d] = fmt.Sprintf("%d:%d", tc[d]*k, (tc[d]+1)*k)
			}
		}
		for j := range r {
			out[order[ti*r+j]] = "[" + strings.Join(parts, ", ") + "]"
		}
	}
	return out
}

// wantTiling returns how many parts each array dimension is split into,
// the product of the sizes of its axes (dims as in jaxIndices), for a
// shape of the given rank.
func wantTiling(names []string, sizes []int, dims [][]string, rank int) []int {
	tiling := make([]int, rank)
	for d := range tiling {
		tiling[d] = 1
		if d < len(dims) {
			for _, name := range dims[d] {
				tiling[d] *= sizes[slices.Index(names, name)]
			}
		}
	}
	return tiling
}

// specAxes returns the axis names of each dimension of p, as written.
func specAxes(p PartitionSpec) [][]string {
	dims := make([][]string, p.Len())
	for i, d := range p.Dims() {
		dims[i] = d.Axes()
	}
	return dims
}
