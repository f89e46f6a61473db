package stablehlo

import (
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/mlir"
)

// Collectives with explicit replica groups. A replica group lists partition ids (positions
// in the compiled program's device assignment) that exchange data; every group has the same
// size and every id appears at most once. Each collective gets a fresh channel handle and
// use_global_device_ids where StableHLO takes it, as JAX emits them, so the ids are global
// partition ids: the module's mhlo.num_partitions (Module.SetAttr) must cover them.
// Package lower derives the groups from mesh axis names.

// groupOperand checks the operand x of a collective over replica groups, and the groups;
// it returns the operand and the group size.
func (f *Function) groupOperand(opName string, x Value, groups [][]int) (*value, int, bool) {
	vs, ok := f.Operands(opName, x)
	if !ok {
		return nil, 0, false
	}
	a := vs[0].v
	if len(groups) == 0 || len(groups[0]) == 0 {
		f.failf(opName, 0, a, ErrReplicaGroups, "no replica groups (or an empty one) in %v", groups)
		return nil, 0, false
	}
	k := len(groups[0])
	seen := newIDSet(len(groups) * k)
	defer seen.done()
	for i, g := range groups {
		if len(g) != k {
			f.failf(opName, 0, a, ErrReplicaGroups, "replica group %d has %d ids, group 0 has %d", i, len(g), k)
			return nil, 0, false
		}
		for _, id := range g {
			if !seen.add(id) {
				f.failf(opName, 0, a, ErrReplicaGroups, "replica group %d: id %d is negative or repeated", i, id)
				return nil, 0, false
			}
		}
	}
	return a, k, true
}

// idSet is a set of non-negative partition ids that answers add in constant time, so that
// checking the groups of a collective over N partitions costs O(N), not O(N²) (issue 31). Ids
// below 4n live in a bit set, larger ones (hostile or sparse input) in a map.
type idSet struct {
	bits   []uint64
	large  map[int]struct{}
	probes int // lookups made, for the growth tests (TestScale*)
}

// idProbes counts the idSet lookups of every check, added once per check; the growth tests
// read it to tell a linear check from a quadratic one without timing anything.
var idProbes atomic.Int64

// done records the set's lookups in idProbes.
func (s *idSet) done() { idProbes.Add(int64(s.probes)) }

func newIDSet(n int) idSet {
	return idSet{bits: make([]uint64, (4*n+63)/64)}
}

// add inserts id and reports whether it was new and non-negative.
func (s *idSet) add(id int) bool {
	s.probes++
	if id < 0 {
		return false
	}
	if w := id / 64; w < len(s.bits) {
		bit := uint64(1) << (id % 64)
		if s.bits[w]&bit != 0 {
			return false
		}
		s.bits[w] |= bit
		return true
	}
	if _, ok := s.large[id]; ok {
		return false
	}
	if s.large == nil {
		s.large = map[int]struct{}{}
	}
	s.large[id] = struct{}{}
	return true
}

// checkReduction checks that r is a reduction a collective can apply to a's element type.
func (f *Function) checkReduction(opName string, a *value, r Reduction) bool {
	if r < Sum || r > Min || a.shape.DType() == dtypes.Bool {
		f.failf(opName, 0, a, ErrDType, "reduction %v on %v", r, a.shape)
		return false
	}
	return true
}

func cloneGroups(groups [][]int) [][]int {
	out := make([][]int, len(groups))
	for i, g := range groups {
		out[i] = slices.Clone(g)
	}
	return out
}

func channelProp(ch int) string {
	return "channel_handle = #stablehlo.channel_handle<handle = " + strconv.Itoa(ch) + ", type = 1>"
}

// i64Prop is an integer property of a collective, printed `name = value : i64`.
type i64Prop struct {
	name  string
	value int
}

