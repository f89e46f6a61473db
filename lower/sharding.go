package lower

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/shardy"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// meshSym is one `sdy.mesh` symbol of the module.
type meshSym struct {
	name    string
	abs     mesh.Abstract
	rel     []int // device ids relative to the module's device assignment; nil when iota
	maximal bool
	// collective: the mesh JAX 0.12 lifts out of a shard_map body's mesh-axes replica
	// groups (collectiveMesh); never the mesh of a sharding.
	collective bool
	device     int           // the device of a maximal mesh
	decl       shardy.MeshOp // the symbol op, e.g. `sdy.mesh @mesh = <["x"=4, "y"=2]>`
	op         string        // printed symbol op, e.g. `sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = ...}`
}

func newMeshSym(name string, m shardy.Mesh) *meshSym {
	decl := shardy.NewMeshOp(name, m)
	return &meshSym{name: name, decl: decl, op: decl.JAXString()}
}

// meshFor returns the module's symbol for the abstract mesh a laid over the concrete
// device ids (nil when only the abstract mesh is known). The first mesh is @mesh; a mesh
// of the same shape in a different device order is @mesh_0, ... with device_ids; a mesh of
// another shape is an error wrapping ErrMeshMismatch unless WithMultipleMeshes was given.
func (m *Module) meshFor(a mesh.Abstract, ids []int) (*meshSym, error) {
	if a.NumAxes() == 0 {
		return nil, fmt.Errorf("%w: sharding on an empty mesh", ErrSharding)
	}
	var rel []int
	if ids != nil {
		if m.assignment == nil {
			m.assignment = slices.Clone(ids)
		}
		rel = make([]int, len(ids))
		for i, id := range ids {
			rel[i] = slices.Index(m.assignment, id)
			if rel[i] < 0 || len(ids) != len(m.assignment) {
				return nil, fmt.Errorf("%w: mesh %v uses devices %v, but the module's device assignment is %v", ErrMeshMismatch, a, ids, m.assignment)
			}
		}
		if isIota(rel) {
			rel = nil
		}
	}
	var first *meshSym
	for _, s := range m.meshes {
		if s.maximal || s.collective {
			continue
		}
		if first == nil {
			first = s
		}
		if s.abs.Equal(a) && slices.Equal(s.rel, rel) {
			return s, nil
		}
	}
	if first != nil && !m.cfg.multiMesh && !sameShape(first.abs, a) {
		return nil, fmt.Errorf("%w: sharding on mesh %v, but the module already uses mesh %v (one mesh shape per module; see WithMultipleMeshes)", ErrMeshMismatch, a, first.abs)
	}
	if first != nil && first.abs.Size() != a.Size() {
		return nil, fmt.Errorf("%w: mesh %v has %d devices, the module's mesh %v has %d", ErrMeshMismatch, a, a.Size(), first.abs, first.abs.Size())
	}
	if rel != nil && m.cfg.partitioner == GSPMD {
		return nil, fmt.Errorf("%w: GSPMD mode needs every mesh in the module's device order; mesh %v has devices %v, the assignment is %v", ErrPartitioner, a, ids, m.assignment)
	}
	name := "mesh"
	if first != nil {
		n := 0
		for _, s := range m.meshes {
			if !s.maximal {
				n++
			}
		}
		name = "mesh_" + strconv.Itoa(n-1)
	}
	s := newMeshSym(name, shardy.MeshFromAbstract(a, rel))
	s.abs, s.rel = a, rel
	m.meshes = append(m.meshes, s)
	return s, nil
}

// collectiveMesh returns the symbol naming the mesh a in the mesh-axes replica groups of
// a shard_map body's collectives. JAX 0.12 writes each such mesh inline and lifts it into
// a symbol of its own, @mesh_0 after @mesh, even when a sharding already names the same
// mesh; xlamesh names it at its first collective, so a module whose sharding meshes are
// added after that collective numbers them differently from JAX.
func (m *Module) collectiveMesh(a mesh.Abstract) string {
	n := 0
	for _, s := range m.meshes {
		if s.collective && s.abs.Equal(a) {
			return s.name
		}
		if !s.maximal {
			n++
		}
	}
	name := "mesh_" + strconv.Itoa(n-1)
	if n == 0 {
		name = "mesh"
	}
	s := newMeshSym(name, shardy.MeshFromAbstract(a, nil))
	s.abs, s.collective = a, true
	m.meshes = append(m.meshes, s)
	return name
}

