package mesh

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// This file is the bookkeeping of a mesh spread over several processes: which part of a global
// array one process holds, and how that part maps to the process-local data a program loads
// (JAX's get_process_index_and_count, local_to_global_shape, num_addressable_indices and the
// index arithmetic of make_array_from_process_local_data). Every function takes the process
// explicitly: a mesh does not know which process it is seen from.

// LocalShard is one device's shard of a global array, seen from the process that holds it:
// Index says where the shard sits in the global array, Local where it sits in the process-local
// array the process loads (FromProcessLocalData) or gathers (ProcessLocalData).
type LocalShard struct {
	Shard
	Local Index
}

// ProcessIndexAndCount returns which of the distinct process-local blocks of dimension dim the
// process holds and how many distinct blocks there are, for arrays of the given rank (JAX's
// get_process_index_and_count). Processes holding the same block have the same index. A
// sharding whose devices all belong to the process, or that is fully replicated, gives (0, 1).
//
// The count is JAX's; the index numbers the distinct blocks by their first global position (JAX
// numbers them in the order of a Python set, which is not specified). Errors: ErrNoDevices (an
// abstract sharding, or no device of the process in the mesh), ErrShape (dim out of range),
// ErrRank, and ErrNonUniform when the processes hold different numbers of blocks of dim, or
// blocks that overlap without being equal.
func (s NamedSharding) ProcessIndexAndCount(dim, rank, process int) (index, count int, err error) {
	m, err := s.Mesh()
	if err != nil {
		return 0, 0, err
	}
	if dim < 0 || dim >= rank {
		return 0, 0, fmt.Errorf("mesh: %w: dimension %d of an array of rank %d", ErrShape, dim, rank)
	}
	local := m.LocalDevices(process)
	if len(local) == 0 {
		return 0, 0, fmt.Errorf("mesh: %w: process %d has no device in %s", ErrNoDevices, process, m)
	}
	if len(local) == m.Size() || s.IsFullyReplicated() {
		return 0, 1, nil
	}
	// Over the universal shape (devices, devices, ...), which every tiling of the mesh divides,
	// the blocks of dim all have the same size, so a block is its number along dim: its
	// row-major rank along the axes that split dim (0 for a replicated dim). Sorting the
	// (process, block) pairs of all positions gives each process's distinct blocks in order, in
	// O(N log N) and a few allocations (issue 31).
	universal := make([]int, rank)
	for i := range universal {
		universal[i] = m.Size()
	}
	if err := s.CheckShape(universal); err != nil {
		return 0, 0, err
	}
	var axes []int
	if dim < len(s.dimAxes) {
		axes = s.dimAxes[dim]
	}
	sizes := m.abs.sizes
	pairs := make([][2]int, m.Size()) // (process slot, block)
	coords := make([]int, len(sizes))
	for p := range pairs {
		blk := 0
		for _, a := range axes {
			blk = blk*sizes[a] + coords[a]
		}
		pairs[p] = [2]int{int(m.procAt[p]), blk}
		for a := len(coords) - 1; a >= 0; a-- {
			coords[a]++
			if coords[a] < sizes[a] {
				break
			}
			coords[a] = 0
		}
	}
	slices.SortFunc(pairs, func(x, y [2]int) int { return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1])) })
	pairs = slices.Compact(pairs)
	// runs[q] is the sorted distinct blocks of process slot q; every slot has a device.
	runs := make([][][2]int, len(m.procs))
	for i := 0; i < len(pairs); {
		j := i
		for j < len(pairs) && pairs[j][0] == pairs[i][0] {
			j++
		}
		runs[pairs[i][0]] = pairs[i:j]
		i = j
	}
	mine := runs[m.processSlot(process)]
	for q, run := range runs {
		if len(run) != len(mine) {
			return 0, 0, fmt.Errorf("mesh: %w: tensor_sharding=%s is non-uniform on dim=%d as some processes have different number of slices "+
				"(process %d holds %d blocks, process %d holds %d)", ErrNonUniform, s, dim, process, len(mine), m.procs[q], len(run))
		}
	}
	// The distinct sets of blocks, found through a map from each set's text so that P
	// processes cost O(P) lookups, not O(P²) set comparisons; blocks seen at all, in a table.
	seen := make(map[string]bool, len(runs))
	seenBlock := make([]bool, m.Size())
	firsts := make([]int, 0, len(runs)) // each distinct set's first block
	total, all := 0, 0
	key := make([]byte, 0, 8*len(mine))
	for _, run := range runs {
		key = key[:0]
		for _, pb := range run {
			key = strconv.AppendInt(key, int64(pb[1]), 10)
			key = append(key, ',')
			if !seenBlock[pb[1]] {
				seenBlock[pb[1]] = true
				all++
			}
		}
		if !seen[string(key)] {
			seen[string(key)] = true
			total += len(run)
			firsts = append(firsts, run[0][1])
		}
	}
	scaleProbes.Add(int64(len(runs)))
	if total != all {
		return 0, 0, fmt.Errorf("mesh: %w: tensor_sharding=%s is non-uniform on dim=%d (the processes' blocks overlap without being equal)",
			ErrNonUniform, s, dim)
	}
	// The sets are disjoint: they are numbered by their first block.
	index = 0
	for _, f := range firsts {
		if f < mine[0][1] {
			index++
		}
	}
	return index, len(firsts), nil
}

