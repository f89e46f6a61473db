package jit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/lower/wrap"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir/bytecode"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/refine"
)

// external is the program of a Function made by FromText, FromBytecode or FromExported.
type external struct {
	text        string              // the module as MLIR text; "" when only its bytecode is known
	code        []byte              // bytecode given to Compile (which reads it as text) when the module is not re-sharded
	exp         *jaxexport.Exported // the artifact, for FromExported
	args, outs  []lower.Shape       // what callers pass and get (every exported argument)
	kept        []int               // module argument i is caller argument kept[i]
	partitions  int                 // the module's mhlo.num_partitions
	unsaid      bool                // the module's text does not say mhlo.num_partitions
	poly        bool                // symbolic shapes: args and outs have -1 dims, refined per call (package refine)
	partitioner lower.Partitioner   // the partitioner the module's own annotations are written for

	multiPlatform bool // the module takes a platform index first (bindPlatformArg)

	textOnce sync.Once // reads code as text, the first time re-sharding needs it
	codeText string
	codePart lower.Partitioner
	textErr  error
}

// moduleText returns the module as text and the partitioner its annotations are written for.
func (ext *external) moduleText(name string) (string, lower.Partitioner, error) {
	if ext.text != "" {
		return ext.text, ext.partitioner, nil
	}
	ext.textOnce.Do(func() {
		text, err := bytecodeText(name, ext.code)
		if err != nil {
			ext.textErr = fmt.Errorf("%w (re-sharding needs the module as text)", err)
			return
		}
		if ext.multiPlatform {
			if text, err = bindPlatformArg(name, text); err != nil {
				ext.textErr = err
				return
			}
		}
		if ext.poly {
			// Read when refined (lowerPolymorphic): its types are not static yet.
			ext.codeText, ext.codePart = text, lower.Shardy
			return
		}
		read, err := readText(name, text)
		if err != nil {
			ext.textErr = err
			return
		}
		ext.codeText, ext.codePart = text, read.partitioner
	})
	return ext.codeText, ext.codePart, ext.textErr
}

// FromText returns a Function that runs a StableHLO module written elsewhere, given as MLIR
// text: jax.export's Exported.mlir_module(), a module another tool wrote, or one of xlamesh's
// own. Its @main's signature is read at once (wrap.Module with KeepShardings); an error wraps
// ErrExternal and lower's error.
//
// Without InSpecs and OutSpecs the module runs as it was written: its own shardings, compiled
// for its mhlo.num_partitions devices (NumPartitions for a module that does not say), which
// are the devices of the arguments' mesh (for a module without arguments, WithMesh's, or the
// client's first device). The
// arguments must already be laid out as the compiled program expects (read back from XLA with
// pjrt.Executable.InputShardings); a call whose argument is laid out otherwise fails with
// ErrArguments, or, with Reshard, moves it first. Results carry the layout XLA gave them.
//
// With InSpecs (or OutSpecs) the module is re-sharded: the arguments' mesh and the specs replace
// the module's own annotations (wrap.ReplaceShardings), on any mesh and any devices, and the
// function behaves like one built with New. The module's partitioner is used unless
// WithPartitioner says otherwise.
//
// A module with symbolic shapes (jax.export.symbolic_shape: dynamic dimensions "?",
// jax.uses_shape_polymorphism) is refined for the shapes of each call's arguments by package
// refine, its shape assertions checked (a failing one is an error wrapping ErrArguments with
// JAX's message), and compiled once per distinct shapes. refine reads the generic form
// mlir/bytecode writes and the custom forms JAX prints (Exported.mlir_module(), locations
// and all); a module it cannot read is an error wrapping ErrExternal and refine's error
// (refine.ErrUnsupported names the op).
//
// Either way the function has New's caches, statistics, argument checks, donation and Close.
func FromText(name, text string, opts ...Option) (*Function, error) {
	ext, err := readText(name, text)
	if err != nil {
		return nil, err
	}
	return newExternal(name, ext, opts), nil
}