func sameShape(a, b mesh.Abstract) bool {
	return slices.Equal(a.AxisNames(), b.AxisNames()) && slices.Equal(a.AxisSizes(), b.AxisSizes())
}

func isIota(ids []int) bool {
	for i, id := range ids {
		if i != id {
			return false
		}
	}
	return true
}

// MaximalMesh adds (once) and returns the symbol of the maximal mesh on one device,
// `sdy.mesh @maximal_mesh_<device> = <[], device_ids=[<device>]>`, for ops that must
// run on a single device. Device is a logical id (a position in the device assignment).
func (m *Module) MaximalMesh(device int) string {
	name := "maximal_mesh_" + strconv.Itoa(device)
	for _, s := range m.meshes {
		if s.maximal && s.device == device {
			return name
		}
	}
	if device < 0 {
		m.hlo.Fail(&OpError{Pkg: "lower", Func: "main", Op: "sdy.mesh", Operand: -1, Err: fmt.Errorf("%w: negative device %d for a maximal mesh", ErrSharding, device)})
	}
	s := newMeshSym(name, shardy.MaximalMesh(device))
	s.maximal, s.device = true, device
	m.meshes = append(m.meshes, s)
	return name
}

func (m *Module) meshForSharding(s mesh.NamedSharding) (*meshSym, error) {
	var ids []int
	if mm, err := s.Mesh(); err == nil {
		ids = mm.DeviceIDs()
	}
	return m.meshFor(s.Abstract(), ids)
}

// entryShardingAttr returns the sharding attribute of an @main argument or result.
func (m *Module) entryShardingAttr(s mesh.NamedSharding, shape Shape) (stablehlo.Attr, error) {
	// Unconstrained dimensions (JAX's unspecified out_shardings) are left open, `{?}`, for
	// Shardy to choose; the constrained ones must still fit the shape.
	checked := s
	if dims := s.Spec().Dims(); slices.ContainsFunc(dims, mesh.Dim.IsUnconstrained) {
		if m.cfg.partitioner == GSPMD {
			return stablehlo.Attr{}, fmt.Errorf("%w: GSPMD entry shardings cannot leave a dimension unconstrained (%v)", ErrSharding, s.Spec())
		}
		for i, d := range dims {
			if d.IsUnconstrained() {
				dims[i] = mesh.None
			}
		}
		var err error
		if checked, err = mesh.NewAbstractSharding(s.Abstract(), mesh.SpecOf(dims...)); err != nil {
			return stablehlo.Attr{}, fmt.Errorf("%w: %w", ErrSharding, err)
		}
	}
	if err := checked.CheckShape(shape.Dims()); err != nil {
		return stablehlo.Attr{}, fmt.Errorf("%w: %w", ErrSharding, err)
	}
	sym, err := m.meshForSharding(s)
	if err != nil {
		return stablehlo.Attr{}, err
	}
	if m.cfg.partitioner == GSPMD {
		g, err := shardy.GSPMD(s, shape.Rank())
		if err != nil {
			return stablehlo.Attr{}, fmt.Errorf("%w: %w", ErrSharding, err)
		}
		return stablehlo.Attr{Name: "mhlo.sharding", Value: strconv.Quote(g)}, nil
	}
	ts, err := shardy.FromNamedSharding(s, sym.name, shape.Rank())
	if err != nil {
		return stablehlo.Attr{}, fmt.Errorf("%w: %w", ErrSharding, err)
	}
	return stablehlo.Attr{Name: "sdy.sharding", Value: ts.String()}, nil
}

