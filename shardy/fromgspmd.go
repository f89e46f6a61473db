package shardy

import (
	"fmt"
	"slices"

	"github.com/xlamesh/xlamesh/internal/xlaproto"
	"github.com/xlamesh/xlamesh/mesh"
)

// FromGSPMD returns the PartitionSpec over the abstract mesh a of an HloSharding h of a value
// of the given rank: the inverse of GSPMD, as JAX's parse_flatten_op_sharding (behind
// _gspmd_to_named_sharding) names the layout XLA chose. Devices in h are mesh positions (the
// partitions of a program compiled with the mesh's devices as its device assignment).
//
// A tiled h is read directly: its tile assignment must be the mesh's positions transposed
// (iota or written out), which orders the mesh axes of size > 1 from major to minor; each tile
// dimension then takes the next axes in that order until their sizes multiply to its tile
// count; the devices within a replication group may come in any order. The trailing subgroup
// dimensions (last_tile_dim_replicate, last_tile_dims={manual,
// replicated}) take the axes the spec leaves out: a manual subgroup only Manual axes, a
// replicated one only others. {replicated}, {maximal} on a mesh of one device, and {manual}
// on a mesh whose axes of size > 1 are all Manual give P().
//
// The spec has one entry per dimension (None for an unsplit one), or is P() when no dimension
// is split; JAX's version drops trailing Nones instead. Mesh axes of size 1 split nothing and
// never appear. Errors: ErrRank when h has more or fewer tile dimensions than rank and its
// subgroups; ErrUnsupported when no PartitionSpec over a has h as its GSPMD form (a tuple,
// unknown or unreduced sharding, a maximal one on several devices, a tile count that needs
// part of an axis, a tile assignment that is not a transposition of the mesh, an unreduced
// subgroup).
func FromGSPMD(a mesh.Abstract, h xlaproto.OpSharding, rank int) (mesh.PartitionSpec, error) {
	if rank < 0 {
		return mesh.PartitionSpec{}, fmt.Errorf("shardy: from GSPMD: %w: negative rank %d", ErrRank, rank)
	}
	unsupported := func(format string, args ...any) error {
		return fmt.Errorf("shardy: from GSPMD: %w: %s is not a PartitionSpec over %s: %s",
			ErrUnsupported, h, a, fmt.Sprintf(format, args...))
	}
	switch h.Type() {
	case xlaproto.Replicated:
		return mesh.P(), nil
	case xlaproto.Maximal:
		if a.Size() == 1 {
			return mesh.P(), nil
		}
		return mesh.PartitionSpec{}, unsupported("it places the value on one device of %d", a.Size())
	case xlaproto.Manual:
		for i, t := range a.AxisTypes() {
			if t != mesh.Manual && a.AxisSizes()[i] > 1 {
				return mesh.PartitionSpec{}, unsupported("axis %q is not Manual", a.AxisNames()[i])
			}
		}
		return mesh.P(), nil
	case xlaproto.Tiled:
		return tiledSpec(a, h, rank, unsupported)
	}
	return mesh.PartitionSpec{}, unsupported("its kind is %s", h.Type())
}

