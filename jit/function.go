package jit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// Body builds a function's computation: args are @main's arguments, typed after the arrays of
// the call, and the returned values are its results. Errors stick in the module (see package
// lower) and surface from Call.
type Body func(f *lower.Function, args []lower.Value) []lower.Value

// Function is a jitted function, like the result of jax.jit(f, in_shardings, out_shardings):
// Call lowers its Body for the arguments' mesh and shardings, compiles it for the mesh's devices
// and runs it. Lowerings are cached on the abstract mesh, argument types and specs; executables on
// that plus the mesh's device assignment, so the same function on two meshes of one shape lowers
// once and compiles twice. Safe for concurrent use.
type Function struct {
	name string
	body Body
	opt  options

	lowerings cache[lowering]
	compiled  cache[compiled]
}

type options struct {
	in          []mesh.PartitionSpec
	out         []mesh.PartitionSpec
	donate      []int
	reshard     bool
	partitioner lower.Partitioner
}

// Option configures New.
type Option func(*options)

// InSpecs declares the partition spec of each argument (JAX's in_shardings over the arguments'
// mesh). A call whose argument is laid out differently fails with ErrArguments, unless Reshard
// was given. Without InSpecs each argument's own spec is used.
func InSpecs(specs ...mesh.PartitionSpec) Option {
	return func(o *options) { o.in = slices.Clone(specs) }
}

// OutSpecs declares the partition spec of each result (JAX's out_shardings). A result without a
// spec (fewer specs than results), or with mesh.P(mesh.Unconstrained, ...), is laid out as XLA
// chooses; the returned Array then carries the sharding XLA chose.
func OutSpecs(specs ...mesh.PartitionSpec) Option {
	return func(o *options) { o.out = slices.Clone(specs) }
}

// Donate lets the computation reuse the memory of the arguments at these positions (JAX's
// donate_argnums). A donated Array is closed by Call.
func Donate(argIndices ...int) Option {
	return func(o *options) { o.donate = append(o.donate, argIndices...) }
}

// Reshard makes Call move arguments whose layout differs from InSpecs to the declared layout
// (with a jitted identity, on the devices) instead of failing.
func Reshard() Option { return func(o *options) { o.reshard = true } }

// WithPartitioner selects Shardy (the default) or GSPMD lowering and partitioning.
func WithPartitioner(p lower.Partitioner) Option { return func(o *options) { o.partitioner = p } }

// New returns a jitted function named name (the module is "jit_<name>").
func New(name string, body Body, opts ...Option) *Function {
	f := &Function{name: name, body: body}
	f.opt.partitioner = lower.Shardy
	for _, o := range opts {
		o(&f.opt)
	}
	return f
}

// CacheStats counts cache hits and misses of a Function.
type CacheStats struct {
	LoweringHits, LoweringMisses int64
	CompileHits, CompileMisses   int64
}

// Stats returns the function's cache statistics.
func (f *Function) Stats() CacheStats {
	return CacheStats{
		LoweringHits: f.lowerings.hits.Load(), LoweringMisses: f.lowerings.misses.Load(),
		CompileHits: f.compiled.hits.Load(), CompileMisses: f.compiled.misses.Load(),
	}
}

// ArgType is what lowering needs to know about one argument: its type and partition spec.
type ArgType struct {
	Shape lower.Shape
	Spec  mesh.PartitionSpec
}

// lowering is a cached lowering: the program and its result specs (unspecified ones
// unconstrained, resolved after compilation).
type lowering struct {
	prog *lower.Program
	outs []mesh.PartitionSpec
}

// compiled is a cached executable and its results' shardings on the concrete mesh.
type compiled struct {
	exe  *pjrt.Executable
	outs []mesh.NamedSharding
}

// Lower lowers the function for an abstract mesh and argument types, like jax.jit(f).lower(...):
// the result's Text is the module Call compiles. It is cached like Call's lowerings.
func (f *Function) Lower(m mesh.Abstract, args ...ArgType) (*lower.Program, error) {
	l, err := f.lowering(m, args)
	return l.prog, err
}

