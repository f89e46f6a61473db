package lower

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/shardy"
	"github.com/xlamesh/xlamesh/stablehlo"
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
	ctxMesh     *mesh.Abstract // WithMesh
}

// WithPartitioner selects the partitioner the module is written for (default Shardy).
func WithPartitioner(p Partitioner) Option { return func(c *config) { c.partitioner = p } }

// WithMultipleMeshes allows shardings on meshes of different shapes in one module; each
// distinct mesh becomes its own `sdy.mesh` symbol. Without it, a second mesh shape is an
// error wrapping ErrMeshMismatch (Shardy's and XLA's safest rule: one mesh per module).
func WithMultipleMeshes() Option { return func(c *config) { c.multiMesh = true } }

// Module builds one StableHLO module with shardings: a stablehlo.Module (the ops, functions
// and printing) plus the meshes and shardings lower adds to it. It has a public @main and
// any private helper functions.
//
// Ops are added through *Function methods. The first error (a shape mismatch, an unknown
// axis, a value used in the wrong function, ...) sticks: every later op is a no-op that
// returns the zero Value, and Build returns that error. So code reads like math and checks
// once:
//
//	m := lower.NewModule("jit_f")
//	f := m.Main()
//	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 2), sharding)
//	f.Return(f.Mul(x, f.Constant(2.0)))
//	prog, err := m.Build()
//
// A Module is not safe for concurrent use while it is being built; the Program that
// Build returns is immutable and safe to share.
type Module struct {
	hlo        *stablehlo.Module
	cfg        config
	funcs      map[*stablehlo.Function]*Function
	meshes     []*meshSym
	assignment []int                      // device ids of the first concrete mesh seen (module device assignment)
	typing     *typing                    // sharding in types; nil when the module's mesh has no Explicit axis
	placed     bool                       // a value was placed in a memory (PutInMemory, DevicePut)
	memory     map[stablehlo.Value]string // memory kinds known: placed values, @main's arguments
	hostCalls  int                        // ComputeOnHost functions made so far
	donated    []int                      // @main's donated arguments (Function.Donate)
}

// moduleKey is the stablehlo.Module context key under which a lower Module finds itself.
type moduleKey struct{}

// NewModule starts a module named name (printed `module @name`, or `module @"my-fn"` when
// the name is not an MLIR identifier; empty prints no name). A name mlir.CheckName rejects
// (a backslash, a control byte or a byte outside ASCII) is recorded as the module's error,
// wrapping mlir.ErrName.
func NewModule(name string, opts ...Option) *Module {
	m := &Module{cfg: config{partitioner: Shardy}, funcs: make(map[*stablehlo.Function]*Function)}
	for _, o := range opts {
		o(&m.cfg)
	}
	m.hlo = stablehlo.NewModule(name, stablehlo.ErrorPrefix("lower"))
	m.hlo.SetContext(moduleKey{}, m)
	registerRules(m.hlo)
	if a := m.cfg.ctxMesh; a != nil && hasExplicit(*a) {
		m.startTyping(*a)
	}
	return m
}

// StableHLO returns the underlying builder module.
func (m *Module) StableHLO() *stablehlo.Module { return m.hlo }

// Err returns the first error recorded so far, or nil.
func (m *Module) Err() error { return m.hlo.Err() }

// Partitioner returns the partitioner the module is written for.
func (m *Module) Partitioner() Partitioner { return m.cfg.partitioner }

// Main returns the public entry function @main, creating it on first use.
func (m *Module) Main() *Function { return m.wrap(m.hlo.Main()) }

// Func returns a new private function @name, to be called from others with the builder's
// Call: f.Call(g.Function, args...).
// A name that is already used (or "main"), or that mlir.CheckName rejects, records an error
// wrapping ErrFunction.
func (m *Module) Func(name string) *Function { return m.wrap(m.hlo.Func(name)) }

// wrap returns the one *Function of g.
func (m *Module) wrap(g *stablehlo.Function) *Function {
	if f, ok := m.funcs[g]; ok {
		return f
	}
	f := &Function{Function: g, m: m}
	m.funcs[g] = f
	return f
}

// FunctionOf returns the lower Function of g, a function or region body of a lower Module's
// builder, so that code handed a *stablehlo.Function (a region body that a stablehlo op
// builds, say) can use lower's methods on it: shardings, ShardMap, and inside a shard_map
// body the axis-named collectives. It returns nil when g is nil or belongs to a module that
// NewModule did not create.
func FunctionOf(g *stablehlo.Function) *Function {
	if g == nil {
		return nil
	}
	m := ModuleOf(g.Module())
	if m == nil {
		return nil
	}
	return m.wrap(g)
}

