package lower

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
)

// Partitioner selects how shardings are written into the module: Shardy (`sdy` dialect,
// the default) or GSPMD (`mhlo.sharding` strings and `@Sharding` custom calls). One module
// uses one of them, never both. It is mlir.Partitioner, the type pjrt compiles with.
type Partitioner = mlir.Partitioner

// The partitioners (mlir.Shardy, mlir.GSPMD).
const (
	Shardy = mlir.Shardy
	GSPMD  = mlir.GSPMD
)

// Option configures a Module.
type Option func(*config)

type config struct {
	partitioner Partitioner
	multiMesh   bool
}

// WithPartitioner selects the partitioner the module is written for (default Shardy).
func WithPartitioner(p Partitioner) Option { return func(c *config) { c.partitioner = p } }

// WithMultipleMeshes allows shardings on meshes of different shapes in one module; each
// distinct mesh becomes its own `sdy.mesh` symbol. Without it, a second mesh shape is an
// error wrapping ErrMeshMismatch (Shardy's and XLA's safest rule: one mesh per module).
func WithMultipleMeshes() Option { return func(c *config) { c.multiMesh = true } }

// Module builds one StableHLO module: a public @main and any private helper functions.
//
// Ops are added through *Function methods. The first error (a shape mismatch, an unknown
// axis, a value used in the wrong function, ...) sticks: every later op is a no-op that
// returns the zero Value, and Build returns that error. So code reads like math and checks
// once:
//
//	m := lower.NewModule("jit_f")
//	f := m.Main()
//	x := f.Arg(lower.NewShape(dtypes.Float32, 8, 2), sharding)
//	f.Return(f.Mul(x, f.Constant(2.0)))
//	prog, err := m.Build()
//
// A Module is not safe for concurrent use while it is being built; the Program that
// Build returns is immutable and safe to share.
type Module struct {
	name       string
	cfg        config
	err        error
	main       *Function
	funcs      []*Function // in creation order; main first once created
	meshes     []*meshSym
	assignment []int // device ids of the first concrete mesh seen (module device assignment)
	channels   int
}

// NewModule starts a module named name (printed `module @name`, or `module @"my-fn"` when
// the name is not an MLIR identifier; empty prints no name). A name mlir.CheckName rejects
// (a backslash, a control byte or a byte outside ASCII) is recorded as the module's error,
// wrapping mlir.ErrName.
func NewModule(name string, opts ...Option) *Module {
	m := &Module{name: name, cfg: config{partitioner: Shardy}}
	for _, o := range opts {
		o(&m.cfg)
	}
	if name != "" {
		if err := mlir.CheckName("module", name); err != nil {
			m.err = &OpError{Func: name, Op: "module", Operand: -1, Err: err}
		}
	}
	return m
}

// Err returns the first error recorded so far, or nil.
func (m *Module) Err() error { return m.err }

// Partitioner returns the partitioner the module is written for.
func (m *Module) Partitioner() Partitioner { return m.cfg.partitioner }

// Main returns the public entry function @main, creating it on first use.
func (m *Module) Main() *Function {
	if m.main == nil {
		m.main = m.newFunc("main", true)
	}
	return m.main
}

// Func returns a new private function @name, to be called from others with Function.Call.
// A name that is already used (or "main"), or that mlir.CheckName rejects, records an error
// wrapping ErrFunction.
func (m *Module) Func(name string) *Function {
	f := m.newFunc(name, false)
	for _, g := range m.funcs[:len(m.funcs)-1] {
		if g.name == name && m.err == nil {
			m.err = &OpError{Func: name, Op: "func.func", Operand: -1, Err: fmt.Errorf("%w: function @%s defined twice", ErrFunction, name)}
		}
	}
	if name == "" && m.err == nil {
		m.err = &OpError{Func: name, Op: "func.func", Operand: -1, Err: fmt.Errorf("%w: empty function name", ErrFunction)}
	}
	if err := mlir.CheckName("function", name); err != nil && m.err == nil {
		m.err = &OpError{Func: name, Op: "func.func", Operand: -1, Err: fmt.Errorf("%w: %w", ErrFunction, err)}
	}
	return f
}

