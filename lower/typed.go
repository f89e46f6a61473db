package lower

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/shardy"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Type is the type of a value built on a mesh with Explicit axes, as jax.typeof gives it:
// the shape and, per dimension, the Explicit mesh axes it is sharded over, plus the
// unreduced axes of a partial sum. Auto and Manual axes are not part of types. Type is
// immutable; the zero Type is the type of a value outside sharding in types.
type Type struct {
	shape     Shape
	abs       mesh.Abstract
	typed     bool
	dims      [][]string // Explicit axes per dimension (nil: unsharded)
	unreduced []string   // in mesh order
	varying   []string   // in a shard_map body: the manual axes the value varies over
}

// Shape returns the value's shape.
func (t Type) Shape() Shape { return t.shape }

// Typed reports whether the type carries a sharding (the value was built on a mesh with
// Explicit axes).
func (t Type) Typed() bool { return t.typed }

// Mesh returns the abstract mesh of the type's sharding.
func (t Type) Mesh() mesh.Abstract { return t.abs }

// Spec returns the type's partition spec, one entry per dimension.
func (t Type) Spec() mesh.PartitionSpec {
	dims := make([]mesh.Dim, len(t.dims))
	for i, d := range t.dims {
		dims[i] = mesh.None
		if len(d) > 0 {
			dims[i] = mesh.Axes(d...)
		}
	}
	return mesh.SpecOf(dims...)
}

// Sharding returns the type's sharding: Spec over Mesh.
func (t Type) Sharding() (mesh.NamedSharding, error) {
	return mesh.NewAbstractSharding(t.abs, t.Spec())
}

// Unreduced returns the axes over which the value is a partial sum still to be reduced
// (JAX's unreduced axes), in mesh order.
func (t Type) Unreduced() []string { return slices.Clone(t.unreduced) }

// Varying returns, for a value of a shard_map body, the manual axes it varies over (JAX's
// vma), in mesh order.
func (t Type) Varying() []string { return slices.Clone(t.varying) }

// String returns the type as jax.typeof prints it: "float32[8@X,4@Y]", "float32[8,16]{U:X}",
// "float32[8@(X,Y)]"; a type without a sharding prints its shape alone ("float32[8,4]").
func (t Type) String() string { return t.format(shapes.NumPyName(t.shape.DType())) }

// short is the type as JAX's error messages write it, with short dtypes ("f32[4@X,4]").
func (t Type) short() string { return t.format(shapes.AvalName(t.shape.DType())) }

func (t Type) format(dtype string) string {
	var b strings.Builder
	b.WriteString(dtype)
	b.WriteByte('[')
	for i := range t.shape.Rank() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(t.shape.Dim(i)))
		if i < len(t.dims) && len(t.dims[i]) > 0 {
			b.WriteByte('@')
			writeAxes(&b, t.dims[i])
		}
	}
	b.WriteByte(']')
	var sets []string
	for _, s := range []struct {
		key  string
		axes []string
	}{{"V:", t.varying}, {"U:", t.unreduced}} {
		if len(s.axes) > 0 {
			var a strings.Builder
			a.WriteString(s.key)
			writeAxes(&a, s.axes)
			sets = append(sets, a.String())
		}
	}
	if len(sets) > 0 {
		b.WriteString("{" + strings.Join(sets, ", ") + "}")
	}
	return b.String()
}

// writeAxes writes X for one axis and (X,Y) for several, as JAX's types do.
func writeAxes(b *strings.Builder, axes []string) {
	if len(axes) == 1 {
		b.WriteString(axes[0])
		return
	}
	b.WriteByte('(')
	b.WriteString(strings.Join(axes, ","))
	b.WriteByte(')')
}

