package autodiff

import (
	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Rules of control flow (if, case, while loops with a known trip count), sort, top_k,
// reverse and the cumulative ops.

func init() {
	for name, r := range map[string]Rule{
		"stablehlo.if":      branchRule,
		"stablehlo.case":    branchRule,
		"stablehlo.while":   whileRule,
		"stablehlo.sort":    sortRule,
		"chlo.top_k":        topKRule,
		"stablehlo.reverse": reverseRule,
	} {
		Register(name, r)
	}
}

// inexactInputs returns the positions of the active floating-point and complex values among
// ins.
func inexactInputs(b *Backward, ins []Value) []int {
	var at []int
	for i, v := range ins {
		if b.Active(v) && shapes.IsInexact(v.DType()) {
			at = append(at, i)
		}
	}
	return at
}

// filled returns cts with zeros for the float and complex results that have none.
func filled(b *Backward, results, cts []Value) []Value {
	out := make([]Value, len(cts))
	for i, r := range results {
		out[i] = cts[i]
		if !out[i].Valid() && shapes.IsInexact(r.DType()) {
			out[i] = b.Zeros(r.Shape())
		}
	}
	return out
}

// branchRule transposes stablehlo.if and stablehlo.case as JAX transposes cond: the same
// conditional, whose branch k replays branch k and walks it back to the values the branches
// capture; a branch that does not use a value gives it zeros.
func branchRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.f
	ins := Inputs(op)
	at := inexactInputs(b, ins[1:])
	out := make([]Value, len(ins))
	if len(at) == 0 {
		return out
	}
	wrt := make([]Value, len(at))
	for k, i := range at {
		wrt[k] = ins[1+i]
	}
	seeds := filled(b, op.Results(), cts)
	regions := op.Regions()
	branches := make([]func(g *stablehlo.Function) []Value, len(regions))
	for k, r := range regions {
		branches[k] = func(g *stablehlo.Function) []Value {
			env := map[Value]Value{}
			if !Replay(g, r.Ops(), env) {
				return make([]Value, len(wrt))
			}
			outs := make([]Value, len(r.Results()))
			for i, v := range r.Results() {
				outs[i] = local(g, env, v)
			}
			return b.VJPIn(g, g.Ops(), outs, wrt, seeds)
		}
	}
	var res []Value
	if op.Name() == "stablehlo.if" {
		res = f.If(ins[0], branches[0], branches[1])
	} else {
		res = f.Case(ins[0], branches...)
	}
	for k, i := range at {
		if k < len(res) {
			out[1+i] = res[k]
		}
	}
	return out
}

// whileRule transposes a loop with a known trip count (ForLoop, Scan; JAX differentiates
// fori_loop with static bounds as a scan): a first loop runs the body again, stacking the
// loop-carried values each iteration starts from (except those the body passes through
// unchanged); a second loop runs the iterations backwards, each replaying the body on its
// stacked values and walking it back, carrying the cotangents of the carried values and
// summing those of the values the body captures. A while loop without a known trip count
// has no rule (jax.grad of a while_loop raises too).
func whileRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.WhileParams](b, op)
	if !ok {
		return nil
	}
	if p.TripCount < 0 {
		return b.Fail(op, "reverse-mode differentiation of a while loop needs a known trip count (ForLoop, Scan), as in JAX")
	}
	f := b.f
	n := p.TripCount
	ins := Inputs(op)
	operands := op.Operands()
	carries := operands[1:] // operand 0 is the counter
	caps := ins[len(operands):]
	body := op.Regions()[1]
	args, res := body.Args(), body.Results()
	out := make([]Value, len(ins))

	// The float (and complex) carries and captures that want cotangents, and which carries
	// change.
	var fc []int // indices into carries of float and complex carries
	for j, c := range carries {
		if shapes.IsInexact(c.DType()) {
			fc = append(fc, j)
		}
	}
	capAt := inexactInputs(b, caps)
	if len(inexactInputs(b, carries)) == 0 && len(capAt) == 0 {
		return out
	}
	varying := make([]bool, len(carries))
	var stacked []int // carries whose value changes from one iteration to the next
	for j := range carries {
		if res[1+j] != args[1+j] {
			varying[j] = true
			stacked = append(stacked, j)
		}
	}
	i32 := func(g *stablehlo.Function, v int) Value { return g.ConstantOf(dtypes.Int32, v) }

	// Forward again, stacking the carried values at the start of each iteration.
	init := append([]Value{}, carries...)
	for _, j := range stacked {
		s := carries[j].Shape()
		init = append(init, f.Full(stablehlo.NewShape(s.DType(), append([]int{n}, s.Dims()...)...), 0))
	}
	fwd := f.ForLoop(n, init, func(g *stablehlo.Function, i Value, c []Value) []Value {
		env := map[Value]Value{args[0]: i}
		for j := range carries {
			env[args[1+j]] = c[j]
		}
		if !Replay(g, body.Ops(), env) {
			return make([]Value, len(init))
		}
		next := make([]Value, 0, len(init))
		for j := range carries {
			next = append(next, mapped(g, env, res[1+j]))
		}
		for k, j := range stacked {
			v := c[j]
			row := g.Reshape(v, append([]int{1}, v.Shape().Dims()...)...)
			idx := []Value{i}
			for range v.Shape().Rank() {
				idx = append(idx, i32(g, 0))
			}
			next = append(next, g.DynamicUpdateSlice(c[len(carries)+k], row, idx))
		}
		return next
	})
	if f.Failed() {
		return nil
	}
	stacks := fwd[len(carries):]

	// Backward: cotangents of the float and complex carries, then sums of the captures'
	// cotangents.
	seeds := filled(b, op.Results(), cts)
	binit := make([]Value, 0, len(fc)+len(capAt))
	for _, j := range fc {
		binit = append(binit, seeds[1+j])
	}
	for _, k := range capAt {
		binit = append(binit, b.Zeros(caps[k].Shape()))
	}
	bwd := f.ForLoop(n, binit, func(g *stablehlo.Function, t Value, c []Value) []Value {
		i := g.Sub(i32(g, n-1), t)
		env := map[Value]Value{args[0]: i}
		at := 0
		for j, v := range carries {
			var x Value
			if varying[j] {
				s := v.Shape()
				idx := []Value{i}
				for range s.Rank() {
					idx = append(idx, i32(g, 0))
				}
				x = g.Reshape(g.DynamicSlice(stacks[at], idx, append([]int{1}, s.Dims()...)), s.Dims()...)
				at++
			} else {
				x = g.Reshape(v, v.Shape().Dims()...) // a value of this region, so that it is a separate input
			}
			env[args[1+j]] = x
		}
		start := len(g.Ops())
		if !Replay(g, body.Ops(), env) {
			return make([]Value, len(binit))
		}
		outs := make([]Value, len(fc))
		wrt := make([]Value, 0, len(fc)+len(capAt))
		for k, j := range fc {
			outs[k] = local(g, env, res[1+j])
			wrt = append(wrt, env[args[1+j]])
		}
		for _, k := range capAt {
			wrt = append(wrt, caps[k])
		}
		got := b.VJPIn(g, g.Ops()[start:], outs, wrt, c[:len(fc)])
		next := append([]Value{}, got[:len(fc)]...)
		for k := range capAt {
			next = append(next, g.Add(c[len(fc)+k], got[len(fc)+k]))
		}
		return next
	})
	if f.Failed() {
		return nil
	}
	for k, j := range fc {
		if b.Active(carries[j]) {
			out[1+j] = bwd[k]
		}
	}
	for k, i := range capAt {
		out[len(operands)+i] = bwd[len(fc)+k]
	}
	return out
}

