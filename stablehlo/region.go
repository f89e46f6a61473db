package stablehlo

// Regions. An op that owns nested code (reduce's combiner, a while loop's condition and body,
// a sort comparator, lower's shard_map body) builds each region as a *Function nested in the
// function that will hold the op, in three steps:
//
//	g := f.NewRegion(s, s)                         // 1. a block with two arguments of shape s
//	r := body(g, g.Args())                         // 2. ops added to g with the usual methods
//	if !g.Yield("stablehlo.return", r...) { ... }  // 3. end it with the values it yields
//	f.AddOp(OpSpec{..., Regions: []*Function{g}})  // (or emitMulti inside this package)
//
// BuildRegion does the three steps for a Go callback. A region made this way is closed: it
// sees only its own arguments and values, and using a value of the enclosing function
// records an error wrapping ErrForeignValue, so that every value a reduce body, a sort
// comparator or a shard_map body needs is explicit.
//
// The regions of While, If, Case (and of ForLoop and Scan, built on While) are open, as
// StableHLO allows and JAX's lowering uses: their ops may use any value of the functions and
// open regions enclosing them, up to the nearest closed region or func.func (an if branch has
// no arguments, so captures are how data reaches it). A value from another func.func, from a
// sibling region, or from beyond a closed region is still an ErrForeignValue error. Captures
// lists the values a region uses that way. Errors inside a region name the enclosing
// func.func.
// The generic printer writes a region as `{ ^bb0(%arg: T, ...): ... "stablehlo.return"(...) }`;
// a custom PrintFunc writes it with Printer.Region or Printer.Ops.

// NewRegion returns an empty region body nested in f, whose entry block takes one argument
// per shape (printed %argN). Add ops to it with the usual methods and end it with Yield.
// After an error (or with an invalid shape, which records one) it still returns a region,
// on which every op is a no-op.
func (f *Function) NewRegion(args ...Shape) *Function { return f.region(false, args) }

// NewInlineRegion is NewRegion for an op whose PrintFunc writes the body inline, without
// a block of its own: the arguments are plain values (printed %N) that the op's printer
// must define with Printer.Def before printing the body with Printer.Ops.
func (f *Function) NewInlineRegion(args ...Shape) *Function { return f.region(true, args) }

func (f *Function) region(inline bool, args []Shape) *Function {
	g := &Function{m: f.m, name: f.name, top: f.top, parent: f, inline: inline}
	for i, s := range args {
		if err := validShape(s); err != nil {
			f.fail("region argument", i, nil, err)
			return g
		}
		if inline {
			g.args = append(g.args, g.newValue(s))
		} else {
			g.args = append(g.args, g.newArg(s))
		}
	}
	return g
}

// Yield ends region body g with the values it yields, the operands of its terminator
// (term, e.g. "stablehlo.return", names it in errors): they must be values of g, and weak
// constants take their default types. It reports whether g ended without error. Yield on a
// top-level function, or twice, records an error wrapping ErrFunction.
func (g *Function) Yield(term string, vs ...Value) bool {
	if g.failed() {
		return false
	}
	if g.parent == nil {
		g.failf(term, -1, nil, ErrFunction, "@%s is a function, not a region; use Return", g.name)
		return false
	}
	rs, ok := g.check(term, vs...)
	if !ok {
		return false
	}
	for i, r := range rs {
		rs[i] = g.materialize(r, r.shape)
	}
	if g.failed() {
		return false
	}
	g.results = rs
	g.returned = true
	return true
}

// BuildRegion builds a region of f: a block with one argument per shape in args, filled
// by body (given the region and its arguments) and ended with the values body returns
// (Yield with term "stablehlo.return"). It returns nil after an error; body is not called
// when an error was recorded before.
func (f *Function) BuildRegion(args []Shape, body func(g *Function, args []Value) []Value) *Function {
	if f.failed() {
		return nil
	}
	g := f.NewRegion(args...)
	if f.failed() {
		return nil
	}
	outs := body(g, g.Args())
	if !g.Yield("stablehlo.return", outs...) {
		return nil
	}
	return g
}

// scalarRegion builds the two-argument scalar body `^bb0(%a, %b): r(%a, %b)` of a reduce
// or a reducing collective.
func (f *Function) scalarRegion(r Reduction, d DType) *Function {
	s := NewShape(d)
	g := f.NewRegion(s, s)
	res := g.emit(r.op(), g.args, s, nil)
	g.results = []*value{res.v}
	g.returned = true
	return g
}

// combinerRegion builds the region body(g, a, b) of two scalars of shape s, the Go-written
// combiner of ScatterFunc and ReduceWindowFunc. It returns nil after an error, and fails
// with ErrShape when body returns another shape than s.
func (f *Function) combinerRegion(opName string, s Shape, body func(g *Function, a, b Value) Value) *Function {
	g := f.BuildRegion([]Shape{s, s}, func(g *Function, args []Value) []Value {
		return []Value{body(g, args[0], args[1])}
	})
	if g != nil && !g.results[0].shape.Equal(s) {
		f.failf(opName, -1, g.results[0], ErrShape, "combiner returns %v, want %v", g.results[0].shape, s)
		return nil
	}
	return g
}