// FromBytecode is FromText for a module given as MLIR bytecode (a StableHLO portable artifact,
// as jaxexport's Exported.Module): it reads the module with package mlir/bytecode (an error wraps
// ErrExternal and bytecode's error). As written or re-sharded, what is compiled is the module's
// text, checked by mlir.Check (pjrt.Client.Compile reads bytecode as text before compiling).
func FromBytecode(name string, code []byte, opts ...Option) (*Function, error) {
	if !bytecode.IsBytecode(code) {
		return nil, fmt.Errorf("jit: %s: %w: not MLIR bytecode (no \"ML\\xefR\" magic)", name, ErrExternal)
	}
	text, err := bytecodeText(name, code)
	if err != nil {
		return nil, err
	}
	ext, err := readText(name, text)
	if err != nil {
		return nil, err
	}
	ext.code = slices.Clone(code)
	return newExternal(name, ext, opts), nil
}

// readPolymorphic reads the signature of a module with symbolic shapes: its dynamic
// dimensions are -1 until a call refines them.
func readPolymorphic(name, text string) (*external, error) {
	args, outs, n, err := refine.Signature(text)
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w: %w", name, ErrExternal, err)
	}
	ext := &external{text: text, args: args, outs: outs, partitions: n, poly: true, partitioner: lower.Shardy}
	for i := range ext.args {
		ext.kept = append(ext.kept, i)
	}
	return ext, nil
}

// FromExported returns a Function that runs a function exported by jax.export (read by
// jaxexport.Read), named after it. It takes every argument of the exported function, also those
// the module dropped (module_kept_var_idx), checked against the artifact's avals; results are
// the artifact's. As exported (no InSpecs, OutSpecs) the artifact's module is compiled as it is,
// for its NrDevices devices (pjrt.Client.Compile reads it as text with mlir/bytecode, checks that
// text with mlir.Check and compiles it: a module the reader cannot read, or that Check refuses,
// fails the call with an error wrapping pjrt.ErrCompile and the reader's or Check's sentinel); with InSpecs or OutSpecs it is re-sharded like FromText's, from the
// module's text (mlir/bytecode.ToText; a module it cannot read fails the call with ErrExternal). A
// module for several platforms runs with the index of the client's platform bound to its
// platform-index argument; a module whose platforms do not include the client's (unless it
// has one and its platform check was disabled at export) is refused with ErrExternal, naming
// them. Donation is not part of
// the artifact: say it with Donate.
func FromExported(e *jaxexport.Exported, opts ...Option) (*Function, error) {
	if e == nil {
		return nil, fmt.Errorf("jit: from exported: %w: nil *jaxexport.Exported", ErrNil)
	}
	name := e.FunctionName()
	ext := &external{exp: e, code: e.Module(), kept: e.ModuleKeptVarIdx(), partitions: e.NrDevices(), partitioner: lower.Shardy,
		multiPlatform: len(e.Platforms()) > 1, poly: e.Polymorphic()}
	ext.args, ext.outs = e.InAvals(), e.OutAvals() // jaxexport.Aval is lower.Shape: one shape type
	return newExternal(name, ext, opts), nil
}

func newExternal(name string, ext *external, opts []Option) *Function {
	f := New(name, nil, opts...)
	f.ext = ext
	return f
}

// bytecodeText reads a module given as MLIR bytecode as text.
func bytecodeText(name string, code []byte) (string, error) {
	text, err := bytecode.ToText(code)
	if err != nil {
		return "", fmt.Errorf("jit: %s: %w: %w", name, ErrExternal, err)
	}
	return text, nil
}

// readText reads a module's signature, partition count and partitioner.
func readText(name, text string) (*external, error) {
	p, err := wrap.Module(text, nil, nil, wrap.KeepShardings())
	if err != nil {
		if refine.Polymorphic(text) {
			// Symbolic shapes, refined per call: the module must be one refine reads.
			return readPolymorphic(name, text)
		}
		return nil, fmt.Errorf("jit: %s: %w: %w", name, ErrExternal, err)
	}
	ext := &external{text: text, args: p.ArgShapes(), outs: p.ResultShapes(), partitions: p.NumPartitions(),
		unsaid: !p.SaysNumPartitions(), partitioner: p.Partitioner()}
	for i := range ext.args {
		ext.kept = append(ext.kept, i)
	}
	return ext, nil
}

