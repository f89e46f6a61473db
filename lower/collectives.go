package lower

import "slices"

// Collectives for manual code. They may only appear inside a ShardMap body and only over
// its manual axes. Their replica groups are the sets of partition ids (positions in the
// mesh, which the device assignment maps to devices) that differ only along the named
// axes; within a group, ids are ordered by the named axes, the first axis major. Each
// collective gets a fresh channel handle and use_global_device_ids, as JAX emits them:
// each is package stablehlo's collective of the same name, given the groups of its axes.

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
	n := c.abs.Size()
	size := 1
	for _, j := range named {
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
			if !slices.Contains(named, k) {
				other = other*sizes[k] + coords[k]
			}
		}
		for _, j := range named {
			within = within*sizes[j] + coords[j]
		}
		groups[other][within] = p
	}
	return groups, true
}

// collectiveSetup checks a collective's operand and derives its replica groups from axes.
func (f *Function) collectiveSetup(opName string, x Value, axes []string) (Value, [][]int, bool) {
	vs, ok := f.Operands(opName, x)
	if !ok {
		return Value{}, nil, false
	}
	groups, ok := f.axisGroups(opName, vs[0], axes)
	return vs[0], groups, ok
}

// AllReduce combines x across the devices that differ along axes with r (psum for Sum,
// pmax for Max, ...); every device gets the result. It is stablehlo.Function.AllReduce
// with the replica groups of axes.
func (f *Function) AllReduce(x Value, r Reduction, axes ...string) Value {
	a, groups, ok := f.collectiveSetup("all_reduce", x, axes)
	if !ok {
		return Value{}
	}
	return f.Function.AllReduce(a, r, groups)
}

// AllGather concatenates x from the devices along axes in dimension dim (JAX's
// all_gather with tiled=True): dimension dim grows by the group size.
func (f *Function) AllGather(x Value, dim int, axes ...string) Value {
	a, groups, ok := f.collectiveSetup("all_gather", x, axes)
	if !ok {
		return Value{}
	}
	return f.Function.AllGather(a, dim, groups)
}

// ReduceScatter combines x across axes with r and leaves each device the block of
// dimension dim at its position in the group (JAX's psum_scatter with tiled=True).
// Dimension dim must be divisible by the group size.
func (f *Function) ReduceScatter(x Value, r Reduction, dim int, axes ...string) Value {
	a, groups, ok := f.collectiveSetup("reduce_scatter", x, axes)
	if !ok {
		return Value{}
	}
	return f.Function.ReduceScatter(a, r, dim, groups)
}

// AllToAll splits dimension splitDim of x into one block per device along axes, sends
// block i to the i-th device of the group, and concatenates the received blocks along
// concatDim (JAX's all_to_all with tiled=True).
func (f *Function) AllToAll(x Value, splitDim, concatDim int, axes ...string) Value {
	a, groups, ok := f.collectiveSetup("all_to_all", x, axes)
	if !ok {
		return Value{}
	}
	return f.Function.AllToAll(a, splitDim, concatDim, groups)
}

// CollectivePermute sends x from each device to another along axes, like JAX's ppermute:
// perm holds (source, target) pairs of positions along the axes (linearized, first axis
// major) and applies within every group. Devices that receive nothing get zeros.
func (f *Function) CollectivePermute(x Value, perm [][2]int, axes ...string) Value {
	const opName = "collective_permute"
	a, groups, ok := f.collectiveSetup(opName, x, axes)
	if !ok {
		return Value{}
	}
	k := len(groups[0])
	var src, dst []int
	for _, p := range perm {
		if p[0] < 0 || p[0] >= k || p[1] < 0 || p[1] >= k {
			f.Failf(opName, 0, a, ErrShape, "permutation pair %v out of range for %d devices along %q", p, k, axes)
			return Value{}
		}
		if slices.Contains(src, p[0]) || slices.Contains(dst, p[1]) {
			f.Failf(opName, 0, a, ErrShape, "permutation pair %v repeats a source or target", p)
			return Value{}
		}
		src, dst = append(src, p[0]), append(dst, p[1])
	}
	var pairs [][2]int
	for _, g := range groups {
		for _, p := range perm {
			pairs = append(pairs, [2]int{g[p[0]], g[p[1]]})
		}
	}
	if len(pairs) == 0 {
		f.Failf(opName, 0, a, ErrShape, "empty permutation")
		return Value{}
	}
	return f.Function.CollectivePermute(a, pairs)
}
