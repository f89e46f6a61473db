package jit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/internal/closegate"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// Body builds a function's computation: args are @main's arguments, typed after the arrays of
// the call, and the returned values are its results. Errors stick in the module (see package
// lower) and surface from Call. A runtime error panicking in a Body goes on panicking in the
// caller; any other panic becomes Call's error (see the package doc).
type Body func(f *lower.Function, args []lower.Value) []lower.Value

// Function is a jitted function, like the result of jax.jit(f, in_shardings, out_shardings):
// Call lowers its Body for the arguments' mesh and shardings, compiles it for the mesh's devices
// and runs it. Lowerings are cached on the abstract mesh, argument types and specs; executables on
// that plus the client and the mesh's device assignment, so the same function on two meshes of
// one shape lowers once and compiles twice, and each client gets executables of its own. A call
// with the same argument types and shardings as the one before goes straight to the executable.
//
// The Function owns its executables: Close frees them all, Release those of one client. Safe
// for concurrent use.
type Function struct {
	name string
	body Body
	opt  options

	// gate counts the calls in flight (package internal/closegate): Close closes it without
	// waiting on them, so that a call that never ends blocks neither Close nor other calls.
	gate      closegate.Gate
	lowerings cache[loweringSig, *lowering]
	compiled  cache[compileKey, *compiled]
	last      atomic.Pointer[callPlan] // the plan of the latest call that needed no resharding

	reshardMu sync.Mutex
	reshards  []*Function // identities moving arguments to InSpecs, one per target spec

	hookMu sync.Mutex
	hooks  map[*pjrt.Client]func() // unregisters the Client.OnClose callback that Releases it

	ext *external // the module of FromText, FromBytecode, FromExported; nil for New

	closedMu   sync.Mutex
	closedExes []*pjrt.Executable // the executables Close released, whose executions it counts
}

type options struct {
	in             []mesh.PartitionSpec
	out            []mesh.PartitionSpec
	outMemory      []string
	donate         []int
	reshard        bool
	partitioner    lower.Partitioner
	partitionerSet bool
	mesh           *mesh.Mesh // WithMesh
	partitions     int        // NumPartitions; 0 when not given

	// NewTree's options, and the hook its Functions declare their results' specs by, once
	// the Body has said the result's structure.
	inTree, outTree       []any
	inTreeSet, outTreeSet bool
	donatePaths           []string
	outFor                func() ([]mesh.PartitionSpec, error)
}

// Option configures New.
type Option func(*options)

// InSpecs declares the partition spec of each argument (JAX's in_shardings over the arguments'
// mesh). A call whose argument is laid out differently fails with ErrArguments, unless Reshard
// was given. Without InSpecs each argument's own spec is used. As in JAX, a spec may not hold
// mesh.Unconstrained: Call (and Lower, for its argument types) refuse it with an error wrapping
// mesh.ErrUnconstrained that names the argument and dimension.
func InSpecs(specs ...mesh.PartitionSpec) Option {
	return func(o *options) { o.in = slices.Clone(specs) }
}

// OutSpecs declares the partition spec of each result (JAX's out_shardings). A result without a
// spec (fewer specs than results), or with mesh.P(mesh.Unconstrained, ...), is laid out as XLA
// chooses; the returned Array then carries the sharding XLA chose.
func OutSpecs(specs ...mesh.PartitionSpec) Option {
	return func(o *options) { o.out = slices.Clone(specs) }
}

