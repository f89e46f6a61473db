package stablehlo

import (
	"math"
	"strconv"

	"github.com/gomlx/gopjrt/dtypes"
)

// Control flow: stablehlo.while, stablehlo.if and stablehlo.case, and the loops built on
// while (ForLoop here, Scan in scan.go). Their regions are open (see region.go): they may use
// the values of the functions enclosing them.

// WhileParams are the parameters of stablehlo.while. Its operands are the initial
// loop-carried values, its results their final values, and its two regions the condition
// (one block argument per carried value, yielding an i1 scalar) and the body (the same
// arguments, yielding the next carried values).
type WhileParams struct {
	// TripCount is the number of iterations when it is known as the loop is built (ForLoop,
	// Scan): operand 0 is then an i32 counter that starts at 0, the body adds 1 to it and the
	// condition stops at TripCount. A While has TripCount -1.
	TripCount int
	// Scan describes the loop of a Scan; nil for other loops.
	Scan *ScanParams
}

// While is stablehlo.while (jax.lax.while_loop): starting from init, it runs body as long as
// cond holds, and returns the final loop-carried values (Params: WhileParams, TripCount -1).
// cond gets the carried values in its region g and returns an i1 scalar; body gets them in
// its own region and returns their next values, of the same types (a weak constant takes
// the type of its carried value). Both regions may use values of f (see region.go).
//
// Errors, recorded as *OpError of op "while": no carried value or a nil callback
// (ErrFunction), a condition that is not an i1 scalar, a body returning the wrong number or
// types of values (ErrShape, ErrDType). On error the result holds len(init) zero Values.
func (f *Function) While(init []Value, cond func(g *Function, carry []Value) Value, body func(g *Function, carry []Value) []Value) []Value {
	const opName = "while"
	zeros := make([]Value, len(init))
	vs, ok := f.loopOperands(opName, init)
	if !ok {
		return zeros
	}
	if cond == nil || body == nil {
		f.failf(opName, -1, nil, ErrFunction, "while needs a cond and a body, got nil")
		return zeros
	}
	return f.loop(opName, vs, WhileParams{TripCount: -1},
		func(g *Function, carry []Value) Value { return cond(g, carry) },
		func(g *Function, carry []Value) []Value { return body(g, carry) })
}

// ForLoop runs body n times, with i (an i32 scalar) counting 0, 1, ..., n-1, threading the
// loop-carried values from init through it (jax.lax.fori_loop(0, n, ...)), and returns
// their final values. It is a stablehlo.while whose WhileParams record the trip count n and
// whose operand 0 is the counter. body runs in an open region (see region.go) and returns
// the next carried values, of the same types. n must be in [0, 2^31-1] (ErrShape); otherwise
// the errors are While's. On error the result holds len(init) zero Values.
func (f *Function) ForLoop(n int, init []Value, body func(g *Function, i Value, carry []Value) []Value) []Value {
	const opName = "while"
	zeros := make([]Value, len(init))
	vs, ok := f.loopOperands(opName, init)
	if !ok {
		return zeros
	}
	if body == nil {
		f.failf(opName, -1, nil, ErrFunction, "for loop needs a body, got nil")
		return zeros
	}
	if n < 0 || n > math.MaxInt32 {
		f.failf(opName, -1, nil, ErrShape, "trip count %d out of range [0, %d]", n, math.MaxInt32)
		return zeros
	}
	i0 := f.constant(opName, NewShape(dtypes.Int32), []lit{{kind: 'i'}})
	if i0.v == nil {
		return zeros
	}
	res := f.loop(opName, append([]*value{i0.v}, vs...), WhileParams{TripCount: n},
		func(g *Function, carry []Value) Value { return g.Less(carry[0], g.Constant(int32(n))) },
		func(g *Function, carry []Value) []Value {
			next := body(g, carry[0], carry[1:])
			return append([]Value{g.Add(carry[0], g.Constant(int32(1)))}, next...)
		})
	return res[1:]
}

// loopOperands checks the initial values of a loop: at least one, weak constants in their
// default types.
func (f *Function) loopOperands(opName string, init []Value) ([]*value, bool) {
	vs, ok := f.check(opName, init...)
	if !ok {
		return nil, false
	}
	if len(vs) == 0 {
		f.failf(opName, -1, nil, ErrFunction, "a loop needs at least one loop-carried value")
		return nil, false
	}
	for i, v := range vs {
		vs[i] = f.materialize(v, v.shape)
	}
	return vs, !f.failed()
}

