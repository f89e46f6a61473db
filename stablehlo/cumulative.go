package stablehlo

import (
	"slices"

	"github.com/gomlx/gopjrt/dtypes"
)

// Reductions along one axis that JAX writes as a reduce with a custom body (argmax, argmin)
// or as a reduce_window (cumsum, cumprod, cummax, cummin).

// ArgReduceParams are the parameters of the stablehlo.reduce that Argmax and Argmin build.
// Its operands are x, the Index-typed iota along Axis, and the two initial values (Max's or
// Min's identity for x, 0 for the index); its region picks, of two (value, index) pairs, the
// larger value for Argmax (smaller for Argmin), a NaN over any number, and of equal values
// the lower index; its results are the picked values and indices (the op's value is
// result 1).
type ArgReduceParams struct {
	Max   bool // Argmax; false for Argmin
	Axis  int
	Index DType
}

// Properties returns "dimensions = array<i64: Axis>".
func (p ArgReduceParams) Properties() string { return "dimensions = " + i64Array([]int{p.Axis}) }

// Argmax returns the index, of element type index (an integer type; JAX uses i32), of the
// largest element of x along axis, the axis removed (jnp.argmax(x, axis)): the first
// such index when the maximum occurs several times, and the index of the first NaN if
// there is one (Params: ArgReduceParams). index must be an integer type (ErrDType), axis
// in range and of non-zero size (ErrShape).
func (f *Function) Argmax(x Value, axis int, index DType) Value {
	return f.argReduce(x, axis, index, true)
}

// Argmin is Argmax for the smallest element (jnp.argmin(x, axis)).
func (f *Function) Argmin(x Value, axis int, index DType) Value {
	return f.argReduce(x, axis, index, false)
}

func (f *Function) argReduce(x Value, axis int, index DType, isMax bool) Value {
	opName := "argmin"
	if isMax {
		opName = "argmax"
	}
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	d := a.shape.DType()
	switch {
	case !index.IsInt():
		f.failf(opName, -1, nil, ErrDType, "index type must be an integer type, got %s", dtypeName(index))
		return Value{}
	case axis < 0 || axis >= a.shape.Rank():
		f.failf(opName, 0, a, ErrShape, "axis %d out of range for %v", axis, a.shape)
		return Value{}
	case a.shape.Dim(axis) == 0:
		f.failf(opName, 0, a, ErrShape, "%s of an empty axis %d of %v", opName, axis, a.shape)
		return Value{}
	}
	r, cmp := Min, LT
	if isMax {
		r, cmp = Max, GT
	}
	init := r.init(d)
	if d == dtypes.Bool {
		init = lit{kind: 'b', b: !isMax}
	}
	iv := f.constant(opName, scalarOf(a.shape), []lit{init})
	ii := f.constant(opName, NewShape(index), []lit{{kind: 'i'}})
	iota := f.Iota(a.shape.WithDType(index), axis)
	if f.failed() {
		return Value{}
	}
	s, si := scalarOf(a.shape), NewShape(index)
	g := f.newRegion(false, []Shape{s, si, s, si})
	ga := g.Args()
	opVal, opIdx, accVal, accIdx := ga[0], ga[1], ga[2], ga[3]
	pickVal := g.Or(g.Compare(opVal, accVal, cmp), g.Compare(opVal, opVal, NE))
	pickIdx := g.Or(pickVal, g.And(g.Equal(opVal, accVal), g.Less(opIdx, accIdx)))
	if !g.end(opName, "body result", []Value{g.Select(pickVal, opVal, accVal), g.Select(pickIdx, opIdx, accIdx)}, []Shape{s, si}) {
		return Value{}
	}
	out := slices.Delete(a.shape.Dims(), axis, axis+1)
	o := &Op{name: "stablehlo.reduce", operands: []*value{a, iota.v, iv.v, ii.v},
		params: ArgReduceParams{Max: isMax, Axis: axis, Index: index}, regions: []*Function{g}}
	return f.emitMulti(o, []Shape{NewShape(d, out...), NewShape(index, out...)})[1]
}

// CumulativeParams are the parameters of the stablehlo.reduce_window that Cumsum, Cumprod,
// Cummax and Cummin build, as JAX lowers them on CPU: its operands are x and Reduction's
// identity; the window spans the whole Axis (size n) with stride 1, and x is padded by n-1
// identities before the axis (after it with Reverse), so output element i reduces x[0..i]
// (x[i..n-1] with Reverse). Its region applies Reduction to two scalars.
type CumulativeParams struct {
	Reduction Reduction
	Axis      int
	Reverse   bool

	window []int   // window_dimensions
	pad    [][]int // padding, [low, high] per dimension
}

// Properties returns "padding = dense<...>, window_dimensions = array<i64: ...>,
// window_strides = array<i64: ...>".
func (p CumulativeParams) Properties() string {
	return "padding = " + DenseI64(p.pad) + ", window_dimensions = " + i64Array(p.window) +
		", window_strides = " + i64Array(slices.Repeat([]int{1}, len(p.window)))
}

// Cumsum returns the cumulative sum of x along axis (jax.lax.cumsum(x, axis, reverse)):
// element i is x[0] + ... + x[i] along the axis, or x[i] + ... + x[n-1] with reverse
// (Params: CumulativeParams). x must be numeric (ErrDType) and axis in range (ErrShape). An
// axis of size 0 returns x.
func (f *Function) Cumsum(x Value, axis int, reverse bool) Value {
	return f.cumulative("cumsum", x, Sum, axis, reverse)
}

// Cumprod is Cumsum for products (jax.lax.cumprod).
func (f *Function) Cumprod(x Value, axis int, reverse bool) Value {
	return f.cumulative("cumprod", x, Prod, axis, reverse)
}

// Cummax is Cumsum for maxima (jax.lax.cummax); a NaN propagates to the end of the scan.
func (f *Function) Cummax(x Value, axis int, reverse bool) Value {
	return f.cumulative("cummax", x, Max, axis, reverse)
}

// Cummin is Cumsum for minima (jax.lax.cummin); a NaN propagates to the end of the scan.
func (f *Function) Cummin(x Value, axis int, reverse bool) Value {
	return f.cumulative("cummin", x, Min, axis, reverse)
}

func (f *Function) cumulative(opName string, x Value, r Reduction, axis int, reverse bool) Value {
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	d := a.shape.DType()
	switch {
	case d == dtypes.Bool:
		f.failf(opName, 0, a, ErrDType, "%s needs numeric operands, got %s", opName, dtypeName(d))
		return Value{}
	case axis < 0 || axis >= a.shape.Rank():
		f.failf(opName, 0, a, ErrShape, "axis %d out of range for %v", axis, a.shape)
		return Value{}
	}
	n := a.shape.Dim(axis)
	if n == 0 {
		return Value{a}
	}
	p := CumulativeParams{Reduction: r, Axis: axis, Reverse: reverse}
	p.window = slices.Repeat([]int{1}, a.shape.Rank())
	p.window[axis] = n
	p.pad = make([][]int, a.shape.Rank())
	for i := range p.pad {
		p.pad[i] = []int{0, 0}
	}
	if reverse {
		p.pad[axis][1] = n - 1
	} else {
		p.pad[axis][0] = n - 1
	}
	init := f.constant(opName, scalarOf(a.shape), []lit{r.init(d)})
	if init.v == nil {
		return Value{}
	}
	o := &Op{name: "stablehlo.reduce_window", operands: []*value{a, init.v}, params: p,
		regions: []*Function{f.scalarRegion(r, d)}}
	return f.emitMulti(o, []Shape{a.shape})[0]
}
