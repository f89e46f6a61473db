package lower

import (
	"slices"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Collectives for manual code. They may only appear inside a ShardMap body and only over
// its manual axes. Their replica groups are the sets of partition ids (positions in the
// mesh, which the device assignment maps to devices) that differ only along the named
// axes; within a group, ids are ordered by the named axes, the first axis major. Each
// collective gets a fresh channel handle and use_global_device_ids, as JAX emits them.
//
// Each is a collective of package stablehlo given the groups of its axes, under a name of
// its own: JAX's where one is exact (Psum, Pmax, Pmin, PsumScatter, Ppermute), else the
// StableHLO op's with "Over" (mesh axes) appended (AllReduceOver, AllGatherOver,
// ReduceScatterOver, AllToAllOver). The builder's methods of the op names (AllReduce,
// AllGather, ReduceScatter, AllToAll, CollectivePermute), which take replica groups of
// partition ids, stay reachable on a Function unchanged.

// axisGroups checks the axes and returns the replica groups for them.
func (f *Function) axisGroups(opName string, x Value, axes []string) ([][]int, bool) {
	c := f.manualCtx()
	if c == nil {
		f.Failf(opName, 0, x, ErrNotManual, "collectives over axes %q need a ShardMap body", axes)
		return nil, false
	}
	if len(axes) == 0 {
		f.Failf(opName, 0, x, ErrNotManual, "no axis names given")
		return nil, false
	}
	names, sizes := c.abs.AxisNames(), c.abs.AxisSizes()
	named := make([]int, len(axes)) // mesh index per named axis
	for i, a := range axes {
		j := slices.Index(names, a)
		if j < 0 {
			f.Failf(opName, 0, x, ErrUnknownAxis, "unknown axis %q (mesh has %s)", a, axisList(c.abs))
			return nil, false
		}
		if !c.isManual(a) {
			f.Failf(opName, 0, x, ErrNotManual, "axis %q is not a manual axis of the enclosing shard_map (manual: %q)", a, c.axes)
			return nil, false
		}
		if slices.Index(axes, a) != i {
			f.Failf(opName, 0, x, ErrNotManual, "axis %q named twice", a)
			return nil, false
		}
		named[i] = j
	}
	return MeshGroups(sizes, named), true
}

// MeshGroups returns the replica groups of the axes at indices axes (in that order) of a mesh
// of the given sizes: partition ids that differ only along them, the first axis major within
// a group, the groups ordered row-major by the other axes. They are the groups of the
// collectives over mesh axes (AllReduce, Psum, ...) in a shard_map body.
func MeshGroups(sizes, axes []int) [][]int {
	n, size := 1, 1
	for _, s := range sizes {
		n *= s
	}
	for _, j := range axes {
		size *= sizes[j]
	}
	groups := make([][]int, n/size)
	for g := range groups {
		groups[g] = make([]int, size)
	}
	coords := make([]int, len(sizes))
	for p := range n {
		// coords of p, row-major
		q := p
		for k := len(sizes) - 1; k >= 0; k-- {
			coords[k] = q % sizes[k]
			q /= sizes[k]
		}
		other, within := 0, 0
		for k := range sizes {
			if !slices.Contains(axes, k) {
				other = other*sizes[k] + coords[k]
			}
		}
		for _, j := range axes {
			within = within*sizes[j] + coords[j]
		}
		groups[other][within] = p
	}
	return groups
}

// collectiveSetup checks a collective's operand and derives its replica groups from axes,
// and how to print them: with Shardy on a mesh of more than one device, by mesh axes
// (stablehlo.MeshAxes) as JAX 0.12 does; otherwise dense.
func (f *Function) collectiveSetup(opName string, x Value, axes []string) (Value, [][]int, []stablehlo.MeshAxes, bool) {
	vs, ok := f.Operands(opName, x)
	if !ok {
		return Value{}, nil, nil, false
	}
	groups, ok := f.axisGroups(opName, vs[0], axes)
	if !ok {
		return vs[0], nil, nil, false
	}
	return vs[0], groups, f.meshAxes(axes), true
}

// meshAxes returns how a collective over axes of the enclosing shard_map names its
// groups: by mesh axes under Shardy on a mesh of more than one device (JAX 0.12's
// replica_group_mesh_axes), else nothing (dense groups).
func (f *Function) meshAxes(axes []string) []stablehlo.MeshAxes {
	c := f.manualCtx()
	if c == nil || f.m.cfg.partitioner != Shardy || c.abs.Size() <= 1 {
		return nil
	}
	return []stablehlo.MeshAxes{{Mesh: f.m.collectiveMesh(c.abs), Axes: slices.Clone(axes)}}
}

// AllReduceOver combines x across the devices that differ along axes with r; every device
// gets the result, which no longer varies over axes (see ShardMap's replication check). It
// is stablehlo.Function.AllReduce with the replica groups of axes. Psum, Pmax and Pmin are
// JAX's names for it with Sum, Max and Min; AllReduceOver reaches the other reductions
// (Prod, And, Or, ...).
func (f *Function) AllReduceOver(x Value, r Reduction, axes ...string) Value {
	a, groups, via, ok := f.collectiveSetup("all_reduce", x, axes)
	if !ok {
		return Value{}
	}
	out := f.AllReduce(a, r, groups, via...)
	f.setVMA(out, 'd', axes)
	return out
}

// AllGatherOver concatenates x from the devices along axes in dimension dim (JAX's
// all_gather with tiled=True): dimension dim grows by the group size. It is
// stablehlo.Function.AllGather with the replica groups of axes; AllGatherUntiled is
// tiled=False.
func (f *Function) AllGatherOver(x Value, dim int, axes ...string) Value {
	a, groups, via, ok := f.collectiveSetup("all_gather", x, axes)
	if !ok {
		return Value{}
	}
	out := f.AllGather(a, dim, groups, via...)
	f.setVMA(out, 'a', axes)
	return out
}

// ReduceScatterOver combines x across axes with r and leaves each device the block of
// dimension dim at its position in the group. Dimension dim must be divisible by the group
// size. It is stablehlo.Function.ReduceScatter with the replica groups of axes; with Sum it
// is JAX's psum_scatter with tiled=True (PsumScatter).
func (f *Function) ReduceScatterOver(x Value, r Reduction, dim int, axes ...string) Value {
	a, groups, via, ok := f.collectiveSetup("reduce_scatter", x, axes)
	if !ok {
		return Value{}
	}
	out := f.ReduceScatter(a, r, dim, groups, via...)
	f.setVMA(out, 'a', axes)
	return out
}

// AllToAllOver splits dimension splitDim of x into one block per device along axes, sends
// block i to the i-th device of the group, and concatenates the received blocks along
// concatDim (JAX's all_to_all with tiled=True; AllToAllUntiled is tiled=False). It is
// stablehlo.Function.AllToAll with the replica groups of axes.
func (f *Function) AllToAllOver(x Value, splitDim, concatDim int, axes ...string) Value {
	a, groups, via, ok := f.collectiveSetup("all_to_all", x, axes)
	if !ok {
		return Value{}
	}
	out := f.AllToAll(a, splitDim, concatDim, groups, via...)
	f.setVMA(out, 'a', axes)
	return out
}

// Ppermute is JAX's ppermute: it sends x from each device to another along axes. perm
// holds (source, target) pairs of positions along the axes (linearized, first axis major)
// and applies within every group. Devices that receive nothing get zeros. It is
// stablehlo.Function.CollectivePermute with the partition-id pairs of every group.
func (f *Function) Ppermute(x Value, perm [][2]int, axes ...string) Value {
	const opName = "collective_permute"
	a, groups, _, ok := f.collectiveSetup(opName, x, axes)
	if !ok {
		return Value{}
	}
	k := len(groups[0])
	// Positions are below k: a table per side finds a repeat in O(1), not a scan (issue 31).
	src, dst := make([]bool, k), make([]bool, k)
	for _, p := range perm {
		if p[0] < 0 || p[0] >= k || p[1] < 0 || p[1] >= k {
			f.Failf(opName, 0, a, ErrShape, "permutation pair %v out of range for %d devices along %q", p, k, axes)
			return Value{}
		}
		if src[p[0]] || dst[p[1]] {
			f.Failf(opName, 0, a, ErrShape, "permutation pair %v repeats a source or target", p)
			return Value{}
		}
		src[p[0]], dst[p[1]] = true, true
	}
	pairs := make([][2]int, 0, len(groups)*len(perm))
	for _, g := range groups {
		for _, p := range perm {
			pairs = append(pairs, [2]int{g[p[0]], g[p[1]]})
		}
	}
	if len(pairs) == 0 {
		f.Failf(opName, 0, a, ErrShape, "empty permutation")
		return Value{}
	}
	out := f.CollectivePermute(a, pairs)
	f.setVMA(out, 'a', axes)
	return out
}

// Psum is JAX's psum: the sum of x over the devices along axes, AllReduceOver with Sum.
func (f *Function) Psum(x Value, axes ...string) Value { return f.AllReduceOver(x, Sum, axes...) }

// Pmax is JAX's pmax: the maximum of x over the devices along axes, AllReduceOver with Max.
func (f *Function) Pmax(x Value, axes ...string) Value { return f.AllReduceOver(x, Max, axes...) }

// Pmin is JAX's pmin: the minimum of x over the devices along axes, AllReduceOver with Min.
func (f *Function) Pmin(x Value, axes ...string) Value { return f.AllReduceOver(x, Min, axes...) }

// PsumScatter is JAX's psum_scatter: x summed over the devices along axes, each device
// keeping its block of dimension dim. With tiled, dimension dim must be divisible by the
// group size and shrinks by it (ReduceScatterOver with Sum); without, it must equal the group size and
// is removed, each device keeping the slice at its position.
func (f *Function) PsumScatter(x Value, dim int, tiled bool, axes ...string) Value {
	const opName = "reduce_scatter"
	if tiled {
		return f.ReduceScatterOver(x, Sum, dim, axes...)
	}
	a, groups, _, ok := f.collectiveSetup(opName, x, axes)
	if !ok {
		return Value{}
	}
	s := a.Shape()
	if dim < 0 || dim >= s.Rank() {
		f.Failf(opName, 0, a, ErrShape, "scatter dimension %d out of range for %v", dim, s)
		return Value{}
	}
	if k := len(groups[0]); s.Dim(dim) != k {
		f.Failf(opName, 0, a, ErrShape, "psum_scatter with tiled=false needs scatter dimension %d (size %d) to equal the size %d of axes %q", dim, s.Dim(dim), k, axes)
		return Value{}
	}
	dims := s.Dims()
	return f.Reshape(f.ReduceScatterOver(a, Sum, dim, axes...), append(dims[:dim], dims[dim+1:]...)...)
}

// AxisIndex is JAX's axis_index inside a shard_map body: the position (an s32 scalar) of
// the device along the named manual axis, or, for several axes, along them linearized
// with the first major. It lowers as JAX does: stablehlo.partition_id divided by the
// axis's stride in the mesh, modulo its size; in a shard_map whose manual axes are not
// all of the mesh's, that arithmetic sits in a nested shard_map over the others (an axis
// of size 1 gives the constant 0). The result varies over exactly axes.
func (f *Function) AxisIndex(axes ...string) Value {
	const opName = "axis_index"
	c := f.manualCtx()
	if c == nil {
		f.Failf(opName, -1, Value{}, ErrNotManual, "axis_index over axes %q needs a ShardMap body", axes)
		return Value{}
	}
	if len(axes) == 0 {
		f.Failf(opName, -1, Value{}, ErrNotManual, "no axis names given")
		return Value{}
	}
	if !f.checkManualAxes(opName, c, axes) {
		return Value{}
	}
	if len(axes) == 1 {
		return f.axisIndex(c, axes[0])
	}
	// As jax.lax.axis_index does for a tuple: the last axis minor.
	var index Value
	inner := 1
	for i := len(axes) - 1; i >= 0; i-- {
		term := f.axisIndex(c, axes[i])
		if inner != 1 {
			term = f.Mul(term, f.ConstantOf(dtypes.Int32, inner))
		}
		if index.Valid() {
			index = f.Add(index, term)
		} else {
			index = term
		}
		size, _ := c.abs.AxisSize(axes[i])
		inner *= size
	}
	return index
}

// axisIndex is AxisIndex of one checked axis.
func (f *Function) axisIndex(c *manualCtx, axis string) Value {
	names, sizes := c.abs.AxisNames(), c.abs.AxisSizes()
	j := slices.Index(names, axis)
	var out Value
	switch {
	case len(c.axes) < len(names) && sizes[j] == 1:
		out = f.ConstantOf(dtypes.Int32, 0)
	case len(c.axes) < len(names):
		// partition_id is only meaningful where every axis is manual.
		var rest []string
		for _, n := range names {
			if !c.isManual(n) {
				rest = append(rest, n)
			}
		}
		out = f.ShardMapUnchecked(c.abs, nil, []mesh.PartitionSpec{mesh.P()}, rest,
			func(g *Function, _ []Value) []Value { return []Value{g.AxisIndex(axis)} })[0]
	default:
		stride := 1
		for _, s := range sizes[j+1:] {
			stride *= s
		}
		u32 := NewShape(dtypes.Uint32)
		pid := f.AddOp(stablehlo.OpSpec{Name: "stablehlo.partition_id", Results: []Shape{u32}})[0]
		q := f.Rem(f.Div(pid, f.ConstantOf(dtypes.Uint32, stride)), f.ConstantOf(dtypes.Uint32, sizes[j]))
		out = f.Convert(q, dtypes.Int32)
	}
	f.setVMA(out, 's', []string{axis})
	return out
}

// AllGatherUntiled is JAX's all_gather with tiled=False: the blocks x of the devices
// along axes are stacked, in group order, in a new dimension of the group's size inserted
// at position dim (0 to x's rank). It lowers as JAX does: x reshaped with a dimension of
// size 1 at dim, then AllGatherOver along it.
func (f *Function) AllGatherUntiled(x Value, dim int, axes ...string) Value {
	const opName = "all_gather"
	a, _, _, ok := f.collectiveSetup(opName, x, axes)
	if !ok {
		return Value{}
	}
	s := a.Shape()
	if dim < 0 || dim > s.Rank() {
		f.Failf(opName, 0, a, ErrShape, "all_gather with tiled=false over axes %q: new dimension %d out of range [0, %d] for %v", axes, dim, s.Rank(), s)
		return Value{}
	}
	dims := slices.Insert(s.Dims(), dim, 1)
	return f.AllGatherOver(f.Reshape(a, dims...), dim, axes...)
}

// AllToAllUntiled is JAX's all_to_all with tiled=False: dimension splitDim of x must
// equal the size of the group along axes; its slice i goes to the i-th device of the
// group, and the received slices are stacked, in group order, in a new dimension inserted
// at position concatDim of the result. The result's shape is x's with splitDim removed
// and the group size inserted at concatDim (0 to x's rank minus 1). It lowers as JAX
// does: a dimension of size 1 inserted for concatDim, AllToAllOver, then splitDim removed.
func (f *Function) AllToAllUntiled(x Value, splitDim, concatDim int, axes ...string) Value {
	const opName = "all_to_all"
	a, groups, _, ok := f.collectiveSetup(opName, x, axes)
	if !ok {
		return Value{}
	}
	s := a.Shape()
	switch r := s.Rank(); {
	case splitDim < 0 || splitDim >= r:
		f.Failf(opName, 0, a, ErrShape, "all_to_all with tiled=false over axes %q: split dimension %d out of range for %v", axes, splitDim, s)
		return Value{}
	case concatDim < 0 || concatDim >= r:
		f.Failf(opName, 0, a, ErrShape, "all_to_all with tiled=false over axes %q: concat dimension %d out of range [0, %d] for %v", axes, concatDim, r-1, s)
		return Value{}
	}
	if k := len(groups[0]); s.Dim(splitDim) != k {
		f.Failf(opName, 0, a, ErrShape, "all_to_all with tiled=false needs split dimension %d (size %d) to equal the size %d of axes %q", splitDim, s.Dim(splitDim), k, axes)
		return Value{}
	}
	if splitDim == concatDim {
		return f.AllToAllOver(a, splitDim, concatDim, axes...)
	}
	if splitDim < concatDim {
		concatDim++ // concatDim counts the dimensions left after splitDim's removal
	} else {
		splitDim++ // the new dimension sits before splitDim
	}
	out := f.AllToAllOver(f.Reshape(a, slices.Insert(s.Dims(), concatDim, 1)...), splitDim, concatDim, axes...)
	if !out.Valid() {
		return Value{}
	}
	return f.Reshape(out, slices.Delete(out.Shape().Dims(), splitDim, splitDim+1)...)
}

// Pcast marks x, a value of a shard_map body, as varying over the manual axes named (JAX's
// lax.pcast(x, axes, to="varying"), which replaced pvary): the replication check and
// TypeOf then count it as varying over them, as an operand that does would make it. Its
// value is unchanged: Pcast adds an identity stablehlo.convert, which XLA removes (JAX adds
// no op). Its gradient sums the cotangent over the axes (JAX's psum), through the rule for
// contributions that vary where their primal does not (see the package doc).
func (f *Function) Pcast(x Value, axes ...string) Value {
	const opName = "pcast"
	c := f.manualCtx()
	if c == nil {
		f.Failf(opName, -1, Value{}, ErrNotManual, "pcast over axes %q needs a ShardMap body", axes)
		return Value{}
	}
	if !f.checkManualAxes(opName, c, axes) {
		return Value{}
	}
	vs, ok := f.Operands(opName, x)
	if !ok {
		return Value{}
	}
	v := f.Convert(vs[0], vs[0].DType())
	f.setVMA(v, 'a', slices.Clone(axes))
	return v
}

// checkManualAxes reports whether axes are manual axes of the shard_map body c, each named
// once; otherwise it records the error of op opName.
func (f *Function) checkManualAxes(opName string, c *manualCtx, axes []string) bool {
	for i, a := range axes {
		switch {
		case c.abs.AxisIndex(a) < 0:
			f.Failf(opName, -1, Value{}, ErrUnknownAxis, "unknown axis %q (mesh has %s)", a, axisList(c.abs))
			return false
		case !c.isManual(a):
			f.Failf(opName, -1, Value{}, ErrNotManual, "axis %q is not a manual axis of the enclosing shard_map (manual: %q)", a, c.axes)
			return false
		case slices.Index(axes, a) != i:
			f.Failf(opName, -1, Value{}, ErrNotManual, "axis %q named twice", a)
			return false
		}
	}
	return true
}
