package stablehlo

import (
	"github.com/gomlx/gopjrt/dtypes"
	"slices"
	"strconv"
)

// BroadcastParams are the parameters of stablehlo.broadcast_in_dim: operand dimension i
// becomes result dimension Dims[i].
type BroadcastParams struct {
	Dims []int
}

// Properties returns "broadcast_dimensions = array<i64: ...>".
func (p BroadcastParams) Properties() string { return "broadcast_dimensions = " + i64Array(p.Dims) }

// BroadcastInDim returns x broadcast to the shape dims: operand dimension i maps to result
// dimension broadcastDims[i] and must be 1 or equal to it (Params: BroadcastParams).
func (f *Function) BroadcastInDim(x Value, dims []int, broadcastDims []int) Value {
	const opName = "broadcast_in_dim"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	out := NewShape(a.shape.DType(), dims...)
	if err := validShape(out); err != nil {
		f.fail(opName, -1, nil, err)
		return Value{}
	}
	if len(broadcastDims) != a.shape.Rank() {
		f.failf(opName, 0, a, ErrShape, "broadcast_dimensions %v has %d entries for operand rank %d", broadcastDims, len(broadcastDims), a.shape.Rank())
		return Value{}
	}
	seen := make([]bool, len(dims))
	for i, d := range broadcastDims {
		if d < 0 || d >= len(dims) || seen[d] {
			f.failf(opName, 0, a, ErrShape, "broadcast_dimensions %v: entry %d out of range or repeated for result rank %d", broadcastDims, d, len(dims))
			return Value{}
		}
		seen[d] = true
		if a.shape.Dim(i) != 1 && a.shape.Dim(i) != dims[d] {
			f.failf(opName, 0, a, ErrShape, "operand dimension %d (size %d) cannot broadcast to result dimension %d (size %d)", i, a.shape.Dim(i), d, dims[d])
			return Value{}
		}
	}
	return f.emit("stablehlo.broadcast_in_dim", []*value{a}, out, BroadcastParams{Dims: slices.Clone(broadcastDims)})
}

// BroadcastTo broadcasts x to dims with NumPy's rule: x's dimensions align with the
// trailing dimensions of dims and each is 1 or equal.
func (f *Function) BroadcastTo(x Value, dims ...int) Value {
	if _, ok := f.check("broadcast_in_dim", x); !ok {
		return Value{}
	}
	r := x.v.shape.Rank()
	if x.v.weak != nil {
		r = 0
	}
	if r > len(dims) {
		f.failf("broadcast_in_dim", 0, x.v, ErrShape, "cannot broadcast rank %d to rank %d", r, len(dims))
		return Value{}
	}
	bd := make([]int, r)
	for i := range bd {
		bd[i] = len(dims) - r + i
	}
	return f.BroadcastInDim(x, dims, bd)
}

// Reshape returns x with new dims holding the same number of elements.
func (f *Function) Reshape(x Value, dims ...int) Value {
	const opName = "reshape"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	out := NewShape(a.shape.DType(), dims...)
	if err := validShape(out); err != nil {
		f.fail(opName, -1, nil, err)
		return Value{}
	}
	if out.Size() != a.shape.Size() {
		f.failf(opName, 0, a, ErrShape, "cannot reshape %v (%d elements) to %v (%d elements)", a.shape, a.shape.Size(), out, out.Size())
		return Value{}
	}
	return f.emit("stablehlo.reshape", []*value{a}, out, nil)
}

// TransposeParams are the parameters of stablehlo.transpose: result dimension i is operand
// dimension Perm[i].
type TransposeParams struct {
	Perm []int
}

// Properties returns "permutation = array<i64: ...>".
func (p TransposeParams) Properties() string { return "permutation = " + i64Array(p.Perm) }

// Transpose permutes x's dimensions: result dimension i is operand dimension perm[i]
// (Params: TransposeParams).
func (f *Function) Transpose(x Value, perm ...int) Value {
	const opName = "transpose"
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	a := vs[0]
	if !isPermutation(perm, a.shape.Rank()) {
		f.failf(opName, 0, a, ErrShape, "permutation %v is not a permutation of rank %d", perm, a.shape.Rank())
		return Value{}
	}
	dims := make([]int, len(perm))
	for i, p := range perm {
		dims[i] = a.shape.Dim(p)
	}
	return f.emit("stablehlo.transpose", []*value{a}, NewShape(a.shape.DType(), dims...), TransposeParams{Perm: slices.Clone(perm)})
}

func isPermutation(p []int, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, x := range p {
		if x < 0 || x >= n || seen[x] {
			return false
		}
		seen[x] = true
	}
	return true
}

// SliceParams are the parameters of stablehlo.slice: per dimension, the elements
// Start, Start+Stride, ... below Limit.
type SliceParams struct {
	Start, Limit, Strides []int
}