// pyEntry is one spec entry as Python prints it inside a tuple: None, 'X' or ('X', 'Y').
func pyEntry(axes []string) string {
	switch len(axes) {
	case 0:
		return "None"
	case 1:
		return "'" + axes[0] + "'"
	}
	q := make([]string, len(axes))
	for i, a := range axes {
		q[i] = "'" + a + "'"
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// pyTuple is a tuple of spec entries as Python prints it: "('X', None)", "('X',)", "()".
func pyTuple(entries [][]string) string {
	s := make([]string, len(entries))
	for i, e := range entries {
		s[i] = pyEntry(e)
	}
	if len(s) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// typing is a module's sharding in types: the context mesh (JAX's set_mesh, or the mesh of
// the arguments' shardings) and each value's type.
type typing struct {
	abs     mesh.Abstract
	types   map[Value]Type
	splats  map[Value]bool // splat constants of rank > 0 (JAX's broadcast scalars)
	pending *pendingOut    // the out sharding of the op being built by an ...Out method
	devices *mesh.Mesh     // the concrete mesh of the arguments' shardings, when they have one
}

// sharding returns t's sharding, over the arguments' concrete mesh when they have one (so that
// the results' shardings place data), else over the abstract mesh.
func (tg *typing) sharding(t Type) (mesh.NamedSharding, error) {
	if tg.devices != nil {
		return mesh.NewNamedSharding(*tg.devices, t.Spec())
	}
	return t.Sharding()
}

// pendingOut is an out sharding waiting for the op it is given to.
type pendingOut struct {
	op   string // the op it is for, e.g. "stablehlo.dot_general"
	out  OutSharding
	used bool
}

// OutSharding is JAX's out_sharding argument, for the ops whose result sharding the
// program states (the ...Out methods: DotGeneralOut, EinsumOut, ReshapeOut, ReduceOut,
// GatherOut, ScatterOut, IotaOut, FullOut, RngBitGeneratorOut): the result's spec over the
// module's mesh and, for a partial sum, the axes left unreduced.
type OutSharding struct {
	Spec      mesh.PartitionSpec
	Unreduced []string
}

// Out returns the OutSharding spec with the given unreduced axes (JAX's
// P(..., unreduced={...})).
func Out(spec mesh.PartitionSpec, unreduced ...string) OutSharding {
	return OutSharding{Spec: spec, Unreduced: slices.Clone(unreduced)}
}

// WithMesh makes a the module's context mesh, as jax.set_mesh does for tracing: when a has an
// Explicit axis, every value of the module has a sharding type (see Function.TypeOf) from the
// first op on, even without arguments. Without it, the first argument sharded over a mesh
// with an Explicit axis sets the context mesh.
func WithMesh(a mesh.Abstract) Option { return func(c *config) { c.ctxMesh = &a } }

// hasExplicit reports whether a has an Explicit axis.
func hasExplicit(a mesh.Abstract) bool { return slices.Contains(a.AxisTypes(), mesh.Explicit) }

// allExplicit reports whether every axis of a is Explicit.
func allExplicit(a mesh.Abstract) bool {
	for _, t := range a.AxisTypes() {
		if t != mesh.Explicit {
			return false
		}
	}
	return len(a.AxisNames()) > 0
}

// startTyping turns sharding in types on over a.
func (m *Module) startTyping(a mesh.Abstract) {
	m.typing = &typing{abs: a, types: make(map[Value]Type), splats: make(map[Value]bool)}
	m.hlo.SetOpHook(m.typeOp)
	m.hlo.SetContext(autodiff.ContributionKey{}, m.typedContribution)
}

// typedContribution gives a cotangent contribution its primal value's type, as JAX's
// cotangents have their primals' types: a Reshard where they differ. Values of region bodies
// are not typed and pass unchanged.
func (m *Module) typedContribution(b *autodiff.Backward, primal, ct Value, _ *stablehlo.Op) Value {
	g := b.Function()
	if g.IsRegion() || !ct.Valid() {
		return ct
	}
	want, _ := m.typeOf(primal)
	got, _ := m.typeOf(ct)
	if slices.EqualFunc(want.dims, got.dims, slices.Equal) && len(got.unreduced) == 0 {
		return ct
	}
	s, err := m.typing.sharding(want)
	if err != nil {
		g.Fail("vjp", -1, ct, fmt.Errorf("%w: %w", ErrSharding, err))
		return ct
	}
	return FunctionOf(g).Reshard(ct, s)
}

// TypeOf returns v's type, as jax.typeof does: on a module whose mesh has Explicit axes, its
// shape with the sharding the op rules gave it ("float32[8@X,4]"); elsewhere a Type without
// a sharding.
func (f *Function) TypeOf(v Value) Type {
	if f.m.typing != nil && v.Valid() {
		// In a shard_map body: the per-device shape and the manual axes it varies over.
		if axes, ok := f.VaryingAxes(v); ok {
			return Type{shape: v.Shape(), abs: f.m.typing.abs, typed: true, varying: axes}
		}
	}
	if t, ok := f.m.typeOf(v); ok {
		return t
	}
	return Type{shape: v.Shape()}
}

// typedInSpecs is shard_map's in_specs under sharding in types: the arguments' types when
// inSpecs is nil (JAX's inferred in_specs), else inSpecs, each of which must name the
// Explicit axes of its argument's type (JAX 0.9.1 and later refuse a differing one).
func (f *Function) typedInSpecs(opName string, inSpecs []mesh.PartitionSpec, vs []Value) ([]mesh.PartitionSpec, bool) {
	types := make([]Type, len(vs))
	for i, v := range vs {
		types[i], _ = f.m.typeOf(v)
	}
	if inSpecs == nil {
		inSpecs = make([]mesh.PartitionSpec, len(vs))
		for i, t := range types {
			inSpecs[i] = t.Spec()
		}
		return inSpecs, true
	}
	if len(inSpecs) != len(vs) {
		return inSpecs, true // shardMap reports it
	}
	for i, spec := range inSpecs {
		given := make([][]string, types[i].shape.Rank())
		explicitOnly := true
		for d := range min(spec.Len(), len(given)) {
			given[d] = spec.Dim(d).Axes()
			for _, ax := range given[d] {
				if at, _ := f.m.typing.abs.AxisType(ax); at != mesh.Explicit {
					explicitOnly = false
				}
			}
		}
		if explicitOnly && !slices.EqualFunc(given, types[i].dims, slices.Equal) {
			f.Failf(opName, i, vs[i], ErrShardingType, "in_specs passed to shard_map: %s does not match the specs of the input: %s for arg: %s. `in_specs` is an optional argument so you can omit specifying it and shard_map will infer the in_specs from the arguments. If you want to reshard your inputs, you can use `jax.reshard` on the arguments and then pass those args to shard_map.",
				spec.String(), types[i].Spec().String(), types[i])
			return nil, false
		}
	}
	return inSpecs, true
}

// typeOf returns v's sharding type when the module has sharding in types. A value the op
// rules did not see (a constant, a value of a region body) is replicated.
func (m *Module) typeOf(v Value) (Type, bool) {
	tg := m.typing
	if tg == nil || !v.Valid() {
		return Type{}, false
	}
	if !hasExplicit(tg.abs) {
		return tg.replicated(v.Shape()), true // inside AutoAxes over every axis: types are P()
	}
	if t, ok := tg.types[v]; ok {
		return t, true
	}
	if g := v.Function(); g != nil && g.IsOpen() {
		// A loop body's argument has the type of the loop's initial value.
		if inits := g.ArgInits(); inits != nil {
			i := slices.Index(g.Args(), v)
			if i >= 0 && i < len(inits) {
				t, _ := m.typeOf(inits[i])
				tg.types[v] = t
				return t, true
			}
			if y, ok := g.ArgStacks(i); ok {
				// A Scan's stacked output: its element's type under an unsharded leading
				// dimension, as JAX types scan's ys.
				t, _ := m.typeOf(y)
				t.shape = v.Shape()
				t.dims = append([][]string{nil}, t.dims...)
				tg.types[v] = t
				return t, true
			}
		}
	}
	return tg.replicated(v.Shape()), true
}

func (tg *typing) replicated(s Shape) Type {
	return Type{shape: s, abs: tg.abs, typed: true, dims: make([][]string, s.Rank())}
}

// typeFromSharding is the type of a value of shape s with sharding sh: its Explicit axes.
func (tg *typing) typeFromSharding(s Shape, sh mesh.NamedSharding, unreduced []string) Type {
	t := tg.replicated(s)
	spec := sh.Spec()
	for i := range min(spec.Len(), s.Rank()) {
		for _, ax := range spec.Dim(i).Axes() {
			if typ, _ := tg.abs.AxisType(ax); typ == mesh.Explicit {
				t.dims[i] = append(t.dims[i], ax)
			}
		}
	}
	t.unreduced = tg.meshOrder(unreduced)
	return t
}

// meshOrder returns axes in mesh order, without repeats; nil for none.
func (tg *typing) meshOrder(axes []string) []string {
	var out []string
	for _, n := range tg.abs.AxisNames() {
		if slices.Contains(axes, n) {
			out = append(out, n)
		}
	}
	return out
}

// argType records the type of argument v of a top-level function, sharded by sh, turning
// sharding in types on when sh's mesh has an Explicit axis. An argument without a sharding
// needs no record: typeOf gives it the replicated type.
func (f *Function) argType(v Value, sh mesh.NamedSharding) error {
	m := f.m
	if hasExplicit(sh.Abstract()) {
		switch {
		case m.typing == nil:
			m.startTyping(sh.Abstract()) // arguments come before any op (stablehlo checks it)
		case !sameShape(m.typing.abs, sh.Abstract()) || !slices.Equal(m.typing.abs.AxisTypes(), sh.Abstract().AxisTypes()):
			return fmt.Errorf("%w: %w: Mesh for all inputs should be equal. Got one mesh: %v and another mesh: %v",
				ErrMeshMismatch, ErrShardingType, m.typing.abs, sh.Abstract())
		}
	}
	if m.typing == nil {
		return nil
	}
	if m.typing.devices == nil {
		if c, err := sh.Mesh(); err == nil && sameShape(c.Abstract(), m.typing.abs) {
			c, err = c.WithAxisTypes(m.typing.abs.AxisTypes()...)
			if err == nil {
				m.typing.devices = &c
			}
		}
	}
	m.typing.types[v] = m.typing.typeFromSharding(v.Shape(), sh, nil)
	return nil
}

// typeOp is the module's op hook under sharding in types: it gives o's results their types
// by o's rule and, as JAX lowers Explicit shardings, follows each with an
// `sdy.sharding_constraint` to its type.
func (m *Module) typeOp(g *stablehlo.Function, o *stablehlo.Op) []stablehlo.Value {
	tg := m.typing
	if inClosedRegion(g) {
		// A combiner or comparator body (scalars), or a shard_map body (per-device values),
		// and the loops and branches inside them: not typed. The bodies of loops and branches
		// of the function itself are typed like it.
		return nil
	}
	if !hasExplicit(tg.abs) {
		return nil // inside AutoAxes over every axis (or before ExplicitAxes): no types, no rules
	}
	name := o.Name()
	switch name {
	case "stablehlo.constant":
		// Constants are replicated and not constrained. A splat of rank > 0 stands for JAX's
		// broadcast scalar, which the op using it constrains to its result's sharding.
		if p, ok := o.Params().(stablehlo.ConstantParams); ok && o.Results()[0].Shape().Rank() > 0 && !strings.HasPrefix(p.Value, "dense<[") {
			tg.splats[o.Results()[0]] = true
		}
		return nil
	case "stablehlo.return":
		return nil
	case "stablehlo.custom_call":
		if p, ok := o.Params().(stablehlo.CustomCallParams); ok && p.Target == PlacementTarget {
			// Placing a value in a memory keeps its type; JAX writes no constraint after it.
			tg.types[o.Results()[0]], _ = m.typeOf(o.Operands()[0])
			return nil
		}
	case "sdy.sharding_constraint":
		p, _ := o.Params().(ShardingConstraintParams)
		r := o.Results()[0]
		if p.typed != nil {
			tg.types[r] = *p.typed
		} else {
			tg.types[r], _ = m.typeOf(o.Operands()[0])
		}
		return nil
	}
	var pend *pendingOut
	if tg.pending != nil && tg.pending.op == name && !tg.pending.used {
		pend = tg.pending
		pend.used = true
	}
	types, err := m.rule(o, pend)
	if err != nil && autodiff.Transposing(g) && errors.Is(err, ErrShardingType) {
		// A transpose rule's op that JAX would build with an out sharding (JAX's transpose
		// rules pass the primal's): its result is replicated here, and the walk reshards
		// each cotangent contribution to its primal's type (typedContribution).
		types, err = make([]Type, len(o.Results())), nil
		for i, r := range o.Results() {
			types[i] = tg.replicated(r.Shape())
		}
	}
	if err != nil {
		g.Fail(strings.TrimPrefix(name, "stablehlo."), -1, stablehlo.Value{}, err)
		return nil
	}
	f := FunctionOf(g)
	if preConstrained(o) {
		// As JAX's elementwise lowering does, an operand sharded otherwise than the result is
		// constrained to the result's sharding first.
		ops := o.Operands()
		moved := false
		for i, v := range ops {
			t, _ := m.typeOf(v)
			same := slices.EqualFunc(t.dims, types[0].dims, slices.Equal) && !tg.splats[v]
			if v.Shape().Rank() != types[0].shape.Rank() || len(t.unreduced) > 0 || same {
				continue
			}
			want := types[0]
			want.shape = v.Shape()
			want.unreduced = nil
			ops[i] = f.constrainTo(v, want)
			moved = true
		}
		if moved {
			g.MoveToEnd(o, ops)
		}
	}
	out := o.Results()
	for i, r := range out {
		t := types[i]
		tg.types[r] = t
		if name != "stablehlo.compare" { // JAX constrains a comparison's operands, not its result
			out[i] = f.constrainTo(r, t)
		}
	}
	return out
}

// preConstrained reports whether o is an elementwise op of several operands that JAX lowers
// with its generic n-ary lowering, which constrains each operand to the result's sharding.
func preConstrained(o *stablehlo.Op) bool {
	if len(o.Operands()) < 2 || len(o.Regions()) > 0 || !elementwise(o) {
		return false
	}
	switch o.Name() {
	case "stablehlo.select", "stablehlo.convert", "stablehlo.bitcast_convert":
		return false
	}
	switch o.Params().(type) {
	case nil, stablehlo.CompareParams, stablehlo.ReluParams:
		return true
	}
	return false
}

// inClosedRegion reports whether g is, or is nested in, a closed region body (see
// stablehlo's region.go): one whose values are not the function's.
func inClosedRegion(g *stablehlo.Function) bool {
	for h := g; h != nil && h.IsRegion(); h = h.Parent() {
		if !h.IsOpen() {
			return true
		}
	}
	return false
}

// constrainTo follows r with `sdy.sharding_constraint` to type t, as JAX's
// lower_with_sharding_in_types does, and returns the constrained value (whose type is t).
func (f *Function) constrainTo(r Value, t Type) Value {
	if f.m.cfg.partitioner == GSPMD {
		return r // GSPMD: types are checked, not written (no Explicit lowering to follow)
	}
	text, err := f.m.typeShardingText(t)
	if err != nil {
		f.Fail("sdy.sharding_constraint", 0, r, err)
		return Value{}
	}
	sh, _ := t.Sharding()
	tt := t
	c := f.AddOp(stablehlo.OpSpec{Name: "sdy.sharding_constraint", Operands: []Value{r}, Results: []Shape{r.Shape()},
		Params: ShardingConstraintParams{Sharding: sh, text: text, typed: &tt}, Print: printConstraint})[0]
	f.m.typing.types[c] = t
	return c
}

// typeShardingText is the `<@mesh, [...]>` text of type t's sharding, as JAX writes it:
// closed dimensions on a mesh of Explicit axes, open ones (and the unused Explicit axes
// replicated) on a mesh with Auto axes; unreduced axes as `unreduced={...}`.
func (m *Module) typeShardingText(t Type) (string, error) {
	sh, err := t.Sharding()
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrSharding, err)
	}
	sym, err := m.typedMeshSym(t.abs)
	if err != nil {
		return "", err
	}
	ts, err := shardy.FromNamedSharding(sh, sym.name, t.shape.Rank())
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrSharding, err)
	}
	if len(t.unreduced) > 0 {
		ts = ts.WithUnreduced(shardy.ReduceSum, shardy.AxisRefs(t.unreduced...)...)
	}
	return shardy.AdjustForAxisTypes(ts, t.abs).Stripped(), nil
}