func (m *Module) newFunc(name string, public bool) *Function {
	f := &Function{m: m, name: name, public: public}
	f.top = f
	m.funcs = append(m.funcs, f)
	return f
}

// Function is one function (or one region body, such as a shard_map body) being built.
// Its methods add ops and return their results. A Value may only be used in the function
// that defined it; see Module for the error rules.
type Function struct {
	m      *Module
	name   string
	public bool
	top    *Function // enclosing func.func (itself for a top-level function)
	parent *Function // enclosing function of a region; nil for func.func
	manual *manualCtx

	args     []*value
	argAttrs []string // printed attribute dict per argument ("" for none)
	argSh    []*mesh.NamedSharding
	ops      []*op
	results  []*value
	resAttrs []string
	resSh    []*mesh.NamedSharding
	returned bool

	nextVal, nextArg int // SSA counters, used on top only
}

// Name returns the function's symbol name without '@'.
func (f *Function) Name() string { return f.top.name }

// Module returns the module the function belongs to.
func (f *Function) Module() *Module { return f.m }

// Value is an SSA value: a tensor of a known Shape defined in one Function.
// The zero Value is invalid; ops return it after an error.
type Value struct{ v *value }

type value struct {
	fn    *Function
	shape Shape
	id    int  // SSA number
	arg   bool // printed %argN
	sub   int  // result index for multi-result ops, -1 otherwise
	weak  *weakConst
}

// Valid reports whether v is a real value (not the zero Value returned after an error).
func (v Value) Valid() bool { return v.v != nil }

// Shape returns the value's tensor type. A weak constant (see Function.Constant) reports
// its default type.
func (v Value) Shape() Shape {
	if v.v == nil {
		return Shape{}
	}
	return v.v.shape
}

// DType is shorthand for v.Shape().DType().
func (v Value) DType() DType { return v.Shape().DType() }

// String returns the value's SSA name in creation order, e.g. "%arg0" or "%3" ("<invalid>"
// for the zero Value); errors use it. The printed module renumbers values in text order.
func (v Value) String() string {
	if v.v == nil {
		return "<invalid>"
	}
	return v.v.name()
}

func (v *value) name() string {
	if v.weak != nil {
		return "<constant " + v.weak.text() + ">"
	}
	var b []byte
	if v.arg {
		b = append(b, "%arg"...)
	} else {
		b = append(b, '%')
	}
	b = strconv.AppendInt(b, int64(v.id), 10)
	if v.sub >= 0 {
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(v.sub), 10)
	}
	return string(b)
}

// op is one operation in a function body.
type op struct {
	name     string // full op name, e.g. "stablehlo.add"
	operands []*value
	results  []*value
	props    string // generic-form properties, printed as <{...}>
	attrs    string // discardable attributes, printed as {...}
	regions  []*Function
	print    func(p *printer, o *op) // custom form; nil prints the generic form
	data     any                     // per-op data for custom printers
}

// failed reports whether the module already has an error.
func (f *Function) failed() bool { return f.m.err != nil }

// fail records err for op (operand index i, -1 for none) unless an error is already recorded.
func (f *Function) fail(opName string, i int, v *value, err error) {
	if f.m.err != nil {
		return
	}
	e := &OpError{Func: f.top.name, Op: opName, Operand: i, Err: err}
	if v != nil {
		e.Value = v.name()
	}
	f.m.err = e
}

