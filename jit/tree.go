package jit

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/tree"
)

// InTree declares the layout of a TreeFunction's arguments: one tree of mesh.PartitionSpec
// per argument, with the argument's structure or a prefix of it (one spec for a whole
// subtree), as jax.jit's in_shardings: Params[mesh.PartitionSpec] for an argument
// Params[*Array], mesh.P("data") for a whole batch. An option of NewTree only.
func InTree(specs ...any) Option {
	return func(o *options) { o.inTree, o.inTreeSet = slices.Clone(specs), true }
}

// OutTree declares the layout of a TreeFunction's results, one tree (or prefix tree) of
// mesh.PartitionSpec per result, as jax.jit's out_shardings. An option of NewTree only.
func OutTree(specs ...any) Option {
	return func(o *options) { o.outTree, o.outTreeSet = slices.Clone(specs), true }
}

// DonatePaths donates the leaves of a TreeFunction's arguments at these tree paths and under
// them, the arguments numbered as a list: "[1]" donates the whole second argument,
// "[0].Blocks" the blocks of the first (Donate(1) is "[1]"). A path that names no leaf of a
// call's arguments fails the call with ErrArguments. An option of NewTree only.
func DonatePaths(paths ...string) Option {
	return func(o *options) { o.donatePaths = append(o.donatePaths, paths...) }
}

// treeOptions says whether o holds options of NewTree, which a Function of flat arguments
// refuses.
func (o *options) treeOptions() bool { return o.inTreeSet || o.outTreeSet || o.donatePaths != nil }

// TreeFunction is a jitted function of trees, as jax.jit of a function of pytrees: its body
// is any func(*lower.Function, A1, ..., An) (R1, ..., Rm) whose arguments and results are
// trees of lower.Value (package tree: structs, slices, maps, or one lower.Value), and Call
// takes one tree of *Array per argument and fills one tree of *Array per result. Generic
// struct types serve both sides: a body taking a Params[lower.Value] is called with a
// Params[*Array], and fills a Params[*Array].
//
// A TreeFunction keeps one Function (and its caches) per structure of arguments it was
// called with, made on the first such call: its arguments are the trees' leaves in order, its
// InSpecs, OutSpecs and Donate come from InTree, OutTree, Donate and DonatePaths. Paths name
// the arguments as a list: "[0].Blocks[1].Wq" is a leaf of the first; errors name them.
// Close frees what the Functions hold. Safe for concurrent use.
type TreeFunction struct {
	name    string
	body    reflect.Value
	bodyErr error          // what is wrong with body's type, if anything
	ins     []reflect.Type // the body's argument types, after *lower.Function
	nOut    int
	opts    []Option
	opt     options

	mu     sync.Mutex
	fns    map[string]*treeEntry // by the arguments' tree.Def text
	closed bool
}

// treeEntry is the Function of one structure of arguments.
type treeEntry struct {
	fn *Function
	in tree.Def

	mu  sync.Mutex
	out *tree.Def // the structure of the body's results, from its first lowering
}

var functionType = reflect.TypeFor[*lower.Function]()

// NewTree returns a jitted function of trees named name (the module is "jit_<name>"). body
// must be a func taking a *lower.Function and then its arguments, each a tree of lower.Value,
// and returning its results, each a tree of lower.Value; another body makes every call fail
// with ErrArguments. It takes New's options with these meanings: InSpecs and OutSpecs give one
// spec per argument or result, for the whole tree; Donate donates whole arguments; InTree,
// OutTree and DonatePaths say the same by tree.
func NewTree(name string, body any, opts ...Option) *TreeFunction {
	t := &TreeFunction{name: name, body: reflect.ValueOf(body), opts: opts, fns: map[string]*treeEntry{}}
	for _, o := range opts {
		o(&t.opt)
	}
	if body == nil || t.body.Kind() != reflect.Func {
		t.bodyErr = fmt.Errorf("the body is a %T, not a func(*lower.Function, ...)", body)
		return t
	}
	ty := t.body.Type()
	switch {
	case ty.IsVariadic() || ty.NumIn() == 0 || ty.In(0) != functionType:
		t.bodyErr = fmt.Errorf("the body is a %s; its first argument must be a *lower.Function, and it cannot be variadic", ty)
	case t.body.IsNil():
		t.bodyErr = fmt.Errorf("%w: nil body", ErrNil)
	default:
		for i := 1; i < ty.NumIn(); i++ {
			t.ins = append(t.ins, ty.In(i))
		}
		t.nOut = ty.NumOut()
	}
	return t
}