// typedMeshSym returns the module's mesh symbol for a type over a: the one of a's shape in
// the module's device order, whatever its axis types (AutoAxes and ExplicitAxes change them
// for a region of the program; JAX names the same @mesh), else a new one.
func (m *Module) typedMeshSym(a mesh.Abstract) (*meshSym, error) {
	for _, s := range m.meshes {
		if !s.maximal && !s.collective && s.rel == nil && sameShape(s.abs, a) {
			return s, nil
		}
	}
	return m.meshFor(a, nil)
}

// withPending runs build with out as the out sharding of the first op named op that it
// adds, and returns build's value; an out sharding no op took is an error.
func (f *Function) withPending(op string, out OutSharding, build func() Value) Value {
	tg := f.m.typing
	if tg == nil {
		if f.Failed() {
			return Value{}
		}
		f.Failf(strings.TrimPrefix(op, "stablehlo."), -1, Value{}, ErrSharding,
			"an out sharding needs a mesh with Explicit axes (WithMesh, or an argument sharded over one)")
		return Value{}
	}
	if err := out.Spec.Err(); err != nil {
		f.Fail(strings.TrimPrefix(op, "stablehlo."), -1, Value{}, fmt.Errorf("%w: %w", ErrSharding, err))
		return Value{}
	}
	prev := tg.pending
	p := &pendingOut{op: op, out: out}
	tg.pending = p
	v := build()
	tg.pending = prev
	if !p.used && !f.Failed() {
		f.Failf(strings.TrimPrefix(op, "stablehlo."), -1, Value{}, ErrSharding, "the out sharding was given to no %s op", op)
		return Value{}
	}
	return v
}