// OutMemoryKinds declares the memory kind of each result (the memory_kind of JAX's
// out_shardings): mesh.MemoryPinnedHost or mesh.MemoryUnpinnedHost puts a result in host
// memory, "" or mesh.MemoryDevice (and a result past the end of kinds) in the device's. The
// returned Array's sharding carries the kind. As in jax.jit, a program with any argument or
// result outside device memory marks every one with its memory kind (mhlo.memory_kind, and an
// annotate_device_placement custom call on each result); plugins older than PJRT API 0.115
// cannot compile such programs (see pjrt.MemorySpacesMinor).
func OutMemoryKinds(kinds ...string) Option {
	return func(o *options) { o.outMemory = slices.Clone(kinds) }
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
func WithPartitioner(p lower.Partitioner) Option {
	return func(o *options) { o.partitioner, o.partitionerSet = p, true }
}

// WithMesh gives the mesh of calls without arguments, as jax.set_mesh does for a jitted
// function that takes none: the program runs on m's devices, its results are laid out on m
// (by OutSpecs; a result without one is replicated or laid out as XLA chooses). Without it, a
// call without arguments runs on one device, the client's first, on a one-device mesh whose
// axis is named "device" (JAX runs such a call on its default device). A call with arguments
// must have them on m, or it fails with ErrArguments.
func WithMesh(m mesh.Mesh) Option {
	return func(o *options) { o.mesh = &m }
}

// NumPartitions says how many devices a module written elsewhere (FromText, FromBytecode)
// runs on when its text does not say (no mhlo.num_partitions attribute, as in GSPMD modules
// written by hand or by older tools, which then count as written for one device). A module that
// says another number fails the call with ErrArguments. It has no effect on functions built
// with New, whose mesh says it.
func NumPartitions(n int) Option {
	return func(o *options) { o.partitions = n }
}

// New returns a jitted function named name (the module is "jit_<name>").
func New(name string, body Body, opts ...Option) *Function {
	f := &Function{name: name, body: body}
	f.opt.partitioner = lower.Shardy
	for _, o := range opts {
		o(&f.opt)
	}
	return f
}

// CacheStats counts cache hits and misses of a Function. Every call counts one lowering and one
// compile look-up, a hit or a miss.
type CacheStats struct {
	LoweringHits, LoweringMisses int64
	CompileHits, CompileMisses   int64
}

// Stats returns the function's cache statistics (zero for a nil Function).
func (f *Function) Stats() CacheStats {
	if f == nil {
		return CacheStats{}
	}
	return CacheStats{
		LoweringHits: f.lowerings.hits.Load(), LoweringMisses: f.lowerings.misses.Load(),
		CompileHits: f.compiled.hits.Load(), CompileMisses: f.compiled.misses.Load(),
	}
}

// ArgType is what lowering needs to know about one argument: its type, partition spec and
// memory kind.
type ArgType struct {
	Shape lower.Shape
	Spec  mesh.PartitionSpec
	// MemoryKind is the memory the argument lives in (mesh.MemoryPinnedHost, ...); "" or
	// mesh.MemoryDevice for the device's own. Call takes it from the argument's sharding.
	MemoryKind string
}

// memory returns the argument's memory kind, "" for the device's own.
func (a ArgType) memory() string {
	if a.MemoryKind == mesh.MemoryDevice {
		return ""
	}
	return a.MemoryKind
}

// lowering is a cached lowering: the program, its result shapes and specs (unspecified ones
// unconstrained, resolved after compilation), and the hash of its signature. text is what is
// compiled (the program's text, or an external module's bytecode, when prog is nil), with
// partitioner; exported marks an external module run with its own shardings.
type lowering struct {
	prog        *lower.Program
	shapes      []lower.Shape
	outs        []mesh.PartitionSpec
	hash        uint64
	text        string
	partitioner lower.Partitioner
	exported    bool
	args        []lower.Shape // an external module's argument shapes for this lowering (nil for New's)
}

// compiled is a cached executable with what a call needs besides it: the layout of every result
// (its Array's fields and the shards without their buffers) and the execute options.
type compiled struct {
	exe     *pjrt.Executable
	devices int // len(exe.Devices())
	results []resultLayout
	options []pjrt.ExecuteOption
	// For external modules: the arguments the module takes (nil: all), and, run as exported,
	// the layout each argument must have (nil entries: dropped arguments).
	kept       []int
	argLayouts []*mesh.NamedSharding
}

type resultLayout struct {
	shape    []int
	dtype    dtypes.DType
	sharding mesh.NamedSharding
	shards   []Shard // Data nil; Index shared read-only by every result Array
}

// release closes the executable without waiting: a call still executing it keeps it, and
// pjrt destroys it when that call returns.
func (c *compiled) release() { _ = c.exe.CloseContext(noWait) }

// noWait is a context that is already done: a close given it waits for nothing.
var noWait = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (l *lowering) release() {}

// Lower lowers the function for an abstract mesh and argument types, like jax.jit(f).lower(...):
// the result's Text is the module Call compiles. It is cached like Call's lowerings. A Body that
// panics with a runtime error (a nil dereference, an index out of range) panics here too; any
// other panic is returned as an error wrapping ErrLowering, and is not cached.
func (f *Function) Lower(m mesh.Abstract, args ...ArgType) (*lower.Program, error) {
	if f == nil {
		return nil, fmt.Errorf("jit: lower: %w: nil *Function", ErrNil)
	}
	for i, a := range args {
		if err := checkInSpec(f.name, "lower", i, a.Spec); err != nil {
			return nil, err
		}
	}
	l, err := f.lowering(context.Background(), m, args)
	if err != nil {
		return nil, err
	}
	if l.prog == nil {
		return nil, fmt.Errorf("jit: %s: lower: %w: the module runs as exported, from its bytecode; Lower gives text for re-sharded modules", f.name, ErrExternal)
	}
	return l.prog, nil
}

func (f *Function) lowering(ctx context.Context, m mesh.Abstract, args []ArgType) (*lowering, error) {
	if f.opt.treeOptions() {
		return nil, fmt.Errorf("jit: %s: %w: InTree, OutTree and DonatePaths are options of NewTree; New and FromText take InSpecs, OutSpecs and Donate", f.name, ErrArguments)
	}
	for {
		h, e, fresh, err := lookupLowering(&f.lowerings, m, args)
		if err != nil {
			return nil, f.closedError()
		}
		if fresh {
			// Lowering is quick and runs the Body: it runs here, where a panic belongs.
			// The closure reads the entry's own copy of the signature, so that args does not
			// escape and a hit allocates nothing.
			return f.lowerings.computeInline(h, e, func() (*lowering, error) {
				if f.ext != nil {
					l, err := f.lowerExternal(e.sig.abs, e.sig.args)
					if l != nil {
						l.hash = h
					}
					return l, err
				}
				prog, outs, err := f.lowerNow(e.sig.abs, e.sig.args)
				if err != nil {
					return nil, err
				}
				return &lowering{prog: prog, shapes: prog.ResultShapes(), outs: outs, hash: h, text: prog.Text(), partitioner: prog.Partitioner()}, nil
			})
		}
		l, err, retry := e.wait(ctx)
		if !retry {
			return l, wrapContext(f.name, err)
		}
		f.lowerings.hits.Add(-1) // withdrawn: the next look-up counts instead
	}
}

// closedError is the error of a call on a closed Function.
func (f *Function) closedError() error {
	return fmt.Errorf("jit: %s: function %w", f.name, ErrClosed)
}

// lowerNow builds the module: arguments with their abstract shardings, the body, and the
// results' shardings (declared, or unconstrained for XLA to choose).
func (f *Function) lowerNow(m mesh.Abstract, args []ArgType) (prog *lower.Program, outs []mesh.PartitionSpec, err error) {
	defer func() {
		// A Body is user code. A runtime error in it is a bug and goes on up the caller's stack,
		// as text/template's errRecover does; any other panic becomes this call's error, not a
		// cached one, so the next call runs the Body again.
		if r := recover(); r != nil {
			if re, ok := r.(runtime.Error); ok {
				panic(re)
			}
			if e, ok := r.(error); ok {
				err = uncached{fmt.Errorf("jit: %s: %w: body panicked: %w", f.name, ErrLowering, e)}
			} else {
				err = uncached{fmt.Errorf("jit: %s: %w: body panicked: %v", f.name, ErrLowering, r)}
			}
		}
	}()
	if f.body == nil {
		return nil, nil, fmt.Errorf("jit: %s: %w: nil Body", f.name, ErrNil)
	}
	mod := lower.NewModule("jit_"+f.name, lower.WithPartitioner(f.opt.partitioner))
	main := mod.Main()
	vals := make([]lower.Value, len(args))
	for i, a := range args {
		s, err := mesh.NewAbstractSharding(m, a.Spec)
		if err == nil && a.memory() != "" {
			s, err = s.WithMemoryKind(a.memory())
		}
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
	declared := f.opt.out
	if f.opt.outFor != nil {
		if declared, err = f.opt.outFor(); err != nil {
			return nil, nil, fmt.Errorf("jit: %s: %w", f.name, err)
		}
	}
	if len(declared) > len(results) {
		return nil, nil, fmt.Errorf("jit: %s: %w: %d OutSpecs for %d results", f.name, ErrArguments, len(declared), len(results))
	}
	outs = make([]mesh.PartitionSpec, len(results))
	shardings := make([]mesh.NamedSharding, len(results))
	for i, r := range results {
		spec := unconstrained(r.Shape().Rank())
		if t := main.TypeOf(r); t.Typed() && !slices.Contains(m.AxisTypes(), mesh.Auto) {
			spec = t.Spec() // sharding in types on a mesh of Explicit axes: the type is the layout
		}
		if i < len(declared) {
			spec = declared[i]
		}
		s, err := mesh.NewAbstractSharding(m, spec)
		if err == nil && i < len(f.opt.outMemory) && f.opt.outMemory[i] != "" {
			s, err = s.WithMemoryKind(f.opt.outMemory[i])
		}
		if err != nil {
			return nil, nil, fmt.Errorf("jit: %s: result %d: %w", f.name, i, err)
		}
		outs[i], shardings[i] = spec, s
	}
	if len(f.opt.outMemory) > len(results) {
		return nil, nil, fmt.Errorf("jit: %s: %w: %d OutMemoryKinds for %d results", f.name, ErrArguments, len(f.opt.outMemory), len(results))
	}
	// With no declared result sharding at all the results carry no sdy.sharding, which leaves
	// them open to propagation just like JAX's unspecified out_shardings.
	if len(declared) > 0 || len(f.opt.outMemory) > 0 {
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

// executable compiles (or finds) the lowering l for client c and the concrete mesh m. The
// compilation runs on a goroutine of its own and lands in the cache even when ctx ends the wait.
func (f *Function) executable(ctx context.Context, c *pjrt.Client, m mesh.Mesh, l *lowering) (*compiled, error) {
	key := compileKey{client: c, low: l, mesh: m.Key()}
	for {
		h, e, fresh, err := lookupCompiled(&f.compiled, key)
		if err != nil {
			return nil, f.closedError()
		}
		if fresh {
			f.watchClient(c)
			background.Add(1)
			go func() {
				defer background.Done()
				ce, err := f.compile(c, m, l)
				f.compiled.finish(h, e, ce, err)
			}()
		}
		ce, err, retry := e.wait(ctx)
		if !retry {
			return ce, wrapContext(f.name, err)
		}
		f.compiled.hits.Add(-1)
	}
}

// watchClient makes sure closing c frees the executables f compiled for it.
func (f *Function) watchClient(c *pjrt.Client) {
	f.hookMu.Lock()
	defer f.hookMu.Unlock()
	if _, ok := f.hooks[c]; ok {
		return
	}
	if f.hooks == nil {
		f.hooks = map[*pjrt.Client]func(){}
	}
	f.hooks[c] = c.OnClose(func() { _ = f.Release(c) })
}

// unwatch drops the close callbacks of c (all clients when c is nil).
func (f *Function) unwatch(c *pjrt.Client) {
	f.hookMu.Lock()
	defer f.hookMu.Unlock()
	for k, remove := range f.hooks {
		if c == nil || k == c {
			remove()
			delete(f.hooks, k)
		}
	}
}

// compile compiles l for c and m and lays out its results.
func (f *Function) compile(c *pjrt.Client, m mesh.Mesh, l *lowering) (*compiled, error) {
	text := l.text
	if f.ext != nil {
		index, err := f.ext.platformIndex(f.name, c)
		if err != nil {
			return nil, err
		}
		if f.ext.multiPlatform {
			text = bindPlatformIndex(text, index)
		}
	}
	exe, err := c.Compile(text, pjrt.CompileOptions{DeviceAssignment: m.DeviceIDs(), Partitioner: l.partitioner})
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w", f.name, err)
	}
	results, err := f.resultLayouts(c, exe, m, l)
	if err != nil {
		_ = exe.Close()
		return nil, err
	}
	ce := &compiled{exe: exe, devices: len(exe.Devices()), results: results}
	donate := f.opt.donate
	if f.ext != nil && len(f.ext.kept) != len(f.ext.args) {
		// The module dropped arguments: it takes only the kept ones, donated at their new places.
		ce.kept, donate = f.ext.kept, nil
		for _, d := range f.opt.donate {
			if i := slices.Index(f.ext.kept, d); i >= 0 {
				donate = append(donate, i)
			}
		}
	}
	if l.exported {
		if ce.argLayouts, err = f.argLayouts(exe, m, l); err != nil {
			_ = exe.Close()
			return nil, err
		}
	}
	if len(donate) > 0 {
		ce.options = []pjrt.ExecuteOption{pjrt.Donate(donate...)}
	}
	return ce, nil
}

// resultLayouts returns how the results are laid out: the declared shardings, and for
// unspecified ones the layout XLA chose, with the shards each device of c holds.
func (f *Function) resultLayouts(c *pjrt.Client, exe *pjrt.Executable, m mesh.Mesh, l *lowering) ([]resultLayout, error) {
	chosen := exe.OutputShapes()
	if len(chosen) != len(l.outs) {
		return nil, fmt.Errorf("jit: %s: %w: the executable has %d results, the program %d", f.name, ErrLowering, len(chosen), len(l.outs))
	}
	ndev := len(exe.Devices())
	out := make([]resultLayout, len(l.outs))
	for i, spec := range l.outs {
		global := l.shapes[i].Dims()
		if isUnconstrained(spec, l.shapes[i].Rank()) {
			var err error
			spec, err = chosenSpec(exe, m, i, global, chosen[i].Dims())
			if err != nil {
				return nil, fmt.Errorf("jit: %s: result %d: %w", f.name, i, err)
			}
		}
		s, err := mesh.NewNamedSharding(m, spec)
		if kind := resultMemory(exe, l, i); err == nil && kind != "" {
			s, err = s.WithMemoryKind(kind)
		}
		if err != nil {
			return nil, fmt.Errorf("jit: %s: result %d: %w", f.name, i, err)
		}
		shards, _, err := placement(c, s, global)
		if err != nil {
			return nil, fmt.Errorf("jit: %s: result %d: %w", f.name, i, err)
		}
		if len(shards) != ndev {
			return nil, fmt.Errorf("jit: %s: result %d: %w: %d addressable shards for %d devices", f.name, i, ErrNotAddressable, len(shards), ndev)
		}
		out[i] = resultLayout{shape: global, dtype: l.shapes[i].DType(), sharding: s, shards: shards}
	}
	return out, nil
}

// resultMemory returns the memory kind of result i: the one the program declares, or for a
// module written elsewhere the one the executable reports; "" for the device's own.
func resultMemory(exe *pjrt.Executable, l *lowering, i int) string {
	if l.prog != nil {
		if s, ok := l.prog.ResultSharding(i); ok && s.MemoryKind() != mesh.MemoryDevice {
			return s.MemoryKind()
		}
		return ""
	}
	if kinds, err := exe.OutputMemoryKinds(); err == nil && i < len(kinds) && kinds[i] != mesh.MemoryDevice {
		return kinds[i]
	}
	return ""
}

// callPlan is what a call found for its arguments: the client, the arguments' types and
// shardings, and the lowering and executable they led to. A later call whose arguments match
// skips every look-up.
type callPlan struct {
	client *pjrt.Client
	args   []argSig
	low    *lowering
	comp   *compiled
}

type argSig struct {
	dtype    dtypes.DType
	shape    []int
	sharding mesh.NamedSharding
	device   *pjrt.Device // of the first shard: equal shardings can be on two clients' devices
}

// matches reports whether a call of c on args can use p: the same client, and arguments of the
// same dtypes, shapes and shardings on the same devices. It formats nothing and allocates nothing.
func (p *callPlan) matches(c *pjrt.Client, args []*Array) bool {
	if p == nil || p.client != c || len(p.args) != len(args) {
		return false
	}
	for i, a := range args {
		s := &p.args[i]
		if a.dtype != s.dtype || !slices.Equal(a.shape, s.shape) || !a.sharding.Equal(s.sharding) || firstDevice(a) != s.device {
			return false
		}
	}
	return true
}

// firstDevice returns the device of a's first shard, or nil when it has none here.
func firstDevice(a *Array) *pjrt.Device {
	if len(a.shards) == 0 {
		return nil
	}
	return a.shards[0].Device
}

// Call runs the function on arrays that all live on one mesh and returns its results as Arrays
// with their shardings. Arguments must match InSpecs (see Reshard) and be open; donated
// arguments (Donate) are closed afterwards. It is CallContext with context.Background().
func (f *Function) Call(c *pjrt.Client, args ...*Array) ([]*Array, error) {
	return f.CallContext(context.Background(), c, args...)
}

// CallContext is Call with a context: when ctx is done before the call ends, CallContext returns
// an error wrapping ctx.Err() at once. Neither a compilation nor an execution can be interrupted
// inside XLA, so what was started goes on in the background: a compilation lands in the cache for
// the next call, and an execution's results are closed when it ends. Donated arguments are
// consumed by an execution that started, cancelled or not. Everything stays usable.
func (f *Function) CallContext(ctx context.Context, c *pjrt.Client, args ...*Array) ([]*Array, error) {
	if f == nil {
		return nil, fmt.Errorf("jit: call: %w: nil *Function", ErrNil)
	}
	if err := f.checkCall(ctx, c, args); err != nil {
		return nil, err
	}
	if !f.gate.Enter() {
		return nil, f.closedError()
	}
	var resharded []*Array // temporaries made by resharding, closed when the call ends
	handedOff := false     // an execution in the background owns the call and the temporaries
	defer func() {
		// Also on a panic from the Body, which goes on up.
		if !handedOff {
			closeArrays(resharded)
			f.gate.Exit()
		}
	}()
	p, use := f.last.Load(), args
	if p.matches(c, args) {
		f.lowerings.hits.Add(1)
		f.compiled.hits.Add(1)
	} else {
		var err error
		if p, use, err = f.plan(ctx, c, args, &resharded); err != nil {
			return nil, err
		}
	}
	if ctx.Done() == nil {
		return f.run(p, use)
	}
	handedOff = true
	temps := resharded // a copy, so that resharded itself stays on the stack
	return inBackground(ctx, f.name, func() ([]*Array, error) {
		defer f.gate.Exit()
		defer closeArrays(temps)
		return f.run(p, use)
	}, closeArrays)
}

// checkInSpec refuses mesh.Unconstrained in the spec of argument i: an argument's layout is
// fixed when the function is called, so JAX refuses UNCONSTRAINED in jit's in_shardings
// ("Unconstrained dims are not allowed when passed to in_shardings"). where names the
// spec's source (InSpecs, or Lower's argument types).
func checkInSpec(name, where string, i int, s mesh.PartitionSpec) error {
	for d := range s.Len() {
		if s.Dim(d).IsUnconstrained() {
			return fmt.Errorf("jit: %s: %s: argument %d, spec %v, dim %d: %w: an argument's layout is fixed when it is passed (jax.jit refuses UNCONSTRAINED in in_shardings)",
				name, where, i, s, d, mesh.ErrUnconstrained)
		}
	}
	return nil
}

// checkCall checks what Call can check without looking at the arguments' layouts.
func (f *Function) checkCall(ctx context.Context, c *pjrt.Client, args []*Array) error {
	if err := checkContext(f.name, ctx); err != nil {
		return err
	}
	if c == nil {
		return fmt.Errorf("jit: %s: %w: nil client", f.name, ErrDevice)
	}
	for i, s := range f.opt.in {
		if err := checkInSpec(f.name, "InSpecs", i, s); err != nil {
			return err
		}
	}
	if len(f.opt.in) > 0 && len(f.opt.in) != len(args) {
		return fmt.Errorf("jit: %s: %w: %d arguments for %d InSpecs", f.name, ErrArguments, len(args), len(f.opt.in))
	}
	for _, d := range f.opt.donate {
		if d < 0 || d >= len(args) {
			return fmt.Errorf("jit: %s: %w: donated argument %d out of range for %d arguments", f.name, ErrArguments, d, len(args))
		}
	}
	for i, a := range args {
		if a == nil {
			return fmt.Errorf("jit: %s: %w: argument %d is nil", f.name, ErrArguments, i)
		}
	}
	return nil
}

// plan finds the lowering and executable for a call whose arguments differ from the last call's:
// it checks the mesh, reshards arguments to InSpecs (returning the arrays to use, and adding the
// temporaries it made to *resharded), and remembers the plan for the next call when no
// resharding was needed.
func (f *Function) plan(ctx context.Context, c *pjrt.Client, args []*Array, resharded *[]*Array) (p *callPlan, use []*Array, err error) {
	m, err := f.callMesh(c, args)
	if err != nil {
		return nil, nil, err
	}
	// Meshes of two clients with the same device ids are equal; the shards' devices tell them apart.
	for i, a := range args {
		if len(a.shards) > 0 && a.shards[0].Device.Client() != c {
			return nil, nil, fmt.Errorf("jit: %s: %w: argument %d is on devices of another client than %s", f.name, ErrDevice, i, c)
		}
	}
	// Reshard first, so that every array below is laid out as compiled.
	if use, err = f.reshardArgs(ctx, c, m, args, resharded); err != nil {
		return nil, nil, err
	}
	types := make([]ArgType, len(use))
	for i, a := range use {
		types[i] = ArgType{Shape: lower.NewShape(a.dtype, a.shape...), Spec: a.sharding.Spec(), MemoryKind: a.sharding.MemoryKind()}
	}
	l, err := f.lowering(ctx, m.Abstract(), types)
	if err != nil {
		return nil, nil, err
	}
	ce, err := f.executable(ctx, c, m, l)
	if err != nil {
		return nil, nil, err
	}
	if ce.argLayouts != nil {
		if use, err = f.matchLayouts(ctx, c, use, ce, resharded); err != nil {
			return nil, nil, err
		}
	}
	p = &callPlan{client: c, args: make([]argSig, len(args)), low: l, comp: ce}
	for i, a := range args {
		p.args[i] = argSig{dtype: a.dtype, shape: a.shape, sharding: a.sharding, device: firstDevice(a)}
	}
	if len(*resharded) == 0 {
		f.last.Store(p)
	}
	return p, use, nil
}

// callMesh returns the mesh of a call: the arguments' (all on one mesh, WithMesh's when it was
// given), or, for a call without arguments, WithMesh's or a one-device mesh of the client's
// first device.
func (f *Function) callMesh(c *pjrt.Client, args []*Array) (mesh.Mesh, error) {
	if len(args) == 0 {
		if f.opt.mesh != nil {
			for _, d := range f.opt.mesh.Devices() {
				if _, err := clientDevice(c, d); err != nil {
					return mesh.Mesh{}, fmt.Errorf("jit: %s: WithMesh: %w", f.name, err)
				}
			}
			return *f.opt.mesh, nil
		}
		devs := Devices(c)
		if len(devs) == 0 {
			return mesh.Mesh{}, fmt.Errorf("jit: %s: %w: the client has no devices", f.name, ErrDevice)
		}
		m, err := mesh.New(devs[:1], []int{1}, "device")
		if err != nil {
			return mesh.Mesh{}, fmt.Errorf("jit: %s: %w", f.name, err)
		}
		return m, nil
	}
	m, err := args[0].sharding.Mesh()
	if err != nil {
		return mesh.Mesh{}, fmt.Errorf("jit: %s: argument 0: %w", f.name, err)
	}
	for i, a := range args[1:] {
		if am, err := a.sharding.Mesh(); err != nil || !am.Equal(m) {
			return mesh.Mesh{}, fmt.Errorf("jit: %s: %w: argument %d is on %#v, argument 0 on %#v; all arguments must share one mesh",
				f.name, ErrArguments, i+1, am, m)
		}
	}
	if f.opt.mesh != nil && !f.opt.mesh.Equal(m) {
		return mesh.Mesh{}, fmt.Errorf("jit: %s: %w: the arguments are on %#v, WithMesh gave %#v", f.name, ErrArguments, m, *f.opt.mesh)
	}
	return m, nil
}

// reshardArgs checks arguments against InSpecs and, with Reshard, moves mismatched ones. It returns
// the arrays to use and adds the temporary arrays it made to *made.
func (f *Function) reshardArgs(ctx context.Context, c *pjrt.Client, m mesh.Mesh, args []*Array, made *[]*Array) ([]*Array, error) {
	if len(f.opt.in) == 0 {
		return args, nil
	}
	out := slices.Clone(args)
	for i, a := range args {
		if a.sharding.Spec().Equal(f.opt.in[i]) {
			continue // the mesh was checked by Call
		}
		want, err := mesh.NewNamedSharding(m, f.opt.in[i])
		if err != nil {
			return nil, fmt.Errorf("jit: %s: InSpecs[%d]: %w", f.name, i, err)
		}
		if a.sharding.Equal(want) {
			continue
		}
		if !f.opt.reshard {
			return nil, fmt.Errorf("jit: %s: %w: argument %d: the sharding passed to jit does not match the sharding it was compiled for: got %s, want %s (use jit.Reshard to move it)",
				f.name, ErrArguments, i, a.sharding.Spec(), want.Spec())
		}
		if slices.Contains(f.opt.donate, i) {
			return nil, fmt.Errorf("jit: %s: %w: argument %d is donated and must already have sharding %s", f.name, ErrArguments, i, want)
		}
		r, err := reshardWith(ctx, f.resharder(want.Spec()), c, a, want)
		if err != nil {
			return nil, fmt.Errorf("jit: %s: argument %d: %w", f.name, i, err)
		}
		*made = append(*made, r)
		out[i] = r
	}
	return out, nil
}

// resharder returns the Function's identity that moves arrays to spec, making it on first use.
func (f *Function) resharder(spec mesh.PartitionSpec) *Function {
	f.reshardMu.Lock()
	defer f.reshardMu.Unlock()
	for _, r := range f.reshards {
		if r.opt.out[0].Equal(spec) {
			return r
		}
	}
	r := newIdentity(spec)
	f.reshards = append(f.reshards, r)
	return r
}

// run executes a compiled function on args and wraps the results.
func (f *Function) run(p *callPlan, args []*Array) ([]*Array, error) {
	ce := p.comp
	nd := ce.devices
	// Hold every argument open for the whole execution; donated ones exclusively.
	locked := 0
	var firstBuf [8]bool
	first := firstUses(args, firstBuf[:0])
	defer func() { f.unlockArgs(args[:locked], first) }()
	for i, a := range args {
		if f.donated(i) {
			if !a.users.EnterExclusive() {
				if a.users.IsClosed() {
					return nil, fmt.Errorf("jit: %s: argument %d: array %w", f.name, i, ErrClosed)
				}
				return nil, fmt.Errorf("jit: %s: %w: donated argument %d is in use", f.name, ErrArguments, i)
			}
		} else if first[i] && !a.enter() {
			return nil, fmt.Errorf("jit: %s: argument %d: array %w", f.name, i, ErrClosed)
		}
		locked = i + 1
		if len(a.shards) != nd {
			return nil, fmt.Errorf("jit: %s: %w: argument %d has %d shards for %d devices", f.name, ErrNotAddressable, i, len(a.shards), nd)
		}
	}
	params := args
	if ce.kept != nil {
		params = make([]*Array, len(ce.kept))
		for i, k := range ce.kept {
			params[i] = args[k]
		}
	}
	na := len(params)
	cells := make([]*pjrt.Buffer, nd*na)
	lists := make([][]*pjrt.Buffer, nd)
	for d := range lists {
		lists[d] = cells[d*na : (d+1)*na : (d+1)*na]
		for i, a := range params {
			lists[d][i] = a.shards[d].Data
		}
	}
	outs, err := ce.exe.Execute(lists, ce.options...)
	if err != nil && f.gate.IsClosed() && errors.Is(err, pjrt.ErrClosed) && ce.exe.IsClosed() {
		err = f.closedError() // the Function was closed while this call was under way
	}
	for _, i := range f.opt.donate {
		// pjrt closes donated buffers once the execution started, whether or not it ran; arguments
		// it rejected before that keep theirs.
		if i < len(args) && args[i].shards[0].Data.IsClosed() {
			args[i].users.Close() // the exclusive hold ends in unlockArgs, which frees the rest
		}
	}
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return nil, err
		}
		return nil, fmt.Errorf("jit: %s: %w", f.name, err)
	}
	if len(outs) != nd {
		closeBuffers(outs)
		return nil, fmt.Errorf("jit: %s: %w: %d result lists for %d devices", f.name, ErrLowering, len(outs), nd)
	}
	// One block each for the Arrays, their shards and the result slice; a single result on one
	// device, the common case of a tight loop, takes one block for all three.
	nr := len(ce.results)
	var arrays []Array
	var shards []Shard
	var results []*Array
	if nr == 1 && nd == 1 {
		one := new(struct {
			a [1]Array
			s [1]Shard
			r [1]*Array
		})
		arrays, shards, results = one.a[:], one.s[:], one.r[:]
	} else {
		arrays, shards, results = make([]Array, nr), make([]Shard, nr*nd), make([]*Array, nr)
	}
	for r, lay := range ce.results {
		sh := shards[r*nd : (r+1)*nd : (r+1)*nd]
		copy(sh, lay.shards)
		for d := range sh {
			sh[d].Data = outs[d][r]
		}
		arrays[r] = Array{shape: lay.shape, dtype: lay.dtype, sharding: lay.sharding, shards: sh}
		results[r] = &arrays[r]
	}
	return results, nil
}

// donated reports whether argument i is donated.
func (f *Function) donated(i int) bool { return slices.Contains(f.opt.donate, i) }

// unlockArgs releases the locks run took on args (first as firstUses gave it).
func (f *Function) unlockArgs(args []*Array, first []bool) {
	for i, a := range args {
		if f.donated(i) {
			if a.users.ExitExclusive() {
				_ = a.closeShards()
			}
		} else if first[i] {
			a.exit()
		}
	}
}

// firstUses reports for each argument whether it is the array's first place in args (an array
// passed twice is locked once), appended to buf. Linear in len(args): a map past a few
// arguments, where comparing each with those before it would make a call quadratic.
func firstUses(args []*Array, buf []bool) []bool {
	first := buf[:0]
	if len(args) <= 8 {
		for i, a := range args {
			first = append(first, slices.Index(args[:i], a) < 0)
		}
		return first
	}
	seen := make(map[*Array]struct{}, len(args))
	for _, a := range args {
		_, dup := seen[a]
		seen[a] = struct{}{}
		first = append(first, !dup)
	}
	return first
}

// Close is CloseContext bounded by pjrt.CloseTimeout.
func (f *Function) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), pjrt.CloseTimeout)
	defer cancel()
	return f.CloseContext(ctx)
}

