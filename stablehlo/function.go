package stablehlo

import (
	"fmt"
	"slices"
)

// Function is one function (or one region body, such as a reduce's combiner or lower's
// shard_map body) being built. Its methods add ops and return their results. A Value may
// only be used in the function or region that defined it, and in the while, if and case
// regions nested in it (see region.go); see Module for the error rules.
type Function struct {
	m        *Module
	name     string
	public   bool
	top      *Function      // enclosing func.func (itself for a top-level function)
	parent   *Function      // enclosing function of a region; nil for func.func
	inline   bool           // region whose arguments are plain values defined by its owner's printer
	captures bool           // region that may use values of the functions enclosing it (while, if, case)
	inits    []*value       // a loop region's: the values its arguments start as (the while's operands)
	stacks   map[int]*value // a Scan body's: the per-iteration value each output argument stacks
	ctx      map[any]any

	args     []*value
	argAttrs [][]Attr
	ops      []*Op
	results  []*value
	resAttrs [][]Attr
	returned bool

	nextVal, nextArg int // SSA counters, used on top only
}

// Name returns the symbol name, without '@', of the function (of the enclosing function for
// a region body).
func (f *Function) Name() string { return f.top.name }

// Module returns the module the function belongs to.
func (f *Function) Module() *Module { return f.m }

// Parent returns the function or region that holds the op owning region body f, or nil for
// a top-level function.
func (f *Function) Parent() *Function { return f.parent }

// IsRegion reports whether f is a region body rather than a func.func.
func (f *Function) IsRegion() bool { return f.parent != nil }

// IsOpen reports whether f is an open region: a body of While, ForLoop, Scan, If or Case,
// whose ops may use the values of the functions enclosing it (see region.go).
func (f *Function) IsOpen() bool { return f.captures }

// ArgInits returns, for the condition or body of a loop (While, ForLoop, Scan), the values
// its arguments start as: the loop's initial values, in argument order. A Scan body's list
// stops before the arguments of its stacked outputs, which are added after the body has
// run. It returns nil for other functions and regions.
func (f *Function) ArgInits() []Value {
	if f.inits == nil {
		return nil
	}
	return wrapValues(f.inits)
}

// ArgStacks returns, for argument i of a Scan body that accumulates a stacked output, the
// per-iteration value the body stacks there (the output's element, whose shape is the
// argument's without its leading dimension); false for other arguments and functions.
func (f *Function) ArgStacks(i int) (Value, bool) {
	v, ok := f.stacks[i]
	if !ok {
		return Value{}, false
	}
	return Value{v}, true
}

// Public reports whether f is the public @main.
func (f *Function) Public() bool { return f.public }

// Ops returns the ops recorded so far, in order (see Op).
func (f *Function) Ops() []*Op { return slices.Clone(f.ops) }

// Returned reports whether the function has returned (Return) or the region has ended (Yield).
func (f *Function) Returned() bool { return f.returned }

// Results returns the values the function returns (a region's yielded values); nil before
// Return or Yield.
func (f *Function) Results() []Value {
	if !f.returned {
		return nil
	}
	return wrapValues(f.results)
}

// Args returns the function's arguments (the block arguments of a region body).
func (f *Function) Args() []Value { return wrapValues(f.args) }

// SetContext attaches val to f under key, for packages that extend the builder: lower marks
// a shard_map body with its mesh and manual axes, and its collectives find them from any
// region nested inside with Context.
func (f *Function) SetContext(key, val any) {
	if f.ctx == nil {
		f.ctx = make(map[any]any)
	}
	f.ctx[key] = val
}

// Context returns the value attached under key to f, or else to the nearest enclosing
// function or region that has one, or else to the module; nil if none has.
func (f *Function) Context(key any) any {
	for g := f; g != nil; g = g.parent {
		if v, ok := g.ctx[key]; ok {
			return v
		}
	}
	return f.m.Context(key)
}

// Failed reports whether the module already has an error; ops then do nothing.
func (f *Function) Failed() bool { return f.failed() }

func (f *Function) failed() bool { return f.m.err != nil }

// Fail records err as the error of op opName (operand index i, -1 for none; v the operand
// at fault, or the zero Value) unless an error is already recorded. err should wrap a
// sentinel (ErrShape, ErrDType, ... or an extension's own).
func (f *Function) Fail(opName string, i int, v Value, err error) { f.fail(opName, i, v.v, err) }