// Properties returns "limit_indices = ..., start_indices = ..., strides = ...".
func (p SliceParams) Properties() string {
	return "limit_indices = " + i64Array(p.Limit) + ", start_indices = " + i64Array(p.Start) + ", strides = " + i64Array(p.Strides)
}

// Slice returns x[start:limit:strides] per dimension; nil strides means all 1 (Params:
// SliceParams).
func (f *Function) Slice(x Value, start, limit, strides []int) Value {
	const opName = "slice"
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	a := vs[0]
	r := a.shape.Rank()
	if strides == nil {
		strides = slices.Repeat([]int{1}, r)
	}
	if len(start) != r || len(limit) != r || len(strides) != r {
		f.failf(opName, 0, a, ErrShape, "start %v, limit %v, strides %v need %d entries each for %v", start, limit, strides, r, a.shape)
		return Value{}
	}
	dims := make([]int, r)
	for i := range r {
		if start[i] < 0 || limit[i] < start[i] || limit[i] > a.shape.Dim(i) || strides[i] < 1 {
			f.failf(opName, 0, a, ErrShape, "dimension %d: slice [%d:%d:%d] out of range for size %d", i, start[i], limit[i], strides[i], a.shape.Dim(i))
			return Value{}
		}
		n := limit[i] - start[i] // 0 <= n <= the dimension's size
		dims[i] = n / strides[i]
		if n%strides[i] != 0 {
			dims[i]++
		}
	}
	p := SliceParams{Start: slices.Clone(start), Limit: slices.Clone(limit), Strides: slices.Clone(strides)}
	return f.emit("stablehlo.slice", []*value{a}, NewShape(a.shape.DType(), dims...), p)
}

// indices checks the scalar integer start indices of dynamic_slice/dynamic_update_slice.
func (f *Function) indices(opName string, first int, starts []Value, rank int) ([]*value, bool) {
	vs, ok := f.check(opName, starts...)
	if !ok {
		return nil, false
	}
	if len(vs) != rank {
		f.failf(opName, -1, nil, ErrShape, "%d start indices for rank %d", len(vs), rank)
		return nil, false
	}
	var d DType
	for i, v := range vs {
		if v.weak != nil {
			v = f.materialize(v, NewShape(dtypes.Int32))
			vs[i] = v
		}
		if v.shape.Rank() != 0 || !v.shape.DType().IsInt() {
			f.failf(opName, first+i, v, ErrShape, "start index must be an integer scalar, got %v", v.shape)
			return nil, false
		}
		if i > 0 && v.shape.DType() != d {
			f.failf(opName, first+i, v, ErrDType, "start indices differ in type: %s vs %s", dtypeName(d), dtypeName(v.shape.DType()))
			return nil, false
		}
		d = v.shape.DType()
	}
	return vs, !f.failed()
}

// DynamicSliceParams are the parameters of stablehlo.dynamic_slice; its operands are the
// sliced tensor, then one scalar start index per dimension.
type DynamicSliceParams struct {
	Sizes []int
}

// Properties returns "slice_sizes = array<i64: ...>".
func (p DynamicSliceParams) Properties() string { return "slice_sizes = " + i64Array(p.Sizes) }

// DynamicSlice returns the block of x of the given sizes starting at the scalar integer
// indices starts (clamped into range at run time, as in XLA; Params: DynamicSliceParams).
func (f *Function) DynamicSlice(x Value, starts []Value, sizes []int) Value {
	const opName = "dynamic_slice"
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	a := vs[0]
	idx, ok := f.indices(opName, 1, starts, a.shape.Rank())
	if !ok {
		return Value{}
	}
	if len(sizes) != a.shape.Rank() {
		f.failf(opName, 0, a, ErrShape, "slice_sizes %v for rank %d", sizes, a.shape.Rank())
		return Value{}
	}
	for i, s := range sizes {
		if s < 0 || s > a.shape.Dim(i) {
			f.failf(opName, 0, a, ErrShape, "slice size %d out of range for dimension %d of size %d", s, i, a.shape.Dim(i))
			return Value{}
		}
	}
	return f.emit("stablehlo.dynamic_slice", append([]*value{a}, idx...), NewShape(a.shape.DType(), sizes...), DynamicSliceParams{Sizes: slices.Clone(sizes)})
}

// DynamicUpdateSlice returns x with update written at the scalar integer indices starts.
func (f *Function) DynamicUpdateSlice(x, update Value, starts []Value) Value {
	const opName = "dynamic_update_slice"
	vs, ok := f.check(opName, x, update)
	if !ok {
		return Value{}
	}
	a, u := vs[0], vs[1]
	u = f.materialize(u, u.shape.WithDType(a.shape.DType()))
	idx, ok := f.indices(opName, 2, starts, a.shape.Rank())
	if !ok {
		return Value{}
	}
	if u.shape.DType() != a.shape.DType() || u.shape.Rank() != a.shape.Rank() {
		f.failf(opName, 1, u, ErrShape, "update %v does not fit operand %v", u.shape, a.shape)
		return Value{}
	}
	for i := range u.shape.Dims() {
		if u.shape.Dim(i) > a.shape.Dim(i) {
			f.failf(opName, 1, u, ErrShape, "update %v larger than operand %v in dimension %d", u.shape, a.shape, i)
			return Value{}
		}
	}
	return f.emit("stablehlo.dynamic_update_slice", append([]*value{a, u}, idx...), a.shape, nil)
}