// LocalToGlobalShape returns the global shape of an array whose process-local part has the
// given shape, every process holding its own data (JAX's local_to_global_shape): each dimension
// times its number of distinct process blocks (ProcessIndexAndCount). When a dimension is
// non-uniform the error wraps ErrNonUniform and shows the partial shape, as JAX's
// make_array_from_process_local_data does; other errors are ProcessIndexAndCount's.
func (s NamedSharding) LocalToGlobalShape(localShape []int, process int) ([]int, error) {
	out := make([]int, len(localShape))
	unknown := false
	for d, n := range localShape {
		if n < 0 {
			return nil, fmt.Errorf("mesh: %w: dimension %d of shape %s is negative", ErrShape, d, pyIntTuple(localShape))
		}
		_, count, err := s.ProcessIndexAndCount(d, len(localShape), process)
		switch {
		case err == nil:
			out[d] = n * count
		case errors.Is(err, ErrNonUniform):
			out[d], unknown = -1, true
		default:
			return nil, err
		}
	}
	if unknown {
		return nil, fmt.Errorf("mesh: %w: Unable to compute global_shape due to non-uniform sharding. Specify global shape directly. "+
			"Partially computed global_shape=%s", ErrNonUniform, pyShapeWithNone(out))
	}
	return out, nil
}

// NumAddressableIndices returns how many indices of dimension dim of an array of the given
// global shape the process's devices hold, counting each distinct block once (JAX's
// num_addressable_indices). Errors: AddressableShards' and ShardShape's, ErrShape for dim out of
// range, ErrNoDevices when the process holds no shard.
func (s NamedSharding) NumAddressableIndices(dim int, globalShape []int, process int) (int, error) {
	shards, shardShape, err := s.processShards(globalShape, process)
	if err != nil {
		return 0, err
	}
	if dim < 0 || dim >= len(globalShape) {
		return 0, fmt.Errorf("mesh: %w: dimension %d of shape %s", ErrShape, dim, pyIntTuple(globalShape))
	}
	blocks := map[Range]bool{}
	for _, sh := range shards {
		blocks[sh.Index[dim]] = true
	}
	return len(blocks) * shardShape[dim], nil
}