// mapped returns the copy of v made by a replay (env), or v itself when the replayed ops
// did not define it (a value captured from outside).
func mapped(g *stablehlo.Function, env map[Value]Value, v Value) Value {
	if w, ok := env[v]; ok {
		return w
	}
	return v
}

// local is mapped for an output of a walk in g: a value captured from outside becomes a
// no-op reshape in g, so that the walk differentiates through it.
func local(g *stablehlo.Function, env map[Value]Value, v Value) Value {
	if w, ok := env[v]; ok {
		return w
	}
	return g.Reshape(v, v.Shape().Dims()...)
}

// batchedScatterAdd returns zeros of x's shape with ct (of idx's shape) added at the
// positions idx names along dim, every other dimension a batch dimension: the transpose of
// take_along_axis (the cotangent of a sort or top_k).
func batchedScatterAdd(b *Backward, x Shape, idx, ct Value, dim int) Value {
	f := b.f
	r := x.Rank()
	var batch []int
	for d := range r {
		if d != dim {
			batch = append(batch, d)
		}
	}
	is := idx.Shape().Dims()
	indices := f.Reshape(idx, append(is, 1)...)
	sd := stablehlo.ScatterDims{InsertedWindowDims: []int{dim}, InputBatchingDims: batch,
		ScatterIndicesBatchingDims: batch, ScatterDimsToOperandDims: []int{dim}, IndexVectorDim: r}
	return f.Scatter(b.Zeros(x), indices, ct, stablehlo.ScatterParams{Dims: sd, Combine: stablehlo.Sum})
}

// sortRule is JAX's sort JVP transposed: sorting again with an iota appended gives the
// permutation, and each cotangent goes back to the positions it came from.
func sortRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.SortParams](b, op)
	if !ok {
		return nil
	}
	f := b.f
	xs := op.Operands()
	cmp := op.Regions()[0]
	s := xs[0].Shape()
	iota := f.Iota(s.WithDType(dtypes.Int32), p.Dim)
	sorted := f.Sort(append(append([]Value{}, xs...), iota), p.Dim, p.Stable, func(g *stablehlo.Function, lhs, rhs []Value) Value {
		env := map[Value]Value{}
		for i, a := range cmp.Args() {
			if i%2 == 0 {
				env[a] = lhs[i/2]
			} else {
				env[a] = rhs[i/2]
			}
		}
		if !Replay(g, cmp.Ops(), env) {
			return Value{}
		}
		return mapped(g, env, cmp.Results()[0])
	})
	if f.Failed() {
		return nil
	}
	perm := sorted[len(xs)]
	out := make([]Value, len(xs))
	for i, x := range xs {
		if b.Active(x) && shapes.IsInexact(x.DType()) && cts[i].Valid() {
			out[i] = batchedScatterAdd(b, x.Shape(), perm, cts[i], p.Dim)
		}
	}
	return out
}

// topKRule: the cotangent of the values goes back to the positions the indices name.
func topKRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	x := op.Operands()[0]
	if !cts[0].Valid() {
		return []Value{{}}
	}
	return []Value{batchedScatterAdd(b, x.Shape(), op.Results()[1], cts[0], x.Shape().Rank()-1)}
}

func reverseRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.ReverseParams](b, op)
	if !ok {
		return nil
	}
	return []Value{b.f.Reverse(cts[0], p.Dims...)}
}
