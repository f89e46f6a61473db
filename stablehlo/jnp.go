package stablehlo

import (
	"math"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// jnp helpers: functions of jax.numpy and jax.nn written with the builder's own ops
// (compare, select, iota, gather, ...), each following the JAX function it names.

// Where returns x where cond is true and y elsewhere, like jnp.where(cond, x, y): the three
// broadcast with NumPy's rule, and a cond that is not pred counts as true where it is
// nonzero (cond != 0, as jnp.where converts it). x and y have the same element type (a weak
// constant takes the other's). Shapes that do not broadcast give an error wrapping ErrShape
// with JAX's message.
func (f *Function) Where(cond, x, y Value) Value {
	const opName = "select"
	c, ok := f.operand1(opName, cond)
	if !ok {
		return Value{}
	}
	p := Value{c}
	if c.shape.DType() != dtypes.Bool {
		p = f.Compare(p, f.Full(scalarOf(c.shape), 0), NE)
	}
	return f.Select(p, x, y)
}

// Tril returns x with the elements above the k-th diagonal of its last two dimensions set
// to zero, like jnp.tril(x, k): element (i, j) is kept where j <= i + k (k = 0 is the main
// diagonal, k > 0 above it, k < 0 below). Leading dimensions are a batch. x of rank below 2
// is an error wrapping ErrShape.
func (f *Function) Tril(x Value, k int) Value { return f.triangle("tril", x, k, true) }

// Triu returns x with the elements below the k-th diagonal of its last two dimensions set
// to zero, like jnp.triu(x, k): element (i, j) is kept where j >= i + k. Leading dimensions
// are a batch. x of rank below 2 is an error wrapping ErrShape.
func (f *Function) Triu(x Value, k int) Value { return f.triangle("triu", x, k, false) }

// triangle is Tril (lower) or Triu: a mask of the last two dimensions from two iotas,
// broadcast over the batch by Select.
func (f *Function) triangle(name string, x Value, k int, lower bool) Value {
	const opName = "select"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	r := a.shape.Rank()
	if r < 2 {
		f.failf(opName, 0, a, ErrShape, "Argument to jax.numpy.%s must be at least 2D, got %v", name, a.shape)
		return Value{}
	}
	n, m := a.shape.Dim(r-2), a.shape.Dim(r-1)
	s := NewShape(dtypes.Int64, n, m)
	rows, cols := f.Iota(s, 0), f.Iota(s, 1)
	diff := f.Sub(cols, rows) // j - i
	var keep Value
	if lower {
		keep = f.Compare(diff, f.ConstantOf(dtypes.Int64, k), LE)
	} else {
		keep = f.Compare(diff, f.ConstantOf(dtypes.Int64, k), GE)
	}
	return f.Select(keep, Value{a}, f.Full(scalarOf(a.shape), zeroOf(a.shape.DType())))
}

// zeroOf is the Go zero for a constant of element type d (false for pred).
func zeroOf(d DType) any {
	if d == dtypes.Bool {
		return false
	}
	return 0
}

// OneHot returns the one-hot encoding of the integer tensor indices over n classes, like
// jax.nn.one_hot(indices, n, dtype=d): a tensor of indices' shape plus a last dimension n,
// 1 where the last index equals the index and 0 elsewhere; an index outside [0, n) gives a
// row of zeros. Indices that are not integers are an error wrapping ErrDType; a negative n,
// one wrapping ErrShape.
func (f *Function) OneHot(indices Value, n int, d DType) Value {
	const opName = "compare"
	i, ok := f.operand1(opName, indices)
	if !ok {
		return Value{}
	}
	if !isInt(i.shape.DType()) {
		f.failf(opName, 0, i, ErrDType, "OneHot: indices must be integers, got %v", i.shape)
		return Value{}
	}
	if n < 0 {
		f.failf(opName, -1, nil, ErrShape, "OneHot: negative number of classes %d", n)
		return Value{}
	}
	col := f.Reshape(Value{i}, append(i.shape.Dims(), 1)...)
	hot := f.Compare(col, f.Iota(NewShape(i.shape.DType(), n), 0), EQ)
	if d == dtypes.Bool {
		return hot
	}
	return f.Convert(hot, d)
}

// TakeAlongAxis picks elements of x along axis at the positions idx gives, like
// jnp.take_along_axis(x, idx, axis): out[..., j, ...] = x[..., idx[..., j, ...], ...].
// x and idx have the same rank; their other dimensions broadcast with NumPy's rule. A
// negative index counts from the end (idx + x.Dim(axis)); an index still outside the
// dimension gives jnp's default fill value (mode="fill"): NaN for floats and complex, the
// lowest value of signed integers, the highest of unsigned ones, true for pred. A negative
// axis counts from the end. Ranks that differ or shapes that do not broadcast are errors
// wrapping ErrShape; indices that are not integers, ErrDType. Built from a Gather with
// batching dimensions.
func (f *Function) TakeAlongAxis(x, idx Value, axis int) Value {
	const opName = "gather"
	vs, ok := f.check(opName, x, idx)
	if !ok {
		return Value{}
	}
	a, i, ok := f.indexOperands(vs)
	if !ok {
		return Value{}
	}
	r := a.shape.Rank()
	if i.shape.Rank() != r {
		f.failf(opName, 1, i, ErrShape, "indices and arr must have the same number of dimensions; %d vs. %d", i.shape.Rank(), r)
		return Value{}
	}
	if axis < -r || axis >= r {
		f.failf(opName, 0, a, ErrShape, "TakeAlongAxis: axis %d out of range for %v", axis, a.shape)
		return Value{}
	}
	if axis < 0 {
		axis += r
	}
	if !isInt(i.shape.DType()) {
		f.failf(opName, 1, i, ErrDType, "TakeAlongAxis: indices must be integers, got %v", i.shape)
		return Value{}
	}
	// The dimensions other than axis broadcast; axis keeps each operand's own size.
	xd, id := a.shape.Dims(), i.shape.Dims()
	xd[axis], id[axis] = 1, 1
	common, err := BroadcastShapes(xd, id)
	if err != nil {
		f.failf(opName, 1, i, ErrShape, "Incompatible shapes for broadcasting: shapes=[%s, %s]", shapes.PyTuple(a.shape.Dims()), shapes.PyTuple(i.shape.Dims()))
		return Value{}
	}
	n := a.shape.Dim(axis)
	xd, id = append([]int(nil), common...), append([]int(nil), common...)
	xd[axis], id[axis] = n, i.shape.Dim(axis)
	xv, iv := Value{a}, Value{i}
	if !slices.Equal(a.shape.Dims(), xd) {
		xv = f.BroadcastTo(xv, xd...)
	}
	if !slices.Equal(i.shape.Dims(), id) {
		iv = f.BroadcastTo(iv, id...)
	}
	iv = f.NormalizeIndex(iv, n)
	if f.failed() {
		return Value{}
	}
	valid := f.And(f.Compare(iv, f.Constant(0), GE), f.Compare(iv, f.Constant(n), LT))
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
	got := f.Gather(xv, f.Reshape(iv, append(id, 1)...), GatherParams{
		Dims: GatherDims{CollapsedSliceDims: []int{axis}, OperandBatchingDims: batch, StartIndicesBatchingDims: batch,
			StartIndexMap: []int{axis}, IndexVectorDim: r},
		SliceSizes: sizes,
	})
	return f.Select(valid, got, f.Full(scalarOf(a.shape), fillOf(a.shape.DType())))
}

// fillOf is jnp's fill value for out-of-range gathers of element type d: NaN for floats
// and complex, the lowest signed and the highest unsigned integer, true for pred.
func fillOf(d DType) any {
	switch {
	case d == dtypes.Bool:
		return true
	case shapes.IsComplex(d):
		return complex(math.NaN(), math.NaN())
	case signed(d):
		return int64(math.MinInt64 >> (64 - d.Bits()))
	case shapes.IsUnsigned(d):
		return uint64(math.MaxUint64 >> (64 - d.Bits()))
	}
	return math.NaN()
}

// Clip returns x limited to [lo, hi] elementwise, like jnp.clip(x, lo, hi): max(lo, x) and
// then min(hi, ·), so NaN propagates from any operand. Either bound may be the zero Value,
// for no bound (jnp's None); the bounds broadcast with x under NumPy's rule (shapes that do
// not broadcast give an error wrapping ErrShape) and take x's element type when they are
// weak constants.
func (f *Function) Clip(x, lo, hi Value) Value {
	out := x
	if lo.v != nil {
		out = f.Max(lo, out)
	}
	if hi.v != nil {
		out = f.Min(hi, out)
	}
	if lo.v == nil && hi.v == nil {
		a, ok := f.operand1("clamp", x)
		if !ok {
			return Value{}
		}
		out = Value{a}
	}
	return out
}

// Arange returns the values start, start+step, ... up to stop (excluded) as a vector of
// element type d, like jnp.arange(start, stop, step, dtype=d): its length is
// max(0, ceil((stop-start)/step)) and element i is start + step*i computed in d (in f32 for
// floats narrower than 32 bits, then converted), from an iota. A zero or non-finite step,
// bounds that are not whole numbers for an integer d, and pred or complex d are errors
// wrapping ErrDType (ErrShape for the step).
func (f *Function) Arange(start, stop, step float64, d DType) Value {
	const opName = "iota"
	if _, ok := f.check(opName); !ok {
		return Value{}
	}
	if step == 0 || math.IsNaN(step) || math.IsInf(step, 0) {
		f.failf(opName, -1, nil, ErrShape, "Arange: step %v must be finite and nonzero", step)
		return Value{}
	}
	if d == dtypes.Bool || shapes.IsComplex(d) || !supported(d) {
		f.failf(opName, -1, nil, ErrDType, "Arange: invalid element type %s", dtypeName(d))
		return Value{}
	}
	if isInt(d) && (start != math.Trunc(start) || step != math.Trunc(step)) {
		f.failf(opName, -1, nil, ErrDType, "Arange: start %v and step %v must be whole numbers for %s", start, step, dtypeName(d))
		return Value{}
	}
	size := math.Ceil((stop - start) / step)
	if !(size > 0) {
		size = 0
	}
	if size > math.MaxInt32 {
		f.failf(opName, -1, nil, ErrShape, "Arange: %v elements are too many", size)
		return Value{}
	}
	work := d
	if shapes.IsFloat(d) && d.Bits() < 32 {
		work = dtypes.Float32
	}
	out := f.Add(f.ConstantOf(work, start), f.Mul(f.ConstantOf(work, step), f.Iota(NewShape(work, int(size)), 0)))
	if work != d {
		out = f.Convert(out, d)
	}
	return out
}

// Linspace returns num evenly spaced values from start to stop (included when endpoint
// is true) as a vector of element type d, like jnp.linspace(start, stop, num, endpoint,
// dtype=d). It computes as JAX does, in d for floats and in f32 for integers (then rounded
// down): start*(1 - i/div) + (stop/div)*i for i < div, div = num-1 with endpoint and num
// without, then stop itself when endpoint. A negative num is an error wrapping ErrShape;
// pred or complex d, one wrapping ErrDType.
func (f *Function) Linspace(start, stop float64, num int, endpoint bool, d DType) Value {
	const opName = "iota"
	if _, ok := f.check(opName); !ok {
		return Value{}
	}
	if num < 0 {
		f.failf(opName, -1, nil, ErrShape, "Number of samples, %d, must be non-negative.", num)
		return Value{}
	}
	if d == dtypes.Bool || shapes.IsComplex(d) || !supported(d) {
		f.failf(opName, -1, nil, ErrDType, "Linspace: invalid element type %s", dtypeName(d))
		return Value{}
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
	var out Value
	switch {
	case num > 1:
		iota := f.Iota(NewShape(comp, div), 0)
		dv := f.ConstantOf(comp, div)
		step := f.Div(iota, dv)
		out = f.Add(f.Mul(f.Reshape(lo, 1), f.Sub(f.Constant(1), step)), f.Mul(f.Div(f.Reshape(hi, 1), dv), iota))
		if endpoint {
			out = f.Concatenate(0, out, f.Reshape(hi, 1))
		}
	case num == 1:
		out = f.Reshape(lo, 1)
	default:
		return f.Full(NewShape(d, 0), zeroOf(d))
	}
	if isInt(d) {
		out = f.Convert(f.Floor(out), d)
	}
	return out
}