// DotGeneralOut is DotGeneral with JAX's out_sharding: the result has out's type, and
// contracting over sharded dimensions may leave the result unreduced over their axes
// (Out(P(nil, nil), "X")), to be reduced by Reshard.
func (f *Function) DotGeneralOut(lhs, rhs Value, dims DotDims, out OutSharding) Value {
	return f.withPending("stablehlo.dot_general", out, func() Value { return f.DotGeneral(lhs, rhs, dims) })
}

// GatherOut is Gather with the out sharding JAX asks for (x.at[idx].get(out_sharding=...))
// where the rule cannot tell the result's sharding: an indexed dimension that is sharded,
// or sharded indices.
func (f *Function) GatherOut(x, indices Value, p stablehlo.GatherParams, out OutSharding) Value {
	return f.withPending("stablehlo.gather", out, func() Value { return f.Gather(x, indices, p) })
}

// ScatterOut is Scatter with the out sharding JAX asks for (x.at[idx].add(..., out_sharding=...))
// where the rule cannot tell the result's sharding.
func (f *Function) ScatterOut(x, indices, updates Value, p stablehlo.ScatterParams, out OutSharding) Value {
	return f.withPending("stablehlo.scatter", out, func() Value { return f.Scatter(x, indices, updates, p) })
}

