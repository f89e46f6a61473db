package stablehlo

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
)

// GatherDims are the dimension numbers of Gather: StableHLO's #stablehlo.gather, JAX's
// lax.GatherDimensionNumbers.
type GatherDims struct {
	// OffsetDims are the result dimensions that hold a slice's own dimensions (those not
	// collapsed or batching), ascending.
	OffsetDims []int
	// CollapsedSliceDims are operand dimensions of slice size 1 that the result leaves out,
	// ascending.
	CollapsedSliceDims []int
	// OperandBatchingDims are operand dimensions (slice size 1, left out of the result) that
	// are batch dimensions: slice i of the batch reads operand index i there. Ascending.
	OperandBatchingDims []int
	// StartIndicesBatchingDims are the start_indices dimensions paired with
	// OperandBatchingDims, in the same order.
	StartIndicesBatchingDims []int
	// StartIndexMap names, for each component of an index vector, the operand dimension it
	// starts the slice at.
	StartIndexMap []int
	// IndexVectorDim is the start_indices dimension holding the index vectors; equal to
	// the rank of start_indices, each index is a vector of one (a trailing dimension of 1).
	IndexVectorDim int
}

// GatherParams are the parameters of stablehlo.gather: the dimension numbers, the slice
// sizes (one per operand dimension) and whether the caller promises sorted indices.
type GatherParams struct {
	Dims             GatherDims
	SliceSizes       []int
	IndicesAreSorted bool
}

// Properties returns "dimension_numbers = #stablehlo.gather<...>, indices_are_sorted =
// ..., slice_sizes = array<i64: ...>".
func (p GatherParams) Properties() string {
	var b strings.Builder
	b.WriteString("dimension_numbers = #stablehlo.gather<")
	d := p.Dims
	writeDimFields(&b, []dimField{{"offset_dims", d.OffsetDims}, {"collapsed_slice_dims", d.CollapsedSliceDims},
		{"operand_batching_dims", d.OperandBatchingDims}, {"start_indices_batching_dims", d.StartIndicesBatchingDims},
		{"start_index_map", d.StartIndexMap}})
	b.WriteString("index_vector_dim = ")
	b.WriteString(strconv.Itoa(d.IndexVectorDim))
	b.WriteString(">, indices_are_sorted = ")
	b.WriteString(strconv.FormatBool(p.IndicesAreSorted))
	b.WriteString(", slice_sizes = ")
	b.WriteString(i64Array(p.SliceSizes))
	return b.String()
}

func (d GatherDims) clone() GatherDims {
	return GatherDims{OffsetDims: slices.Clone(d.OffsetDims), CollapsedSliceDims: slices.Clone(d.CollapsedSliceDims),
		OperandBatchingDims: slices.Clone(d.OperandBatchingDims), StartIndicesBatchingDims: slices.Clone(d.StartIndicesBatchingDims),
		StartIndexMap: slices.Clone(d.StartIndexMap), IndexVectorDim: d.IndexVectorDim}
}

// dimField is one named list of dimension numbers in a #stablehlo.gather/scatter attribute.
type dimField struct {
	name string
	dims []int
}

// writeDimFields writes "name = [..], " for each non-empty field, as StableHLO prints them.
func writeDimFields(b *strings.Builder, fs []dimField) {
	for _, f := range fs {
		if len(f.dims) == 0 {
			continue
		}
		b.WriteString(f.name)
		b.WriteString(" = ")
		b.WriteString(IntList(f.dims))
		b.WriteString(", ")
	}
}

// dimsCheck checks a list of dimension numbers named name: each within [0, n), none
// repeated or already marked in used (a set shared by lists that must be disjoint; nil for
// none), and ascending when sorted is set. It marks the dimensions in used and returns a
// message saying what is wrong, or "".
func dimsCheck(name string, dims []int, n int, sorted bool, used []bool) string {
	seen := make([]bool, n)
	for i, d := range dims {
		switch {
		case d < 0 || d >= n:
			return name + " " + IntList(dims) + ": dimension " + strconv.Itoa(d) + " out of range [0, " + strconv.Itoa(n) + ")"
		case seen[d]:
			return name + " " + IntList(dims) + ": dimension " + strconv.Itoa(d) + " repeated"
		case used != nil && used[d]:
			return name + " " + IntList(dims) + ": dimension " + strconv.Itoa(d) + " also appears in another list"
		case sorted && i > 0 && d < dims[i-1]:
			return name + " " + IntList(dims) + " must be ascending"
		}
		seen[d] = true
		if used != nil {
			used[d] = true
		}
	}
	return ""
}