// Call runs the function on args, one tree of *Array per argument of the body, and builds its
// results into the trees outs point to, one pointer per result (a *Params[*Array] for a
// Params[lower.Value] result, a **Array for a lower.Value), as json.Unmarshal fills a value.
// Arrays of donated arguments are closed. On error nothing is written to outs and no result
// is left open.
func (t *TreeFunction) Call(c *pjrt.Client, args []any, outs ...any) error {
	return t.CallContext(context.Background(), c, args, outs...)
}

// CallContext is Call with a context, as Function.CallContext.
func (t *TreeFunction) CallContext(ctx context.Context, c *pjrt.Client, args []any, outs ...any) error {
	if t == nil {
		return fmt.Errorf("jit: call: %w: nil *TreeFunction", ErrNil)
	}
	if err := t.check(len(args)); err != nil {
		return err
	}
	if len(outs) != t.nOut {
		return fmt.Errorf("jit: %s: %w: %d places for the body's %d results", t.name, ErrArguments, len(outs), t.nOut)
	}
	for i, out := range outs {
		if p := reflect.ValueOf(out); !p.IsValid() || p.Kind() != reflect.Pointer || p.IsNil() {
			return fmt.Errorf("jit: %s: %w: result %d goes into the tree a non-nil pointer points to, not %T", t.name, ErrArguments, i, out)
		}
	}
	arrays, d, err := tree.Flatten[*Array](args)
	if err != nil {
		return fmt.Errorf("jit: %s: %w: %w", t.name, ErrArguments, err)
	}
	for i, p := range d.Paths() {
		if arrays[i] == nil {
			return fmt.Errorf("jit: %s: %w: argument %s is a nil *Array", t.name, ErrNil, p)
		}
	}
	e, err := t.entry(d)
	if err != nil {
		return err
	}
	results, err := e.fn.CallContext(ctx, c, arrays...)
	if err != nil {
		return err
	}
	e.mu.Lock()
	od := e.out
	e.mu.Unlock()
	// Build every result before writing any, so that a failure writes nothing.
	built := make([]reflect.Value, len(outs))
	next := 0
	for i, cd := range od.Children() {
		v := reflect.New(reflect.TypeOf(outs[i]).Elem())
		n := cd.NumLeaves()
		if err := tree.BuildInto(v.Interface(), cd, results[next:next+n]); err != nil {
			closeArrays(results)
			return fmt.Errorf("jit: %s: %w: result %d: %w", t.name, ErrArguments, i, err)
		}
		built[i], next = v.Elem(), next+n
	}
	for i, v := range built {
		reflect.ValueOf(outs[i]).Elem().Set(v)
	}
	return nil
}

// check refuses a body of the wrong type, a closed function and a wrong number of arguments.
func (t *TreeFunction) check(nArgs int) error {
	if t.bodyErr != nil {
		return fmt.Errorf("jit: %s: %w: %w", t.name, ErrArguments, t.bodyErr)
	}
	if nArgs != len(t.ins) {
		return fmt.Errorf("jit: %s: %w: %d arguments for a body of %d", t.name, ErrArguments, nArgs, len(t.ins))
	}
	return nil
}

// Lower lowers the function for an abstract mesh and one tree of ArgType per argument, as
// Function.Lower: each ArgType's Spec is its leaf's layout.
func (t *TreeFunction) Lower(m mesh.Abstract, args ...any) (*lower.Program, error) {
	if t == nil {
		return nil, fmt.Errorf("jit: lower: %w: nil *TreeFunction", ErrNil)
	}
	if err := t.check(len(args)); err != nil {
		return nil, err
	}
	types, d, err := tree.Flatten[ArgType](args)
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w: %w", t.name, ErrArguments, err)
	}
	e, err := t.entry(d)
	if err != nil {
		return nil, err
	}
	return e.fn.Lower(m, types...)
}

