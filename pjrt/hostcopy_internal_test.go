package pjrt

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// naiveStrided copies element by element between a dense block and strided memory.
func naiveStrided(dense, strided []byte, dims []int, strides []int64, elem int, toDense bool) {
	n := 1
	for _, d := range dims {
		n *= d
	}
	pos := make([]int, len(dims))
	for k := range n {
		var off int64
		for i, p := range pos {
			off += int64(p) * strides[i]
		}
		if toDense {
			copy(dense[k*elem:(k+1)*elem], strided[off:off+int64(elem)])
		} else {
			copy(strided[off:off+int64(elem)], dense[k*elem:(k+1)*elem])
		}
		for i := len(pos) - 1; i >= 0; i-- {
			pos[i]++
			if pos[i] < dims[i] {
				break
			}
			pos[i] = 0
		}
	}
}

// TestLayoutCopies checks the chunked, parallel strided copies against an element-by-element
// copy, both ways, for blocks of larger arrays (row, column and inner splits), size-1 and
// size-0 dimensions, padded and transposed strides, and blocks large enough to be split into
// several tasks.
func TestLayoutCopies(t *testing.T) {
	type tc struct {
		dims    []int
		strides []int64 // nil: a block of the array outer (row-major)
		outer   []int
		elem    int
	}
	cases := []tc{
		{dims: []int{}, outer: []int{}, elem: 4},
		{dims: []int{5}, outer: []int{5}, elem: 2},
		{dims: []int{3, 4}, outer: []int{6, 8}, elem: 4},
		{dims: []int{6, 4}, outer: []int{6, 8}, elem: 1},
		{dims: []int{3, 8}, outer: []int{6, 8}, elem: 8},
		{dims: []int{2, 1, 3}, outer: []int{4, 1, 6}, elem: 2},
		{dims: []int{2, 3, 1}, outer: []int{2, 6, 1}, elem: 4},
		{dims: []int{1, 1, 7}, outer: []int{3, 2, 7}, elem: 4},
		{dims: []int{4, 0, 3}, outer: []int{4, 2, 3}, elem: 4},
		{dims: []int{3, 5}, strides: []int64{4, 12}, elem: 4},        // transposed
		{dims: []int{3, 5}, strides: []int64{64, 8}, elem: 4},        // padded rows and gaps
		{dims: []int{2, 3}, strides: []int64{0, 4}, elem: 4},         // broadcast rows (read side)
		{dims: []int{1024, 700}, outer: []int{2048, 1400}, elem: 4},  // several tasks, rows
		{dims: []int{3, 1 << 20}, outer: []int{3, 1 << 20}, elem: 1}, // several tasks, one run
		{dims: []int{2, 3, 4, 5}, outer: []int{4, 6, 4, 10}, elem: 2},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		strides := c.strides
		size := 0
		if strides == nil {
			strides = denseStrides(c.outer, c.elem)
			size = c.elem
			for _, d := range c.outer {
				size *= d
			}
		} else {
			size = c.elem
			for i, d := range c.dims {
				if d > 0 {
					size += (d - 1) * int(strides[i])
				}
			}
		}
		// Start at a block offset inside the outer array: one step along the first dimension
		// with room left.
		start := 0
		if c.outer != nil && len(c.dims) > 0 && c.outer[0] >= 2*c.dims[0] {
			start = c.dims[0] * int(strides[0])
		}
		t.Run(fmt.Sprint(c.dims, strides), func(t *testing.T) {
			dn := c.elem
			for _, d := range c.dims {
				dn *= d
			}
			strided := make([]byte, size)
			for i := range strided {
				strided[i] = byte(rng.Uint32())
			}
			l := newLayout(c.dims, strides, c.elem)
			if l.bytes != dn {
				t.Fatalf("layout bytes %d, want %d", l.bytes, dn)
			}
			// Gather: strided -> dense.
			got, want := make([]byte, dn), make([]byte, dn)
			runTasks(l.copyTasks(nil, got, strided[start:], true))
			naiveStrided(want, strided[start:], c.dims, strides, c.elem, true)
			if string(got) != string(want) {
				t.Fatalf("gather differs from the element-by-element copy")
			}
			if c.strides != nil && c.strides[0] == 0 {
				return // overlapping destinations: scatter is not defined
			}
			// Scatter: dense -> strided, into a copy of the original memory.
			dense := make([]byte, dn)
			for i := range dense {
				dense[i] = byte(rng.Uint32())
			}
			gotS, wantS := append([]byte(nil), strided...), append([]byte(nil), strided...)
			runTasks(l.copyTasks(nil, dense, gotS[start:], false))
			naiveStrided(dense, wantS[start:], c.dims, strides, c.elem, false)
			if string(gotS) != string(wantS) {
				t.Fatalf("scatter differs from the element-by-element copy")
			}
		})
	}
}

// TestLayoutMerges checks which trailing dimensions are merged into one contiguous run.
func TestLayoutMerges(t *testing.T) {
	cases := []struct {
		dims    []int
		strides []int64
		inner   int
		run     int
	}{
		{[]int{4, 8}, []int64{32, 4}, 0, 128}, // dense
		{[]int{4, 8}, []int64{64, 4}, 1, 32},  // a column block
		{[]int{4, 1, 8}, []int64{64, 4, 4}, 1, 32},
		{[]int{4, 8}, []int64{4, 16}, 2, 4},   // transposed: single elements
		{[]int{1, 8}, []int64{999, 4}, 0, 32}, // size-1 dimensions never matter
		{[]int{}, []int64{}, 0, 4},
	}
	for _, c := range cases {
		l := newLayout(c.dims, c.strides, 4)
		if l.inner != c.inner || l.run != c.run {
			t.Errorf("newLayout(%v, %v): inner %d run %d, want %d %d", c.dims, c.strides, l.inner, l.run, c.inner, c.run)
		}
	}
}