// Gather returns slices of x at the start indices in indices (stablehlo.gather, JAX's
// lax.gather; Params: GatherParams). p.SliceSizes gives the size of a slice in each operand
// dimension; p.Dims says which dimensions of indices hold the index vectors and which
// operand dimensions they index, and where the slices' dimensions go in the result. The
// result has the dimensions of indices other than Dims.IndexVectorDim, with the slices'
// kept dimensions placed at Dims.OffsetDims. Start indices are clamped at run time so
// that every slice lies inside x, as in XLA. indices is an integer tensor; every shape rule
// of the StableHLO specification is checked, and a violation is an error wrapping
// ErrShape that names the field.
func (f *Function) Gather(x, indices Value, p GatherParams) Value {
	const opName = "gather"
	vs, ok := f.check(opName, x, indices)
	if !ok {
		return Value{}
	}
	a := f.materialize(vs[0], vs[0].shape)
	idx := f.materialize(vs[1], vs[1].shape)
	if f.failed() {
		return Value{}
	}
	if !idx.shape.DType().IsInt() {
		f.failf(opName, 1, idx, ErrDType, "start indices must be integers, got %v", idx.shape)
		return Value{}
	}
	out, msg := gatherShape(a.shape, idx.shape, p)
	if msg != "" {
		f.failf(opName, 0, a, ErrShape, "%s (operand %v, start indices %v)", msg, a.shape, idx.shape)
		return Value{}
	}
	q := GatherParams{Dims: p.Dims.clone(), SliceSizes: slices.Clone(p.SliceSizes), IndicesAreSorted: p.IndicesAreSorted}
	return f.emit("stablehlo.gather", []*value{a, idx}, out, q)
}

// gatherShape checks p against operand shape x and index shape idx (constraints C1-C23
// of the StableHLO specification) and returns the result shape, or a message.
func gatherShape(x, idx Shape, p GatherParams) (Shape, string) {
	d := p.Dims
	ro, ri := x.Rank(), idx.Rank()
	if d.IndexVectorDim < 0 || d.IndexVectorDim > ri {
		return Shape{}, "index_vector_dim " + strconv.Itoa(d.IndexVectorDim) + " out of range [0, " + strconv.Itoa(ri) + "]"
	}
	if len(p.SliceSizes) != ro {
		return Shape{}, "slice_sizes " + IntList(p.SliceSizes) + " needs one size per operand dimension (" + strconv.Itoa(ro) + ")"
	}
	for i, s := range p.SliceSizes {
		if s < 0 || s > x.Dim(i) {
			return Shape{}, "slice size " + strconv.Itoa(s) + " out of range for operand dimension " + strconv.Itoa(i) + " of size " + strconv.Itoa(x.Dim(i))
		}
	}
	if n := len(d.OffsetDims) + len(d.CollapsedSliceDims) + len(d.OperandBatchingDims); n != ro {
		return Shape{}, "offset_dims, collapsed_slice_dims and operand_batching_dims have " + strconv.Itoa(n) + " entries, want the operand rank " + strconv.Itoa(ro)
	}
	dropped := make([]bool, ro)
	if m := dimsCheck("collapsed_slice_dims", d.CollapsedSliceDims, ro, true, dropped); m != "" {
		return Shape{}, m
	}
	if m := dimsCheck("operand_batching_dims", d.OperandBatchingDims, ro, true, dropped); m != "" {
		return Shape{}, m
	}
	for i, k := range dropped {
		if k && p.SliceSizes[i] > 1 {
			return Shape{}, "operand dimension " + strconv.Itoa(i) + " is collapsed or batching but its slice size is " + strconv.Itoa(p.SliceSizes[i]) + ", not 0 or 1"
		}
	}
	usedIdx := make([]bool, ri+1)
	usedIdx[d.IndexVectorDim] = true
	if m := dimsCheck("start_indices_batching_dims", d.StartIndicesBatchingDims, ri, false, usedIdx); m != "" {
		return Shape{}, m + " (or is index_vector_dim)"
	}
	if len(d.OperandBatchingDims) != len(d.StartIndicesBatchingDims) {
		return Shape{}, "operand_batching_dims " + IntList(d.OperandBatchingDims) + " and start_indices_batching_dims " + IntList(d.StartIndicesBatchingDims) + " differ in length"
	}
	for i, od := range d.OperandBatchingDims {
		if sd := d.StartIndicesBatchingDims[i]; x.Dim(od) != idx.Dim(sd) {
			return Shape{}, "batching dimension sizes differ: operand dimension " + strconv.Itoa(od) + " is " + strconv.Itoa(x.Dim(od)) + ", start indices dimension " + strconv.Itoa(sd) + " is " + strconv.Itoa(idx.Dim(sd))
		}
	}
	want := 1
	if d.IndexVectorDim < ri {
		want = idx.Dim(d.IndexVectorDim)
	}
	if len(d.StartIndexMap) != want {
		return Shape{}, "start_index_map " + IntList(d.StartIndexMap) + " has " + strconv.Itoa(len(d.StartIndexMap)) + " entries, want the index vector length " + strconv.Itoa(want)
	}
	mapped := make([]bool, ro)
	for _, b := range d.OperandBatchingDims {
		mapped[b] = true
	}
	if m := dimsCheck("start_index_map", d.StartIndexMap, ro, false, mapped); m != "" {
		return Shape{}, m + " (or is an operand batching dimension)"
	}
	var batch []int
	for i, n := range idx.Dims() {
		if i != d.IndexVectorDim {
			batch = append(batch, n)
		}
	}
	rank := len(d.OffsetDims) + len(batch)
	isOffset := make([]bool, rank)
	if m := dimsCheck("offset_dims", d.OffsetDims, rank, true, isOffset); m != "" {
		return Shape{}, m
	}
	var offs []int
	for i, s := range p.SliceSizes {
		if !dropped[i] {
			offs = append(offs, s)
		}
	}
	dims := make([]int, rank)
	for i := range dims {
		if isOffset[i] {
			dims[i], offs = offs[0], offs[1:]
		} else {
			dims[i], batch = batch[0], batch[1:]
		}
	}
	return NewShape(x.DType(), dims...), ""
}