// ShardingConstraint returns x constrained to the sharding s, like JAX's
// with_sharding_constraint: `sdy.sharding_constraint` with Shardy, a `@Sharding` custom
// call with GSPMD. Unlike @main's shardings, uneven sharding is allowed; the spec must not
// be longer than x's rank, and inside a shard_map body it must not name a manual axis.
// The op's Params are ShardingConstraintParams (with GSPMD: stablehlo.CustomCallParams).
func (f *Function) ShardingConstraint(x Value, s mesh.NamedSharding) Value {
	const opName = "sdy.sharding_constraint"
	vs, ok := f.Operands(opName, x)
	if !ok {
		return Value{}
	}
	a := vs[0]
	rank := a.Shape().Rank()
	spec := s.Spec()
	if spec.Len() > rank {
		f.Failf(opName, 0, a, ErrSharding, "spec %v has %d entries for a rank-%d value %v", spec, spec.Len(), rank, a.Shape())
		return Value{}
	}
	if f.m.typing != nil && !inClosedRegion(f.Function) {
		merged, done := f.assertConstraint(opName, a, s)
		if f.Failed() {
			return Value{}
		}
		if done {
			return a // on a mesh of Explicit axes the constraint is an assertion: nothing is added
		}
		s = merged
	}
	if c := f.manualCtx(); c != nil {
		if f.m.cfg.partitioner == GSPMD {
			f.Failf(opName, 0, a, ErrPartitioner, "sharding constraints inside a shard_map body are not supported in GSPMD mode")
			return Value{}
		}
		for i := range spec.Len() {
			for _, ax := range spec.Dim(i).Axes() {
				if c.isManual(ax) {
					f.Failf(opName, 0, a, ErrSharding, "operates on axis %q which is already bound by a parent sdy.manual_computation op", ax)
					return Value{}
				}
			}
		}
	}
	sym, err := f.m.meshForSharding(s)
	if err != nil {
		f.Fail(opName, 0, a, err)
		return Value{}
	}
	if f.m.cfg.partitioner == GSPMD {
		return f.gspmdConstraint(opName, a, s)
	}
	ts, err := shardy.FromNamedSharding(s, sym.name, rank)
	if err != nil {
		f.Fail(opName, 0, a, fmt.Errorf("%w: %w", ErrSharding, err))
		return Value{}
	}
	return f.AddOp(stablehlo.OpSpec{Name: opName, Operands: []Value{a}, Results: []Shape{a.Shape()},
		Params: ShardingConstraintParams{Sharding: s, text: ts.Stripped()}, Print: printConstraint})[0]
}

// ShardingConstraintParams are the parameters of an `sdy.sharding_constraint` op
// (stablehlo.Op.Params): the sharding its operand is constrained to.
type ShardingConstraintParams struct {
	Sharding mesh.NamedSharding
	text     string // the printed sharding, without the mesh's device ids
	typed    *Type  // the result's type, for the constraints of sharding in types and Reshard
}

func printConstraint(p *stablehlo.Printer, o *stablehlo.Op) {
	r := o.Results()[0]
	p.Indent()
	p.Def(r)
	p.WriteString("sdy.sharding_constraint ")
	p.Value(o.Operands()[0])
	p.WriteString(" ")
	p.WriteString(o.Params().(ShardingConstraintParams).text)
	p.WriteString(" : ")
	p.Type(r.Shape())
	p.WriteString("\n")
}

// gspmdConstraint emits `@Sharding` with the GSPMD text of s; unconstrained dimensions
// are written as unsharded and listed in backend_config "unspecified_dims=[...]".
func (f *Function) gspmdConstraint(opName string, a Value, s mesh.NamedSharding) Value {
	spec := s.Spec()
	var unspecified []int
	entries := make([]any, spec.Len())
	for i := range spec.Len() {
		d := spec.Dim(i)
		if d.IsUnconstrained() {
			unspecified = append(unspecified, i)
			entries[i] = nil
			continue
		}
		entries[i] = d
	}
	if unspecified != nil {
		ns, err := mesh.NewAbstractSharding(s.Abstract(), mesh.P(entries...))
		if err != nil {
			f.Fail(opName, 0, a, fmt.Errorf("%w: %w", ErrSharding, err))
			return Value{}
		}
		s = ns
	}
	g, err := shardy.GSPMD(s, a.Shape().Rank())
	if err != nil {
		f.Fail(opName, 0, a, fmt.Errorf("%w: %w", ErrSharding, err))
		return Value{}
	}
	var attrs []stablehlo.Attr
	if unspecified != nil {
		attrs = append(attrs, stablehlo.Attr{Name: "backend_config", Value: `"unspecified_dims=` + stablehlo.IntList(unspecified) + `"`})
	}
	attrs = append(attrs, stablehlo.Attr{Name: "mhlo.sharding", Value: strconv.Quote(g)})
	return f.CustomCall("Sharding", []Value{a}, []Shape{a.Shape()}, attrs...)[0]
}