// ProcessLocalShape returns the shape of the process-local array a process loads or gathers for
// a global array of the given shape: NumAddressableIndices of every dimension.
func (s NamedSharding) ProcessLocalShape(globalShape []int, process int) ([]int, error) {
	out := make([]int, len(globalShape))
	for d := range globalShape {
		n, err := s.NumAddressableIndices(d, globalShape, process)
		if err != nil {
			return nil, err
		}
		out[d] = n
	}
	return out, nil
}

// ProcessLocalShards returns the process's shards of an array of the given global shape (mesh
// order, as AddressableShards) with the place of each in the process-local array of localShape,
// the index arithmetic of jax.make_array_from_process_local_data: a dimension whose local size
// equals the global one is taken as is; any other must have the process's addressable size
// (NumAddressableIndices), and its distinct blocks are laid side by side in order of their
// global start. A local shape that fits neither gives an error wrapping ErrProcessData in
// JAX's words; a rank mismatch one wrapping ErrShape.
func (s NamedSharding) ProcessLocalShards(globalShape, localShape []int, process int) ([]LocalShard, error) {
	if len(localShape) != len(globalShape) {
		return nil, fmt.Errorf("mesh: %w: process-local shape %s and global shape %s differ in rank",
			ErrShape, pyIntTuple(localShape), pyIntTuple(globalShape))
	}
	shards, shardShape, err := s.processShards(globalShape, process)
	if err != nil {
		return nil, err
	}
	full := make([]bool, len(globalShape))
	for d := range globalShape {
		if localShape[d] == globalShape[d] {
			full[d] = true
			continue
		}
		n, err := s.NumAddressableIndices(d, globalShape, process)
		if err != nil {
			return nil, err
		}
		if n != localShape[d] {
			return nil, fmt.Errorf("mesh: %w: Invalid host data, each dimension should match either global or process shape. "+
				"In dimension %d, the process data has %d elements. Process addresses %d elements and global_shape=%s",
				ErrProcessData, d, localShape[d], n, pyIntTuple(globalShape))
		}
	}
	// Each dimension's distinct block starts, sorted; a block's place is its start's rank.
	starts := make([][]int, len(globalShape))
	for d := range starts {
		all := make([]int, len(shards))
		for i, sh := range shards {
			all[i] = sh.Index[d].Start
		}
		slices.Sort(all)
		starts[d] = slices.Compact(all)
	}
	scaleProbes.Add(int64(len(shards) * len(starts)))
	out := make([]LocalShard, len(shards))
	for i, sh := range shards {
		local := make(Index, len(sh.Index))
		for d, r := range sh.Index {
			if full[d] {
				local[d] = r
				continue
			}
			j, _ := slices.BinarySearch(starts[d], r.Start)
			k := j * shardShape[d]
			local[d] = Range{k, k + shardShape[d]}
		}
		out[i] = LocalShard{Shard: sh, Local: local}
	}
	return out, nil
}

// processShards returns the process's shards and the shard shape; a process without a shard is
// an error wrapping ErrNoDevices.
func (s NamedSharding) processShards(globalShape []int, process int) ([]Shard, []int, error) {
	shardShape, err := s.ShardShape(globalShape)
	if err != nil {
		return nil, nil, err
	}
	shards, err := s.AddressableShards(globalShape, process)
	if err != nil {
		return nil, nil, err
	}
	if len(shards) == 0 {
		return nil, nil, fmt.Errorf("mesh: %w: process %d holds no shard of %s", ErrNoDevices, process, s)
	}
	return shards, shardShape, nil
}

// scaleProbes counts the set lookups of the deduplications whose growth the TestScale tests
// check (one Add per call, not per lookup), so that they tell linear work from quadratic
// without timing anything.
var scaleProbes atomic.Int64

// pyShapeWithNone formats a shape with -1 as None, the way Python prints such a tuple.
func pyShapeWithNone(shape []int) string {
	parts := make([]string, len(shape))
	for i, n := range shape {
		if n < 0 {
			parts[i] = "None"
		} else {
			parts[i] = strconv.Itoa(n)
		}
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