// RngBitGeneratorOut is RngBitGenerator with JAX's out_sharding for the bits
// (lax.rng_bit_generator(..., out_sharding=...)); the new state keeps the state's type.
func (f *Function) RngBitGeneratorOut(state Value, alg stablehlo.RngAlgorithm, shape Shape, out OutSharding) (newState, bits Value) {
	f.withPending("stablehlo.rng_bit_generator", out, func() Value {
		newState, bits = f.RngBitGenerator(state, alg, shape)
		return bits
	})
	return newState, bits
}

// ReshapeOut is Reshape with JAX's out_sharding, for reshapes whose result sharding the rules
// cannot infer.
func (f *Function) ReshapeOut(x Value, out OutSharding, dims ...int) Value {
	return f.withPending("stablehlo.reshape", out, func() Value { return f.Reshape(x, dims...) })
}

// IotaOut is Iota with JAX's out_sharding (jnp.arange(..., out_sharding=...)): the result is
// sharded as out says instead of replicated.
func (f *Function) IotaOut(s Shape, dim int, out OutSharding) Value {
	return f.withPending("stablehlo.iota", out, func() Value { return f.Iota(s, dim) })
}

// ReduceOut is Reduce with JAX's out_sharding (lax.reduce_sum(..., out_sharding=...)): a sum
// over sharded dimensions may stay unreduced over their axes.
func (f *Function) ReduceOut(x Value, r Reduction, out OutSharding, dims ...int) Value {
	return f.withPending("stablehlo.reduce", out, func() Value { return f.Reduce(x, r, dims...) })
}