func (f *Function) loweringKey(m mesh.Abstract, args []ArgType) string {
	var b strings.Builder
	b.WriteString(m.Key())
	for _, a := range args {
		fmt.Fprintf(&b, "|%s %s", a.Shape, a.Spec)
	}
	return b.String()
}

func (f *Function) lowering(m mesh.Abstract, args []ArgType) (lowering, error) {
	return f.lowerings.get(f.loweringKey(m, args), func() (lowering, error) {
		prog, outs, err := f.lowerNow(m, args)
		return lowering{prog, outs}, err
	})
}

// lowerNow builds the module: arguments with their abstract shardings, the body, and the
// results' shardings (declared, or unconstrained for XLA to choose).
func (f *Function) lowerNow(m mesh.Abstract, args []ArgType) (prog *lower.Program, outs []mesh.PartitionSpec, err error) {
	defer func() {
		// A Body is user code; a panic in it must not take the caller's program down.
		if r := recover(); r != nil {
			err = fmt.Errorf("jit: %s: %w: body panicked: %v", f.name, ErrLowering, r)
		}
	}()
	mod := lower.NewModule("jit_"+f.name, lower.WithPartitioner(f.opt.partitioner))
	main := mod.Main()
	vals := make([]lower.Value, len(args))
	for i, a := range args {
		s, err := mesh.NewAbstractSharding(m, a.Spec)
		if err != nil {
			return nil, nil, fmt.Errorf("jit: %s: argument %d: %w", f.name, i, err)
		}
		vals[i] = main.Arg(a.Shape, s)
	}
	results := f.body(main, vals)
	main.Return(results...)
	if err := mod.Err(); err != nil {
		return nil, nil, fmt.Errorf("jit: %s: %w: %w", f.name, ErrLowering, err)
	}
	if len(f.opt.out) > len(results) {
		return nil, nil, fmt.Errorf("jit: %s: %w: %d OutSpecs for %d results", f.name, ErrArguments, len(f.opt.out), len(results))
	}
	outs = make([]mesh.PartitionSpec, len(results))
	shardings := make([]mesh.NamedSharding, len(results))
	for i, r := range results {
		spec := unconstrained(r.Shape().Rank())
		if i < len(f.opt.out) {
			spec = f.opt.out[i]
		}
		s, err := mesh.NewAbstractSharding(m, spec)
		if err != nil {
			return nil, nil, fmt.Errorf("jit: %s: result %d: %w", f.name, i, err)
		}
		outs[i], shardings[i] = spec, s
	}
	// With no declared result sharding at all the results carry no sdy.sharding, which leaves
	// them open to propagation just like JAX's unspecified out_shardings.
	if len(f.opt.out) > 0 {
		main.ShardResults(shardings...)
	}
	prog, err = mod.Build()
	if err != nil {
		return nil, nil, fmt.Errorf("jit: %s: %w: %w", f.name, ErrLowering, err)
	}
	return prog, outs, nil
}

// unconstrained returns P(Unconstrained, ...) of the given rank: a result XLA lays out.
func unconstrained(rank int) mesh.PartitionSpec {
	dims := make([]mesh.Dim, rank)
	for i := range dims {
		dims[i] = mesh.Unconstrained
	}
	return mesh.SpecOf(dims...)
}

// isUnconstrained reports whether XLA chooses the layout of a result declared with spec: some
// dimension is Unconstrained. The declared dimensions constrain that choice; the Array takes the
// layout XLA made (mesh's shard geometry would read an Unconstrained dimension as replicated).
func isUnconstrained(spec mesh.PartitionSpec, rank int) bool {
	for i := range rank {
		if spec.Dim(i).IsUnconstrained() {
			return true
		}
	}
	return false
}

