package jit

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

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
		vals[i] = main.ShardedArg(a.Shape, s)
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
	// Donated arguments tell XLA which results may take their memory (JAX's input/output
	// aliases and buffer donors); without them the call consumes the buffers and reuses nothing.
	main.Donate(f.opt.donate...)
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
