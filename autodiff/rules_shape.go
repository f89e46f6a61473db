package autodiff

import (
	"slices"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// Rules of the ops that move elements without arithmetic, and of dot_general and reduce.
// Each is the transpose JAX uses for the lax primitive of the same op.

func init() {
	for name, r := range map[string]Rule{
		"stablehlo.broadcast_in_dim":     broadcastRule,
		"stablehlo.reshape":              reshapeRule,
		"stablehlo.transpose":            transposeRule,
		"stablehlo.slice":                sliceRule,
		"stablehlo.dynamic_slice":        dynamicSliceRule,
		"stablehlo.dynamic_update_slice": dynamicUpdateSliceRule,
		"stablehlo.pad":                  padRule,
		"stablehlo.concatenate":          concatenateRule,
		"stablehlo.dot_general":          dotGeneralRule,
		"stablehlo.reduce":               reduceRule,
	} {
		Register(name, r)
	}
}

// params reads op's parameters as a T, or records that the rule cannot handle them.
func params[T any](b *Backward, op *stablehlo.Op) (T, bool) {
	p, ok := op.Params().(T)
	if !ok {
		b.Fail(op, "parameters %T, want %T", op.Params(), p)
	}
	return p, ok
}

// broadcastRule sums the cotangent over the dimensions the broadcast added or stretched.
func broadcastRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.BroadcastParams](b, op)
	if !ok {
		return nil
	}
	f := b.f
	x := op.Operands()[0]
	xs, rs := x.Shape(), op.Results()[0].Shape()
	kept := make([]bool, rs.Rank()) // result dims that map to an operand dim of the same size
	var order []int                 // those result dims, in operand order
	for i, d := range p.Dims {
		if xs.Dim(i) == rs.Dim(d) {
			kept[d] = true
			order = append(order, d)
		}
	}
	var axes []int
	for d, k := range kept {
		if !k {
			axes = append(axes, d)
		}
	}
	c := cts[0]
	if len(axes) > 0 {
		c = f.Reduce(c, stablehlo.Sum, axes...)
	}
	// The reduction leaves the kept dims in result order; the operand has them in its order.
	sorted := slices.Clone(order)
	slices.Sort(sorted)
	if !slices.Equal(sorted, order) {
		perm := make([]int, len(order))
		for i, d := range order {
			perm[i] = slices.Index(sorted, d)
		}
		c = f.Transpose(c, perm...)
	}
	if !c.Shape().Equal(xs) {
		c = f.Reshape(c, xs.Dims()...)
	}
	return []Value{c}
}

func reshapeRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	return []Value{b.f.Reshape(cts[0], op.Operands()[0].Shape().Dims()...)}
}

func transposeRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.TransposeParams](b, op)
	if !ok {
		return nil
	}
	inv := make([]int, len(p.Perm))
	for i, d := range p.Perm {
		inv[d] = i
	}
	return []Value{b.f.Transpose(cts[0], inv...)}
}

// sliceRule pads the cotangent with zeros back to the operand's shape: the strided elements
// are spread out by interior padding.
func sliceRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.SliceParams](b, op)
	if !ok {
		return nil
	}
	x := op.Operands()[0]
	n, m := x.Shape().Dims(), op.Results()[0].Shape().Dims()
	low, high, interior := make([]int, len(n)), make([]int, len(n)), make([]int, len(n))
	for i := range n {
		k := 1
		if p.Strides != nil {
			k = p.Strides[i]
		}
		low[i] = p.Start[i]
		interior[i] = k - 1
		if m[i] == 0 {
			interior[i] = 0
			high[i] = n[i] - p.Start[i]
		} else {
			high[i] = n[i] - p.Start[i] - (m[i]-1)*k - 1
		}
	}
	c := cts[0]
	return []Value{b.f.Pad(c, b.f.Full(stablehlo.NewShape(c.DType()), 0), low, high, interior)}
}

func dynamicSliceRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	ops := op.Operands()
	x, starts := ops[0], ops[1:]
	out := make([]Value, len(ops))
	out[0] = b.f.DynamicUpdateSlice(b.Zeros(x.Shape()), cts[0], starts)
	return out
}

func dynamicUpdateSliceRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	ops := op.Operands()
	x, u, starts := ops[0], ops[1], ops[2:]
	out := make([]Value, len(ops))
	g := cts[0]
	if b.Active(x) {
		out[0] = b.f.DynamicUpdateSlice(g, b.Zeros(u.Shape()), starts)
	}
	if b.Active(u) {
		out[1] = b.f.DynamicSlice(g, starts, u.Shape().Dims())
	}
	return out
}

// padRule crops the edge padding and drops the interior padding of the cotangent for the
// operand; the padding value gets the sum of the rest.
func padRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.PadParams](b, op)
	if !ok {
		return nil
	}
	f := b.f
	x, pv := op.Operands()[0], op.Operands()[1]
	g := cts[0]
	r := g.Shape().Rank()
	neg := func(xs []int) []int {
		out := make([]int, len(xs))
		for i, v := range xs {
			out[i] = -v
		}
		return out
	}
	unpadded := f.Pad(g, f.Full(stablehlo.NewShape(g.DType()), 0), neg(p.Low), neg(p.High), make([]int, r))
	strides := make([]int, r)
	for i := range strides {
		strides[i] = 1
		if p.Interior != nil {
			strides[i] = p.Interior[i] + 1
		}
	}
	tx := f.Slice(unpadded, make([]int, r), unpadded.Shape().Dims(), strides)
	out := make([]Value, 2)
	if b.Active(x) {
		out[0] = tx
	}
	if b.Active(pv) {
		out[1] = f.Sub(f.Sum(g), f.Sum(tx))
	}
	return out
}

func concatenateRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.ConcatenateParams](b, op)
	if !ok {
		return nil
	}
	g := cts[0]
	dims := g.Shape().Dims()
	out := make([]Value, len(op.Operands()))
	off := 0
	for i, x := range op.Operands() {
		n := x.Shape().Dim(p.Dim)
		if b.Active(x) {
			start, limit := make([]int, len(dims)), slices.Clone(dims)
			start[p.Dim], limit[p.Dim] = off, off+n
			out[i] = b.f.Slice(g, start, limit, nil)
		}
		off += n
	}
	return out
}

// dotGeneralRule is JAX's _dot_general_transpose_lhs and _rhs: the cotangent contracted with
// the other operand over the free dimensions of that operand, then transposed into the
// operand's dimension order.
func dotGeneralRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	d, ok := params[stablehlo.DotDims](b, op)
	if !ok {
		return nil
	}
	x, y := op.Operands()[0], op.Operands()[1]
	out := make([]Value, 2)
	if b.Active(x) {
		out[0] = dotTransposeLHS(b.f, cts[0], x.Shape(), y, d.LhsContracting, d.RhsContracting, d.LhsBatch, d.RhsBatch, false)
	}
	if b.Active(y) {
		out[1] = dotTransposeLHS(b.f, cts[0], y.Shape(), x, d.RhsContracting, d.LhsContracting, d.RhsBatch, d.LhsBatch, true)
	}
	return out
}

// remaining returns 0..n-1 without the dims in any of skip, in order.
func remaining(n int, skip ...[]int) []int {
	var out []int
	for i := range n {
		found := false
		for _, s := range skip {
			found = found || slices.Contains(s, i)
		}
		if !found {
			out = append(out, i)
		}
	}
	return out
}

// span returns start, start+1, ..., start+n-1.
func span(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}

// argsort returns the indices that sort xs ascending.
func argsort(xs []int) []int {
	idx := span(0, len(xs))
	slices.SortStableFunc(idx, func(a, b int) int { return xs[a] - xs[b] })
	return idx
}

// dotTransposeLHS returns the cotangent of the operand of shape xs of a dot_general with
// the operand y, from the result's cotangent g; swap says x was the right-hand side, so
// that y's free dimensions come first in the result.
func dotTransposeLHS(f *stablehlo.Function, g Value, xs Shape, y Value, xContract, yContract, xBatch, yBatch []int, swap bool) Value {
	xKept := remaining(xs.Rank(), xContract, xBatch)
	yKept := remaining(y.Shape().Rank(), yContract, yBatch)
	nb := len(xBatch)
	ansBatch := span(0, nb)
	var ansY []int
	if swap {
		ansY = span(nb, len(yKept))
	} else {
		ansY = span(nb+len(xKept), len(yKept))
	}
	dims := stablehlo.DotDims{LhsContracting: ansY, RhsContracting: yKept, LhsBatch: ansBatch, RhsBatch: slices.Clone(yBatch)}
	byY := argsort(yContract)
	xContractByY := make([]int, len(byY))
	for i, j := range byY {
		xContractByY[i] = xContract[j]
	}
	order := append(append(slices.Clone(xBatch), xKept...), xContractByY...)
	perm := argsort(order)
	r := f.DotGeneral(g, y, dims)
	if !isIdentity(perm) {
		r = f.Transpose(r, perm...)
	}
	return r
}

func isIdentity(p []int) bool {
	for i, v := range p {
		if i != v {
			return false
		}
	}
	return true
}

// reduceRule: a sum spreads the cotangent over the reduced dimensions; a max or min gives it
// to the elements equal to the result, split evenly among ties (JAX's
// _reduce_chooser_jvp_rule); a product transposes JAX's tree of pairwise products
// (_reduce_prod_jvp_rule), so a zero factor needs no division (see prodTree).
func reduceRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.ReduceParams](b, op)
	if !ok {
		return nil
	}
	f := b.f
	x, ans := op.Operands()[0], op.Results()[0]
	xs := x.Shape()
	kept := remaining(xs.Rank(), p.Dims)
	g := cts[0]
	out := make([]Value, len(op.Operands()))
	switch p.Reduction {
	case stablehlo.Sum:
		out[0] = f.BroadcastInDim(g, xs.Dims(), kept)
	case stablehlo.Max, stablehlo.Min:
		loc := f.Convert(f.Equal(x, f.BroadcastInDim(ans, xs.Dims(), kept)), g.DType())
		counts := f.Reduce(loc, stablehlo.Sum, p.Dims...)
		out[0] = f.Mul(f.BroadcastInDim(f.Div(g, counts), xs.Dims(), kept), loc)
	case stablehlo.Prod:
		out[0] = reduceProdVJP(b, x, g, p.Dims)
	default:
		return b.Fail(op, "reduce with %v has no transpose rule", p.Reduction)
	}
	return out
}