// Reshard returns x moved to sharding s, as jax.sharding.reshard: its type becomes s's spec
// (unreduced axes of x are reduced), lowered to one `sdy.sharding_constraint`. It needs a
// module with sharding in types; s must be on the module's mesh.
func (f *Function) Reshard(x Value, s mesh.NamedSharding) Value {
	const opName = "reshard"
	tg := f.m.typing
	vs, ok := f.Operands(opName, x)
	if !ok {
		return Value{}
	}
	a := vs[0]
	if tg == nil {
		f.Failf(opName, 0, a, ErrSharding, "Reshard needs a mesh with Explicit axes (WithMesh, or an argument sharded over one)")
		return Value{}
	}
	if s.Key() == "" {
		f.Failf(opName, 0, a, ErrShardingType, "Reshard should only be used with out_shardings which are non-None and have a non-empty mesh. Got sharding None")
		return Value{}
	}
	if !sameShape(s.Abstract(), tg.abs) {
		f.Failf(opName, 0, a, ErrMeshMismatch, "the sharding's mesh %v is not the module's mesh %v", s.Abstract(), tg.abs)
		return Value{}
	}
	if err := s.CheckShape(a.Shape().Dims()); err != nil {
		f.Fail(opName, 0, a, fmt.Errorf("%w: %w", ErrSharding, err))
		return Value{}
	}
	if !hasExplicit(tg.abs) {
		return a // on a context mesh without Explicit axes (inside AutoAxes) JAX's reshard adds nothing
	}
	t := tg.typeFromSharding(a.Shape(), s, nil)
	t.dims = padDims(t.dims, a.Shape().Rank())
	text, err := f.m.typeShardingText(t)
	if err != nil {
		f.Fail(opName, 0, a, err)
		return Value{}
	}
	return f.AddOp(stablehlo.OpSpec{Name: "sdy.sharding_constraint", Operands: []Value{a}, Results: []Shape{a.Shape()},
		Params: ShardingConstraintParams{Sharding: s, text: text, typed: &t}, Print: printConstraint})[0]
}

func padDims(d [][]string, rank int) [][]string {
	for len(d) < rank {
		d = append(d, nil)
	}
	return d
}

// assertConstraint is ShardingConstraint under sharding in types: on a mesh of Explicit axes
// it asserts that x's type has s's spec and adds nothing (done true); on a mixed mesh s may
// name only Auto axes, and the constraint to add is s with x's Explicit axes put before the
// Auto ones in each dimension, as JAX lowers it (done false).
func (f *Function) assertConstraint(opName string, x Value, s mesh.NamedSharding) (merged mesh.NamedSharding, done bool) {
	tg := f.m.typing
	t, _ := f.m.typeOf(x)
	spec := s.Spec()
	if allExplicit(tg.abs) {
		for i := range x.Shape().Rank() {
			var want []string
			if i < spec.Len() {
				if spec.Dim(i).IsUnconstrained() {
					continue
				}
				want = spec.Dim(i).Axes()
			}
			if !slices.Equal(t.dims[i], want) {
				f.Failf(opName, 0, x, ErrShardingType, "`with_sharding_constraint` acts as an assert when all axes of mesh are of type `Explicit`. The array sharding: %s did not match the sharding provided: %s. Please use `jax.sharding.reshard` to shard your input to the sharding you want.",
					t.Spec().String(), spec.String())
				return s, true
			}
		}
		return s, true
	}
	for i := range spec.Len() {
		for _, ax := range spec.Dim(i).Axes() {
			if typ, _ := tg.abs.AxisType(ax); typ != mesh.Auto {
				f.Failf(opName, 0, x, ErrShardingType, "The spec of NamedSharding passed to with_sharding_constraint can only refer to Auto axes of the mesh. Got spec=%s and mesh=%v. You probably meant to use `reshard` API?",
					spec.String(), tg.abs)
				return s, true
			}
		}
	}
	dims := make([]mesh.Dim, x.Shape().Rank())
	for i := range dims {
		var user mesh.Dim = mesh.None
		if i < spec.Len() {
			user = spec.Dim(i)
		}
		if len(t.dims[i]) == 0 {
			dims[i] = user
			continue
		}
		if user.IsUnconstrained() {
			f.Failf(opName, 0, x, ErrSharding, "dimension %d is sharded over Explicit axes %v and cannot be left unconstrained", i, t.dims[i])
			return s, true
		}
		dims[i] = mesh.Axes(append(slices.Clone(t.dims[i]), user.Axes()...)...)
	}
	m, err := mesh.NewAbstractSharding(s.Abstract(), mesh.SpecOf(dims...))
	if err != nil {
		f.Fail(opName, 0, x, fmt.Errorf("%w: %w", ErrSharding, err))
		return s, true
	}
	if c, err := s.Mesh(); err == nil {
		if m, err = mesh.NewNamedSharding(c, m.Spec()); err != nil {
			f.Fail(opName, 0, x, fmt.Errorf("%w: %w", ErrSharding, err))
			return s, true
		}
	}
	return m, false
}

