package stablehlo

import (
	"math"
	"slices"
	"strconv"

	"github.com/gomlx/gopjrt/dtypes"
)

// SortParams are the parameters of stablehlo.sort. Its operands are the sorted tensors (all
// of one shape), its results the same tensors permuted along Dim, and its one region the
// comparator: two scalar arguments per operand (lhs and rhs of operand 0, then of operand
// 1, ...) yielding an i1 scalar, true when lhs goes before rhs.
type SortParams struct {
	Dim    int
	Stable bool
}

// Properties returns "dimension = N : i64, is_stable = B".
func (p SortParams) Properties() string {
	return "dimension = " + strconv.Itoa(p.Dim) + " : i64, is_stable = " + strconv.FormatBool(p.Stable)
}

// Sort is stablehlo.sort (jax.lax.sort with a comparator): it sorts the tensors xs, all of
// the same dimensions (element types may differ), together along dimension dim, ordering
// positions by less, and returns the sorted tensors (Params: SortParams). less builds the
// comparator in a closed region g (see region.go) from scalars: lhs[k] and rhs[k] are two
// elements of xs[k]; it returns an i1 scalar, true when lhs goes first. With stable, equal
// positions keep their order.
//
// Errors, recorded as *OpError of op "sort": no operand or a nil less (ErrFunction), a
// scalar operand, operands of different dimensions or dim out of range (ErrShape), a
// comparator that is not an i1 scalar (ErrShape, ErrDType). On error the result holds
// len(xs) zero Values.
func (f *Function) Sort(xs []Value, dim int, stable bool, less func(g *Function, lhs, rhs []Value) Value) []Value {
	const opName = "sort"
	zeros := make([]Value, len(xs))
	vs, ok := f.sortOperands(opName, xs, dim)
	if !ok {
		return zeros
	}
	if less == nil {
		f.failf(opName, -1, nil, ErrFunction, "sort needs a comparator, got nil")
		return zeros
	}
	args := make([]Shape, 0, 2*len(vs))
	for _, v := range vs {
		s := scalarOf(v.shape)
		args = append(args, s, s)
	}
	g := f.newRegion(false, args)
	ga := g.Args()
	lhs, rhs := make([]Value, len(vs)), make([]Value, len(vs))
	for k := range vs {
		lhs[k], rhs[k] = ga[2*k], ga[2*k+1]
	}
	if !g.end(opName, "comparator result", []Value{less(g, lhs, rhs)}, []Shape{NewShape(dtypes.Bool)}) {
		return zeros
	}
	return f.emitMulti(&Op{name: "stablehlo.sort", operands: vs, params: SortParams{Dim: dim, Stable: stable}, regions: []*Function{g}}, valueShapes(vs))
}

// sortOperands checks the operands of a sort along dim.
func (f *Function) sortOperands(opName string, xs []Value, dim int) ([]*value, bool) {
	vs, ok := f.check(opName, xs...)
	if !ok {
		return nil, false
	}
	if len(vs) == 0 {
		f.failf(opName, -1, nil, ErrFunction, "sort needs at least one operand")
		return nil, false
	}
	for i, v := range vs {
		v = f.materialize(v, v.shape)
		if f.failed() {
			return nil, false
		}
		if v.shape.Rank() == 0 {
			f.failf(opName, i, v, ErrShape, "cannot sort a scalar")
			return nil, false
		}
		if !slices.Equal(v.shape.Dims(), vs[0].shape.Dims()) {
			f.failf(opName, i, v, ErrShape, "operand dimensions %v differ from operand 0's %v", v.shape.Dims(), vs[0].shape.Dims())
			return nil, false
		}
		vs[i] = v
	}
	if dim < 0 || dim >= vs[0].shape.Rank() {
		f.failf(opName, -1, nil, ErrShape, "dimension %d out of range for %v", dim, vs[0].shape)
		return nil, false
	}
	return vs, true
}

// SortBy is jax.lax.sort(xs, dimension=dim, is_stable=stable, num_keys=numKeys): it sorts
// xs together along dim in ascending order of their first numKeys operands, compared
// lexicographically, the others moving with them. Floats are ordered as JAX orders them:
// -inf < ... < -0.0 = 0.0 < ... < inf < NaN, all NaNs equal. numKeys must be in
// [1, len(xs)] (ErrFunction); otherwise the errors are Sort's.
func (f *Function) SortBy(xs []Value, dim, numKeys int, stable bool) []Value {
	const opName = "sort"
	if numKeys < 1 || numKeys > len(xs) {
		f.failf(opName, -1, nil, ErrFunction, "num_keys %d out of range [1, %d]", numKeys, len(xs))
		return make([]Value, len(xs))
	}
	return f.Sort(xs, dim, stable, func(g *Function, lhs, rhs []Value) Value {
		var p Value
		for k := numKeys - 1; k >= 0; k-- {
			a, b := g.sortKey(lhs[k]), g.sortKey(rhs[k])
			if k == numKeys-1 {
				p = g.CompareTotalOrder(a, b, LT)
				continue
			}
			p = g.Or(g.CompareTotalOrder(a, b, LT), g.And(g.CompareTotalOrder(a, b, EQ), p))
		}
		return p
	})
}

