package autodiff

import (
	"slices"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// Rules that differentiate a reformulation of the op instead of the op itself, as JAX
// does: a product reduction is differentiated through a tree of pairwise products (JAX's
// _reduce_prod_jvp_rule, through _reduce_jvp), and cumprod, cummax and cummin through the
// associative scan that computes them (JAX's _cumulative_jvp_rule). The rule builds the
// reformulation next to the backward pass and transposes it with the rules of its ops
// (multiply, max, min, slice, pad, ...), so zeros in a product need no division and ties in
// a running maximum split the cotangent as lax.max does.

// replayVJP builds y = build(f) in b.Function(), from x, and returns the cotangent of x for
// the cotangent g of y, transposing the ops build added. It returns the zero Value after an
// error.
func replayVJP(b *Backward, x, g Value, build func(f *stablehlo.Function) Value) Value {
	f := b.f
	start := len(f.Ops())
	y := build(f)
	if f.Failed() {
		return Value{}
	}
	ops := f.Ops()[start:]
	return b.VJP(ops, []Value{y}, []Value{x}, []Value{g})[0]
}

// sliceDim slices x along axis from start to limit with stride, keeping the other
// dimensions whole (JAX's slice_in_dim).
func sliceDim(f *stablehlo.Function, x Value, axis, start, limit, stride int) Value {
	dims := x.Shape().Dims()
	st, lim, str := make([]int, len(dims)), slices.Clone(dims), slices.Repeat([]int{1}, len(dims))
	st[axis], lim[axis], str[axis] = start, limit, stride
	return f.Slice(x, st, lim, str)
}

// padDim pads x along axis with low and high copies of the scalar v and interior between
// elements.
func padDim(f *stablehlo.Function, x Value, v float64, axis, low, high, interior int) Value {
	r := x.Shape().Rank()
	lo, hi, in := make([]int, r), make([]int, r), make([]int, r)
	lo[axis], hi[axis], in[axis] = low, high, interior
	return f.Pad(x, f.Full(stablehlo.NewShape(x.DType()), v), lo, hi, in)
}

// prodTree is JAX's _reduce_jvp for a product: x's reduced dims dims are moved to the
// front and flattened into one of size n, which is halved by multiplying its first half
// with its second (padded with a 1 when n is odd) until one row is left.
func prodTree(f *stablehlo.Function, x Value, dims []int) Value {
	xs := x.Shape()
	kept := remaining(xs.Rank(), dims)
	perm := append(slices.Clone(dims), kept...)
	n := 1
	for _, d := range dims {
		n *= xs.Dim(d)
	}
	rest := make([]int, len(kept))
	for i, d := range kept {
		rest[i] = xs.Dim(d)
	}
	t := x
	if !isIdentity(perm) {
		t = f.Transpose(t, perm...)
	}
	t = f.Reshape(t, append([]int{n}, rest...)...)
	for n > 1 {
		n1 := (n + 1) / 2
		a, c := sliceDim(f, t, 0, 0, n1, 1), sliceDim(f, t, 0, n1, n, 1)
		if n-n1 != n1 {
			c = padDim(f, c, 1, 0, 0, 1, 0)
		}
		t = f.Mul(a, c)
		n = n1
	}
	return f.Reshape(t, rest...)
}

// reduceProdVJP is the cotangent of x for a product reduction over dims: the transpose of
// prodTree. An empty reduction (whose product is the constant 1) gives zeros.
func reduceProdVJP(b *Backward, x, g Value, dims []int) Value {
	for _, d := range dims {
		if x.Shape().Dim(d) == 0 {
			return b.Zeros(x.Shape())
		}
	}
	return replayVJP(b, x, g, func(f *stablehlo.Function) Value { return prodTree(f, x, dims) })
}

// associativeScan is JAX's associative_scan(combine, x, reverse, axis): the inclusive scan
// of x along axis, built by combining adjacent pairs, scanning the half-size result
// recursively, and filling in the even positions.
func associativeScan(f *stablehlo.Function, combine func(a, c Value) Value, x Value, axis int, reverse bool) Value {
	if reverse {
		x = f.Reverse(x, axis)
	}
	var scan func(e Value) Value
	scan = func(e Value) Value {
		n := e.Shape().Dim(axis)
		if n < 2 || f.Failed() {
			return e
		}
		odd := scan(combine(sliceDim(f, e, axis, 0, n-1, 2), sliceDim(f, e, axis, 1, n, 2)))
		var even Value
		if n%2 == 0 {
			m := odd.Shape().Dim(axis)
			even = combine(sliceDim(f, odd, axis, 0, m-1, 1), sliceDim(f, e, axis, 2, n, 2))
		} else {
			even = combine(odd, sliceDim(f, e, axis, 2, n, 2))
		}
		even = f.Concatenate(axis, sliceDim(f, e, axis, 0, 1, 1), even)
		return interleave(f, even, odd, axis)
	}
	y := scan(x)
	if reverse {
		y = f.Reverse(y, axis)
	}
	return y
}

// interleave is JAX's _interleave: a's elements at the even positions along axis, b's at
// the odd ones (a has as many elements as b, or one more).
func interleave(f *stablehlo.Function, a, c Value, axis int) Value {
	na, nc := a.Shape().Dim(axis), c.Shape().Dim(axis)
	ah, cl, ch := 1, 1, 0
	if na != nc {
		ah, ch = 0, 1
	}
	return f.Add(padDim(f, a, 0, axis, 0, ah, 1), padDim(f, c, 0, axis, cl, ch, 1))
}

// cumulativeVJP is the cotangent of x for Cumprod, Cummax or Cummin (reduction r) along
// axis: the transpose of JAX's associative scan of lax.mul, lax.max or lax.min.
func cumulativeVJP(b *Backward, x, g Value, r stablehlo.Reduction, axis int, reverse bool) Value {
	return replayVJP(b, x, g, func(f *stablehlo.Function) Value {
		combine := f.Mul
		switch r {
		case stablehlo.Max:
			combine = f.Max
		case stablehlo.Min:
			combine = f.Min
		}
		return associativeScan(f, combine, x, axis, reverse)
	})
}