// EinsumOut is Einsum with JAX's out_sharding, for a contraction of two operands: the
// result has out's type, given to the einsum's dot_general in its own dimension order (JAX's
// jnp.einsum(..., out_sharding=...)). An einsum of other arity, or one that reduces after
// its contraction, is an error wrapping ErrSharding.
func (f *Function) EinsumOut(equation string, out OutSharding, operands ...Value) Value {
	const opName = "einsum"
	if f.Failed() {
		return Value{}
	}
	if len(operands) != 2 {
		f.Failf(opName, -1, Value{}, ErrSharding, "EinsumOut takes two operands, got %d", len(operands))
		return Value{}
	}
	perm, ok := einsumPerm(equation, operands)
	if !ok {
		// The equation is wrong or reduces after the contraction: Einsum itself reports the
		// former; the latter has no single op to give the out sharding to.
		probe := stablehlo.NewModule("")
		g := probe.Main()
		g.Einsum(equation, g.Arg(operands[0].Shape()), g.Arg(operands[1].Shape()))
		if err := probe.Err(); err != nil {
			return f.Einsum(equation, operands...)
		}
		f.Failf(opName, -1, Value{}, ErrSharding, "EinsumOut: %q does not end in one contraction (it sums or transposes more)", equation)
		return Value{}
	}
	spec := out.Spec
	if perm != nil && spec.Len() == len(perm) {
		dims := make([]mesh.Dim, len(perm))
		for j, p := range perm {
			dims[p] = spec.Dim(j)
		}
		spec = mesh.SpecOf(dims...)
	}
	return f.withPending("stablehlo.dot_general", OutSharding{Spec: spec, Unreduced: out.Unreduced},
		func() Value { return f.Einsum(equation, operands...) })
}

// einsumPerm builds the einsum of two operands of the given shapes in a scratch module and
// returns the permutation of the transpose that follows its dot_general (nil for none), or
// false when the einsum does not end in its dot_general, possibly transposed.
func einsumPerm(equation string, operands []Value) ([]int, bool) {
	probe := stablehlo.NewModule("")
	g := probe.Main()
	v := g.Einsum(equation, g.Arg(operands[0].Shape()), g.Arg(operands[1].Shape()))
	ops := g.Ops()
	if probe.Err() != nil || len(ops) == 0 {
		return nil, false
	}
	last := ops[len(ops)-1]
	if last.Results()[0] != v {
		return nil, false
	}
	switch p := last.Params().(type) {
	case stablehlo.DotDims:
		return nil, true
	case stablehlo.TransposeParams:
		if len(ops) >= 2 && last.Operands()[0] == ops[len(ops)-2].Results()[0] && ops[len(ops)-2].Name() == "stablehlo.dot_general" {
			return p.Perm, true
		}
	}
	return nil, false
}

// AutoAxes is jax.sharding.auto_axes: body runs on the module's mesh with the named axes (all
// when axes is empty) made Auto, where the compiler chooses the layout along them and ops need
// no sharding rule for them. The arguments enter with those axes dropped from their types;
// the results leave resharded to outs, JAX's out_sharding, one sharding per result (required,
// as in JAX). On a module without sharding in types body just runs, as JAX runs the function
// when the context mesh has no Explicit axes. A Manual axis cannot be made Auto (JAX's
// NotImplementedError, wrapping ErrShardingType).
func (f *Function) AutoAxes(axes []string, outs []mesh.NamedSharding, body func(args []Value) []Value, args ...Value) []Value {
	const opName = "auto_axes"
	if f.Failed() {
		return make([]Value, len(outs))
	}
	if outs == nil {
		f.Failf(opName, -1, Value{}, ErrShardingType, "Missing required keyword argument: 'out_sharding'")
		return nil
	}
	if body == nil {
		f.Failf(opName, -1, Value{}, ErrFunction, "auto_axes needs a body, got nil")
		return make([]Value, len(outs))
	}
	tg := f.m.typing
	if tg == nil || !hasExplicit(tg.abs) {
		return body(args)
	}
	inner, ok := f.changeAxes(opName, tg.abs, axes, mesh.Auto)
	if !ok {
		return make([]Value, len(outs))
	}
	prev := tg.abs
	tg.abs = inner
	in := make([]Value, len(args))
	for i, a := range args {
		t, _ := f.m.typeOf(a)
		s, err := mesh.NewAbstractSharding(inner, keepExplicit(t.dims, inner))
		if err != nil {
			tg.abs = prev
			f.Fail(opName, i, a, fmt.Errorf("%w: %w", ErrSharding, err))
			return make([]Value, len(outs))
		}
		in[i] = f.Reshard(a, s)
	}
	res := body(in)
	tg.abs = prev
	if len(res) != len(outs) {
		if !f.Failed() {
			f.Failf(opName, -1, Value{}, ErrSharding, "%d out shardings for %d results", len(outs), len(res))
		}
		return make([]Value, len(outs))
	}
	for i, r := range res {
		res[i] = f.Reshard(r, outs[i])
	}
	return res
}

