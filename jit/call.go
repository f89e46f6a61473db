package jit

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

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
