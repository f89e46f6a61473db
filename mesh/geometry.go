package mesh

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Range is the half-open interval [Start, Stop) of one array dimension.
type Range struct{ Start, Stop int }

// Len returns Stop - Start.
func (r Range) Len() int { return r.Stop - r.Start }

// String returns "start:stop".
func (r Range) String() string { return strconv.Itoa(r.Start) + ":" + strconv.Itoa(r.Stop) }

// Index is the part of a global array one device holds: one Range per array
// dimension. Replicated dimensions hold the full range.
type Index []Range

// Equal reports whether i and j select the same ranges.
func (i Index) Equal(j Index) bool { return slices.Equal(i, j) }

// String returns numpy-like text, e.g. [0:4, 0:8].
func (i Index) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for k, r := range i {
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.String())
	}
	b.WriteByte(']')
	return b.String()
}

// Shard is one device's part of a global array.
type Shard struct {
	Device    Device
	Index     Index
	ReplicaID int
}

// CheckShape reports whether the sharding can lay out an array of the given
// shape, in JAX's order: an error wrapping ErrShape for a negative
// dimension, *RankError (ErrRank) if the spec is longer than the rank, and
// *IndivisibleError (ErrIndivisible) for the first dimension its partition
// count does not divide.
//
// Shard geometry (CheckShape, ShardShape, DevicesIndicesMap and the rest of
// this file) reads an Unconstrained dimension as None, replicated, as JAX's
// shard_shape and devices_indices_map do (and device_put did up to 0.8.1; JAX
// 0.12's device_put fails on it with a KeyError): the layout
// XLA may pick for it inside a compiled program is not known here.
func (s NamedSharding) CheckShape(shape []int) error {
	if err := s.valid(); err != nil {
		return err
	}
	for d, n := range shape {
		if n < 0 {
			return fmt.Errorf("mesh: %w: dimension %d of shape %s is negative", ErrShape, d, pyIntTuple(shape))
		}
	}
	if s.spec.Len() > len(shape) {
		return &RankError{Sharding: s.String(), SpecLen: s.spec.Len(), Rank: len(shape)}
	}
	for d, t := range s.tile {
		if shape[d]%t != 0 {
			return &IndivisibleError{Sharding: s.String(), Dim: d, Parts: t, Size: shape[d],
				Shape: slices.Clone(shape), Tiling: s.Tiling(len(shape))}
		}
	}
	return nil
}

// ShardShape returns the shape of each device's shard of an array of the
// given global shape, or CheckShape's error.
func (s NamedSharding) ShardShape(shape []int) ([]int, error) {
	if err := s.CheckShape(shape); err != nil {
		return nil, err
	}
	out := slices.Clone(shape)
	for d, t := range s.tile {
		out[d] /= t
	}
	return out, nil
}

// DevicesIndicesMap returns, for each device of the mesh in mesh order
// (parallel to Mesh().Devices()), the index it holds of an array of the
// given global shape. It returns CheckShape's error, or one wrapping
// ErrNoDevices for an abstract sharding.
func (s NamedSharding) DevicesIndicesMap(shape []int) ([]Index, error) {
	if _, err := s.Mesh(); err != nil {
		return nil, err
	}
	return s.PositionIndices(shape)
}

// PositionIndices is DevicesIndicesMap by mesh position; it works on
// abstract shardings too.
func (s NamedSharding) PositionIndices(shape []int) ([]Index, error) {
	if err := s.CheckShape(shape); err != nil {
		return nil, err
	}
	n, rank := s.abs.Size(), len(shape)
	backing := make([]Range, n*rank)
	out := make([]Index, n)
	s.forEachBlock(rank, func(p int, block []int) {
		idx := Index(backing[p*rank : (p+1)*rank : (p+1)*rank])
		for d := range rank {
			k := shape[d] / s.tileOf(d)
			idx[d] = Range{block[d] * k, (block[d] + 1) * k}
		}
		out[p] = idx
	})
	return out, nil
}

// tileOf returns how many blocks dimension d is split into (1 past the spec).
func (s NamedSharding) tileOf(d int) int {
	if d >= len(s.tile) {
		return 1
	}
	return s.tile[d]
}

// forEachBlock calls f for every mesh position p, in order, with the block each
// of the first rank array dimensions holds there: dimension d is split into
// tileOf(d) equal blocks, numbered along its axes, the first one major (0 for
// an unsplit dimension). block is reused between calls.
func (s NamedSharding) forEachBlock(rank int, f func(p int, block []int)) {
	sizes := s.abs.sizes
	coords := make([]int, len(sizes))
	block := make([]int, rank)
	for p := range s.abs.Size() {
		for d := range rank {
			b := 0
			if d < len(s.dimAxes) {
				for _, a := range s.dimAxes[d] {
					b = b*sizes[a] + coords[a]
				}
			}
			block[d] = b
		}
		f(p, block)
		for a := len(coords) - 1; a >= 0; a-- {
			coords[a]++
			if coords[a] < sizes[a] {
				break
			}
			coords[a] = 0
		}
	}
}

// ReplicaIDs returns each mesh position's replica id, parallel to
// Mesh().Devices(): the number of earlier devices in mesh order holding the
// same index, which is the row-major rank of the device's coordinates along
// the axes the spec does not name. It works on abstract shardings too. For
// an array with a zero-size dimension use ReplicaIDsFor, since all its
// shards are the same empty block.
func (s NamedSharding) ReplicaIDs() ([]int, error) {
	if err := s.valid(); err != nil {
		return nil, err
	}
	return s.replicaIDs(s.used), nil
}