// resharded reports whether the function re-shards its module (InSpecs or OutSpecs given).
func (f *Function) resharded() bool { return len(f.opt.in) > 0 || len(f.opt.out) > 0 }

// lowerExternal is lowerNow for a module written elsewhere: the module as it is, or re-sharded
// onto the arguments' abstract mesh and specs.
func (f *Function) lowerExternal(m mesh.Abstract, args []ArgType) (*lowering, error) {
	ext := f.ext
	if len(args) != len(ext.args) {
		return nil, fmt.Errorf("jit: %s: %w: %d arguments for a module of %d", f.name, ErrArguments, len(args), len(ext.args))
	}
	argShapes := make([]lower.Shape, len(args))
	for i, a := range args {
		if !fits(a.Shape, ext.args[i]) {
			return nil, fmt.Errorf("jit: %s: %w: argument %d is %s, the module takes %s", f.name, ErrArguments, i, a.Shape, dynamicText(ext.args[i]))
		}
		argShapes[i] = a.Shape
	}
	if len(f.opt.out) > len(ext.outs) {
		return nil, fmt.Errorf("jit: %s: %w: %d OutSpecs for %d results", f.name, ErrArguments, len(f.opt.out), len(ext.outs))
	}
	outs := make([]mesh.PartitionSpec, len(ext.outs))
	for i, s := range ext.outs {
		outs[i] = unconstrained(s.Rank())
	}
	if ext.poly {
		return f.lowerPolymorphic(m, args, outs)
	}
	if !f.resharded() {
		parts := ext.partitions
		if n := f.opt.partitions; n > 0 && n != parts {
			if !ext.unsaid {
				return nil, fmt.Errorf("jit: %s: %w: NumPartitions(%d) for a module that says mhlo.num_partitions = %d",
					f.name, ErrArguments, n, parts)
			}
			parts = n
		}
		if m.Size() != parts {
			return nil, fmt.Errorf("jit: %s: %w: the module was written for %d devices, the arguments are on a mesh of %d (%v); re-shard it with InSpecs",
				f.name, ErrArguments, parts, m.Size(), m)
		}
		l := &lowering{shapes: ext.outs, outs: outs, text: ext.text, partitioner: ext.partitioner, exported: true, args: argShapes}
		if ext.code != nil {
			l.text = string(ext.code)
		}
		if ext.multiPlatform {
			text, _, err := ext.moduleText(f.name)
			if err != nil {
				return nil, err
			}
			l.text = text
		}
		if f.opt.partitionerSet {
			l.partitioner = f.opt.partitioner
		}
		if ext.text != "" {
			p, err := wrap.Module(ext.text, nil, nil, wrap.KeepShardings())
			if err != nil {
				return nil, fmt.Errorf("jit: %s: %w: %w", f.name, ErrLowering, err)
			}
			l.prog = p
		}
		return l, nil
	}
	text, part, err := ext.moduleText(f.name)
	if err != nil {
		return nil, err
	}
	if f.opt.partitionerSet {
		part = f.opt.partitioner
	}
	return f.reshardModule(m, args, text, part, outs)
}

// reshardModule re-shards an external module's text onto the abstract mesh m: the caller's
// argument specs and OutSpecs replace its own annotations (wrap.Module with
// ReplaceShardings), for partitioner part.
func (f *Function) reshardModule(m mesh.Abstract, types []ArgType, text string, part lower.Partitioner, outs []mesh.PartitionSpec) (*lowering, error) {
	ext := f.ext
	argSh := make([]mesh.NamedSharding, len(ext.kept))
	for i, k := range ext.kept {
		s, err := mesh.NewAbstractSharding(m, types[k].Spec)
		if err != nil {
			return nil, fmt.Errorf("jit: %s: argument %d: %w", f.name, k, err)
		}
		argSh[i] = s
	}
	resSh := make([]mesh.NamedSharding, len(ext.outs))
	for i, spec := range f.opt.out {
		s, err := mesh.NewAbstractSharding(m, spec)
		if err != nil {
			return nil, fmt.Errorf("jit: %s: result %d: %w", f.name, i, err)
		}
		resSh[i], outs[i] = s, spec
	}
	p, err := wrap.Module(text, argSh, resSh, wrap.ReplaceShardings(), wrap.WithPartitioner(part))
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w: %w", f.name, ErrLowering, err)
	}
	args := make([]lower.Shape, len(types))
	for i, a := range types {
		args[i] = a.Shape
	}
	return &lowering{prog: p, shapes: p.ResultShapes(), outs: outs, text: p.Text(), partitioner: p.Partitioner(), args: args}, nil
}