// executable compiles (or finds) the lowering l for the concrete mesh m.
func (f *Function) executable(c *pjrt.Client, m mesh.Mesh, lkey string, l lowering) (compiled, error) {
	key := fmt.Sprintf("%s|devices=%v", lkey, m.DeviceIDs())
	return f.compiled.get(key, func() (compiled, error) {
		part := pjrt.Shardy
		if l.prog.Partitioner() == lower.GSPMD {
			part = pjrt.GSPMD
		}
		exe, err := c.Compile(l.prog.Text(), pjrt.CompileOptions{DeviceAssignment: m.DeviceIDs(), Partitioner: part})
		if err != nil {
			return compiled{}, fmt.Errorf("jit: %s: %w", f.name, err)
		}
		outs, err := f.resultShardings(exe, m, l)
		if err != nil {
			_ = exe.Close()
			return compiled{}, err
		}
		return compiled{exe, outs}, nil
	})
}

// resultShardings returns the concrete shardings of the results: the declared ones, and for
// unspecified ones the layout XLA chose.
func (f *Function) resultShardings(exe *pjrt.Executable, m mesh.Mesh, le lowering) ([]mesh.NamedSharding, error) {
	shapes := le.prog.ResultShapes()
	chosen := exe.OutputShapes()
	out := make([]mesh.NamedSharding, len(le.outs))
	for i, spec := range le.outs {
		if isUnconstrained(spec, shapes[i].Rank()) {
			var err error
			spec, err = chosenSpec(exe, m, i, shapes[i].Dims(), chosen[i].Dims)
			if err != nil {
				return nil, fmt.Errorf("jit: %s: result %d: %w", f.name, i, err)
			}
		}
		s, err := mesh.NewNamedSharding(m, spec)
		if err != nil {
			return nil, fmt.Errorf("jit: %s: result %d: %w", f.name, i, err)
		}
		out[i] = s
	}
	return out, nil
}