// manualCtx describes the shard_map body a function is: its mesh and manual axes.
type manualCtx struct {
	abs    mesh.Abstract
	axes   []string // manual axes of this and all enclosing shard_maps, mesh order
	parent *manualCtx

	// For VaryingAxes: the body, the shard_map's operands (values of the parent body) and
	// its in_specs.
	body     *stablehlo.Function
	operands []Value
	inSpecs  []mesh.PartitionSpec
	manual   []string // this shard_map's own manual axes
}

func (c *manualCtx) isManual(axis string) bool { return slices.Contains(c.axes, axis) }

// manualKey is the stablehlo context key of a shard_map body's *manualCtx.
type manualKey struct{}

// manualCtx returns the innermost shard_map context enclosing f, or nil.
func (f *Function) manualCtx() *manualCtx {
	c, _ := f.Context(manualKey{}).(*manualCtx)
	return c
}

// ShardMapParams are the parameters of an `sdy.manual_computation` op (stablehlo.Op.Params),
// whose one region is the body: the mesh, the specs and the manual axes (mesh order).
type ShardMapParams struct {
	Mesh             mesh.Abstract
	InSpecs, OutSpec []mesh.PartitionSpec
	Manual           []string
	// CheckVMA is whether the replication check applies (ShardMap; false for
	// ShardMapUnchecked), JAX's check_vma.
	CheckVMA bool

	in, out    []string // stripped shardings (Shardy) or GSPMD texts
	gspmd      bool
	inSharding []Value // GSPMD: results of @Sharding before SPMDFullToShardShape
	inManual   []Value // GSPMD: results of SPMDFullToShardShape, the body's call operands
	called     []Value // GSPMD: results of the body's func.call
	outManual  []Value // GSPMD: results of @Sharding {manual} before SPMDShardToFullShape
}

// ShardMap is JAX's shard_map: it runs body once per shard of the mesh axes manualAxes
// (all of the mesh's axes when nil), on the local blocks of args split by inSpecs, and
// assembles the body's results into global values by outSpecs. With Shardy it lowers to
// `sdy.manual_computation`; with GSPMD to `@Sharding`, `@SPMDFullToShardShape`, a
// `func.call` of the body printed as a private function (@shmap_body, as JAX names it),
// `@Sharding {manual}` and `@SPMDShardToFullShape` (GSPMD mode supports only shard_maps
// over all mesh axes). On a mesh of one device a Shardy shard_map prints as its body, in
// place, as JAX's does: XLA could not compile a manual computation there. The op's Params
// are ShardMapParams.
//
// The body is built with the same API on g, a fresh region: it sees only its arguments
// (using an outer value is an error wrapping ErrForeignValue), and may use the
// collectives (Psum, AllGatherOver, ...) over the manual axes. Each operand dimension
// must be divisible by the product of its manual axes (ErrIndivisible, Shardy's wording);
// within one dimension, manual axes must come before free axes. On error the result holds
// len(outSpecs) zero Values.
//
// ShardMap checks replication as JAX's shard_map does by default (check_vma=True): a
// result whose out_spec leaves out a manual axis the value varies over is an error
// wrapping ErrReplication that names the result and the axis (see shardmap_check.go's
// rules: arguments vary over the axes of their in_specs, AllReduceOver removes its axes,
// AxisIndex and the other collectives add theirs, other ops take the union of their
// operands'). ShardMapUnchecked skips the check.
func (f *Function) ShardMap(m mesh.Abstract, inSpecs, outSpecs []mesh.PartitionSpec, manualAxes []string,
	body func(g *Function, args []Value) []Value, args ...Value) []Value {
	return f.shardMap(true, m, inSpecs, outSpecs, manualAxes, body, args...)
}

// ShardMapUnchecked is ShardMap without the replication check, JAX's shard_map with
// check_vma=False: a result whose out_spec leaves out an axis the value varies over is
// assembled from the blocks of the devices at index 0 along that axis. Nested shard_maps
// keep their own setting.
func (f *Function) ShardMapUnchecked(m mesh.Abstract, inSpecs, outSpecs []mesh.PartitionSpec, manualAxes []string,
	body func(g *Function, args []Value) []Value, args ...Value) []Value {
	return f.shardMap(false, m, inSpecs, outSpecs, manualAxes, body, args...)
}

