package jnp

import (
	"math"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Functions of jax.numpy written with the builder's own ops (compare, select, iota, gather,
// ...), each following the JAX function it names.

// Where returns x where cond is true and y elsewhere, like jnp.where(cond, x, y): the three
// broadcast with NumPy's rule, and a cond that is not pred counts as true where it is
// nonzero (cond != 0, as jnp.where converts it). x and y have the same element type (a weak
// constant takes the other's). Shapes that do not broadcast give an error wrapping
// stablehlo.ErrShape with JAX's message.
func Where(f *stablehlo.Function, cond, x, y stablehlo.Value) stablehlo.Value {
	const opName = "select"
	vs, ok := f.Operands(opName, cond)
	if !ok {
		return stablehlo.Value{}
	}
	p := vs[0]
	if d := p.DType(); d != dtypes.Bool {
		p = f.Compare(p, f.Full(stablehlo.NewShape(d), 0), stablehlo.NE)
	}
	return f.Select(p, x, y)
}

// Tril returns x with the elements above the k-th diagonal of its last two dimensions set
// to zero, like jnp.tril(x, k): element (i, j) is kept where j <= i + k (k = 0 is the main
// diagonal, k > 0 above it, k < 0 below). Leading dimensions are a batch. x of rank below 2
// is an error wrapping stablehlo.ErrShape.
func Tril(f *stablehlo.Function, x stablehlo.Value, k int) stablehlo.Value {
	return triangle(f, "tril", x, k, true)
}

// Triu returns x with the elements below the k-th diagonal of its last two dimensions set
// to zero, like jnp.triu(x, k): element (i, j) is kept where j >= i + k. Leading dimensions
// are a batch. x of rank below 2 is an error wrapping stablehlo.ErrShape.
func Triu(f *stablehlo.Function, x stablehlo.Value, k int) stablehlo.Value {
	return triangle(f, "triu", x, k, false)
}

// triangle is Tril (lower) or Triu: a mask of the last two dimensions from two iotas,
// broadcast over the batch by Select.
func triangle(f *stablehlo.Function, name string, x stablehlo.Value, k int, lower bool) stablehlo.Value {
	const opName = "select"
	vs, ok := f.Operands(opName, x)
	if !ok {
		return stablehlo.Value{}
	}
	a := vs[0]
	s := a.Shape()
	r := s.Rank()
	if r < 2 {
		f.Failf(opName, 0, a, stablehlo.ErrShape, "Argument to jax.numpy.%s must be at least 2D, got %v", name, s)
		return stablehlo.Value{}
	}
	n, m := s.Dim(r-2), s.Dim(r-1)
	is := stablehlo.NewShape(dtypes.Int64, n, m)
	rows, cols := f.Iota(is, 0), f.Iota(is, 1)
	diff := f.Sub(cols, rows) // j - i
	var keep stablehlo.Value
	if lower {
		keep = f.Compare(diff, f.ConstantOf(dtypes.Int64, k), stablehlo.LE)
	} else {
		keep = f.Compare(diff, f.ConstantOf(dtypes.Int64, k), stablehlo.GE)
	}
	return f.Select(keep, a, f.Full(stablehlo.NewShape(s.DType()), zeroOf(s.DType())))
}

// zeroOf is the Go zero for a constant of element type d (false for pred).
func zeroOf(d stablehlo.DType) any {
	if d == dtypes.Bool {
		return false
	}
	return 0
}

// isInt reports whether d is a signed or unsigned integer type.
func isInt(d stablehlo.DType) bool { return shapes.IsSigned(d) || shapes.IsUnsigned(d) }

// TakeAlongAxis picks elements of x along axis at the positions idx gives, like
// jnp.take_along_axis(x, idx, axis): out[..., j, ...] = x[..., idx[..., j, ...], ...].
// x and idx have the same rank; their other dimensions broadcast with NumPy's rule. A
// negative index counts from the end (idx + x.Dim(axis)); an index still outside the
// dimension gives jnp's default fill value (mode="fill"): NaN for floats and complex, the
// lowest value of signed integers, the highest of unsigned ones, true for pred. A negative
// axis counts from the end. Ranks that differ or shapes that do not broadcast are errors
// wrapping stablehlo.ErrShape; indices that are not integers, stablehlo.ErrDType. A weak
// constant idx is an s32 scalar, as in jnp's indexing. Built from a Gather with batching
// dimensions.
func TakeAlongAxis(f *stablehlo.Function, x, idx stablehlo.Value, axis int) stablehlo.Value {
	const opName = "gather"
	if !f.CheckOperands(opName, x, idx) {
		return stablehlo.Value{}
	}
	a := f.Materialize(x, x.Shape())
	i := idx
	if i.IsWeak() {
		i = f.Materialize(i, stablehlo.NewShape(dtypes.Int32))
	}
	if f.Failed() {
		return stablehlo.Value{}
	}
	as, is := a.Shape(), i.Shape()
	r := as.Rank()
	if is.Rank() != r {
		f.Failf(opName, 1, i, stablehlo.ErrShape, "indices and arr must have the same number of dimensions; %d vs. %d", is.Rank(), r)
		return stablehlo.Value{}
	}
	if axis < -r || axis >= r {
		f.Failf(opName, 0, a, stablehlo.ErrShape, "TakeAlongAxis: axis %d out of range for %v", axis, as)
		return stablehlo.Value{}
	}
	if axis < 0 {
		axis += r
	}
	if !isInt(is.DType()) {
		f.Failf(opName, 1, i, stablehlo.ErrDType, "TakeAlongAxis: indices must be integers, got %v", is)
		return stablehlo.Value{}
	}
	// The dimensions other than axis broadcast; axis keeps each operand's own size.
	xd, id := as.Dims(), is.Dims()
	xd[axis], id[axis] = 1, 1
	common, err := stablehlo.BroadcastShapes(xd, id)
	if err != nil {
		f.Failf(opName, 1, i, stablehlo.ErrShape, "Incompatible shapes for broadcasting: shapes=[%s, %s]", shapes.PyTuple(as.Dims()), shapes.PyTuple(is.Dims()))
		return stablehlo.Value{}
	}
	n := as.Dim(axis)
	xd, id = append([]int(nil), common...), append([]int(nil), common...)
	xd[axis], id[axis] = n, is.Dim(axis)
	xv, iv := a, i
	if !slices.Equal(as.Dims(), xd) {
		xv = f.BroadcastTo(xv, xd...)
	}
	if !slices.Equal(is.Dims(), id) {
		iv = f.BroadcastTo(iv, id...)
	}
	iv = f.NormalizeIndex(iv, n)
	if f.Failed() {
		return stablehlo.Value{}
	}
	valid := f.And(f.Compare(iv, f.Constant(0), stablehlo.GE), f.Compare(iv, f.Constant(n), stablehlo.LT))
	var batch []int
	for d := range r {
		if d != axis {
			batch = append(batch, d)
		}
	}
	sizes := make([]int, r)
	for d := range sizes {
		sizes[d] = 1
	}
	got := f.Gather(xv, f.Reshape(iv, append(id, 1)...), stablehlo.GatherParams{
		Dims: stablehlo.GatherDims{CollapsedSliceDims: []int{axis}, OperandBatchingDims: batch, StartIndicesBatchingDims: batch,
			StartIndexMap: []int{axis}, IndexVectorDim: r},
		SliceSizes: sizes,
	})
	return f.Select(valid, got, f.Full(stablehlo.NewShape(as.DType()), fillOf(as.DType())))
}

// fillOf is jnp's fill value for out-of-range gathers of element type d: NaN for floats
// and complex, the lowest signed and the highest unsigned integer, true for pred.
func fillOf(d stablehlo.DType) any {
	switch {
	case d == dtypes.Bool:
		return true
	case shapes.IsComplex(d):
		return complex(math.NaN(), math.NaN())
	case shapes.IsSigned(d):
		return int64(math.MinInt64 >> (64 - d.Bits()))
	case shapes.IsUnsigned(d):
		return uint64(math.MaxUint64 >> (64 - d.Bits()))
	}
	return math.NaN()
}

// Clip returns x limited to [lo, hi] elementwise, like jnp.clip(x, lo, hi): max(lo, x) and
// then min(hi, ·), so NaN propagates from any operand. Either bound may be the zero Value,
// for no bound (jnp's None); the bounds broadcast with x under NumPy's rule (shapes that do
// not broadcast give an error wrapping stablehlo.ErrShape) and take x's element type when
// they are weak constants.
func Clip(f *stablehlo.Function, x, lo, hi stablehlo.Value) stablehlo.Value {
	out := x
	if lo.Valid() {
		out = f.Max(lo, out)
	}
	if hi.Valid() {
		out = f.Min(hi, out)
	}
	if !lo.Valid() && !hi.Valid() {
		vs, ok := f.Operands("clamp", x)
		if !ok {
			return stablehlo.Value{}
		}
		out = vs[0]
	}
	return out
}

// Arange returns the values start, start+step, ... up to stop (excluded) as a vector of
// element type d, like jnp.arange(start, stop, step, dtype=d): its length is
// max(0, ceil((stop-start)/step)) and element i is start + step*i computed in d (in f32 for
// floats narrower than 32 bits, then converted), from an iota. A zero or non-finite step,
// bounds that are not whole numbers for an integer d, and pred or complex d are errors
// wrapping stablehlo.ErrDType (stablehlo.ErrShape for the step).
func Arange(f *stablehlo.Function, start, stop, step float64, d stablehlo.DType) stablehlo.Value {
	const opName = "iota"
	if !f.CheckOperands(opName) {
		return stablehlo.Value{}
	}
	if step == 0 || math.IsNaN(step) || math.IsInf(step, 0) {
		f.Failf(opName, -1, stablehlo.Value{}, stablehlo.ErrShape, "Arange: step %v must be finite and nonzero", step)
		return stablehlo.Value{}
	}
	if d == dtypes.Bool || shapes.IsComplex(d) || !shapes.Supported(d) {
		f.Failf(opName, -1, stablehlo.Value{}, stablehlo.ErrDType, "Arange: invalid element type %s", shapes.XLAName(d))
		return stablehlo.Value{}
	}
	if isInt(d) && (start != math.Trunc(start) || step != math.Trunc(step)) {
		f.Failf(opName, -1, stablehlo.Value{}, stablehlo.ErrDType, "Arange: start %v and step %v must be whole numbers for %s", start, step, shapes.XLAName(d))
		return stablehlo.Value{}
	}
	size := math.Ceil((stop - start) / step)
	if !(size > 0) {
		size = 0
	}
	if size > math.MaxInt32 {
		f.Failf(opName, -1, stablehlo.Value{}, stablehlo.ErrShape, "Arange: %v elements are too many", size)
		return stablehlo.Value{}
	}
	work := d
	if shapes.IsFloat(d) && d.Bits() < 32 {
		work = dtypes.Float32
	}
	out := f.Add(f.ConstantOf(work, start), f.Mul(f.ConstantOf(work, step), f.Iota(stablehlo.NewShape(work, int(size)), 0)))
	if work != d {
		out = f.Convert(out, d)
	}
	return out
}

// Linspace returns num evenly spaced values from start to stop (included when endpoint
// is true) as a vector of element type d, like jnp.linspace(start, stop, num, endpoint,
// dtype=d). It computes as JAX does, in d for floats and in f32 for integers (then rounded
// down): start*(1 - i/div) + (stop/div)*i for i < div, div = num-1 with endpoint and num
// without, then stop itself when endpoint. A negative num is an error wrapping
// stablehlo.ErrShape; pred or complex d, one wrapping stablehlo.ErrDType.
func Linspace(f *stablehlo.Function, start, stop float64, num int, endpoint bool, d stablehlo.DType) stablehlo.Value {
	const opName = "iota"
	if !f.CheckOperands(opName) {
		return stablehlo.Value{}
	}
	if num < 0 {
		f.Failf(opName, -1, stablehlo.Value{}, stablehlo.ErrShape, "Number of samples, %d, must be non-negative.", num)
		return stablehlo.Value{}
	}
	if d == dtypes.Bool || shapes.IsComplex(d) || !shapes.Supported(d) {
		f.Failf(opName, -1, stablehlo.Value{}, stablehlo.ErrDType, "Linspace: invalid element type %s", shapes.XLAName(d))
		return stablehlo.Value{}
	}
	comp := d
	if isInt(d) {
		comp = dtypes.Float32
	}
	lo, hi := f.ConstantOf(comp, start), f.ConstantOf(comp, stop)
	div := num
	if endpoint {
		div = num - 1
	}
	var out stablehlo.Value
	switch {
	case num > 1:
		iota := f.Iota(stablehlo.NewShape(comp, div), 0)
		dv := f.ConstantOf(comp, div)
		step := f.Div(iota, dv)
		out = f.Add(f.Mul(f.Reshape(lo, 1), f.Sub(f.Constant(1), step)), f.Mul(f.Div(f.Reshape(hi, 1), dv), iota))
		if endpoint {
			out = f.Concatenate(0, out, f.Reshape(hi, 1))
		}
	case num == 1:
		out = f.Reshape(lo, 1)
	default:
		return f.Full(stablehlo.NewShape(d, 0), zeroOf(d))
	}
	if isInt(d) {
		out = f.Convert(f.Floor(out), d)
	}
	return out
}