// ExplicitAxes is jax.sharding.explicit_axes: the arguments are resharded to ins (JAX's
// in_sharding, one per argument) on the module's mesh with the named axes (all when axes is
// empty) made Explicit, body runs there with sharding in types, and its results leave with the
// axes that are not Explicit on the module's mesh dropped from their types. It starts sharding
// in types on a module whose mesh has no Explicit axis, taking the mesh from ins.
func (f *Function) ExplicitAxes(axes []string, ins []mesh.NamedSharding, body func(args []Value) []Value, args ...Value) []Value {
	const opName = "explicit_axes"
	if f.Failed() {
		return nil
	}
	if ins == nil {
		f.Failf(opName, -1, Value{}, ErrShardingType, "Missing required keyword argument: 'in_sharding'")
		return nil
	}
	if body == nil {
		f.Failf(opName, -1, Value{}, ErrFunction, "explicit_axes needs a body, got nil")
		return nil
	}
	if len(ins) != len(args) {
		f.Failf(opName, -1, Value{}, ErrSharding, "%d in shardings for %d arguments", len(ins), len(args))
		return nil
	}
	if f.m.typing == nil {
		if len(ins) == 0 {
			f.Failf(opName, -1, Value{}, ErrShardingType, "Context mesh cannot be empty. Please use `jax.set_mesh` API to enter into a mesh context when using `explicit_axes` API.")
			return nil
		}
		f.m.startTyping(ins[0].Abstract())
	}
	tg := f.m.typing
	inner, ok := f.changeAxes(opName, tg.abs, axes, mesh.Explicit)
	if !ok {
		return nil
	}
	outer := tg.abs
	tg.abs = inner
	in := make([]Value, len(args))
	for i, a := range args {
		in[i] = f.Reshard(a, ins[i])
	}
	res := body(in)
	tg.abs = outer
	for i, r := range res {
		t, _ := f.m.typeOf(r)
		s, err := mesh.NewAbstractSharding(outer, keepExplicit(t.dims, outer))
		if err != nil {
			f.Fail(opName, -1, r, fmt.Errorf("%w: %w", ErrSharding, err))
			return nil
		}
		res[i] = f.Reshard(r, s)
	}
	return res
}

// changeAxes returns a with the named axes (all when none) of type to, refusing unknown axes
// and Manual ones, as JAX does.
func (f *Function) changeAxes(opName string, a mesh.Abstract, axes []string, to mesh.AxisType) (mesh.Abstract, bool) {
	if len(axes) == 0 {
		axes = a.AxisNames()
	}
	types := a.AxisTypes()
	for _, ax := range axes {
		i := slices.Index(a.AxisNames(), ax)
		if i < 0 {
			f.Failf(opName, -1, Value{}, ErrUnknownAxis, "axis %q is not an axis of the mesh %v", ax, a)
			return mesh.Abstract{}, false
		}
		if types[i] == mesh.Manual {
			f.Failf(opName, -1, Value{}, ErrShardingType, "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not allowed. Please file a bug at https://github.com/jax-ml/jax/issues with your use case")
			return mesh.Abstract{}, false
		}
		types[i] = to
	}
	n, err := a.WithAxisTypes(types...)
	if err != nil {
		f.Fail(opName, -1, Value{}, fmt.Errorf("%w: %w", ErrSharding, err))
		return mesh.Abstract{}, false
	}
	return n, true
}

// keepExplicit is JAX's modify_spec_for_auto_manual: the spec of dims with only the axes that
// are Explicit on a.
func keepExplicit(dims [][]string, a mesh.Abstract) mesh.PartitionSpec {
	out := make([]mesh.Dim, len(dims))
	for i, d := range dims {
		var keep []string
		for _, ax := range d {
			if t, _ := a.AxisType(ax); t == mesh.Explicit {
				keep = append(keep, ax)
			}
		}
		out[i] = mesh.None
		if len(keep) > 0 {
			out[i] = mesh.Axes(keep...)
		}
	}
	return mesh.SpecOf(out...)
}

// FullOut is Full with JAX's out_sharding (jnp.zeros/ones/full(..., out_sharding=...)): a
// constant of shape s filled with v, of out's type, constrained to it as JAX constrains the
// broadcast it builds.
func (f *Function) FullOut(s Shape, v any, out OutSharding) Value {
	const opName = "full"
	tg := f.m.typing
	if tg == nil {
		if !f.Failed() {
			f.Failf(opName, -1, Value{}, ErrSharding, "an out sharding needs a mesh with Explicit axes (WithMesh, or an argument sharded over one)")
		}
		return Value{}
	}
	c := f.Full(s, v)
	if !c.Valid() {
		return Value{}
	}
	t, err := f.m.outType(nil, nil, s, out)
	if err != nil {
		f.Fail(opName, -1, Value{}, err)
		return Value{}
	}
	return f.constrainTo(c, t)
}