func (f *Function) shardMap(check bool, m mesh.Abstract, inSpecs, outSpecs []mesh.PartitionSpec, manualAxes []string,
	body func(g *Function, args []Value) []Value, args ...Value) []Value {
	const opName = "sdy.manual_computation"
	zeros := make([]Value, len(outSpecs)) // returned on error, so callers may index results
	vs, ok := f.Operands(opName, args...)
	if !ok {
		return zeros
	}
	if body == nil {
		f.Failf(opName, -1, Value{}, ErrFunction, "shard_map needs a body, got nil")
		return zeros
	}
	gspmd := f.m.cfg.partitioner == GSPMD
	parent := f.manualCtx()
	if parent != nil && !parent.abs.Equal(m) {
		f.Failf(opName, -1, Value{}, ErrMeshMismatch, "nested shard_map on mesh %v inside one on mesh %v", m, parent.abs)
		return zeros
	}
	if gspmd && parent != nil {
		f.Failf(opName, -1, Value{}, ErrPartitioner, "nested shard_map is not supported in GSPMD mode")
		return zeros
	}
	// Manual axes, checked and in mesh order.
	if manualAxes == nil {
		for _, n := range m.AxisNames() {
			if parent == nil || !parent.isManual(n) {
				manualAxes = append(manualAxes, n)
			}
		}
	}
	manual := make([]string, 0, len(manualAxes))
	for _, n := range m.AxisNames() {
		if slices.Contains(manualAxes, n) {
			manual = append(manual, n)
		}
	}
	for i, n := range manualAxes {
		if m.AxisIndex(n) < 0 {
			f.Failf(opName, -1, Value{}, ErrUnknownAxis, "unknown manual axis %q (mesh has %s)", n, axisList(m))
			return zeros
		}
		if slices.Index(manualAxes, n) != i {
			f.Failf(opName, -1, Value{}, ErrSharding, "duplicate manual axis %q", n)
			return zeros
		}
		if parent != nil && parent.isManual(n) {
			f.Failf(opName, -1, Value{}, ErrSharding, "operates on axis %q which is already bound by a parent sdy.manual_computation op", n)
			return zeros
		}
	}
	if gspmd && len(manual) != m.NumAxes() {
		f.Failf(opName, -1, Value{}, ErrPartitioner, "GSPMD mode supports shard_map over all mesh axes %s, got manual axes %q", axisList(m), manual)
		return zeros
	}
	if tg := f.m.typing; tg != nil && parent == nil && hasExplicit(tg.abs) {
		// Sharding in types: in_specs are inferred from the arguments' types (nil), or must
		// equal them, as from JAX 0.9.1.
		if inSpecs, ok = f.typedInSpecs(opName, inSpecs, vs); !ok {
			return zeros
		}
	}
	if len(inSpecs) != len(vs) {
		f.Failf(opName, -1, Value{}, ErrSharding, "%d in_specs for %d operands", len(inSpecs), len(vs))
		return zeros
	}
	sym, err := f.m.meshFor(m, nil)
	if err != nil {
		f.Fail(opName, -1, Value{}, err)
		return zeros
	}
	d := ShardMapParams{Mesh: m, InSpecs: slices.Clone(inSpecs), OutSpec: slices.Clone(outSpecs), Manual: manual, CheckVMA: check, gspmd: gspmd}
	partial := len(manual) < m.NumAxes()
	locals := make([]Shape, len(vs))
	for i, v := range vs {
		text, local, err := f.m.manualSharding(m, sym.name, inSpecs[i], v.Shape(), manual, partial, true)
		if err != nil {
			f.Fail(opName, i, v, err)
			return zeros
		}
		d.in = append(d.in, text)
		locals[i] = local
	}
	// The body region. With GSPMD it prints as a private function, called with the results
	// of the @SPMDFullToShardShape calls: XLA's CSE would merge constants of an inline body
	// with equal ones outside it, across the manual region's boundary, and abort.
	if gspmd {
		for i, v := range vs {
			d.inSharding = append(d.inSharding, f.NewValue(v.Shape()))
			d.inManual = append(d.inManual, f.NewValue(locals[i]))
		}
	}
	g := f.NewRegion(locals...)
	ctx := &manualCtx{abs: m, axes: manual, parent: parent, body: g, operands: vs, inSpecs: d.InSpecs, manual: manual}
	if parent != nil {
		ctx.axes = append(slices.Clone(parent.axes), manual...)
	}
	g.SetContext(manualKey{}, ctx)
	outs := body(f.m.wrap(g), g.Args())
	if f.Failed() {
		return zeros
	}
	if len(outs) != len(outSpecs) {
		f.Failf(opName, -1, Value{}, ErrSharding, "body returned %d values for %d out_specs", len(outs), len(outSpecs))
		return zeros
	}
	if !g.Yield("sdy.return", outs...) {
		return zeros
	}
	rs := g.Results()
	globals := make([]Shape, len(rs))
	for i, r := range rs {
		text, global, err := f.m.manualSharding(m, sym.name, outSpecs[i], r.Shape(), manual, partial, false)
		if err != nil {
			f.Fail(opName, -1, Value{}, fmt.Errorf("result %d: %w", i, err))
			return zeros
		}
		d.out = append(d.out, text)
		globals[i] = global
	}
	if gspmd {
		shapes := make([]Shape, len(rs))
		for i, r := range rs {
			shapes[i] = r.Shape()
			d.outManual = append(d.outManual, f.NewValue(r.Shape()))
		}
		d.called = f.NewValues(shapes...)
	}
	// With GSPMD, one result per output, each a plain value (printed as separate custom calls).
	res := f.AddOp(stablehlo.OpSpec{Name: opName, Operands: vs, Results: globals, Params: d,
		Regions: []*stablehlo.Function{g}, Print: printManual, SeparateResults: gspmd})
	if parent == nil && !f.Failed() {
		// The outermost shard_map checks itself and every nested one (whose operands' axes
		// only the walk from here knows).
		ops := f.Ops()
		f.checkReplication(ops[len(ops)-1])
		if f.Failed() {
			return zeros
		}
	}
	return res
}