// MeshAxes names a collective's replica groups by mesh axes, as JAX 0.12 writes the
// collectives of a shard_map body: `#stablehlo.replica_group_mesh_axes<mesh = @mesh_0,
// axes = [#stablehlo.axis_ref<name = "x">]>`, the groups of partitions that differ only
// along Axes of the mesh symbol Mesh (without '@'). The zero value prints the dense groups.
// A collective given MeshAxes keeps its dense groups too (Params.Groups): they must be the
// ones the axes stand for, which the caller computes; only the printing differs. Plugins
// below PJRT API 0.115 read dense groups only, and pjrt.Client.Compile rewrites them so.
type MeshAxes struct {
	Mesh string
	Axes []string
}

func (m MeshAxes) attr() string {
	var b strings.Builder
	b.WriteString("#stablehlo.replica_group_mesh_axes<mesh = ")
	b.WriteString(mlir.Symbol(m.Mesh))
	b.WriteString(", axes = [")
	for i, a := range m.Axes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("#stablehlo.axis_ref<name = ")
		mlir.WriteQuoted(&b, a)
		b.WriteByte('>')
	}
	b.WriteString("]>")
	return b.String()
}

// firstVia returns the MeshAxes of a variadic via argument (the zero value when none).
func firstVia(via []MeshAxes) MeshAxes {
	if len(via) == 0 {
		return MeshAxes{}
	}
	return MeshAxes{Mesh: via[0].Mesh, Axes: slices.Clone(via[0].Axes)}
}

// groupProps prints the properties of a collective over replica groups, sorted by name as
// MLIR prints them: the channel handle, the replica groups (by mesh axes when via names a
// mesh), the integer properties ints and, when global, use_global_device_ids.
func groupProps(channel int, groups [][]int, via MeshAxes, global bool, ints ...i64Prop) string {
	rg := DenseI64(groups)
	if via.Mesh != "" {
		rg = via.attr()
	}
	props := []string{channelProp(channel), "replica_groups = " + rg}
	for _, p := range ints {
		props = append(props, p.name+" = "+strconv.Itoa(p.value)+" : i64")
	}
	if global {
		props = append(props, "use_global_device_ids")
	}
	slices.Sort(props) // names are [a-z_]+ followed by " = " or nothing: sorting the text sorts the names
	return strings.Join(props, ", ")
}

// AllReduceParams are the parameters of stablehlo.all_reduce; its region applies Reduction.
type AllReduceParams struct {
	Reduction Reduction
	Groups    [][]int
	Channel   int
	// Via names the groups by mesh axes when set (see MeshAxes).
	Via MeshAxes
}

// Properties returns the channel handle, replica groups and use_global_device_ids.
func (p AllReduceParams) Properties() string {
	return groupProps(p.Channel, p.Groups, p.Via, true)
}

// AllReduce combines x across the partitions of each replica group with r (psum for Sum,
// pmax for Max, ...); every partition gets its group's result. Params: AllReduceParams. A via
// argument prints the groups by mesh axes (MeshAxes); so for the other collectives.
func (f *Function) AllReduce(x Value, r Reduction, groups [][]int, via ...MeshAxes) Value {
	const opName = "all_reduce"
	a, _, ok := f.groupOperand(opName, x, groups)
	if !ok || !f.checkReduction(opName, a, r) {
		return Value{}
	}
	p := AllReduceParams{Reduction: r, Groups: cloneGroups(groups), Channel: f.m.nextChannel(), Via: firstVia(via)}
	o := &Op{name: "stablehlo.all_reduce", operands: []*value{a}, params: p, regions: []*Function{f.scalarRegion(r, a.shape.DType())}}
	return f.emitMulti(o, []Shape{a.shape})[0]
}

// AllGatherParams are the parameters of stablehlo.all_gather.
type AllGatherParams struct {
	Dim     int
	Groups  [][]int
	Channel int
	// Via names the groups by mesh axes when set (see MeshAxes).
	Via MeshAxes
}

// Properties returns all_gather_dim, the channel handle, replica groups and use_global_device_ids.
func (p AllGatherParams) Properties() string {
	return groupProps(p.Channel, p.Groups, p.Via, true, i64Prop{"all_gather_dim", p.Dim})
}