// CloseContext frees the function's executables and forgets its lowerings; later calls fail
// with an error wrapping ErrClosed at once, and a call under way when it closed may fail so too.
// It then waits, until ctx is done, for the calls in flight and the executions of the released
// executables to end (a program on several devices runs on after its call returned), and
// returns a *pjrt.StillRunningError (matching pjrt.ErrStillRunning) naming the function and
// counting the calls and executions still running if they have not: an execution cannot be
// interrupted inside XLA, and one that never ends holds its executable, which pjrt destroys when
// the execution's call returns.
// Closing never blocks other calls, of this function or of others. A compilation still running
// in the background frees its executable when it ends. CloseContext is idempotent: a later call
// waits again. Arrays returned by calls are not affected.
func (f *Function) CloseContext(ctx context.Context) error {
	if f == nil {
		return fmt.Errorf("jit: close: %w: nil *Function", ErrNil)
	}
	if ctx == nil {
		return fmt.Errorf("jit: %s: close: %w", f.name, errNilContext)
	}
	if f.gate.Close() {
		f.last.Store(nil)
		f.unwatch(nil)
		released := f.compiled.close()
		f.closedMu.Lock()
		for _, c := range released {
			f.closedExes = append(f.closedExes, c.exe)
		}
		f.closedMu.Unlock()
		f.lowerings.close()
		f.reshardMu.Lock()
		reshards := f.reshards
		f.reshards = nil
		f.reshardMu.Unlock()
		for _, r := range reshards {
			_ = r.CloseContext(noWait) // its calls run inside f's, waited for below
		}
	}
	if f.gate.Wait(ctx) && f.waitExecutions(ctx) {
		return nil
	}
	return fmt.Errorf("jit: close: %w", &pjrt.StillRunningError{
		What: fmt.Sprintf("function %q", f.name), Calls: f.gate.Calls(), Executions: f.unfinished()})
}