// manualSharding checks one in/out spec of a shard_map and returns its printed sharding
// and the shape on the other side: local for operands (in), global for results (out).
func (m *Module) manualSharding(a mesh.Abstract, meshName string, spec mesh.PartitionSpec, shape Shape, manual []string, partial, in bool) (string, Shape, error) {
	ns, err := mesh.NewAbstractSharding(a, spec)
	if err != nil {
		return "", Shape{}, fmt.Errorf("%w: %w", ErrSharding, err)
	}
	rank := shape.Rank()
	if spec.Len() > rank {
		return "", Shape{}, fmt.Errorf("%w: spec %v has %d entries for a rank-%d value %v", ErrSharding, spec, spec.Len(), rank, shape)
	}
	dims := shape.Dims()
	for i := range spec.Len() {
		dim := spec.Dim(i)
		if dim.IsUnconstrained() {
			return "", Shape{}, fmt.Errorf("%w: spec %v, dim %d: unconstrained is not allowed in shard_map specs", ErrSharding, spec, i)
		}
		k := 1
		seenFree := false
		for _, ax := range dim.Axes() {
			size, _ := a.AxisSize(ax)
			if !slices.Contains(manual, ax) {
				seenFree = true
				continue
			}
			if seenFree {
				return "", Shape{}, fmt.Errorf("%w: dim %d: must have all manual axes come before free axes in its dimension sharding", ErrSharding, i)
			}
			k *= size
		}
		if in {
			if dims[i]%k != 0 {
				return "", Shape{}, fmt.Errorf("%w: dim %d: dimension size %d is not divisible by the manual axes size %d", ErrIndivisible, i, dims[i], k)
			}
			dims[i] /= k
		} else {
			n, ok := mulDims(dims[i], k)
			if !ok {
				return "", Shape{}, fmt.Errorf("%w: dim %d: size %d times the manual axes size %d overflows int64", ErrShape, i, dims[i], k)
			}
			dims[i] = n
		}
	}
	other := NewShape(shape.DType(), dims...)
	if m.cfg.partitioner == GSPMD {
		g, err := shardy.GSPMD(ns, rank)
		if err != nil {
			return "", Shape{}, fmt.Errorf("%w: %w", ErrSharding, err)
		}
		return g, other, nil
	}
	ts, err := shardy.FromNamedSharding(ns, meshName, rank)
	if err != nil {
		return "", Shape{}, fmt.Errorf("%w: %w", ErrSharding, err)
	}
	if partial {
		// JAX opens every dimension of a partial-manual shard_map's shardings.
		ds := ts.Dims()
		for i, d := range ds {
			ds[i] = shardy.Open(d.Axes()...)
		}
		ts = ts.WithDims(ds...)
	}
	return ts.Stripped(), other, nil
}