// AllGather concatenates x from the partitions of each replica group, in group order, in
// dimension dim (JAX's all_gather with tiled=True): dimension dim grows by the group size.
// Params: AllGatherParams.
func (f *Function) AllGather(x Value, dim int, groups [][]int, via ...MeshAxes) Value {
	const opName = "all_gather"
	a, k, ok := f.groupOperand(opName, x, groups)
	if !ok {
		return Value{}
	}
	if dim < 0 || dim >= a.shape.Rank() {
		f.failf(opName, 0, a, ErrShape, "gather dimension %d out of range for %v", dim, a.shape)
		return Value{}
	}
	dims := a.shape.Dims()
	n, ok := mulDims(dims[dim], k)
	if !ok {
		f.failf(opName, 0, a, ErrShape, "gathered dimension %d (%d x %d) overflows int64", dim, dims[dim], k)
		return Value{}
	}
	dims[dim] = n
	p := AllGatherParams{Dim: dim, Groups: cloneGroups(groups), Channel: f.m.nextChannel(), Via: firstVia(via)}
	return f.emit("stablehlo.all_gather", []*value{a}, NewShape(a.shape.DType(), dims...), p)
}

// ReduceScatterParams are the parameters of stablehlo.reduce_scatter; its region applies
// Reduction.
type ReduceScatterParams struct {
	Reduction Reduction
	Dim       int
	Groups    [][]int
	Channel   int
	// Via names the groups by mesh axes when set (see MeshAxes).
	Via MeshAxes
}

// Properties returns the channel handle, replica groups, scatter_dimension and use_global_device_ids.
func (p ReduceScatterParams) Properties() string {
	return groupProps(p.Channel, p.Groups, p.Via, true, i64Prop{"scatter_dimension", p.Dim})
}

// ReduceScatter combines x across each replica group with r and leaves each partition the
// block of dimension dim at its position in the group (JAX's psum_scatter with tiled=True).
// Dimension dim must be divisible by the group size (ErrIndivisible). Params:
// ReduceScatterParams.
func (f *Function) ReduceScatter(x Value, r Reduction, dim int, groups [][]int, via ...MeshAxes) Value {
	const opName = "reduce_scatter"
	a, k, ok := f.groupOperand(opName, x, groups)
	if !ok || !f.checkReduction(opName, a, r) {
		return Value{}
	}
	if dim < 0 || dim >= a.shape.Rank() {
		f.failf(opName, 0, a, ErrShape, "scatter dimension %d out of range for %v", dim, a.shape)
		return Value{}
	}
	dims, ok := f.divideDim(opName, a, "scatter", dim, k)
	if !ok {
		return Value{}
	}
	p := ReduceScatterParams{Reduction: r, Dim: dim, Groups: cloneGroups(groups), Channel: f.m.nextChannel(), Via: firstVia(via)}
	o := &Op{name: "stablehlo.reduce_scatter", operands: []*value{a}, params: p, regions: []*Function{f.scalarRegion(r, a.shape.DType())}}
	return f.emitMulti(o, []Shape{NewShape(a.shape.DType(), dims...)})[0]
}

// divideDim returns a's dimensions with dimension dim (the op's "scatter" or "split"
// dimension, named by role in the error) divided by the group size k; it fails with
// ErrIndivisible when k does not divide it.
func (f *Function) divideDim(opName string, a *value, role string, dim, k int) ([]int, bool) {
	dims := a.shape.Dims()
	if dims[dim]%k != 0 {
		f.failf(opName, 0, a, ErrIndivisible, "%s dimension %d of size %d is not divisible by the group size %d", role, dim, dims[dim], k)
		return nil, false
	}
	dims[dim] /= k
	return dims, true
}

// AllToAllParams are the parameters of stablehlo.all_to_all (split_count is the group size).
type AllToAllParams struct {
	SplitDim, ConcatDim int
	Groups              [][]int
	Channel             int
	// Via names the groups by mesh axes when set (see MeshAxes).
	Via MeshAxes
}

