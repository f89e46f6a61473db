package stablehlo

import (
	"slices"
	"strings"
)

// Op is one operation recorded in a function or region body. Function.Ops lists them in
// order, so a pass over a built function (reverse-mode differentiation, say) reads each op's
// kind from Name, its inputs from Operands, its parameters from Params and its nested bodies
// from Regions:
//
//	for _, op := range f.Ops() {
//		switch p := op.Params().(type) {
//		case stablehlo.TransposeParams:
//			// the cotangent of op.Results()[0] goes back through the inverse of p.Perm
//		case nil:
//			// elementwise ops (stablehlo.add, stablehlo.exponential, ...) need no parameters
//		}
//	}
//
// Params holds a value of the op's parameter type (SliceParams for stablehlo.slice,
// DotDims for stablehlo.dot_general, ReduceParams for stablehlo.reduce, ...; each
// constructor's doc names its type), or nil for ops whose operand and result types say
// everything. The slices inside parameters are shared: read them, do not modify them.
type Op struct {
	name     string
	operands []*value
	results  []*value
	params   any
	regions  []*Function
	print    PrintFunc
}

// Name returns the op's full name, e.g. "stablehlo.add", "func.call" or an extension's
// "sdy.sharding_constraint".
func (o *Op) Name() string { return o.name }

// Operands returns the op's operands in order.
func (o *Op) Operands() []Value { return wrapValues(o.operands) }

// Results returns the op's results in order.
func (o *Op) Results() []Value { return wrapValues(o.results) }

// Params returns the op's parameters (see Op), or nil.
func (o *Op) Params() any { return o.params }

// Regions returns the op's region bodies (a reduce's combiner, a shard_map's body), in
// order; each is a *Function whose Parent is the function holding the op.
func (o *Op) Regions() []*Function { return slices.Clone(o.regions) }

// Attr is one named attribute, as MLIR prints it: `Name = Value`, Value being attribute text
// such as `"{replicated}"` or `8 : i32`.
type Attr struct {
	Name, Value string
}

// Properties is implemented by op parameters that the generic form prints as properties:
// Properties returns the text inside `<{...}>` (empty prints none), e.g.
// "permutation = array<i64: 1, 0>". Parameters of ops with a custom PrintFunc need not
// implement it.
type Properties interface {
	Properties() string
}

// PrintFunc writes an op in a custom (pretty) form with p; see Printer. An op without one
// prints in MLIR's generic form:
//
//	%r = "name"(%a, %b) <{properties}> ({regions}) : (A, B) -> R
type PrintFunc func(p *Printer, o *Op)

// OpSpec describes an op for Function.AddOp, the way for packages that extend the builder
// (lower adds sdy.sharding_constraint and sdy.manual_computation) to record their own ops.
// Ops of this package use the unexported helpers (check, emit, emitMulti) instead.
type OpSpec struct {
	Name     string      // full op name, e.g. "sdy.sharding_constraint"
	Operands []Value     // checked like any op's operands; a weak constant takes its default type
	Results  []Shape     // one result prints as %N, several as %N#0, %N#1, ...
	Params   any         // returned by Op.Params; printed by Properties in the generic form
	Regions  []*Function // bodies made with NewRegion or NewInlineRegion and ended with Yield
	Print    PrintFunc   // custom form; nil prints the generic form

	// SeparateResults numbers each result as its own SSA value (%N, %M) instead of the
	// results of one op (%N#i), for an op whose PrintFunc writes it as several ops, each
	// defining one result with Printer.Def.
	SeparateResults bool
}

// AddOp checks s's operands and result types and appends the op to f, returning its results.
// On error (or after an earlier one) it records the error and returns one zero Value per
// result.
func (f *Function) AddOp(s OpSpec) []Value {
	vals, ok := f.check(s.Name, s.Operands...)
	if !ok {
		return make([]Value, len(s.Results))
	}
	for i, v := range vals {
		vals[i] = f.materialize(v, v.shape)
	}
	for i, r := range s.Regions {
		if r == nil || r.parent != f || !r.returned {
			f.failf(s.Name, -1, nil, ErrFunction, "region %d is not an ended region of this function (NewRegion, Yield)", i)
			return make([]Value, len(s.Results))
		}
	}
	if f.failed() {
		return make([]Value, len(s.Results))
	}
	o := &Op{name: s.Name, operands: vals, params: s.Params, regions: slices.Clone(s.Regions), print: s.Print}
	if !s.SeparateResults {
		return f.emitMulti(o, s.Results)
	}
	out := make([]Value, len(s.Results))
	for _, r := range s.Results {
		if err := validShape(r); err != nil {
			f.fail(s.Name, -1, nil, err)
			return out
		}
	}
	for i, r := range s.Results {
		v := f.newValue(r)
		o.results = append(o.results, v)
		out[i] = Value{v}
	}
	f.ops = append(f.ops, o)
	return f.added(o, out)
}