// Take returns x indexed along axis by the integer tensor idx, like JAX's x[idx] for axis
// 0 and x[:, idx] for axis 1: the result's dimensions are x's before axis, then idx's,
// then x's after axis. It follows jnp indexing exactly: a negative index counts from the
// end (idx + x.Dim(axis)), indices narrower than 32 bits and unsigned 32-bit ones are
// converted to s32, and an index still out of range is clamped into it (JAX's default
// for indexing, which promises in-bounds indices and leaves XLA's clamping; jnp.take's own
// default is mode="fill", which returns NaN or the lowest integer instead). A weak integer
// constant idx is an s32 scalar. Built from a Gather (Params: GatherParams).
func (f *Function) Take(x, idx Value, axis int) Value {
	const opName = "gather"
	vs, ok := f.check(opName, x, idx)
	if !ok {
		return Value{}
	}
	a, i, ok := f.indexOperands(vs)
	if !ok {
		return Value{}
	}
	if axis < 0 || axis >= a.shape.Rank() {
		f.failf(opName, 0, a, ErrShape, "Take: axis %d out of range for %v", axis, a.shape)
		return Value{}
	}
	if !i.shape.DType().IsInt() {
		f.failf(opName, 1, i, ErrDType, "Take: indices must be integers, got %v", i.shape)
		return Value{}
	}
	n := a.shape.Dim(axis)
	iv := f.NormalizeIndex(Value{i}, n)
	if f.failed() {
		return Value{}
	}
	r := i.shape.Rank()
	var offset []int
	for d := range a.shape.Rank() {
		switch {
		case d < axis:
			offset = append(offset, d)
		case d > axis:
			offset = append(offset, d-1+r)
		}
	}
	sizes := a.shape.Dims()
	sizes[axis] = 1
	return f.Gather(Value{a}, iv, GatherParams{
		Dims:       GatherDims{OffsetDims: offset, CollapsedSliceDims: []int{axis}, StartIndexMap: []int{axis}, IndexVectorDim: r},
		SliceSizes: sizes,
	})
}

// indexOperands materializes Take's or ScatterAdd's operand vs[0] and index tensor vs[1]:
// a weak constant index becomes an s32 scalar, as in jnp's indexing.
func (f *Function) indexOperands(vs []*value) (a, i *value, ok bool) {
	a = f.materialize(vs[0], vs[0].shape)
	i = vs[1]
	if i.weak != nil {
		i = f.materialize(i, NewShape(dtypes.Int32))
	}
	return a, i, !f.failed()
}

// NormalizeIndex turns the integer index tensor i into the index JAX's indexing passes to
// gather or scatter for a dimension of size n: a signed negative index gets n added (in
// i's type when n fits it, else after widening), and the result is s32 (s64 stays s64, u64
// too: widening, never truncating, so huge indices clamp or drop instead of wrapping). Take,
// ScatterAdd and jnp.TakeAlongAxis index so. i must be an integer tensor of f; after an
// error it returns the zero Value.
func (f *Function) NormalizeIndex(i Value, n int) Value {
	d := i.DType()
	target := dtypes.Int32
	if d == dtypes.Int64 || d == dtypes.Uint64 || n > math.MaxInt32 {
		target = d
		if d != dtypes.Uint64 {
			target = dtypes.Int64
		}
	}
	if signed(d) {
		if n > math.MaxInt64>>(64-d.Bits()) {
			i, d = f.Convert(i, target), target
		}
		i = f.Select(f.Less(i, f.ConstantOf(d, 0)), f.Add(i, f.ConstantOf(d, n)), i)
	}
	if d != target {
		i = f.Convert(i, target)
	}
	return i
}