// Properties returns the channel handle, concat_dimension, replica groups, split_count and split_dimension.
func (p AllToAllParams) Properties() string {
	k := 0
	if len(p.Groups) > 0 {
		k = len(p.Groups[0])
	}
	return groupProps(p.Channel, p.Groups, p.Via, false,
		i64Prop{"concat_dimension", p.ConcatDim}, i64Prop{"split_count", k}, i64Prop{"split_dimension", p.SplitDim})
}

// AllToAll splits dimension splitDim of x into one block per partition of its replica
// group, sends block i to the group's i-th partition, and concatenates the received blocks
// along concatDim (JAX's all_to_all with tiled=True). Params: AllToAllParams.
func (f *Function) AllToAll(x Value, splitDim, concatDim int, groups [][]int, via ...MeshAxes) Value {
	const opName = "all_to_all"
	a, k, ok := f.groupOperand(opName, x, groups)
	if !ok {
		return Value{}
	}
	r := a.shape.Rank()
	if splitDim < 0 || splitDim >= r || concatDim < 0 || concatDim >= r {
		f.failf(opName, 0, a, ErrShape, "split dimension %d or concat dimension %d out of range for %v", splitDim, concatDim, a.shape)
		return Value{}
	}
	dims, ok := f.divideDim(opName, a, "split", splitDim, k)
	if !ok {
		return Value{}
	}
	n, ok := mulDims(dims[concatDim], k)
	if !ok {
		f.failf(opName, 0, a, ErrShape, "concat dimension %d (%d x %d) overflows int64", concatDim, dims[concatDim], k)
		return Value{}
	}
	dims[concatDim] = n
	p := AllToAllParams{SplitDim: splitDim, ConcatDim: concatDim, Groups: cloneGroups(groups), Channel: f.m.nextChannel(), Via: firstVia(via)}
	return f.emit("stablehlo.all_to_all", []*value{a}, NewShape(a.shape.DType(), dims...), p)
}

// CollectivePermuteParams are the parameters of stablehlo.collective_permute.
type CollectivePermuteParams struct {
	Pairs   [][2]int // (source, target) partition ids
	Channel int
}

// Properties returns the channel handle and source_target_pairs.
func (p CollectivePermuteParams) Properties() string {
	// DenseI64 of the pairs as rows, without a slice per pair.
	b := make([]byte, 0, 64+16*len(p.Pairs))
	b = append(b, channelProp(p.Channel)...)
	b = append(b, ", source_target_pairs = dense<["...)
	for i, q := range p.Pairs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendIntList(b, q[:])
	}
	b = append(b, "]> : tensor<"...)
	b = strconv.AppendInt(b, int64(len(p.Pairs)), 10)
	if len(p.Pairs) > 0 {
		b = append(b, "x2xi64>"...)
	} else {
		b = append(b, "x0xi64>"...)
	}
	return string(b)
}

// CollectivePermute sends x from partition source to partition target for each (source,
// target) pair, like JAX's ppermute; partitions that receive nothing get zeros. Pairs must
// be non-empty, with non-negative ids and no source or target twice (ErrReplicaGroups).
// Params: CollectivePermuteParams.
func (f *Function) CollectivePermute(x Value, pairs [][2]int) Value {
	const opName = "collective_permute"
	vs, ok := f.Operands(opName, x)
	if !ok {
		return Value{}
	}
	a := vs[0].v
	if len(pairs) == 0 {
		f.failf(opName, 0, a, ErrReplicaGroups, "empty permutation")
		return Value{}
	}
	src, dst := newIDSet(len(pairs)), newIDSet(len(pairs))
	defer src.done()
	defer dst.done()
	for _, q := range pairs {
		if !src.add(q[0]) || !dst.add(q[1]) {
			f.failf(opName, 0, a, ErrReplicaGroups, "source/target pair %v is negative or repeats a source or target", q)
			return Value{}
		}
	}
	p := CollectivePermuteParams{Pairs: slices.Clone(pairs), Channel: f.m.nextChannel()}
	return f.emit("stablehlo.collective_permute", []*value{a}, a.shape, p)
}