// Failf is Fail with the cause fmt.Errorf("%w: "+format, sentinel, args...).
func (f *Function) Failf(opName string, i int, v Value, sentinel error, format string, args ...any) {
	f.failf(opName, i, v.v, sentinel, format, args...)
}

func (f *Function) fail(opName string, i int, v *value, err error) {
	if f.m.err != nil {
		return
	}
	e := &OpError{Pkg: f.m.pkg, Func: f.top.name, Op: opName, Operand: i, Err: err}
	if v != nil {
		e.Value = v.name()
	}
	f.m.err = e
}

func (f *Function) failf(opName string, i int, v *value, sentinel error, format string, args ...any) {
	f.fail(opName, i, v, fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...))
}

// Operands checks that vs are usable as operands of op opName in f (valid, defined in f,
// f not yet returned) and returns them with weak constants materialized in their default
// types. After an error it returns false; the error is recorded.
func (f *Function) Operands(opName string, vs ...Value) ([]Value, bool) {
	vals, ok := f.check(opName, vs...)
	if !ok {
		return nil, false
	}
	for i, v := range vals {
		vals[i] = f.materialize(v, v.shape)
	}
	if f.failed() {
		return nil, false
	}
	return wrapValues(vals), true
}

// CheckOperands is Operands without the materializing: it reports whether vs are usable as
// operands of op opName in f (valid, defined in f or a region f may read, f not yet
// returned) and leaves weak constants as they are, for an op that gives each one a shape of
// its own with Materialize (packages jnp, nn and random). After an error it returns false;
// the error is recorded, naming the operand at fault by its index in vs.
func (f *Function) CheckOperands(opName string, vs ...Value) bool {
	_, ok := f.check(opName, vs...)
	return ok
}

// Materialize returns v, a weak constant (see Constant), as a constant op of shape s: its Go
// value converted to s's element type as ConstantOf converts it; any other value comes back
// unchanged. Call it after CheckOperands. A value that s's element type cannot represent
// records an error wrapping ErrDType, and Materialize then returns v.
func (f *Function) Materialize(v Value, s Shape) Value { return Value{f.materialize(v.v, s)} }

// check validates that every operand is usable in f and returns them. Weak constants are
// left as they are (callers materialize them).
func (f *Function) check(opName string, vs ...Value) ([]*value, bool) {
	if f.failed() {
		return nil, false
	}
	if f.returned {
		f.failf(opName, -1, nil, ErrFunction, "function @%s already returned; no ops may follow", f.top.name)
		return nil, false
	}
	out := make([]*value, len(vs))
	for i, v := range vs {
		if v.v == nil {
			f.failf(opName, i, nil, ErrInvalidValue, "zero Value")
			return nil, false
		}
		if v.v.fn != f && !f.sees(v.v.fn) {
			if v.v.fn.top != f.top {
				f.failf(opName, i, v.v, ErrForeignValue, "value is defined in @%s, not in @%s", v.v.fn.top.name, f.top.name)
			} else {
				f.failf(opName, i, v.v, ErrForeignValue, "using value defined outside the region")
			}
			return nil, false
		}
		out[i] = v.v
	}
	return out, true
}

// operand1 is check for an op of one operand x, which it then materializes if it is a weak
// constant; false means f has failed and the op returns zero Values.
func (f *Function) operand1(opName string, x Value) (*value, bool) {
	vs, ok := f.check(opName, x)
	if !ok {
		return nil, false
	}
	a := f.materialize(vs[0], vs[0].shape)
	return a, !f.failed()
}

// sees reports whether f may use the values of g, a function or region enclosing it: every
// region from f up to g (g excluded) must allow captures (see region.go).
func (f *Function) sees(g *Function) bool {
	for r := f; r != g; r = r.parent {
		if !r.captures || r.parent == nil {
			return false
		}
	}
	return true
}

func (f *Function) newValue(s Shape) *value {
	t := f.top
	v := &value{fn: f, shape: s, id: t.nextVal, sub: -1}
	t.nextVal++
	return v
}

func (f *Function) newArg(s Shape) *value {
	t := f.top
	v := &value{fn: f, shape: s, id: t.nextArg, arg: true, sub: -1}
	t.nextArg++
	return v
}

