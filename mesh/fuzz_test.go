package mesh

import (
	"errors"
	"slices"
	"testing"
)

// FuzzGeometry builds a mesh (up to 4 axes of size 1-4), a spec assigning
// each axis to an array dimension (or none) in some order, and a shape,
// divisible or (one time in four) made indivisible in one dimension, then
// checks PositionIndices against the JAX tile-assignment oracle (or the
// error against ErrIndivisible) and ReplicaIDs against the count of earlier
// identical indices. The tiling and the axes of each dimension come from
// the test's own spec, not from the sharding under test.
func FuzzGeometry(f *testing.F) {
	f.Add([]byte{4, 2, 0, 0, 1, 5, 1})
	f.Add([]byte{2, 2, 2, 2, 0, 1, 2, 3, 7, 9})
	f.Add([]byte{1, 3, 1, 4, 2, 2, 0, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := int(data[0])
			data = data[1:]
			return b
		}
		naxes := 1 + next()%4
		sizes := make([]int, naxes)
		names := make([]string, naxes)
		for i := range sizes {
			sizes[i] = 1 + next()%4
			names[i] = string(rune('a' + i))
		}
		rank := 1 + next()%3
		dims := make([][]string, rank)
		order := next()
		for i := range naxes {
			if d := next() % (rank + 1); d < rank {
				dims[d] = append(dims[d], names[i])
			}
		}
		if order%2 == 1 {
			for d := range dims {
				slices.Reverse(dims[d])
			}
		}
		entries := make([]any, rank)
		for d := range dims {
			entries[d] = dims[d]
		}
		abs := MustAbstract(sizes, names)
		s, err := NewAbstractSharding(abs, P(entries...))
		if err != nil {
			t.Fatal(err)
		}
		tiling := wantTiling(names, sizes, dims, rank)
		shape := slices.Clone(tiling)
		for d := range shape {
			shape[d] *= 1 + next()%3
		}
		if bad := next(); bad%4 == 0 && tiling[bad/4%rank] > 1 {
			shape[bad/4%rank]++ // not a multiple of its tiling any more
			if _, err := s.PositionIndices(shape); !errors.Is(err, ErrIndivisible) {
				t.Fatalf("%v on %v, shape %v: err = %v, want ErrIndivisible", s.Spec(), sizes, shape, err)
			}
			return
		}
		idx, err := s.PositionIndices(shape)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := indexStrings(idx), jaxIndices(names, sizes, dims, shape); !slices.Equal(got, want) {
			t.Fatalf("%v on %v, shape %v: got %v, want %v", s.Spec(), sizes, shape, got, want)
		}
		rids, err := s.ReplicaIDsFor(shape)
		if err != nil {
			t.Fatal(err)
		}
		for p := range idx {
			n := 0
			for q := range p {
				if idx[q].Equal(idx[p]) {
					n++
				}
			}
			if n != rids[p] {
				t.Fatalf("%v: position %d replica id %d, want %d", s.Spec(), p, rids[p], n)
			}
		}
	})
}