// trivial reports whether the shard_map's mesh is one device, so that its block of every
// operand and result is the whole value.
func (p ShardMapParams) trivial() bool { return p.Mesh.Size() == 1 }

func printManual(p *stablehlo.Printer, o *stablehlo.Op) {
	d := o.Params().(ShardMapParams)
	body := o.Regions()[0]
	if d.gspmd {
		printManualGSPMD(p, o, body, d)
		return
	}
	if d.trivial() {
		// On a one-device mesh XLA runs no partitioner, which would leave an
		// sdy.manual_computation uncompiled ("No registered implementation for untyped custom
		// call to xla.sdy.GlobalToLocalShape"): the shard_map is printed as its body, in place,
		// as JAX does (JAX does so whenever the manual axes all have size 1; on a larger mesh
		// XLA refuses the collectives such a body has outside a manual computation, so lower
		// keeps the manual computation there).
		for i, a := range body.Args() {
			p.Alias(a, o.Operands()[i])
		}
		p.Ops(body)
		for i, r := range o.Results() {
			p.Alias(r, body.Results()[i])
		}
		return
	}
	p.Indent()
	p.Def(o.Results()...)
	p.WriteString("sdy.manual_computation(")
	p.Values(o.Operands())
	p.WriteString(") in_shardings=[")
	p.WriteString(strings.Join(d.in, ", "))
	p.WriteString("] out_shardings=[")
	p.WriteString(strings.Join(d.out, ", "))
	p.WriteString("] manual_axes={")
	for i, n := range d.Manual {
		if i > 0 {
			p.WriteString(", ")
		}
		p.WriteString(strconv.Quote(n))
	}
	p.WriteString("} (")
	for i, a := range body.Args() {
		if i > 0 {
			p.WriteString(", ")
		}
		p.BlockArg(a)
	}
	p.WriteString(") {\n")
	p.Push()
	p.Ops(body)
	p.Indent()
	p.WriteString("sdy.return")
	if rs := body.Results(); len(rs) > 0 {
		p.WriteString(" ")
		p.Values(rs)
		p.WriteString(" : ")
		p.Types(rs)
	}
	p.WriteString("\n")
	p.Pop()
	p.Indent()
	p.WriteString("} : (")
	p.Types(o.Operands())
	p.WriteString(") -> ")
	p.ResultTypes(o.Results())
	p.WriteString("\n")
}

func printManualGSPMD(p *stablehlo.Printer, o *stablehlo.Op, body *stablehlo.Function, d ShardMapParams) {
	cc := func(r Value, target string, x Value, sharding string) {
		p.CustomCall([]Value{r}, target, []Value{x}, stablehlo.Attr{Name: "mhlo.sharding", Value: strconv.Quote(sharding)})
	}
	for i, x := range o.Operands() {
		cc(d.inSharding[i], "Sharding", x, d.in[i])
		cc(d.inManual[i], "SPMDFullToShardShape", d.inSharding[i], shardy.GSPMDManual)
	}
	p.Call(d.called, body, "shmap_body", d.inManual)
	results := o.Results()
	for i, r := range d.called {
		cc(d.outManual[i], "Sharding", r, shardy.GSPMDManual)
		cc(results[i], "SPMDShardToFullShape", d.outManual[i], d.out[i])
	}
}

func axisList(a mesh.Abstract) string {
	names := a.AxisNames()
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// mulDims returns a*b for sizes a, b >= 0, and false when the product overflows int64.
func mulDims(a, b int) (int, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if a > math.MaxInt64/b {
		return 0, false
	}
	return a * b, true
}