// tiledSpec is FromGSPMD of a tiled sharding.
func tiledSpec(a mesh.Abstract, h xlaproto.OpSharding, rank int, unsupported func(string, ...any) error) (mesh.PartitionSpec, error) {
	kinds := h.LastTileDims()
	if h.ReplicateOnLastTileDim() {
		kinds = []xlaproto.ShardingType{xlaproto.Replicated}
	}
	tiles := h.TileDims()
	if len(tiles) != rank+len(kinds) {
		return mesh.PartitionSpec{}, fmt.Errorf("shardy: from GSPMD: %w: %s has %d tile dimensions, %d of them subgroups, for a value of rank %d",
			ErrRank, h, len(tiles), len(kinds), rank)
	}
	for _, k := range kinds {
		if k != xlaproto.Replicated && k != xlaproto.Manual {
			return mesh.PartitionSpec{}, unsupported("it has a subgroup of kind %s", k)
		}
	}
	n := 1
	for _, t := range tiles {
		n *= t
	}
	if n != a.Size() {
		return mesh.PartitionSpec{}, unsupported("it has %d tiles for %d devices", n, a.Size())
	}
	assignment, err := h.Assignment()
	if err != nil {
		return mesh.PartitionSpec{}, fmt.Errorf("shardy: from GSPMD: %w", err)
	}
	if len(kinds) > 0 && kinds[len(kinds)-1] == xlaproto.Replicated {
		// The devices of a replication group hold the same tile: their order says nothing
		// (XLA sorts them where a mesh has device ids).
		g := tiles[len(tiles)-1]
		for i := 0; i+g <= len(assignment); i += g {
			slices.Sort(assignment[i : i+g])
		}
	}
	order, ok := axisOrder(a, assignment)
	if !ok {
		return mesh.PartitionSpec{}, unsupported("its tile assignment is not a transposition of the mesh's axes")
	}
	names, types := a.AxisNames(), a.AxisTypes()
	dims := make([]mesh.Dim, rank)
	split := false
	next := 0
	for d, count := range tiles {
		var axes []string
		for count > 1 {
			axis := order[next]
			size := a.AxisSizes()[axis]
			if count%size != 0 {
				return mesh.PartitionSpec{}, unsupported("tile dimension %d (%d tiles) takes part of axis %q of size %d", d, count, names[axis], size)
			}
			count /= size
			next++
			axes = append(axes, names[axis])
			if d >= rank { // a subgroup: its kind must be the one GSPMD gives the axis
				manual := types[axis] == mesh.Manual
				if manual != (kinds[d-rank] == xlaproto.Manual) {
					return mesh.PartitionSpec{}, unsupported("axis %q (%s) is in a %s subgroup", names[axis], types[axis], kinds[d-rank])
				}
			}
		}
		if d < rank {
			dims[d] = mesh.Axes(axes...)
			split = split || len(axes) > 0
		}
	}
	if !split {
		return mesh.P(), nil
	}
	return mesh.SpecOf(dims...), nil
}

// axisOrder returns the axes of a of size > 1 (as indices) from major to minor in the order
// the tile assignment takes them, and false when the assignment is not the mesh's positions
// transposed: read from the minor end, each next block of the assignment must step by the
// stride of an axis not yet taken.
func axisOrder(a mesh.Abstract, assignment []int) ([]int, bool) {
	sizes := a.AxisSizes()
	if len(assignment) != a.Size() || len(assignment) == 0 {
		return nil, false
	}
	strides := make([]int, len(sizes))
	stride := 1
	for i := len(sizes) - 1; i >= 0; i-- {
		strides[i] = stride
		stride *= sizes[i]
	}
	taken := make([]bool, len(sizes))
	var minorFirst []int
	for block := 1; block < len(assignment); {
		step := assignment[block] - assignment[0]
		axis := -1
		for i := range sizes {
			if !taken[i] && sizes[i] > 1 && strides[i] == step {
				axis = i
			}
		}
		if axis < 0 {
			return nil, false
		}
		taken[axis] = true
		minorFirst = append(minorFirst, axis)
		block *= sizes[axis]
	}
	order := slices.Clone(minorFirst)
	slices.Reverse(order)
	// The assignment must be exactly the mesh's positions transposed to that order.
	reshape := make([]int, 0, len(sizes))
	index := make([]int, len(sizes)) // axis -> its dimension in reshape
	for i, s := range sizes {
		if s > 1 {
			index[i] = len(reshape)
			reshape = append(reshape, s)
		}
	}
	perm := make([]int, len(order))
	for k, axis := range order {
		perm[k] = index[axis]
	}
	want, err := xlaproto.Iota(reshape, perm)
	if err != nil || !slices.Equal(want, assignment) {
		return nil, false
	}
	return order, true
}