// sortKey canonicalises a float sort key as JAX does: -0.0 becomes 0.0 and every NaN the
// positive quiet NaN, so that the total order treats them as equal.
func (f *Function) sortKey(x Value) Value {
	if !x.Valid() || !x.DType().IsFloat() {
		return x
	}
	r := f.Select(f.Equal(x, f.Constant(0)), f.Full(x.Shape(), 0), x)
	return f.Select(f.Compare(x, x, NE), f.Full(x.Shape(), math.NaN()), r)
}

// SortAscending returns x sorted along dim in ascending order (jnp.sort(x, axis=dim)): the
// order of SortBy, stable.
func (f *Function) SortAscending(x Value, dim int) Value {
	return f.SortBy([]Value{x}, dim, 1, true)[0]
}

// SortDescending returns x sorted along dim in descending order, as
// jnp.sort(x, axis=dim, descending=True): SortAscending reversed, so NaNs come first.
func (f *Function) SortDescending(x Value, dim int) Value {
	return f.Reverse(f.SortAscending(x, dim), dim)
}

// Argsort returns the i32 indices that sort x along dim (jnp.argsort(x, axis=dim,
// stable=True, descending=descending)): x[indices] along dim is SortAscending(x, dim), or
// with descending, SortDescending(x, dim) with equal elements kept in their original order.
// The errors are Sort's.
func (f *Function) Argsort(x Value, dim int, descending bool) Value {
	vs, ok := f.sortOperands("sort", []Value{x}, dim)
	if !ok {
		return Value{}
	}
	a := Value{vs[0]}
	idx := f.Iota(a.Shape().WithDType(dtypes.Int32), dim)
	if descending {
		a, idx = f.Reverse(a, dim), f.Reverse(idx, dim)
	}
	r := f.SortBy([]Value{a, idx}, dim, 1, true)[1]
	if descending {
		r = f.Reverse(r, dim)
	}
	return r
}

// TopKParams are the parameters of chlo.top_k: its operand is the tensor, its results the
// K largest elements along the last dimension, in descending order, and their i32 indices.
type TopKParams struct {
	K int
}

// Properties returns "k = K : i64".
func (p TopKParams) Properties() string { return "k = " + strconv.Itoa(p.K) + " : i64" }

// TopK is jax.lax.top_k(x, k): the k largest elements of x along its last dimension, in
// descending order (of two equal elements the one at the lower index comes first), and their
// i32 indices (Params: TopKParams; the op is chlo.top_k, as JAX writes it). x must have rank
// at least 1 and k be in [0, size of the last dimension] (ErrShape). On error the results
// are zero Values.
func (f *Function) TopK(x Value, k int) (values, indices Value) {
	const opName = "top_k"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}, Value{}
	}
	r := a.shape.Rank()
	if r == 0 || k < 0 || k > a.shape.Dim(r-1) {
		f.failf(opName, 0, a, ErrShape, "k = %d out of range for %v (need rank >= 1 and k <= the last dimension)", k, a.shape)
		return Value{}, Value{}
	}
	if a.shape.DType() == dtypes.Bool {
		f.failf(opName, 0, a, ErrDType, "top_k needs integer or float operands, got %s", dtypeName(a.shape.DType()))
		return Value{}, Value{}
	}
	dims := a.shape.Dims()
	dims[r-1] = k
	res := f.emitMulti(&Op{name: "chlo.top_k", operands: []*value{a}, params: TopKParams{K: k}},
		[]Shape{NewShape(a.shape.DType(), dims...), NewShape(dtypes.Int32, dims...)})
	return res[0], res[1]
}

// ReverseParams are the parameters of stablehlo.reverse.
type ReverseParams struct {
	Dims []int // reversed dimensions, as given
}

// Properties returns "dimensions = array<i64: ...>".
func (p ReverseParams) Properties() string { return "dimensions = " + i64Array(p.Dims) }

// Reverse returns x with the order of its elements reversed along each of dims (jax.lax.rev;
// Params: ReverseParams). A dimension out of range or repeated records an error wrapping
// ErrShape.
func (f *Function) Reverse(x Value, dims ...int) Value {
	const opName = "reverse"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	seen := make([]bool, a.shape.Rank())
	for _, d := range dims {
		if d < 0 || d >= len(seen) || seen[d] {
			f.failf(opName, 0, a, ErrShape, "dimension %d out of range or repeated for %v", d, a.shape)
			return Value{}
		}
		seen[d] = true
	}
	return f.emit("stablehlo.reverse", []*value{a}, a.shape, ReverseParams{Dims: slices.Clone(dims)})
}

// CompareTotalOrder is Compare with IEEE-754 totalOrder for floats (compare type
// TOTALORDER, as JAX's sort comparators use): -NaN < -inf < ... < -0.0 < 0.0 < ... < inf <
// NaN, ordered by sign and payload. For other element types it is Compare.
func (f *Function) CompareTotalOrder(x, y Value, dir Comparison) Value {
	r := f.Compare(x, y, dir)
	if !r.Valid() || len(f.ops) == 0 {
		return r
	}
	o := f.ops[len(f.ops)-1]
	if p, ok := o.params.(CompareParams); ok && o.results[0] == r.v && p.Type == "FLOAT" {
		p.Type = "TOTALORDER"
		o.params = p
	}
	return r
}