// ConcatenateParams are the parameters of stablehlo.concatenate.
type ConcatenateParams struct {
	Dim int
}

// Properties returns "dimension = N : i64".
func (p ConcatenateParams) Properties() string {
	return "dimension = " + strconv.Itoa(p.Dim) + " : i64"
}

// Concatenate joins xs along dimension dim; all other dimensions must agree (Params:
// ConcatenateParams).
func (f *Function) Concatenate(dim int, xs ...Value) Value {
	const opName = "concatenate"
	vs, ok := f.check(opName, xs...)
	if !ok {
		return Value{}
	}
	if len(vs) == 0 {
		f.failf(opName, -1, nil, ErrShape, "no operands")
		return Value{}
	}
	first := vs[0]
	if dim < 0 || dim >= first.shape.Rank() {
		f.failf(opName, 0, first, ErrShape, "dimension %d out of range for %v", dim, first.shape)
		return Value{}
	}
	dims := first.shape.Dims()
	for i, v := range vs[1:] {
		s := v.shape
		if s.DType() != first.shape.DType() || s.Rank() != first.shape.Rank() {
			f.failf(opName, i+1, v, ErrShape, "operand %v does not match %v", s, first.shape)
			return Value{}
		}
		for d := range s.Dims() {
			if d != dim && s.Dim(d) != dims[d] {
				f.failf(opName, i+1, v, ErrShape, "dimension %d is %d, want %d (%v vs %v)", d, s.Dim(d), dims[d], s, first.shape)
				return Value{}
			}
		}
		n, ok := addDims(dims[dim], s.Dim(dim))
		if !ok {
			f.failf(opName, i+1, v, ErrShape, "concatenated dimension %d overflows int64", dim)
			return Value{}
		}
		dims[dim] = n
	}
	return f.emit("stablehlo.concatenate", vs, NewShape(first.shape.DType(), dims...), ConcatenateParams{Dim: dim})
}

// PadParams are the parameters of stablehlo.pad; its operands are the padded tensor and the
// scalar padding value.
type PadParams struct {
	Low, High, Interior []int
}

// Properties returns "edge_padding_high = ..., edge_padding_low = ..., interior_padding = ...".
func (p PadParams) Properties() string {
	return "edge_padding_high = " + i64Array(p.High) + ", edge_padding_low = " + i64Array(p.Low) + ", interior_padding = " + i64Array(p.Interior)
}

// Pad pads x with the scalar padValue: low and high elements before and after each
// dimension (negative values crop), and interior elements between neighbours (nil interior
// means none).
func (f *Function) Pad(x, padValue Value, low, high, interior []int) Value {
	const opName = "pad"
	vs, ok := f.check(opName, x, padValue)
	if !ok {
		return Value{}
	}
	a := vs[0]
	pv := f.materialize(vs[1], scalarOf(a.shape))
	r := a.shape.Rank()
	if interior == nil {
		interior = make([]int, r)
	}
	if pv.shape.DType() != a.shape.DType() || pv.shape.Rank() != 0 {
		f.failf(opName, 1, pv, ErrShape, "padding value must be a %s scalar, got %v", dtypeName(a.shape.DType()), pv.shape)
		return Value{}
	}
	if len(low) != r || len(high) != r || len(interior) != r {
		f.failf(opName, 0, a, ErrShape, "low %v, high %v, interior %v need %d entries each", low, high, interior, r)
		return Value{}
	}
	dims := make([]int, r)
	for i, d := range a.shape.Dims() {
		if interior[i] < 0 {
			f.failf(opName, 0, a, ErrShape, "negative interior padding %d in dimension %d", interior[i], i)
			return Value{}
		}
		grown, ok1 := mulDims(max(d-1, 0), interior[i])
		n, ok2 := addDims(d, grown)
		n, ok3 := addDims(n, low[i])
		n, ok4 := addDims(n, high[i])
		if !ok1 || !ok2 || !ok3 || !ok4 {
			f.failf(opName, 0, a, ErrShape, "dimension %d: size %d padded by low %d, high %d, interior %d overflows int64", i, d, low[i], high[i], interior[i])
			return Value{}
		}
		if n < 0 {
			f.failf(opName, 0, a, ErrShape, "dimension %d would have negative size %d", i, n)
			return Value{}
		}
		dims[i] = n
	}
	p := PadParams{Low: slices.Clone(low), High: slices.Clone(high), Interior: slices.Clone(interior)}
	return f.emit("stablehlo.pad", []*value{a, pv}, NewShape(a.shape.DType(), dims...), p)
}