func (f *Function) failf(opName string, i int, v *value, sentinel error, format string, args ...any) {
	f.fail(opName, i, v, fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...))
}

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
		if v.v.fn != f {
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

// emit appends an op with one result of shape s.
func (f *Function) emit(name string, operands []*value, s Shape, props string) Value {
	if err := s.valid(); err != nil {
		f.fail(strings.TrimPrefix(name, "stablehlo."), -1, nil, err)
		return Value{}
	}
	r := f.newValue(s)
	f.ops = append(f.ops, &op{name: name, operands: operands, results: []*value{r}, props: props})
	return Value{r}
}

// emitMulti appends an op with several results, numbered %N#0, %N#1, ...
func (f *Function) emitMulti(o *op, shapes []Shape) []Value {
	out := make([]Value, len(shapes))
	for _, s := range shapes {
		if err := s.valid(); err != nil {
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
	return out
}

// Arg adds an argument of the given shape to a top-level function and returns it.
// In @main, an optional sharding (at most one) annotates the argument: `sdy.sharding`
// with Shardy, `mhlo.sharding` with GSPMD. The sharding must fit the shape (rank and
// divisibility, as for jax.jit in_shardings).
func (f *Function) Arg(s Shape, sharding ...mesh.NamedSharding) Value {
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
	if err := s.valid(); err != nil {
		f.fail(opName, idx, nil, err)
		return Value{}
	}
	if len(sharding) > 1 {
		f.failf(opName, idx, nil, ErrSharding, "at most one sharding per argument, got %d", len(sharding))
		return Value{}
	}
	v := f.newArg(s)
	attr := ""
	var sh *mesh.NamedSharding
	if len(sharding) == 1 {
		a, err := f.m.entryShardingAttr(sharding[0], s)
		if err != nil {
			f.fail(opName, idx, v, err)
			return Value{}
		}
		s := sharding[0]
		attr, sh = a, &s
	}
	f.args = append(f.args, v)
	f.argAttrs = append(f.argAttrs, attr)
	f.argSh = append(f.argSh, sh)
	return Value{v}
}

// Args returns the function's arguments (region arguments for a region body).
func (f *Function) Args() []Value {
	out := make([]Value, len(f.args))
	for i, a := range f.args {
		out[i] = Value{a}
	}
	return out
}

// Return ends a top-level function with the given results. Call it exactly once.
// Use ShardResults afterwards to annotate @main's results.
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
	f.resAttrs = make([]string, len(vals))
	f.resSh = make([]*mesh.NamedSharding, len(vals))
	f.returned = true
}

// ShardResults annotates the results of a returned @main with one sharding each
// (`sdy.sharding` or `mhlo.sharding`). The shardings must fit the result shapes.
//
// In a module with a mesh, Build annotates what is left: arguments without a sharding
// are replicated, and (with Shardy) results without one get an open sharding, `{?}` in
// every dimension, so XLA chooses it (Program.ResultSharding then reports none).
func (f *Function) ShardResults(shardings ...mesh.NamedSharding) {
	const opName = "func.func result"
	if f.failed() {
		return
	}
	if !f.returned {
		f.failf(opName, -1, nil, ErrFunction, "ShardResults before Return")
		return
	}
	if len(shardings) != len(f.results) {
		f.failf(opName, -1, nil, ErrSharding, "%d shardings for %d results", len(shardings), len(f.results))
		return
	}
	for i, s := range shardings {
		a, err := f.m.entryShardingAttr(s, f.results[i].shape)
		if err != nil {
			f.fail(opName, i, f.results[i], err)
			return
		}
		f.resAttrs[i] = a
		f.resSh[i] = &s
	}
}

// Call calls the private function g with args and returns its results.
// g must have returned already (its result types are then known). On error the result
// holds one zero Value per result of g.
func (f *Function) Call(g *Function, args ...Value) []Value {
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
	o := &op{name: "func.call", operands: vals, print: printCall, data: g.name}
	return f.emitMulti(o, shapes)
}

// Program is a built module: its MLIR text and what a compiler needs to know about it.
// It is immutable and safe for concurrent use.
type Program struct {
	text          string
	partitioner   Partitioner
	numPartitions int
	assignment    []int
	args, results []Shape
	argSh, resSh  []*mesh.NamedSharding
}

// Text returns the MLIR module text.
func (p *Program) Text() string { return p.text }

// String returns the MLIR module text.
func (p *Program) String() string { return p.text }

// Partitioner returns the partitioner the text is written for; compile with the same one.
func (p *Program) Partitioner() Partitioner { return p.partitioner }

// NumPartitions returns mhlo.num_partitions: the device count of the module's mesh (1 without one).
func (p *Program) NumPartitions() int { return p.numPartitions }

// DeviceAssignment returns the device ids, in mesh order, of the first concrete mesh the
// module's shardings used, or nil when only abstract meshes were used (then any device
// list of NumPartitions devices in mesh order fits). Compile with it.
func (p *Program) DeviceAssignment() []int { return slices.Clone(p.assignment) }

// ArgShapes returns @main's argument types.
func (p *Program) ArgShapes() []Shape { return slices.Clone(p.args) }

// ResultShapes returns @main's result types.
func (p *Program) ResultShapes() []Shape { return slices.Clone(p.results) }

// ArgSharding returns the sharding of @main's argument i, if one was given.
func (p *Program) ArgSharding(i int) (mesh.NamedSharding, bool) { return shardingAt(p.argSh, i) }

// ResultSharding returns the sharding of @main's result i, if one was given.
func (p *Program) ResultSharding(i int) (mesh.NamedSharding, bool) { return shardingAt(p.resSh, i) }

func shardingAt(s []*mesh.NamedSharding, i int) (mesh.NamedSharding, bool) {
	if i < 0 || i >= len(s) || s[i] == nil {
		return mesh.NamedSharding{}, false
	}
	return *s[i], true
}

// Build checks the module and prints it. It returns the first error recorded while
// building (an *OpError), or an error if @main is missing or a function never returned.
func (m *Module) Build() (*Program, error) {
	if m.err != nil {
		return nil, m.err
	}
	if m.main == nil {
		m.err = &OpError{Func: "main", Op: "func.func", Operand: -1, Err: fmt.Errorf("%w: module has no @main", ErrFunction)}
		return nil, m.err
	}
	for _, f := range m.funcs {
		if !f.returned {
			m.err = &OpError{Func: f.name, Op: "func.func", Operand: -1, Err: fmt.Errorf("%w: @%s has no return", ErrFunction, f.name)}
			return nil, m.err
		}
	}
	if err := m.annotateEntry(); err != nil {
		m.err = err
		return nil, err
	}
	p := &Program{
		partitioner:   m.cfg.partitioner,
		numPartitions: m.numPartitions(),
		assignment:    slices.Clone(m.assignment),
		argSh:         slices.Clone(m.main.argSh),
		resSh:         slices.Clone(m.main.resSh),
	}
	for _, a := range m.main.args {
		p.args = append(p.args, a.shape)
	}
	for _, r := range m.main.results {
		p.results = append(p.results, r.shape)
	}
	p.text = m.print()
	return p, nil
}

// annotateEntry gives every unannotated @main argument a replicated sharding and, with
// Shardy, every unannotated result an open one (`{?}` per dimension: XLA chooses), so
// that propagation never picks an entry sharding the caller did not ask for. Modules
// without a mesh are left alone.
func (m *Module) annotateEntry() error {
	var sym *meshSym
	for _, s := range m.meshes {
		if !s.maximal {
			sym = s
			break
		}
	}
	if sym == nil {
		return nil
	}
	f := m.main
	for i, a := range f.args {
		if f.argSh[i] != nil {
			continue
		}
		s, err := mesh.NewAbstractSharding(sym.abs, mesh.P())
		if err != nil {
			return &OpError{Func: "main", Op: "func.func argument", Operand: i, Err: fmt.Errorf("%w: %w", ErrSharding, err)}
		}
		attr, err := m.entryShardingAttr(s, a.shape)
		if err != nil {
			return &OpError{Func: "main", Op: "func.func argument", Operand: i, Err: err}
		}
		f.argAttrs[i], f.argSh[i] = attr, &s
	}
	if m.cfg.partitioner != Shardy {
		return nil
	}
	for i, r := range f.results {
		if f.resAttrs[i] != "" {
			continue
		}
		var b strings.Builder
		b.WriteString("sdy.sharding = #sdy.sharding<@")
		b.WriteString(sym.name)
		b.WriteString(", [")
		for d := range r.shape.Rank() {
			if d > 0 {
				b.WriteString(", ")
			}
			b.WriteString("{?}")
		}
		b.WriteString("]>")
		f.resAttrs[i] = b.String()
	}
	return nil
}

func (m *Module) numPartitions() int {
	for _, s := range m.meshes {
		if !s.maximal {
			return s.abs.Size()
		}
	}
	n := 1
	for _, s := range m.meshes {
		n = max(n, s.device+1)
	}
	return n
}