// fits reports whether an argument of shape a fits the module's type t, whose dynamic
// dimensions (-1) take any size.
func fits(a, t lower.Shape) bool {
	if a.DType() != t.DType() || a.Rank() != t.Rank() {
		return false
	}
	for i := range t.Rank() {
		if t.Dim(i) >= 0 && t.Dim(i) != a.Dim(i) {
			return false
		}
	}
	return true
}

// dynamicText writes a shape whose dynamic dimensions are -1 as MLIR does: tensor<?x8xf32>.
func dynamicText(s lower.Shape) string {
	return strings.ReplaceAll(strings.ReplaceAll(s.String(), "<-1x", "<?x"), "x-1x", "x?x")
}

// lowerPolymorphic is lowerExternal for a module with symbolic shapes: the module, read as
// text, is refined for the shapes of the call's arguments (package refine: dynamic
// dimensions made static, shape assertions checked), then runs as written or re-sharded
// like any module. Each distinct argument shape has a lowering (and an executable) of its own.
func (f *Function) lowerPolymorphic(m mesh.Abstract, types []ArgType, outs []mesh.PartitionSpec) (*lowering, error) {
	ext := f.ext
	text, _, err := ext.moduleText(f.name)
	if err != nil {
		return nil, err
	}
	args := make([]lower.Shape, len(types))
	for i, a := range types {
		args[i] = a.Shape
	}
	kept := make([]lower.Shape, len(ext.kept))
	for i, k := range ext.kept {
		kept[i] = args[k]
	}
	refined, err := refine.Module(text, kept)
	switch {
	case errors.Is(err, refine.ErrShapeAssertion) || errors.Is(err, refine.ErrArguments):
		return nil, fmt.Errorf("jit: %s: %w: %w", f.name, ErrArguments, err)
	case err != nil:
		return nil, fmt.Errorf("jit: %s: %w: refining the module's symbolic shapes: %w", f.name, ErrExternal, err)
	}
	// The refined module is static: its annotations say its partitioner (GSPMD's custom
	// calls @Sharding, or Shardy's), as any module's do.
	p, err := wrap.Module(refined, nil, nil, wrap.KeepShardings())
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w: %w", f.name, ErrLowering, err)
	}
	part := p.Partitioner()
	if f.opt.partitionerSet {
		part = f.opt.partitioner
	}
	if !f.resharded() {
		if m.Size() != ext.partitions {
			return nil, fmt.Errorf("jit: %s: %w: the module was written for %d devices, the arguments are on a mesh of %d (%v); re-shard it with InSpecs",
				f.name, ErrArguments, ext.partitions, m.Size(), m)
		}
		return &lowering{prog: p, shapes: p.ResultShapes(), outs: outs, text: refined, partitioner: part, exported: true, args: args}, nil
	}
	return f.reshardModule(m, types, refined, part, outs)
}

// platformIndex returns the index of c's platform among the artifact's platforms (JAX's names:
// "cuda" and "rocm" for a client's "gpu"), refusing an artifact exported for other platforms
// only (unless its platform check was disabled at export and it has one platform).
func (ext *external) platformIndex(name string, c *pjrt.Client) (int, error) {
	if ext.exp == nil {
		return 0, nil
	}
	want := ext.exp.Platforms()
	got := strings.ToLower(c.Platform())
	for i, p := range want {
		if p == got || got == "gpu" && (p == "cuda" || p == "rocm") {
			return i, nil
		}
	}
	if len(want) == 1 && slices.Contains(ext.exp.DisabledChecks(), "platform") {
		return 0, nil
	}
	return 0, fmt.Errorf("jit: %s: %w: the module was exported for %v, the client runs %s", name, ErrExternal, want, got)
}