// loop emits a stablehlo.while over the carried values vs, its condition and body built by
// cond and body in open regions. The result holds len(vs) values (zero after an error).
func (f *Function) loop(opName string, vs []*value, p WhileParams, cond func(g *Function, carry []Value) Value,
	body func(g *Function, carry []Value) []Value) []Value {
	zeros := make([]Value, len(vs))
	shapes := valueShapes(vs)
	c := f.newRegion(true, shapes)
	c.inits = vs
	if !c.end(opName, "cond result", []Value{cond(c, c.Args())}, []Shape{NewShape(dtypes.Bool)}) {
		return zeros
	}
	b := f.newRegion(true, shapes)
	b.inits = vs
	if !b.end(opName, "body result", body(b, b.Args()), shapes) {
		return zeros
	}
	return f.emitMulti(&Op{name: "stablehlo.while", operands: vs, params: p, regions: []*Function{c, b}}, shapes)
}

// If is stablehlo.if (jax.lax.cond): it runs then when pred (an i1 scalar) is true and els
// otherwise, and returns the values of the branch that ran (Params: nil). Each branch builds
// its values in its own region g, which has no arguments: it uses values of f (see
// region.go). Both branches must return the same number of values of the same types; a weak
// constant takes the type of the other branch's value.
//
// Both callbacks are always called, even after an error, so the result has one Value per
// value then returns (zero Values after an error). Errors, recorded as *OpError of op "if":
// pred not an i1 scalar (ErrShape, ErrDType), a nil branch (ErrFunction), branches that
// disagree (ErrShape).
func (f *Function) If(pred Value, then, els func(g *Function) []Value) []Value {
	const opName = "if"
	if then == nil || els == nil {
		f.failf(opName, -1, nil, ErrFunction, "if needs two branches, got nil")
		return nil
	}
	var p *value
	if vs, ok := f.check(opName, pred); ok {
		p = f.materialize(vs[0], vs[0].shape)
		if !f.failed() && (p.shape.DType() != dtypes.Bool || p.shape.Rank() != 0) {
			f.failf(opName, 0, p, ErrShape, "predicate must be an i1 scalar (tensor<i1>), got %v", p.shape)
		}
	}
	return f.branches(opName, "stablehlo.if", p, []func(g *Function) []Value{then, els})
}

// Case is stablehlo.case: it runs branches[index] and returns its values (Params: nil).
// index is an i32 scalar (a weak constant becomes one); as in StableHLO, an index outside
// [0, len(branches)) runs the last branch. Switch clamps the index instead, as
// jax.lax.switch does. Branch regions have no arguments and use values of f (see
// region.go); all branches must return the same number of values of the same types (a weak
// constant takes the type of another branch's value).
//
// The branches are always called, even after an error, so the result has one Value per
// value branches[0] returns (zero Values after an error). Errors, recorded as *OpError of
// op "case": no branch or a nil one (ErrFunction), an index that is not an i32 scalar
// (ErrShape, ErrDType), branches that disagree (ErrShape).
func (f *Function) Case(index Value, branches ...func(g *Function) []Value) []Value {
	const opName = "case"
	if len(branches) == 0 {
		f.failf(opName, -1, nil, ErrFunction, "case needs at least one branch")
		return nil
	}
	for i, br := range branches {
		if br == nil {
			f.failf(opName, -1, nil, ErrFunction, "branch %d is nil", i)
			return nil
		}
	}
	var x *value
	if vs, ok := f.check(opName, index); ok {
		x = f.materialize(vs[0], vs[0].shape.WithDType(dtypes.Int32))
		switch {
		case f.failed():
		case x.shape.Rank() != 0:
			f.failf(opName, 0, x, ErrShape, "index must be an i32 scalar, got %v", x.shape)
		case x.shape.DType() != dtypes.Int32:
			f.failf(opName, 0, x, ErrDType, "index must be an i32 scalar, got %v (Switch converts other integer types)", x.shape)
		}
	}
	return f.branches(opName, "stablehlo.case", x, branches)
}

// Switch is jax.lax.switch: Case with index converted to i32 and clamped into
// [0, len(branches)-1], so a negative index runs branch 0 and a large one the last branch.
// index must be an integer scalar (ErrShape, ErrDType); otherwise the errors are Case's.
func (f *Function) Switch(index Value, branches ...func(g *Function) []Value) []Value {
	const opName = "case"
	if vs, ok := f.check(opName, index); ok {
		x := f.materialize(vs[0], vs[0].shape.WithDType(dtypes.Int32))
		switch {
		case f.failed():
		case x.shape.Rank() != 0 || !x.shape.DType().IsInt():
			f.failf(opName, 0, x, ErrShape, "switch index must be an integer scalar, got %v", x.shape)
		default:
			i := Value{x}
			if x.shape.DType() != dtypes.Int32 {
				i = f.Convert(i, dtypes.Int32)
			}
			if len(branches) > 0 {
				i = f.Min(f.Max(i, f.Constant(int32(0))), f.Constant(int32(len(branches)-1)))
			}
			index = i
		}
	}
	return f.Case(index, branches...)
}

