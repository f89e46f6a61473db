package jit

import (
	"fmt"
	"slices"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// chosenSpec returns the partition spec of the layout XLA chose for result i, which was left
// unconstrained: it reads the result's OpSharding from the optimized program and finds the spec
// over m's axes whose tiles sit on the same partitions.
func chosenSpec(exe *pjrt.Executable, m mesh.Mesh, i int, global, shard []int) (mesh.PartitionSpec, error) {
	if slices.Equal(global, shard) {
		return mesh.P(), nil
	}
	shardings, err := exe.OutputShardings()
	if err != nil {
		return mesh.PartitionSpec{}, err
	}
	if i >= len(shardings) {
		return mesh.PartitionSpec{}, fmt.Errorf("%w: XLA reported %d output shardings", ErrLowering, len(shardings))
	}
	op := shardings[i]
	blocks, err := tileOfPartition(op, len(global), m.Size())
	if err != nil {
		return mesh.PartitionSpec{}, err
	}
	if spec, ok := specForTiles(m.Abstract(), global, op.TileDims()[:len(global)], blocks); ok {
		return spec, nil
	}
	return mesh.PartitionSpec{}, fmt.Errorf("%w: XLA's layout %s of the unconstrained result is not a PartitionSpec over %s; declare it with OutSpecs",
		ErrLowering, op, m)
}

// layoutSpec returns the partition spec over m's axes of an OpSharding of an array of shape
// global: replicated for a replicated (or single-device) sharding, else the spec whose tiles
// sit on the same partitions.
func layoutSpec(op pjrt.OpSharding, m mesh.Mesh, global []int) (mesh.PartitionSpec, error) {
	if op.IsReplicated() || m.Size() == 1 {
		return mesh.P(), nil
	}
	blocks, err := tileOfPartition(op, len(global), m.Size())
	if err != nil {
		return mesh.PartitionSpec{}, err
	}
	if spec, ok := specForTiles(m.Abstract(), global, op.TileDims()[:len(global)], blocks); ok {
		return spec, nil
	}
	return mesh.PartitionSpec{}, fmt.Errorf("%w: the layout %s is not a PartitionSpec over %s", ErrLowering, op, m)
}

// tileOfPartition returns, for each partition, the coordinates of the tile it holds (rank entries).
func tileOfPartition(op pjrt.OpSharding, rank, n int) ([][]int, error) {
	if !op.IsTiled() {
		return nil, fmt.Errorf("%w: XLA's layout %s is not a tiling", ErrLowering, op)
	}
	tileDims := op.TileDims()
	partitions, err := op.Assignment()
	if err != nil {
		return nil, fmt.Errorf("%w: XLA's layout: %w", ErrLowering, err)
	}
	extra := len(tileDims) - rank // trailing replication/subgroup dims
	if extra < 0 || extra > 1 || (extra == 1) != (op.ReplicateOnLastTileDim() || slices.Contains(op.LastTileDims(), xlaproto.Replicated)) {
		return nil, fmt.Errorf("%w: XLA's layout %s of a rank-%d value is not a tiling this mesh can express", ErrLowering, op, rank)
	}
	total := 1
	for _, d := range tileDims {
		total *= d
	}
	if total != n || len(partitions) != n {
		return nil, fmt.Errorf("%w: XLA's layout %s covers %d partitions, the mesh has %d", ErrLowering, op, len(partitions), n)
	}
	blocks := make([][]int, n)
	coord := make([]int, len(tileDims))
	for _, p := range partitions {
		if p < 0 || p >= n || blocks[p] != nil {
			return nil, fmt.Errorf("%w: XLA's layout %s names partition %d twice or out of range", ErrLowering, op, p)
		}
		blocks[p] = slices.Clone(coord[:rank])
		for k := len(coord) - 1; k >= 0; k-- {
			coord[k]++
			if coord[k] < tileDims[k] {
				break
			}
			coord[k] = 0
		}
	}
	return blocks, nil
}

// specForTiles searches the partition specs over a's axes (each axis of size > 1 used at most
// once, in any order within a dimension) whose tile counts are tiles and whose geometry puts
// tile blocks[p] on mesh position p.
func specForTiles(a mesh.Abstract, global, tiles []int, blocks [][]int) (mesh.PartitionSpec, bool) {
	var axes []string
	for i, name := range a.AxisNames() {
		if a.AxisSizes()[i] > 1 {
			axes = append(axes, name)
		}
	}
	rank := len(global)
	assign := make([][]string, rank)
	var found mesh.PartitionSpec
	var try func(k int) bool
	try = func(k int) bool {
		if k == len(axes) {
			return permutations(assign, 0, func(dims [][]string) bool {
				spec := specOf(dims)
				if matches(a, spec, global, blocks) {
					found = spec
					return true
				}
				return false
			})
		}
		size, _ := a.AxisSize(axes[k])
		if try(k + 1) { // axis k unused
			return true
		}
		for d := range rank {
			if tiles[d]%(product(a, assign[d])*size) != 0 {
				continue
			}
			assign[d] = append(assign[d], axes[k])
			ok := product(a, assign[d]) <= tiles[d] && try(k+1)
			assign[d] = assign[d][:len(assign[d])-1]
			if ok {
				return true
			}
		}
		return false
	}
	// Only assignments whose per-dimension products equal the tile counts can match; matches checks that.
	return found, try(0)
}

// permutations calls f with every ordering of the axes within each dimension, until f is true.
func permutations(dims [][]string, d int, f func([][]string) bool) bool {
	if d == len(dims) {
		return f(dims)
	}
	return permute(dims[d], 0, func() bool { return permutations(dims, d+1, f) })
}

func permute(xs []string, k int, f func() bool) bool {
	if k >= len(xs)-1 {
		return f()
	}
	for i := k; i < len(xs); i++ {
		xs[k], xs[i] = xs[i], xs[k]
		ok := permute(xs, k+1, f)
		xs[k], xs[i] = xs[i], xs[k]
		if ok {
			return true
		}
	}
	return false
}

func product(a mesh.Abstract, names []string) int {
	p := 1
	for _, n := range names {
		s, _ := a.AxisSize(n)
		p *= s
	}
	return p
}

func specOf(dims [][]string) mesh.PartitionSpec {
	ds := make([]mesh.Dim, len(dims))
	for i, names := range dims {
		ds[i] = mesh.Axes(names...)
	}
	return mesh.SpecOf(ds...)
}

// matches reports whether spec puts tile blocks[p] on every mesh position p.
func matches(a mesh.Abstract, spec mesh.PartitionSpec, global []int, blocks [][]int) bool {
	s, err := mesh.NewAbstractSharding(a, spec)
	if err != nil {
		return false
	}
	shard, err := s.ShardShape(global)
	if err != nil {
		return false
	}
	idx, err := s.PositionIndices(global)
	if err != nil {
		return false
	}
	for p, index := range idx {
		for d, r := range index {
			if shard[d] == 0 || r.Start/shard[d] != blocks[p][d] {
				return false
			}
		}
	}
	return true
}
