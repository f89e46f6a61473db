package jit

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/tree"
)

// InTree declares the layout of a TreeFunction's argument as a tree of mesh.PartitionSpec
// with the argument's structure, or a prefix of it (one spec for a whole subtree), as jax.jit's
// in_shardings over a pytree: Params[mesh.PartitionSpec] for an argument Params[*Array]. It is
// InSpecs by tree; an option of NewTree only.
func InTree(specs any) Option {
	return func(o *options) { o.inTree, o.inTreeSet = specs, true }
}

// OutTree declares the layout of a TreeFunction's result as a tree (or prefix tree) of
// mesh.PartitionSpec, as jax.jit's out_shardings: OutSpecs by tree; an option of NewTree only.
func OutTree(specs any) Option {
	return func(o *options) { o.outTree, o.outTreeSet = specs, true }
}

// DonatePaths donates the leaves of a TreeFunction's argument at these tree paths and under
// them (".Params" donates every parameter, ".Params.Embed" one): Donate by path, as
// jax.jit's donate_argnames; an option of NewTree only. A path that names no leaf of a call's
// argument fails the call with ErrArguments.
func DonatePaths(paths ...string) Option {
	return func(o *options) { o.donatePaths = append(o.donatePaths, paths...) }
}

// treeOptions says whether o holds options of NewTree, which a Function of flat arguments
// refuses.
func (o *options) treeOptions() bool { return o.inTreeSet || o.outTreeSet || o.donatePaths != nil }

// flatOptions says whether o holds options of New that take argument positions, which a
// TreeFunction refuses for their tree forms.
func (o *options) flatOptions() bool { return o.in != nil || o.out != nil || o.donate != nil }

// TreeFunction is a jitted function of a tree, as jax.jit of a function taking and returning
// pytrees: its Body takes one tree of values In and returns one tree Out (package tree: structs,
// slices, maps of lower.Value), and Call takes the same tree of *Array and fills a tree of
// *Array shaped like Out. Generic struct types serve both sides: a body of
// Params[lower.Value] is called with a Params[*Array].
//
// A TreeFunction keeps one Function (and its caches) per structure of argument it was called
// with, made on the first such call: its arguments are the tree's leaves in tree order, its
// InSpecs, OutSpecs and Donate come from InTree, OutTree and DonatePaths. Errors about the
// trees name the path (".Blocks[1].Wq"). Close frees what the Functions hold. Safe for
// concurrent use.
type TreeFunction[In, Out any] struct {
	name string
	body func(f *lower.Function, in In) Out
	opts []Option
	opt  options

	mu     sync.Mutex
	fns    map[string]*treeEntry // by the argument's tree.Def text
	closed bool
}

// treeEntry is the Function of one argument structure.
type treeEntry struct {
	fn     *Function
	in     tree.Def
	donate []int

	mu  sync.Mutex
	out *tree.Def // the structure of the body's result, from its first lowering
}

// NewTree returns a jitted function of a tree named name (the module is "jit_<name>"). It takes
// New's options, with InTree, OutTree and DonatePaths in place of InSpecs, OutSpecs and
// Donate, which it refuses (Call fails with ErrArguments).
func NewTree[In, Out any](name string, body func(f *lower.Function, in In) Out, opts ...Option) *TreeFunction[In, Out] {
	t := &TreeFunction[In, Out]{name: name, body: body, opts: opts, fns: map[string]*treeEntry{}}
	for _, o := range opts {
		o(&t.opt)
	}
	return t
}

// Call runs the function on in, a tree of *Array with the structure the Body's In type holds,
// and builds its results into the tree out points to (a *Out2 where Out2 has Out's structure
// with *Array leaves, as json.Unmarshal fills a value). Arrays at donated paths are closed. On
// error nothing is written to out and no result is left open.
func (t *TreeFunction[In, Out]) Call(c *pjrt.Client, in any, out any) error {
	return t.CallContext(context.Background(), c, in, out)
}

// CallContext is Call with a context, as Function.CallContext.
func (t *TreeFunction[In, Out]) CallContext(ctx context.Context, c *pjrt.Client, in any, out any) error {
	if t == nil {
		return fmt.Errorf("jit: call: %w: nil *TreeFunction", ErrNil)
	}
	args, d, err := tree.Flatten[*Array](in)
	if err != nil {
		return fmt.Errorf("jit: %s: %w: argument: %w", t.name, ErrArguments, err)
	}
	paths := d.Paths()
	for i, a := range args {
		if a == nil {
			return fmt.Errorf("jit: %s: %w: argument %s is a nil *Array", t.name, ErrNil, tree.ShowPath(paths[i]))
		}
	}
	if err := checkOut(out); err != nil {
		return fmt.Errorf("jit: %s: %w: %w", t.name, ErrArguments, err)
	}
	e, err := t.entry(d)
	if err != nil {
		return err
	}
	results, err := e.fn.CallContext(ctx, c, args...)
	if err != nil {
		return err
	}
	e.mu.Lock()
	od := e.out
	e.mu.Unlock()
	if err := tree.BuildInto(out, *od, results); err != nil {
		closeArrays(results)
		return fmt.Errorf("jit: %s: %w: result: %w", t.name, ErrArguments, err)
	}
	return nil
}

// checkOut refuses, before anything runs, a destination BuildInto cannot fill.
func checkOut(out any) error {
	if p := reflect.ValueOf(out); !p.IsValid() || p.Kind() != reflect.Pointer || p.IsNil() {
		return fmt.Errorf("the results go into a tree a non-nil pointer points to, not %T", out)
	}
	return nil
}