// unfinished counts the executions of the executables Close released that have not finished on
// every device.
func (f *Function) unfinished() int {
	f.closedMu.Lock()
	defer f.closedMu.Unlock()
	n := 0
	for _, e := range f.closedExes {
		n += e.Unfinished()
	}
	return n
}

// waitExecutions waits, until ctx is done, for the executions of the executables Close released
// to finish (a program on several devices runs on after its call returned), polling with a
// growing pause: they end in the plugin, which does not call into Go. It reports whether they did.
func (f *Function) waitExecutions(ctx context.Context) bool {
	pause := 50 * time.Microsecond
	for f.unfinished() > 0 {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return f.unfinished() == 0
		case <-t.C:
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
	return true
}

// Release frees the executables the function compiled for client c, and leaves the rest, and its
// lowerings, in place. Closing c does it by itself (the Function registers with Client.OnClose).
// It does not wait for calls in flight: one still executing keeps its executable until it
// returns, and one that was about to start on c may fail with an error wrapping pjrt.ErrClosed.
// A later call on c compiles again.
func (f *Function) Release(c *pjrt.Client) error {
	if f == nil {
		return fmt.Errorf("jit: release: %w: nil *Function", ErrNil)
	}
	if f.gate.IsClosed() {
		return nil
	}
	if p := f.last.Load(); p != nil && p.client == c {
		f.last.CompareAndSwap(p, nil)
	}
	f.unwatch(c)
	f.compiled.evict(func(k compileKey) bool { return k.client == c })
	f.reshardMu.Lock()
	reshards := slices.Clone(f.reshards)
	f.reshardMu.Unlock()
	for _, r := range reshards {
		_ = r.Release(c)
	}
	return nil
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