// branches builds one argument-less open region per branch, makes their results agree and
// emits op name with operand x (nil after an error).
func (f *Function) branches(opName, name string, x *value, brs []func(g *Function) []Value) []Value {
	regions := make([]*Function, len(brs))
	outs := make([][]Value, len(brs))
	for i, br := range brs {
		regions[i] = f.newRegion(true, nil)
		outs[i] = br(regions[i])
	}
	zeros := make([]Value, len(outs[0]))
	if f.failed() {
		return zeros
	}
	for k, o := range outs {
		if len(o) != len(outs[0]) {
			f.failf(opName, -1, nil, ErrShape, "branch %d returns %d values, branch 0 returns %d", k, len(o), len(outs[0]))
			return zeros
		}
	}
	shapes := make([]Shape, len(outs[0]))
	for i := range shapes {
		for _, o := range outs {
			if o[i].Valid() && !o[i].IsWeak() {
				shapes[i] = o[i].Shape()
				break
			}
		}
		if shapes[i].DType() == 0 && outs[0][i].Valid() {
			shapes[i] = outs[0][i].Shape() // every branch returns a weak constant: its default type
		}
	}
	for k, g := range regions {
		if !g.end(opName, "branch "+strconv.Itoa(k)+" result", outs[k], shapes) {
			return zeros
		}
	}
	return f.emitMulti(&Op{name: name, operands: []*value{x}, regions: regions}, shapes)
}

// newRegion is NewRegion for the ops of this package: open (captures) or closed, and with one
// argument per shape even after an error, so callbacks may index their arguments.
func (f *Function) newRegion(captures bool, args []Shape) *Function {
	g := &Function{m: f.m, name: f.name, top: f.top, parent: f, captures: captures}
	for i, s := range args {
		if err := validShape(s); err != nil {
			f.fail("region argument", i, nil, err)
		}
		g.args = append(g.args, g.newArg(s))
	}
	return g
}

// end ends region g with the values vs, which must have the shapes want (a weak constant
// takes its shape); what names them in errors, recorded as errors of op opName. It reports
// whether g ended without error.
func (g *Function) end(opName, what string, vs []Value, want []Shape) bool {
	if g.failed() {
		return false
	}
	if len(vs) != len(want) {
		g.failf(opName, -1, nil, ErrShape, "%ss: got %d values, want %d", what, len(vs), len(want))
		return false
	}
	rs, ok := g.check(opName, vs...)
	if !ok {
		return false
	}
	for i, r := range rs {
		r = g.materialize(r, want[i])
		if g.failed() {
			return false
		}
		if !r.shape.Equal(want[i]) {
			kind := ErrShape
			if r.shape.DType() != want[i].DType() {
				kind = ErrDType
			}
			g.failf(opName, -1, r, kind, "%s %d is %v, want %v", what, i, r.shape, want[i])
			return false
		}
		rs[i] = r
	}
	g.results = rs
	g.returned = true
	return true
}

// Captures returns the values that region g, or a region nested in it, uses but that are
// defined outside g, in the functions enclosing it (see region.go): operands of its ops and
// values it yields, each once, in order of first use. A pass over a built function (a
// gradient, say) treats them as extra inputs of the op that owns g. It returns nil for a
// closed region or a func.func, which use none.
func (g *Function) Captures() []Value {
	var out []Value
	seen := map[*value]bool{}
	var walk func(r *Function)
	use := func(v *value) {
		if v == nil || seen[v] || v.fn.within(g) {
			return
		}
		seen[v] = true
		out = append(out, Value{v})
	}
	walk = func(r *Function) {
		for _, o := range r.ops {
			for _, v := range o.operands {
				use(v)
			}
			for _, sub := range o.regions {
				walk(sub)
			}
		}
		for _, v := range r.results {
			use(v)
		}
	}
	walk(g)
	return out
}

// within reports whether f is g or a region nested in g.
func (f *Function) within(g *Function) bool {
	for r := f; r != nil; r = r.parent {
		if r == g {
			return true
		}
	}
	return false
}

func valueShapes(vs []*value) []Shape {
	out := make([]Shape, len(vs))
	for i, v := range vs {
		out[i] = v.shape
	}
	return out
}