// Lower lowers the function for an abstract mesh and a tree of ArgType with the argument's
// structure, as Function.Lower: each ArgType's Spec is its leaf's layout.
func (t *TreeFunction[In, Out]) Lower(m mesh.Abstract, in any) (*lower.Program, error) {
	if t == nil {
		return nil, fmt.Errorf("jit: lower: %w: nil *TreeFunction", ErrNil)
	}
	args, d, err := tree.Flatten[ArgType](in)
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w: argument: %w", t.name, ErrArguments, err)
	}
	e, err := t.entry(d)
	if err != nil {
		return nil, err
	}
	return e.fn.Lower(m, args...)
}

// entry returns the Function for arguments of structure d, making it on first use.
func (t *TreeFunction[In, Out]) entry(d tree.Def) (*treeEntry, error) {
	key := d.String()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("jit: %s: %w", t.name, ErrClosed)
	}
	if e, ok := t.fns[key]; ok {
		return e, nil
	}
	if t.opt.flatOptions() {
		return nil, fmt.Errorf("jit: %s: %w: InSpecs, OutSpecs and Donate take argument positions; a TreeFunction takes InTree, OutTree and DonatePaths", t.name, ErrArguments)
	}
	e := &treeEntry{in: d}
	opts := append([]Option(nil), t.opts...)
	if t.opt.inTreeSet {
		specs, err := tree.Expand[mesh.PartitionSpec](t.opt.inTree, d)
		if err != nil {
			return nil, fmt.Errorf("jit: %s: %w: InTree: %w", t.name, ErrArguments, err)
		}
		opts = append(opts, InSpecs(specs...))
	}
	donate, err := donated(d.Paths(), t.opt.donatePaths)
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w: %w", t.name, ErrArguments, err)
	}
	e.donate = donate
	opts = append(opts, Donate(donate...), func(o *options) {
		o.inTree, o.inTreeSet, o.outTree, o.outTreeSet, o.donatePaths = nil, false, nil, false, nil
		if t.opt.outTreeSet {
			o.outFor = e.outSpecs(t.opt.outTree)
		}
	})
	e.fn = New(t.name, flatBody(e, t.body), opts...)
	t.fns[key] = e
	return e, nil
}

// donated returns the indices of the leaves whose path is one of prefixes or under one.
func donated(paths, prefixes []string) ([]int, error) {
	var out []int
	for _, p := range prefixes {
		found := false
		for i, leaf := range paths {
			if leaf == p || strings.HasPrefix(leaf, p) && strings.ContainsAny(leaf[len(p):len(p)+1], ".[") {
				found = true
				if !slices.Contains(out, i) {
					out = append(out, i)
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("DonatePaths: %s names no leaf of the argument", tree.ShowPath(p))
		}
	}
	return out, nil
}

// flatBody returns the Body of the entry's Function: it builds the body's tree from the
// arguments, runs it, and flattens its result, recording the result's structure.
func flatBody[In, Out any](e *treeEntry, body func(*lower.Function, In) Out) Body {
	return func(f *lower.Function, args []lower.Value) []lower.Value {
		in, err := tree.Build[In](e.in, args)
		if err != nil {
			f.Fail("jit.tree", -1, lower.Value{}, fmt.Errorf("argument: %w", err))
			return nil
		}
		if body == nil {
			f.Fail("jit.tree", -1, lower.Value{}, fmt.Errorf("%w: nil Body", ErrNil))
			return nil
		}
		leaves, d, err := tree.Flatten[lower.Value](body(f, in))
		if err != nil {
			f.Fail("jit.tree", -1, lower.Value{}, fmt.Errorf("result: %w", err))
			return nil
		}
		for i, p := range d.Paths() {
			if !leaves[i].Valid() {
				f.Failf("jit.tree", -1, lower.Value{}, ErrLowering, "result %s holds no value", tree.ShowPath(p))
				return nil
			}
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.out != nil && !e.out.Equal(d) {
			f.Failf("jit.tree", -1, lower.Value{}, ErrLowering, "the body returned %s, after %s for the same argument structure", d, e.out)
			return nil
		}
		e.out = &d
		return leaves
	}
}

// outSpecs returns the hook that gives the results' specs from OutTree, once the body has
// said the result's structure.
func (e *treeEntry) outSpecs(prefix any) func() ([]mesh.PartitionSpec, error) {
	return func() ([]mesh.PartitionSpec, error) {
		e.mu.Lock()
		d := e.out
		e.mu.Unlock()
		specs, err := tree.Expand[mesh.PartitionSpec](prefix, *d)
		if err != nil {
			return nil, fmt.Errorf("%w: OutTree: %w", ErrArguments, err)
		}
		return specs, nil
	}
}

// Close frees the executables of every structure's Function, as Function.Close; later calls
// fail with ErrClosed.
func (t *TreeFunction[In, Out]) Close() error {
	if t == nil {
		return fmt.Errorf("jit: close: %w: nil *TreeFunction", ErrNil)
	}
	t.mu.Lock()
	t.closed = true
	fns := t.fns
	t.fns = map[string]*treeEntry{}
	t.mu.Unlock()
	var first error
	for _, e := range fns {
		if err := e.fn.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// CloseTree closes every *Array of a tree (package tree), as Array.Close each; it returns the
// first error, naming its path. A nil leaf is skipped.
func CloseTree(v any) error {
	arrays, d, err := tree.Flatten[*Array](v)
	if err != nil {
		return fmt.Errorf("jit: close: %w", err)
	}
	var first error
	for i, a := range arrays {
		if a == nil {
			continue
		}
		if err := a.Close(); err != nil && first == nil {
			first = fmt.Errorf("jit: close %s: %w", tree.ShowPath(d.Paths()[i]), err)
		}
	}
	return first
}