// NewValue returns a fresh SSA value of shape s in f that no op defines, for an op whose
// PrintFunc writes it as several ops and needs values between them (lower's GSPMD shard_map
// prints `@Sharding` custom calls whose results only its own printer uses). That printer
// must define the value with Printer.Def before using it. After an error it returns the
// zero Value.
func (f *Function) NewValue(s Shape) Value {
	if f.failed() {
		return Value{}
	}
	if err := validShape(s); err != nil {
		f.fail("value", -1, nil, err)
		return Value{}
	}
	return Value{f.newValue(s)}
}

// NewValues is NewValue for the results of one multi-result definition that a PrintFunc
// writes: with two or more shapes the values share one SSA number and print as %N#0,
// %N#1, ..., defined together by one Printer.Def (lower's GSPMD shard_map defines them with
// Printer.Call). After an error it returns zero Values.
func (f *Function) NewValues(shapes ...Shape) []Value {
	out := make([]Value, len(shapes))
	if f.failed() {
		return out
	}
	for _, s := range shapes {
		if err := validShape(s); err != nil {
			f.fail("value", -1, nil, err)
			return out
		}
	}
	if len(shapes) == 1 {
		out[0] = Value{f.newValue(shapes[0])}
		return out
	}
	t := f.top
	id := t.nextVal
	t.nextVal++
	for i, s := range shapes {
		out[i] = Value{&value{fn: f, shape: s, id: id, sub: i}}
	}
	return out
}

// Arg adds an argument of the given shape to a top-level function and returns it.
// Arguments come before any op; a region's arguments are made by the op that owns it
// (NewRegion). Both mistakes record an error wrapping ErrFunction.
func (f *Function) Arg(s Shape) Value {
	const opName = "func.func argument"
	if f.failed() {
		return Value{}
	}
	idx := len(f.args)
	if f.parent != nil {
		f.failf(opName, idx, nil, ErrFunction, "arguments of a region are created by the op that owns it")
		return Value{}
	}
	if len(f.ops) > 0 || f.returned {
		// Allowed by MLIR, but the SSA names would interleave; keep signatures first.
		f.failf(opName, idx, nil, ErrFunction, "add arguments before any op")
		return Value{}
	}
	if err := validShape(s); err != nil {
		f.fail(opName, idx, nil, err)
		return Value{}
	}
	v := f.newArg(s)
	f.args = append(f.args, v)
	f.argAttrs = append(f.argAttrs, nil)
	return Value{v}
}

// SetArgAttr sets the attribute name of top-level argument i to value (attribute text),
// printed in the argument's dictionary `%arg0: T {name = value}`; an attribute set before
// keeps its place, and an empty value removes it. lower writes `sdy.sharding` there. An
// index out of range records an error wrapping ErrFunction.
func (f *Function) SetArgAttr(i int, name, value string) {
	if i < 0 || i >= len(f.argAttrs) || f.parent != nil {
		f.failf("func.func argument", i, nil, ErrFunction, "no argument %d in @%s", i, f.top.name)
		return
	}
	f.argAttrs[i] = setAttr(f.argAttrs[i], name, value)
}

// ArgAttrs returns the attributes of argument i (nil if none or out of range).
func (f *Function) ArgAttrs(i int) []Attr {
	if i < 0 || i >= len(f.argAttrs) {
		return nil
	}
	return slices.Clone(f.argAttrs[i])
}

// SetResultAttr is SetArgAttr for result i of a returned top-level function.
func (f *Function) SetResultAttr(i int, name, value string) {
	if i < 0 || i >= len(f.resAttrs) || f.parent != nil {
		f.failf("func.func result", i, nil, ErrFunction, "no result %d in @%s", i, f.top.name)
		return
	}
	f.resAttrs[i] = setAttr(f.resAttrs[i], name, value)
}

// ResultAttrs returns the attributes of result i (nil if none or out of range).
func (f *Function) ResultAttrs(i int) []Attr {
	if i < 0 || i >= len(f.resAttrs) {
		return nil
	}
	return slices.Clone(f.resAttrs[i])
}