// emit appends an op with one result of shape s and parameters params.
func (f *Function) emit(name string, operands []*value, s Shape, params any) Value {
	if err := validShape(s); err != nil {
		f.fail(strings.TrimPrefix(name, "stablehlo."), -1, nil, err)
		return Value{}
	}
	r := f.newValue(s)
	o := &Op{name: name, operands: operands, results: []*value{r}, params: params}
	f.ops = append(f.ops, o)
	return f.added(o, []Value{{r}})[0]
}

// emitMulti appends o with one result per shape, numbered %N for one and %N#0, %N#1, ...
// for several.
func (f *Function) emitMulti(o *Op, shapes []Shape) []Value {
	out := make([]Value, len(shapes))
	for _, s := range shapes {
		if err := validShape(s); err != nil {
			f.fail(strings.TrimPrefix(o.name, "stablehlo."), -1, nil, err)
			return out
		}
	}
	if len(shapes) == 1 {
		r := f.newValue(shapes[0])
		o.results = []*value{r}
		out[0] = Value{r}
	} else if len(shapes) > 1 {
		t := f.top
		id := t.nextVal
		t.nextVal++
		for i, s := range shapes {
			r := &value{fn: f, shape: s, id: id, sub: i}
			o.results = append(o.results, r)
			out[i] = Value{r}
		}
	}
	f.ops = append(f.ops, o)
	return f.added(o, out)
}

// OpHook is called after each op is added to a function or region body of a module that has
// one (Module.SetOpHook), with f the function holding op o. It returns the values that stand
// for o's results from then on: o's own results, or the results of ops it added after o (lower
// adds a sharding constraint after each op on a mesh with Explicit axes); nil keeps o's
// results. The ops the hook adds do not call it again, and it is not called once the module
// has an error or for ops that Replay copies. A hook that fails records the error with
// Function.Fail; the op's callers then get zero Values.
type OpHook func(f *Function, o *Op) []Value

// SetOpHook makes h the module's op hook (nil removes it), for packages that extend the
// builder with a pass that must see every op as it is added.
func (m *Module) SetOpHook(h OpHook) { m.hook = h }

// added runs the module's hook on o, whose results are out, and returns what stands for them.
func (f *Function) added(o *Op, out []Value) []Value {
	m := f.m
	if m.hook == nil || m.inHook || m.err != nil {
		return out
	}
	m.inHook = true
	r := m.hook(f, o)
	m.inHook = false
	if m.err != nil {
		return make([]Value, len(out))
	}
	if r == nil {
		return out
	}
	if len(r) != len(out) {
		f.failf(strings.TrimPrefix(o.name, "stablehlo."), -1, nil, ErrFunction, "the op hook returned %d values for %d results", len(r), len(out))
		return make([]Value, len(out))
	}
	return r
}

// MoveToEnd moves op o of f behind the ops added after it and gives it the operands vals,
// which must have the shapes of its operands and be defined before o's new place. It is for
// an op hook (see OpHook) that computes new operands for the op it is called with, as lower
// does to constrain an elementwise op's operands to its result's sharding. On error it
// records the error and leaves o as it was.
func (f *Function) MoveToEnd(o *Op, vals []Value) {
	i := slices.Index(f.ops, o)
	if i < 0 || len(vals) != len(o.operands) {
		f.failf(strings.TrimPrefix(o.Name(), "stablehlo."), -1, nil, ErrFunction, "MoveToEnd: not an op of this function, or %d operands for %d", len(vals), len(o.operands))
		return
	}
	ops := make([]*value, len(vals))
	for j, v := range vals {
		if v.v == nil || !v.v.shape.Equal(o.operands[j].shape) {
			f.failf(strings.TrimPrefix(o.Name(), "stablehlo."), j, v.v, ErrShape, "MoveToEnd: operand %d must keep its shape %v", j, o.operands[j].shape)
			return
		}
		ops[j] = v.v
	}
	o.operands = ops
	f.ops = append(append(f.ops[:i:i], f.ops[i+1:]...), o)
}