// ModuleOf returns the lower Module whose builder is h (the reverse of Module.StableHLO), so
// that code holding a Function reaches its Module: ModuleOf(f.Module()). It returns nil when
// h is nil or NewModule did not create it.
func ModuleOf(h *stablehlo.Module) *Module {
	if h == nil {
		return nil
	}
	m, _ := h.Context(moduleKey{}).(*Module)
	return m
}

// Function is one function (or one region body, such as a shard_map body) being built: a
// *stablehlo.Function, whose methods add ops (f.Mul, f.Reduce, ...), with lower's sharding
// methods. Its methods add ops and return their results. A Value may only be used in the
// function that defined it; see Module for the error rules.
//
// lower's methods never shadow the builder's: f.Arg, f.Call, f.Module and the collectives
// named after StableHLO ops (f.AllReduce, ..., which take replica groups of partition ids)
// are the builder's own, while lower's take names of their own: ShardedArg for an argument
// with a sharding, and the collectives over mesh axes Psum, Pmax, Pmin, PsumScatter,
// Ppermute, AllReduceOver, AllGatherOver, ReduceScatterOver and AllToAllOver. ModuleOf gives
// the lower Module of f.Module().
type Function struct {
	*stablehlo.Function
	m            *Module
	argSh, resSh []*mesh.NamedSharding // per argument/result of a top-level function
}

// fill grows argSh and resSh to the function's argument and result counts.
func (f *Function) fill() {
	for len(f.argSh) < len(f.Args()) {
		f.argSh = append(f.argSh, nil)
	}
	for len(f.resSh) < len(f.Results()) {
		f.resSh = append(f.resSh, nil)
	}
}

// ShardedArg adds an argument of shape s to a top-level function and returns it, with
// sharding as its in_sharding (jax.jit's in_shardings): in @main the sharding annotates the
// argument (`sdy.sharding` with Shardy, `mhlo.sharding` with GSPMD) and must fit the shape
// (rank and divisibility). A sharding over a mesh with an Explicit axis turns sharding in types on
// (see Function.TypeOf) and gives the argument its type; a host memory kind places it.
//
// An argument without a sharding is the builder's: f.Arg(s). Build replicates it, and under
// sharding in types its type is replicated, as every value the op rules did not type is.
func (f *Function) ShardedArg(s Shape, sharding mesh.NamedSharding) Value {
	const opName = "func.func argument"
	v := f.Arg(s)
	if !v.Valid() {
		return Value{}
	}
	f.fill()
	idx := len(f.argSh) - 1
	a, err := f.m.entryShardingAttr(sharding, s)
	if err != nil {
		f.Fail(opName, idx, v, err)
		return Value{}
	}
	f.SetArgAttr(idx, a.Name, a.Value)
	f.argSh[idx] = &sharding
	if isHostKind(&sharding) {
		if f.m.memory == nil {
			f.m.memory = make(map[stablehlo.Value]string)
		}
		f.m.memory[v] = sharding.MemoryKind()
	}
	if err := f.argType(v, sharding); err != nil {
		f.Fail(opName, idx, v, err)
		return Value{}
	}
	return v
}

// ShardResults annotates the results of a returned @main with one sharding each
// (`sdy.sharding` or `mhlo.sharding`). The shardings must fit the result shapes.
//
// In a module with a mesh, Build annotates what is left: arguments without a sharding
// are replicated, and (with Shardy) results without one get an open sharding, `{?}` in
// every dimension, so XLA chooses it (Program.ResultSharding then reports none).
func (f *Function) ShardResults(shardings ...mesh.NamedSharding) {
	const opName = "func.func result"
	if f.Failed() {
		return
	}
	if !f.Returned() {
		f.Failf(opName, -1, Value{}, ErrFunction, "ShardResults before Return")
		return
	}
	results := f.Results()
	if len(shardings) != len(results) {
		f.Failf(opName, -1, Value{}, ErrSharding, "%d shardings for %d results", len(shardings), len(results))
		return
	}
	f.fill()
	for i, s := range shardings {
		a, err := f.m.entryShardingAttr(s, results[i].Shape())
		if err != nil {
			f.Fail(opName, i, results[i], err)
			return
		}
		f.SetResultAttr(i, a.Name, a.Value)
		f.resSh[i] = &s
	}
}