// argLayouts returns, for each caller argument the module takes, the sharding on m of the
// layout the compiled program expects (nil for arguments the module dropped).
func (f *Function) argLayouts(exe *pjrt.Executable, m mesh.Mesh, l *lowering) ([]*mesh.NamedSharding, error) {
	in, err := exe.InputShardings()
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w", f.name, err)
	}
	if len(in) != len(f.ext.kept) {
		return nil, fmt.Errorf("jit: %s: %w: the executable takes %d arguments, the module %d", f.name, ErrLowering, len(in), len(f.ext.kept))
	}
	// The memory each parameter is expected in, where the plugin says (not the API 0.81 CPU
	// plugin): an argument in another memory is moved there with Reshard, refused without.
	kinds, kerr := exe.InputMemoryKinds()
	if kerr != nil || len(kinds) != len(in) {
		kinds = nil
	}
	out := make([]*mesh.NamedSharding, len(f.ext.args))
	for i, k := range f.ext.kept {
		dims := f.ext.args[k].Dims()
		if l.args != nil {
			dims = l.args[k].Dims() // the call's shapes: a polymorphic module's own are -1
		}
		spec, err := layoutSpec(in[i], m, dims)
		if err != nil {
			return nil, fmt.Errorf("jit: %s: argument %d: %w", f.name, k, err)
		}
		s, err := mesh.NewNamedSharding(m, spec)
		if err != nil {
			return nil, fmt.Errorf("jit: %s: argument %d: %w", f.name, k, err)
		}
		if kinds != nil && kinds[i] != "" && kinds[i] != memoryKind(s) {
			if s, err = s.WithMemoryKind(kinds[i]); err != nil {
				return nil, fmt.Errorf("jit: %s: argument %d: %w", f.name, k, err)
			}
		}
		out[k] = &s
	}
	return out, nil
}

// matchLayouts checks the arguments of an as-exported call against the layouts the executable
// expects, moving mismatched ones with Reshard; it returns the arrays to use.
func (f *Function) matchLayouts(ctx context.Context, c *pjrt.Client, args []*Array, ce *compiled, made *[]*Array) ([]*Array, error) {
	out, cloned := args, false
	for i, want := range ce.argLayouts {
		a := args[i]
		if want == nil {
			continue
		}
		inKind := memoryKind(a.sharding) == memoryKind(*want)
		if inKind && sameLayout(a.sharding, *want, a.shape) {
			continue
		}
		switch {
		case !f.opt.reshard && !inKind:
			return nil, fmt.Errorf("jit: %s: %w: argument %d is in %s memory; the module expects it in %s memory (use jit.Reshard to move it)",
				f.name, ErrArguments, i, memoryKind(a.sharding), memoryKind(*want))
		case !f.opt.reshard:
			return nil, fmt.Errorf("jit: %s: %w: argument %d is laid out as %s; the module expects %s (use jit.Reshard to move it, or InSpecs to re-shard the module)",
				f.name, ErrArguments, i, a.sharding.Spec(), want.Spec())
		}
		if f.donated(i) {
			return nil, fmt.Errorf("jit: %s: %w: argument %d is donated and must already have sharding %s", f.name, ErrArguments, i, want)
		}
		var r *Array
		var err error
		if inKind {
			r, err = reshardWith(ctx, f.resharder(want.Spec()), c, a, *want)
		} else {
			r, err = ReshardArray(c, a, *want) // between memories: per-shard copies
		}
		if err != nil {
			return nil, fmt.Errorf("jit: %s: argument %d: %w", f.name, i, err)
		}
		if !cloned {
			out, cloned = slices.Clone(args), true
		}
		*made = append(*made, r)
		out[i] = r
	}
	return out, nil
}

// sameLayout reports whether a and b put the same block of an array of this shape on every
// mesh position.
func sameLayout(a, b mesh.NamedSharding, shape []int) bool {
	if a.Equal(b) {
		return true
	}
	ia, err1 := a.PositionIndices(shape)
	ib, err2 := b.PositionIndices(shape)
	if err1 != nil || err2 != nil || len(ia) != len(ib) {
		return false
	}
	for p := range ia {
		if !slices.Equal(ia[p], ib[p]) {
			return false
		}
	}
	return true
}