// entry returns the Function for arguments of structure d, making it on first use.
func (t *TreeFunction) entry(d tree.Def) (*treeEntry, error) {
	key := d.String()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("jit: %s: %w", t.name, ErrClosed)
	}
	if e, ok := t.fns[key]; ok {
		return e, nil
	}
	e := &treeEntry{in: d}
	opts := slices.Clone(t.opts)
	in, err := t.inSpecs(d)
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w: %w", t.name, ErrArguments, err)
	}
	if in != nil {
		opts = append(opts, InSpecs(in...))
	}
	prefixes := slices.Clone(t.opt.donatePaths)
	for _, i := range t.opt.donate {
		prefixes = append(prefixes, "["+strconv.Itoa(i)+"]")
	}
	donate, err := donated(d.Paths(), prefixes)
	if err != nil {
		return nil, fmt.Errorf("jit: %s: %w: %w", t.name, ErrArguments, err)
	}
	outPrefix := t.outPrefix()
	opts = append(opts, func(o *options) {
		// The Function's own options: flat ones, and the hook for the result specs.
		o.in, o.out, o.donate = in, nil, donate
		o.inTree, o.inTreeSet, o.outTree, o.outTreeSet, o.donatePaths = nil, false, nil, false, nil
		if outPrefix != nil {
			o.outFor = e.outSpecs(outPrefix)
		}
	})
	e.fn = New(t.name, t.flatBody(e), opts...)
	t.fns[key] = e
	return e, nil
}

// inSpecs returns the flat InSpecs for arguments of structure d: InTree or InSpecs expanded
// over each argument, or nil when neither was given.
func (t *TreeFunction) inSpecs(d tree.Def) ([]mesh.PartitionSpec, error) {
	prefix := t.opt.inTree
	switch {
	case t.opt.inTreeSet && t.opt.in != nil:
		return nil, fmt.Errorf("InTree and InSpecs both given")
	case t.opt.in != nil:
		prefix = toAny(t.opt.in)
	case !t.opt.inTreeSet:
		return nil, nil
	}
	if len(prefix) != len(t.ins) {
		return nil, fmt.Errorf("%d trees of specs for %d arguments", len(prefix), len(t.ins))
	}
	return tree.Expand[mesh.PartitionSpec](prefix, d)
}

// outPrefix returns the results' spec trees, from OutTree or OutSpecs; nil when neither was
// given.
func (t *TreeFunction) outPrefix() []any {
	if t.opt.outTreeSet {
		return t.opt.outTree
	}
	if t.opt.out != nil {
		return toAny(t.opt.out)
	}
	return nil
}

func toAny(specs []mesh.PartitionSpec) []any {
	out := make([]any, len(specs))
	for i, s := range specs {
		out[i] = s
	}
	return out
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
			return nil, fmt.Errorf("donation: %s names no leaf of the arguments", tree.ShowPath(p))
		}
	}
	slices.Sort(out)
	return out, nil
}

// flatBody returns the Body of the entry's Function: it builds the body's argument trees
// from the flat arguments, calls the body, and flattens its results, recording their
// structure.
func (t *TreeFunction) flatBody(e *treeEntry) Body {
	return func(f *lower.Function, args []lower.Value) []lower.Value {
		in := []reflect.Value{reflect.ValueOf(f)}
		next := 0
		for i, cd := range e.in.Children() {
			v := reflect.New(t.ins[i])
			n := cd.NumLeaves()
			if err := tree.BuildInto(v.Interface(), cd, args[next:next+n]); err != nil {
				f.Fail("jit.tree", -1, lower.Value{}, fmt.Errorf("argument %d: %w", i, err))
				return nil
			}
			in, next = append(in, v.Elem()), next+n
		}
		out := make([]any, t.nOut)
		for i, r := range t.body.Call(in) {
			out[i] = r.Interface()
		}
		leaves, d, err := tree.Flatten[lower.Value](out)
		if err != nil {
			f.Fail("jit.tree", -1, lower.Value{}, fmt.Errorf("results: %w", err))
			return nil
		}
		for i, p := range d.Paths() {
			if !leaves[i].Valid() {
				f.Failf("jit.tree", -1, lower.Value{}, ErrLowering, "result %s holds no value", p)
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

// outSpecs returns the hook that gives the results' specs from their spec trees, once the
// body has said the results' structure.
func (e *treeEntry) outSpecs(prefix []any) func() ([]mesh.PartitionSpec, error) {
	return func() ([]mesh.PartitionSpec, error) {
		e.mu.Lock()
		d := e.out
		e.mu.Unlock()
		if len(prefix) != len(d.Children()) {
			return nil, fmt.Errorf("%w: %d trees of specs for %d results", ErrArguments, len(prefix), len(d.Children()))
		}
		specs, err := tree.Expand[mesh.PartitionSpec](prefix, *d)
		if err != nil {
			return nil, fmt.Errorf("%w: OutTree: %w", ErrArguments, err)
		}
		return specs, nil
	}
}

// Close frees the executables of every structure's Function, as Function.Close; later calls
// fail with ErrClosed.
func (t *TreeFunction) Close() error {
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