// Program is a built module: its MLIR text and what a compiler needs to know about it.
// It is immutable and safe for concurrent use.
type Program struct {
	text             string
	partitioner      Partitioner
	numPartitions    int
	partitionsUnsaid bool // the text does not say mhlo.num_partitions (NewProgram of a module written elsewhere)
	assignment       []int
	args, results    []Shape
	argSh, resSh     []*mesh.NamedSharding
}

// Text returns the MLIR module text.
func (p *Program) Text() string { return p.text }

// String returns the MLIR module text.
func (p *Program) String() string { return p.text }

// Partitioner returns the partitioner the text is written for; compile with the same one.
func (p *Program) Partitioner() Partitioner { return p.partitioner }

// NumPartitions returns mhlo.num_partitions: the device count of the module's mesh (1 without one).
func (p *Program) NumPartitions() int { return p.numPartitions }

// SaysNumPartitions reports whether the module's text says how many partitions it has
// (mhlo.num_partitions). Modules built here always do; a module written elsewhere whose text
// does not (see NewProgram) counts as written for one device.
func (p *Program) SaysNumPartitions() bool { return !p.partitionsUnsaid }

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
	if err := m.hlo.Check(); err != nil {
		return nil, err
	}
	main := m.Main()
	main.fill()
	if err := m.annotateEntry(main); err != nil {
		m.hlo.Fail(err)
		return nil, err
	}
	if err := m.annotateMemory(main); err != nil {
		m.hlo.Fail(err)
		return nil, err
	}
	if err := m.annotateDonation(main); err != nil {
		m.hlo.Fail(err)
		return nil, err
	}
	m.hlo.SetAttr("mhlo.num_partitions", strconv.Itoa(m.numPartitions())+" : i32")
	var preamble []string
	if m.cfg.partitioner == Shardy {
		for _, s := range m.meshes {
			preamble = append(preamble, s.op)
		}
	}
	m.hlo.SetPreamble(preamble...)
	text, err := m.hlo.Build()
	if err != nil {
		return nil, err
	}
	p := &Program{
		text:          text,
		partitioner:   m.cfg.partitioner,
		numPartitions: m.numPartitions(),
		assignment:    slices.Clone(m.assignment),
		argSh:         slices.Clone(main.argSh),
		resSh:         slices.Clone(main.resSh),
	}
	for _, a := range main.Args() {
		p.args = append(p.args, a.Shape())
	}
	for _, r := range main.Results() {
		p.results = append(p.results, r.Shape())
	}
	return p, nil
}

// annotateEntry gives every unannotated @main argument a replicated sharding and, with
// Shardy, every unannotated result an open one (`{?}` per dimension: XLA chooses), so
// that propagation never picks an entry sharding the caller did not ask for. Modules
// without a mesh are left alone.
func (m *Module) annotateEntry(f *Function) error {
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
	for i, a := range f.Args() {
		if f.argSh[i] != nil {
			continue
		}
		s, err := mesh.NewAbstractSharding(sym.abs, mesh.P())
		if err != nil {
			return &OpError{Pkg: "lower", Func: "main", Op: "func.func argument", Operand: i, Err: fmt.Errorf("%w: %w", ErrSharding, err)}
		}
		attr, err := m.entryShardingAttr(s, a.Shape())
		if err != nil {
			return &OpError{Pkg: "lower", Func: "main", Op: "func.func argument", Operand: i, Err: err}
		}
		f.SetArgAttr(i, attr.Name, attr.Value)
		f.argSh[i] = &s
	}
	if m.cfg.partitioner != Shardy {
		return nil
	}
	for i, r := range f.Results() {
		if f.resSh[i] != nil || len(f.ResultAttrs(i)) > 0 {
			continue
		}
		if t, ok := m.typeOf(r); ok && allExplicit(t.abs) && len(t.unreduced) == 0 {
			// Sharding in types on a mesh of Explicit axes: the result's type is its sharding,
			// as jax.jit writes it.
			s, err := m.typing.sharding(t)
			if err == nil {
				var attr stablehlo.Attr
				if attr, err = m.entryShardingAttr(s, r.Shape()); err == nil {
					f.SetResultAttr(i, attr.Name, attr.Value)
					f.resSh[i] = &s
					continue
				}
			}
			return &OpError{Pkg: "lower", Func: "main", Op: "func.func result", Operand: i, Err: err}
		}
		open := make([]shardy.DimSharding, r.Shape().Rank())
		for d := range open {
			open[d] = shardy.Open()
		}
		f.SetResultAttr(i, "sdy.sharding", shardy.NewTensorSharding(sym.name, open...).String())
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