// ReplicaIDsFor is ReplicaIDs for an array of the given global shape, with
// CheckShape's errors: axes splitting a zero-size dimension do not tell
// shards apart, so they count as unused.
func (s NamedSharding) ReplicaIDsFor(shape []int) ([]int, error) {
	if err := s.CheckShape(shape); err != nil {
		return nil, err
	}
	used := slices.Clone(s.used)
	for d, axes := range s.dimAxes {
		if shape[d] == 0 {
			for _, a := range axes {
				used[a] = false
			}
		}
	}
	return s.replicaIDs(used), nil
}

func (s NamedSharding) replicaIDs(used []bool) []int {
	n := s.abs.Size()
	sizes := s.abs.sizes
	out := make([]int, n)
	coords := make([]int, len(sizes))
	for p := range n {
		r := 0
		for a, u := range used {
			if !u {
				r = r*sizes[a] + coords[a]
			}
		}
		out[p] = r
		for a := len(coords) - 1; a >= 0; a-- {
			coords[a]++
			if coords[a] < sizes[a] {
				break
			}
			coords[a] = 0
		}
	}
	return out
}

// Shards returns every device's shard of an array of the given global shape,
// in mesh order. Errors are those of DevicesIndicesMap.
func (s NamedSharding) Shards(shape []int) ([]Shard, error) {
	return s.shards(shape, 0, true)
}

// AddressableShards returns the shards held by devices of the given process,
// in mesh order (JAX's addressable_devices_indices_map). Errors are those of
// DevicesIndicesMap.
func (s NamedSharding) AddressableShards(shape []int, process int) ([]Shard, error) {
	return s.shards(shape, process, false)
}

// shards returns the shards of the devices of process (of every device when all) in one walk over
// the mesh positions that computes each index and replica id once (ReplicaIDsFor's rule), with
// one backing array for all the indices.
func (s NamedSharding) shards(shape []int, process int, all bool) ([]Shard, error) {
	if _, err := s.Mesh(); err != nil {
		return nil, err
	}
	if err := s.CheckShape(shape); err != nil {
		return nil, err
	}
	devices, procAt := s.mesh.devices, s.mesh.procAt
	n, rank := len(devices), len(shape)
	slot := int32(-1) // the process's index in the mesh's procs (procAt), unless all
	if !all {
		n = 0
		if slot = s.mesh.processSlot(process); slot >= 0 {
			for _, at := range procAt {
				if at == slot {
					n++
				}
			}
		}
	}
	// Axes splitting a zero-size dimension do not tell shards apart (ReplicaIDsFor).
	used := slices.Clone(s.used)
	for d, axes := range s.dimAxes {
		if shape[d] == 0 {
			for _, a := range axes {
				used[a] = false
			}
		}
	}
	backing := make([]Range, n*rank)
	out := make([]Shard, 0, n)
	sizes := s.abs.sizes
	coords := make([]int, len(sizes))
	for p := range devices {
		if all || procAt[p] == slot {
			k := len(out)
			idx := Index(backing[k*rank : (k+1)*rank : (k+1)*rank])
			for d := range rank {
				if d >= len(s.tile) || s.tile[d] == 1 {
					idx[d] = Range{0, shape[d]}
					continue
				}
				b := 0
				for _, a := range s.dimAxes[d] {
					b = b*sizes[a] + coords[a]
				}
				w := shape[d] / s.tile[d]
				idx[d] = Range{b * w, (b + 1) * w}
			}
			r := 0
			for a, u := range used {
				if !u {
					r = r*sizes[a] + coords[a]
				}
			}
			out = append(out, Shard{Device: devices[p], Index: idx, ReplicaID: r})
		}
		for a := len(coords) - 1; a >= 0; a-- {
			coords[a]++
			if coords[a] < sizes[a] {
				break
			}
			coords[a] = 0
		}
	}
	return out, nil
}

// DevicesHolding returns the devices, in mesh order, whose shard of an array
// of the given global shape is exactly index. Errors are those of
// DevicesIndicesMap, plus ErrShape when index has the wrong rank.
func (s NamedSharding) DevicesHolding(shape []int, index Index) ([]Device, error) {
	idx, err := s.DevicesIndicesMap(shape)
	if err != nil {
		return nil, err
	}
	if len(index) != len(shape) {
		return nil, fmt.Errorf("mesh: %w: index %s has %d ranges for an array of rank %d", ErrShape, index, len(index), len(shape))
	}
	var out []Device
	for p, ix := range idx {
		if ix.Equal(index) {
			out = append(out, s.mesh.devices[p])
		}
	}
	return out, nil
}

// EquivalentTo reports whether s and o lay out every array of the given
// rank identically (JAX's is_equivalent_to): each device holds the same
// index under both. P('x') and P('x', None) are equivalent, and so are specs
// differing only in size-1 axes. Shardings over different device sets, or
// with an error for that rank (CheckShape), are not equivalent.
func (s NamedSharding) EquivalentTo(o NamedSharding, rank int) bool {
	if !s.devices || !o.devices || rank < 0 {
		return false
	}
	ts, to := s.Tiling(rank), o.Tiling(rank)
	if !slices.Equal(ts, to) {
		return false
	}
	a, err := s.DevicesIndicesMap(ts)
	if err != nil {
		return false
	}
	b, err := o.DevicesIndicesMap(to)
	if err != nil {
		return false
	}
	byID := make(map[int]Index, len(b))
	for p, ix := range b {
		byID[o.mesh.ids[p]] = ix
	}
	if len(byID) != len(a) {
		return false
	}
	for p, ix := range a {
		if other, ok := byID[s.mesh.ids[p]]; !ok || !other.Equal(ix) {
			return false
		}
	}
	return true
}
