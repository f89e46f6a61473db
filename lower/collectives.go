package lower

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
)

// Collectives for manual code. They may only appear inside a ShardMap body and only over
// its manual axes. Their replica groups are the sets of partition ids (positions in the
// mesh, which the device assignment maps to devices) that differ only along the named
// axes; within a group, ids are ordered by the named axes, the first axis major. Each
// collective gets a fresh channel handle and use_global_device_ids, as JAX emits them.

// axisGroups checks the axes and returns the replica groups for them.
func (f *Function) axisGroups(opName string, x *value, axes []string) ([][]int, bool) {
	c := f.manualCtx()
	if c == nil {
		f.failf(opName, 0, x, ErrNotManual, "collectives over axes %q need a ShardMap body", axes)
		return nil, false
	}
	if len(axes) == 0 {
		f.failf(opName, 0, x, ErrNotManual, "no axis names given")
		return nil, false
	}
	names, sizes := c.abs.AxisNames(), c.abs.AxisSizes()
	named := make([]int, len(axes)) // mesh index per named axis
	for i, a := range axes {
		j := slices.Index(names, a)
		if j < 0 {
			f.failf(opName, 0, x, ErrUnknownAxis, "unknown axis %q (mesh has %s)", a, axisList(c.abs))
			return nil, false
		}
		if !c.isManual(a) {
			f.failf(opName, 0, x, ErrNotManual, "axis %q is not a manual axis of the enclosing shard_map (manual: %q)", a, c.axes)
			return nil, false
		}
		if slices.Index(axes, a) != i {
			f.failf(opName, 0, x, ErrNotManual, "axis %q named twice", a)
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

func (m *Module) channel() string {
	m.channels++
	return "channel_handle = #stablehlo.channel_handle<handle = " + strconv.Itoa(m.channels) + ", type = 1>"
}

func denseI64(rows [][]int) string {
	var b strings.Builder
	b.WriteString("dense<[")
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(intList(r))
	}
	b.WriteString("]> : tensor<")
	b.WriteString(strconv.Itoa(len(rows)))
	b.WriteByte('x')
	if len(rows) > 0 {
		b.WriteString(strconv.Itoa(len(rows[0])))
	} else {
		b.WriteByte('0')
	}
	b.WriteString("xi64>")
	return b.String()
}

// collectiveSetup checks a collective's operand and derives its replica groups from axes.
func (f *Function) collectiveSetup(opName string, x Value, axes []string) (*value, [][]int, bool) {
	a, ok := f.collectiveOperand(opName, x)
	if !ok {
		return nil, nil, false
	}
	groups, ok := f.axisGroups(opName, a, axes)
	return a, groups, ok
}

func (f *Function) collectiveOperand(opName string, x Value) (*value, bool) {
	vs, ok := f.check(opName, x)
	if !ok {
		return nil, false
	}
	return f.materialize(vs[0], vs[0].shape), !f.failed()
}

// AllReduce combines x across the devices that differ along axes with r (psum for Sum,
// pmax for Max, ...); every device gets the result.
func (f *Function) AllReduce(x Value, r Reduction, axes ...string) Value {
	const opName = "all_reduce"
	a, groups, ok := f.collectiveSetup(opName, x, axes)
	if !ok {
		return Value{}
	}
	if r < Sum || r > Min || a.shape.dtype == dtypes.Bool {
		f.failf(opName, 0, a, ErrDType, "reduction %v on %v", r, a.shape)
		return Value{}
	}
	props := f.m.channel() + ", replica_groups = " + denseI64(groups) + ", use_global_device_ids"
	o := &op{name: "stablehlo.all_reduce", operands: []*value{a}, props: props, regions: []*Function{f.scalarRegion(r, a.shape.dtype)}}
	return f.emitMulti(o, []Shape{a.shape})[0]
}

// AllGather concatenates x from the devices along axes in dimension dim (JAX's
// all_gather with tiled=True): dimension dim grows by the group size.
func (f *Function) AllGather(x Value, dim int, axes ...string) Value {
	const opName = "all_gather"
	a, groups, ok := f.collectiveSetup(opName, x, axes)
	if !ok {
		return Value{}
	}
	if dim < 0 || dim >= a.shape.Rank() {
		f.failf(opName, 0, a, ErrShape, "gather dimension %d out of range for %v", dim, a.shape)
		return Value{}
	}
	dims := a.shape.Dims()
	n, ok := mulDims(dims[dim], len(groups[0]))
	if !ok {
		f.failf(opName, 0, a, ErrShape, "gathered dimension %d (%d x %d) overflows int64", dim, dims[dim], len(groups[0]))
		return Value{}
	}
	dims[dim] = n
	props := "all_gather_dim = " + strconv.Itoa(dim) + " : i64, " + f.m.channel() + ", replica_groups = " + denseI64(groups) + ", use_global_device_ids"
	return f.emit("stablehlo.all_gather", []*value{a}, NewShape(a.shape.dtype, dims...), props)
}

// ReduceScatter combines x across axes with r and leaves each device the block of
// dimension dim at its position in the group (JAX's psum_scatter with tiled=True).
// Dimension dim must be divisible by the group size.
func (f *Function) ReduceScatter(x Value, r Reduction, dim int, axes ...string) Value {
	const opName = "reduce_scatter"
	a, groups, ok := f.collectiveSetup(opName, x, axes)
	if !ok {
		return Value{}
	}
	if r < Sum || r > Min || a.shape.dtype == dtypes.Bool {
		f.failf(opName, 0, a, ErrDType, "reduction %v on %v", r, a.shape)
		return Value{}
	}
	if dim < 0 || dim >= a.shape.Rank() {
		f.failf(opName, 0, a, ErrShape, "scatter dimension %d out of range for %v", dim, a.shape)
		return Value{}
	}
	dims := a.shape.Dims()
	k := len(groups[0])
	if dims[dim]%k != 0 {
		f.failf(opName, 0, a, ErrIndivisible, "scatter dimension %d of size %d is not divisible by the group size %d", dim, dims[dim], k)
		return Value{}
	}
	dims[dim] /= k
	props := f.m.channel() + ", replica_groups = " + denseI64(groups) + ", scatter_dimension = " + strconv.Itoa(dim) + " : i64, use_global_device_ids"
	o := &op{name: "stablehlo.reduce_scatter", operands: []*value{a}, props: props, regions: []*Function{f.scalarRegion(r, a.shape.dtype)}}
	return f.emitMulti(o, []Shape{NewShape(a.shape.dtype, dims...)})[0]
}

// AllToAll splits dimension splitDim of x into one block per device along axes, sends
// block i to the i-th device of the group, and concatenates the received blocks along
// concatDim (JAX's all_to_all with tiled=True).
func (f *Function) AllToAll(x Value, splitDim, concatDim int, axes ...string) Value {
	const opName = "all_to_all"
	a, groups, ok := f.collectiveSetup(opName, x, axes)
	if !ok {
		return Value{}
	}
	r := a.shape.Rank()
	if splitDim < 0 || splitDim >= r || concatDim < 0 || concatDim >= r {
		f.failf(opName, 0, a, ErrShape, "split dimension %d or concat dimension %d out of range for %v", splitDim, concatDim, a.shape)
		return Value{}
	}
	k := len(groups[0])
	dims := a.shape.Dims()
	if dims[splitDim]%k != 0 {
		f.failf(opName, 0, a, ErrIndivisible, "split dimension %d of size %d is not divisible by the group size %d", splitDim, dims[splitDim], k)
		return Value{}
	}
	dims[splitDim] /= k
	n, ok := mulDims(dims[concatDim], k)
	if !ok {
		f.failf(opName, 0, a, ErrShape, "concat dimension %d (%d x %d) overflows int64", concatDim, dims[concatDim], k)
		return Value{}
	}
	dims[concatDim] = n
	props := f.m.channel() + ", concat_dimension = " + strconv.Itoa(concatDim) + " : i64, replica_groups = " + denseI64(groups) +
		", split_count = " + strconv.Itoa(k) + " : i64, split_dimension = " + strconv.Itoa(splitDim) + " : i64"
	return f.emit("stablehlo.all_to_all", []*value{a}, NewShape(a.shape.dtype, dims...), props)
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
			f.failf(opName, 0, a, ErrShape, "permutation pair %v out of range for %d devices along %q", p, k, axes)
			return Value{}
		}
		if slices.Contains(src, p[0]) || slices.Contains(dst, p[1]) {
			f.failf(opName, 0, a, ErrShape, "permutation pair %v repeats a source or target", p)
			return Value{}
		}
		src, dst = append(src, p[0]), append(dst, p[1])
	}
	var pairs [][]int
	for _, g := range groups {
		for _, p := range perm {
			pairs = append(pairs, []int{g[p[0]], g[p[1]]})
		}
	}
	if len(pairs) == 0 {
		f.failf(opName, 0, a, ErrShape, "empty permutation")
		return Value{}
	}
	props := f.m.channel() + ", source_target_pairs = " + denseI64(pairs)
	return f.emit("stablehlo.collective_permute", []*value{a}, a.shape, props)
}
