package jit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

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
	mesh           *mesh.Mesh     // WithMesh
	partitions     int            // NumPartitions; 0 when not given
	compiler       map[string]any // CompilerOptions

	// NewTree's options, and the hook its Functions declare their results' specs by, once
	// the Body has said the result's structure.
	inTree, outTree       []any
	inTreeSet, outTreeSet bool
	donatePaths           []string
	outFor                func() ([]mesh.PartitionSpec, error)
}

// Option configures New.
type Option func(*options)

// CompilerOptions passes XLA options to every compile of the Function, as JAX's
// jit(f).lower(x).compile(compiler_options={...}): XLA debug option names (for example
// "xla_gpu_autotune_level") to a string, bool, int, int64 or float64 (pjrt.CompileOptions.CompilerOptions,
// which checks them; XLA refuses names it does not know, and Call then fails with the compile
// error). The map is copied.
func CompilerOptions(opts map[string]any) Option {
	return func(o *options) { o.compiler = maps.Clone(opts) }
}

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
// donate_argnums): the lowered program aliases each donated argument to a result of its shard
// type, or leaves it to XLA, as jax.jit does (lower.Function.Donate). A donated Array is
// closed by Call, whether or not a result took its memory.
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

// closedError is the error of a call on a closed Function.
func (f *Function) closedError() error {
	return fmt.Errorf("jit: %s: function %w", f.name, ErrClosed)
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