func setAttr(as []Attr, name, value string) []Attr {
	i := slices.IndexFunc(as, func(a Attr) bool { return a.Name == name })
	switch {
	case i >= 0 && value == "":
		return slices.Delete(as, i, i+1)
	case i >= 0:
		as[i].Value = value
		return as
	case value != "":
		return append(as, Attr{name, value})
	}
	return as
}

// Return ends a top-level function with the given results. Call it exactly once; a region
// body ends with Yield instead.
func (f *Function) Return(vs ...Value) {
	const opName = "return"
	if f.parent != nil {
		f.failf(opName, -1, nil, ErrFunction, "a region body returns by its body function's results, not Return")
		return
	}
	vals, ok := f.check(opName, vs...)
	if !ok {
		return
	}
	for i, v := range vals {
		vals[i] = f.materialize(v, v.shape)
	}
	f.results = vals
	f.resAttrs = make([][]Attr, len(vals))
	f.returned = true
}

// RewrapResults adds ops to a returned top-level function between its body and its return:
// wrap gets each result in turn, may emit ops on it, and returns the value to return in its
// place, of the same shape. The results' attributes stay. lower uses it to mark each result's
// memory space as jax.jit does. A wrap that returns a value of another shape records an error
// wrapping ErrFunction.
func (f *Function) RewrapResults(wrap func(i int, v Value) Value) {
	const opName = "return"
	if f.failed() {
		return
	}
	if f.parent != nil || !f.returned {
		f.failf(opName, -1, nil, ErrFunction, "RewrapResults needs a returned top-level function")
		return
	}
	results := f.results
	f.returned = false
	defer func() { f.returned = true }()
	for i, r := range results {
		v := wrap(i, Value{r})
		if f.failed() {
			return
		}
		vals, ok := f.check(opName, v)
		if !ok {
			return
		}
		w := f.materialize(vals[0], r.shape)
		if !w.shape.Equal(r.shape) {
			f.failf(opName, i, w, ErrFunction, "result %d rewrapped from %s to %s", i, r.shape, w.shape)
			return
		}
		results[i] = w
	}
}

// Call calls the private function g with args and returns its results (func.call, its
// Params the callee: CallParams). g must have returned already (its result types are then
// known). On error the result holds one zero Value per result of g.
func (f *Function) Call(g *Function, args ...Value) []Value {
	return f.CallWith(g, nil, args...)
}

// CallWith is Call with attributes on the call op, printed in its attribute dictionary as given
// (`func.call @g(%0) {mhlo.frontend_attributes = {...}} : ...`; lower's ComputeOnHost marks a
// call to run on the host this way). Params: CallParams.
func (f *Function) CallWith(g *Function, attrs []Attr, args ...Value) []Value {
	const opName = "func.call"
	var zeros []Value // returned on error, so callers may index results
	if g != nil && g.returned {
		zeros = make([]Value, len(g.results))
	}
	vals, ok := f.check(opName, args...)
	if !ok {
		return zeros
	}
	switch {
	case g == nil || g.m != f.m:
		f.failf(opName, -1, nil, ErrFunction, "callee is not a function of this module")
		return zeros
	case g.parent != nil || g.public:
		f.failf(opName, -1, nil, ErrFunction, "callee @%s must be a private top-level function", g.name)
		return zeros
	case !g.returned:
		f.failf(opName, -1, nil, ErrFunction, "callee @%s has not returned yet", g.name)
		return zeros
	case len(args) != len(g.args):
		f.failf(opName, -1, nil, ErrFunction, "@%s takes %d arguments, got %d", g.name, len(g.args), len(args))
		return zeros
	}
	for i, v := range vals {
		v = f.materialize(v, g.args[i].shape)
		if !v.shape.Equal(g.args[i].shape) {
			f.failf(opName, i, v, ErrShape, "@%s argument %d is %v, got %v", g.name, i, g.args[i].shape, v.shape)
			return zeros
		}
		vals[i] = v
	}
	shapes := make([]Shape, len(g.results))
	for i, r := range g.results {
		shapes[i] = r.shape
	}
	o := &Op{name: "func.call", operands: vals, params: CallParams{Callee: g, Attrs: slices.Clone(attrs)}, print: printCall}
	return f.emitMulti(o, shapes)
}

// CallParams are the parameters of func.call: the callee and the call's attributes (CallWith).
type CallParams struct {
	Callee *Function
	Attrs  []Attr
}