// Call runs the function on arrays that all live on one mesh and returns its results as Arrays
// with their shardings. Arguments must match InSpecs (see Reshard) and be open; donated
// arguments (Donate) are closed afterwards.
func (f *Function) Call(c *pjrt.Client, args ...*Array) ([]*Array, error) {
	if c == nil {
		return nil, fmt.Errorf("jit: %s: %w: nil client", f.name, ErrDevice)
	}
	if len(f.opt.in) > 0 && len(f.opt.in) != len(args) {
		return nil, fmt.Errorf("jit: %s: %w: %d arguments for %d InSpecs", f.name, ErrArguments, len(args), len(f.opt.in))
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("jit: %s: %w: no arguments: the mesh comes from the arguments' shardings", f.name, ErrArguments)
	}
	for _, d := range f.opt.donate {
		if d < 0 || d >= len(args) {
			return nil, fmt.Errorf("jit: %s: %w: donated argument %d out of range for %d arguments", f.name, ErrArguments, d, len(args))
		}
	}
	for i, a := range args {
		if a == nil {
			return nil, fmt.Errorf("jit: %s: %w: argument %d is nil", f.name, ErrArguments, i)
		}
	}
	m, err := args[0].sharding.Mesh()
	if err != nil {
		return nil, fmt.Errorf("jit: %s: argument 0: %w", f.name, err)
	}
	for i, a := range args[1:] {
		if am, err := a.sharding.Mesh(); err != nil || !am.Equal(m) {
			return nil, fmt.Errorf("jit: %s: %w: argument %d is on %#v, argument 0 on %#v; all arguments must share one mesh",
				f.name, ErrArguments, i+1, am, m)
		}
	}
	// Reshard first, so that every array below is laid out as compiled.
	args, resharded, err := f.reshardArgs(c, m, args)
	defer func() {
		for _, a := range resharded {
			_ = a.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	types := make([]ArgType, len(args))
	for i, a := range args {
		types[i] = ArgType{Shape: lower.NewShape(a.dtype, a.shape...), Spec: a.sharding.Spec()}
	}
	lkey := f.loweringKey(m.Abstract(), types)
	le, err := f.lowering(m.Abstract(), types)
	if err != nil {
		return nil, err
	}
	ce, err := f.executable(c, m, lkey, le)
	if err != nil {
		return nil, err
	}
	return f.run(ce, le, args)
}

// reshardArgs checks arguments against InSpecs and, with Reshard, moves mismatched ones. It returns
// the arrays to use and the temporary arrays it made.
func (f *Function) reshardArgs(c *pjrt.Client, m mesh.Mesh, args []*Array) ([]*Array, []*Array, error) {
	if len(f.opt.in) == 0 {
		return args, nil, nil
	}
	out := slices.Clone(args)
	var made []*Array
	for i, a := range args {
		if a.sharding.Spec().Equal(f.opt.in[i]) {
			continue // the mesh was checked by Call
		}
		want, err := mesh.NewNamedSharding(m, f.opt.in[i])
		if err != nil {
			return nil, made, fmt.Errorf("jit: %s: InSpecs[%d]: %w", f.name, i, err)
		}
		if a.sharding.Equal(want) {
			continue
		}
		if !f.opt.reshard {
			return nil, made, fmt.Errorf("jit: %s: %w: argument %d: the sharding passed to jit does not match the sharding it was compiled for: got %s, want %s (use jit.Reshard to move it)",
				f.name, ErrArguments, i, a.sharding.Spec(), want.Spec())
		}
		if slices.Contains(f.opt.donate, i) {
			return nil, made, fmt.Errorf("jit: %s: %w: argument %d is donated and must already have sharding %s", f.name, ErrArguments, i, want)
		}
		r, err := ReshardArray(c, a, want)
		if err != nil {
			return nil, made, fmt.Errorf("jit: %s: argument %d: %w", f.name, i, err)
		}
		made = append(made, r)
		out[i] = r
	}
	return out, made, nil
}

// run executes a compiled function on args and wraps the results.
func (f *Function) run(ce compiled, le lowering, args []*Array) ([]*Array, error) {
	devices := ce.exe.Devices()
	// Hold every argument open for the whole execution; donated ones exclusively.
	for i, a := range args {
		if slices.Contains(f.opt.donate, i) {
			if !a.mu.TryLock() {
				return nil, fmt.Errorf("jit: %s: %w: donated argument %d is in use", f.name, ErrArguments, i)
			}
			defer a.mu.Unlock()
		} else if slices.Index(args[:i], a) < 0 {
			a.mu.RLock()
			defer a.mu.RUnlock()
		}
		if a.closed {
			return nil, fmt.Errorf("jit: %s: argument %d: %w", f.name, i, ErrClosed)
		}
		if len(a.shards) != len(devices) {
			return nil, fmt.Errorf("jit: %s: %w: argument %d has %d shards for %d devices", f.name, ErrNotAddressable, i, len(a.shards), len(devices))
		}
	}
	lists := make([][]*pjrt.Buffer, len(devices))
	for d := range devices {
		lists[d] = make([]*pjrt.Buffer, len(args))
		for i, a := range args {
			lists[d][i] = a.shards[d].Data
		}
	}
	var opts []pjrt.ExecuteOption
	if len(f.opt.donate) > 0 {
		opts = append(opts, pjrt.Donate(f.opt.donate...))
	}
	outs, err := ce.exe.Execute(lists, opts...)
	for _, i := range f.opt.donate {
		args[i].closed = true // pjrt closed the donated buffers, whether or not it ran
	}
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w", f.name, err)
	}
	shapes := le.prog.ResultShapes()
	results := make([]*Array, len(shapes))
	for r := range shapes {
		global := shapes[r].Dims()
		placed, _, err := placement(ce.exe.Devices()[0].Client(), ce.outs[r], global)
		if err != nil {
			closeBuffers(outs)
			closeArrays(results)
			return nil, fmt.Errorf("jit: %s: result %d: %w", f.name, r, err)
		}
		for d := range placed {
			placed[d].Data = outs[d][r]
			outs[d][r] = nil
		}
		results[r] = newArray(global, shapes[r].DType(), ce.outs[r], placed)
	}
	return results, nil
}

func closeBuffers(lists [][]*pjrt.Buffer) {
	for _, l := range lists {
		for _, b := range l {
			if b != nil {
				_ = b.Close()
			}
		}
	}
}

func closeArrays(as []*Array) {
	for _, a := range as {
		if a != nil {
			_ = a.Close()
		}
	}
}
