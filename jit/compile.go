package jit

import (
	"context"
	"fmt"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

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
	exe, err := c.Compile(text, pjrt.CompileOptions{DeviceAssignment: m.DeviceIDs(), Partitioner: l.partitioner,
		CompilerOptions: f.opt.compiler})
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
