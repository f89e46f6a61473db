package lower

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/shardy"
)

// meshSym is one `sdy.mesh` symbol of the module.
type meshSym struct {
	name    string
	abs     mesh.Abstract
	rel     []int // device ids relative to the module's device assignment; nil when iota
	maximal bool
	device  int    // the device of a maximal mesh
	text    string // printed mesh, e.g. `<["x"=4, "y"=2]>`
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
		if s.maximal {
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
	s := &meshSym{name: name, abs: a, rel: rel, text: shardy.MeshFromAbstract(a, rel).String()}
	m.meshes = append(m.meshes, s)
	return s, nil
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
	if device < 0 && m.err == nil {
		m.err = &OpError{Func: "main", Op: "sdy.mesh", Operand: -1, Err: fmt.Errorf("%w: negative device %d for a maximal mesh", ErrSharding, device)}
	}
	m.meshes = append(m.meshes, &meshSym{name: name, maximal: true, device: device, text: shardy.MaximalMesh(device).String()})
	return name
}

func (m *Module) meshForSharding(s mesh.NamedSharding) (*meshSym, error) {
	var ids []int
	if mm, err := s.Mesh(); err == nil {
		ids = mm.DeviceIDs()
	}
	return m.meshFor(s.Abstract(), ids)
}

// entryShardingAttr returns the attribute text for an @main argument or result.
func (m *Module) entryShardingAttr(s mesh.NamedSharding, shape Shape) (string, error) {
	// Unconstrained dimensions (JAX's unspecified out_shardings) are left open, `{?}`, for
	// Shardy to choose; the constrained ones must still fit the shape.
	checked := s
	if dims := s.Spec().Dims(); slices.ContainsFunc(dims, mesh.Dim.IsUnconstrained) {
		if m.cfg.partitioner == GSPMD {
			return "", fmt.Errorf("%w: GSPMD entry shardings cannot leave a dimension unconstrained (%v)", ErrSharding, s.Spec())
		}
		for i, d := range dims {
			if d.IsUnconstrained() {
				dims[i] = mesh.None
			}
		}
		var err error
		if checked, err = mesh.NewAbstractSharding(s.Abstract(), mesh.SpecOf(dims...)); err != nil {
			return "", fmt.Errorf("%w: %w", ErrSharding, err)
		}
	}
	if err := checked.CheckShape(shape.dims); err != nil {
		return "", fmt.Errorf("%w: %w", ErrSharding, err)
	}
	sym, err := m.meshForSharding(s)
	if err != nil {
		return "", err
	}
	if m.cfg.partitioner == GSPMD {
		g, err := shardy.GSPMD(s, shape.Rank())
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrSharding, err)
		}
		return "mhlo.sharding = " + strconv.Quote(g), nil
	}
	ts, err := shardy.FromNamedSharding(s, sym.name, shape.Rank())
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrSharding, err)
	}
	return "sdy.sharding = " + ts.String(), nil
}

// ShardingConstraint returns x constrained to the sharding s, like JAX's
// with_sharding_constraint: `sdy.sharding_constraint` with Shardy, a `@Sharding` custom
// call with GSPMD. Unlike @main's shardings, uneven sharding is allowed; the spec must not
// be longer than x's rank, and inside a shard_map body it must not name a manual axis.
func (f *Function) ShardingConstraint(x Value, s mesh.NamedSharding) Value {
	const opName = "sdy.sharding_constraint"
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	a := f.materialize(vs[0], vs[0].shape)
	rank := a.shape.Rank()
	spec := s.Spec()
	if spec.Len() > rank {
		f.failf(opName, 0, a, ErrSharding, "spec %v has %d entries for a rank-%d value %v", spec, spec.Len(), rank, a.shape)
		return Value{}
	}
	if c := f.manualCtx(); c != nil {
		if f.m.cfg.partitioner == GSPMD {
			f.failf(opName, 0, a, ErrPartitioner, "sharding constraints inside a shard_map body are not supported in GSPMD mode")
			return Value{}
		}
		for i := range spec.Len() {
			for _, ax := range spec.Dim(i).Axes() {
				if c.isManual(ax) {
					f.failf(opName, 0, a, ErrSharding, "operates on axis %q which is already bound by a parent sdy.manual_computation op", ax)
					return Value{}
				}
			}
		}
	}
	sym, err := f.m.meshForSharding(s)
	if err != nil {
		f.fail(opName, 0, a, err)
		return Value{}
	}
	if f.m.cfg.partitioner == GSPMD {
		return f.gspmdConstraint(opName, a, s)
	}
	ts, err := shardy.FromNamedSharding(s, sym.name, rank)
	if err != nil {
		f.fail(opName, 0, a, fmt.Errorf("%w: %w", ErrSharding, err))
		return Value{}
	}
	r := f.newValue(a.shape)
	f.ops = append(f.ops, &op{name: opName, operands: []*value{a}, results: []*value{r}, data: ts.Stripped(), print: printConstraint})
	return Value{r}
}

func printConstraint(p *printer, o *op) {
	p.line()
	p.lhs(o)
	p.str("sdy.sharding_constraint ")
	p.val(o.operands[0])
	p.str(" ")
	p.str(o.data.(string))
	p.str(" : ")
	o.results[0].shape.writeTo(&p.b)
	p.str("\n")
}

// gspmdConstraint emits `@Sharding` with the GSPMD text of s; unconstrained dimensions
// are written as unsharded and listed in backend_config "unspecified_dims=[...]".
func (f *Function) gspmdConstraint(opName string, a *value, s mesh.NamedSharding) Value {
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
			f.fail(opName, 0, a, fmt.Errorf("%w: %w", ErrSharding, err))
			return Value{}
		}
		s = ns
	}
	g, err := shardy.GSPMD(s, a.shape.Rank())
	if err != nil {
		f.fail(opName, 0, a, fmt.Errorf("%w: %w", ErrSharding, err))
		return Value{}
	}
	attrs := "mhlo.sharding = " + strconv.Quote(g)
	if unspecified != nil {
		attrs = "backend_config = \"unspecified_dims=" + intList(unspecified) + "\", " + attrs
	}
	return Value{f.customCall("Sharding", a, a.shape, attrs)}
}

// customCall emits `stablehlo.custom_call @target(%x) {attrs} : (T) -> R`.
func (f *Function) customCall(target string, x *value, result Shape, attrs string) *value {
	r := f.newValue(result)
	f.ops = append(f.ops, &op{name: "stablehlo.custom_call", operands: []*value{x}, results: []*value{r}, attrs: attrs, data: target, print: printCustomCall})
	return r
}

func printCustomCall(p *printer, o *op) {
	p.line()
	p.lhs(o)
	p.str("stablehlo.custom_call @")
	p.str(o.data.(string))
	p.str("(")
	p.vals(o.operands)
	p.str(")")
	if o.attrs != "" {
		p.str(" {")
		p.str(o.attrs)
		p.str("}")
	}
	p.str(" : ")
	p.fnType(o.operands, o.results)
	p.str("\n")
}

// manualCtx describes the shard_map body a function is: its mesh and manual axes.
type manualCtx struct {
	abs    mesh.Abstract
	axes   []string // manual axes of this and all enclosing shard_maps, mesh order
	parent *manualCtx
}

func (c *manualCtx) isManual(axis string) bool { return slices.Contains(c.axes, axis) }

// manualCtx returns the innermost shard_map context enclosing f, or nil.
func (f *Function) manualCtx() *manualCtx {
	for g := f; g != nil; g = g.parent {
		if g.manual != nil {
			return g.manual
		}
	}
	return nil
}

// shardMapData is what the manual_computation printer needs.
type shardMapData struct {
	in, out    []string // stripped shardings (Shardy) or GSPMD texts
	manual     []string
	body       *Function
	gspmd      bool
	inSharding []*value // GSPMD: results of @Sharding before SPMDFullToShardShape
	outManual  []*value // GSPMD: results of @Sharding {manual} before SPMDShardToFullShape
}

// ShardMap is JAX's shard_map: it runs body once per shard of the mesh axes manualAxes
// (all of the mesh's axes when nil), on the local blocks of args split by inSpecs, and
// assembles the body's results into global values by outSpecs. With Shardy it lowers to
// `sdy.manual_computation`; with GSPMD to `@Sharding`, `@SPMDFullToShardShape`, the body
// inline, `@Sharding {manual}` and `@SPMDShardToFullShape` (GSPMD mode supports only
// shard_maps over all mesh axes).
//
// The body is built with the same API on g, a fresh region: it sees only its arguments
// (using an outer value is an error wrapping ErrForeignValue), and may use the
// collectives (AllReduce, AllGather, ...) over the manual axes. Each operand dimension
// must be divisible by the product of its manual axes (ErrIndivisible, Shardy's wording);
// within one dimension, manual axes must come before free axes. On error the result holds
// len(outSpecs) zero Values.
func (f *Function) ShardMap(m mesh.Abstract, inSpecs, outSpecs []mesh.PartitionSpec, manualAxes []string,
	body func(g *Function, args []Value) []Value, args ...Value) []Value {
	const opName = "sdy.manual_computation"
	zeros := make([]Value, len(outSpecs)) // returned on error, so callers may index results
	vs, ok := f.check(opName, args...)
	if !ok {
		return zeros
	}
	for i, v := range vs {
		vs[i] = f.materialize(v, v.shape)
	}
	if body == nil {
		f.failf(opName, -1, nil, ErrFunction, "shard_map needs a body, got nil")
		return zeros
	}
	gspmd := f.m.cfg.partitioner == GSPMD
	parent := f.manualCtx()
	if parent != nil && !parent.abs.Equal(m) {
		f.failf(opName, -1, nil, ErrMeshMismatch, "nested shard_map on mesh %v inside one on mesh %v", m, parent.abs)
		return zeros
	}
	if gspmd && parent != nil {
		f.failf(opName, -1, nil, ErrPartitioner, "nested shard_map is not supported in GSPMD mode")
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
			f.failf(opName, -1, nil, ErrUnknownAxis, "unknown manual axis %q (mesh has %s)", n, axisList(m))
			return zeros
		}
		if slices.Index(manualAxes, n) != i {
			f.failf(opName, -1, nil, ErrSharding, "duplicate manual axis %q", n)
			return zeros
		}
		if parent != nil && parent.isManual(n) {
			f.failf(opName, -1, nil, ErrSharding, "operates on axis %q which is already bound by a parent sdy.manual_computation op", n)
			return zeros
		}
	}
	if gspmd && len(manual) != m.NumAxes() {
		f.failf(opName, -1, nil, ErrPartitioner, "GSPMD mode supports shard_map over all mesh axes %s, got manual axes %q", axisList(m), manual)
		return zeros
	}
	if len(inSpecs) != len(vs) {
		f.failf(opName, -1, nil, ErrSharding, "%d in_specs for %d operands", len(inSpecs), len(vs))
		return zeros
	}
	sym, err := f.m.meshFor(m, nil)
	if err != nil {
		f.fail(opName, -1, nil, err)
		return zeros
	}
	d := &shardMapData{manual: manual, gspmd: gspmd}
	partial := len(manual) < m.NumAxes()
	locals := make([]Shape, len(vs))
	for i, v := range vs {
		text, local, err := f.m.manualSharding(m, sym.name, inSpecs[i], v.shape, manual, partial, true)
		if err != nil {
			f.fail(opName, i, v, err)
			return zeros
		}
		d.in = append(d.in, text)
		locals[i] = local
	}
	// The body region, with the GSPMD prologue values numbered before the body's ops.
	g := f.newRegion()
	ctx := &manualCtx{abs: m, axes: manual, parent: parent}
	if parent != nil {
		ctx.axes = append(slices.Clone(parent.axes), manual...)
	}
	g.manual = ctx
	for i, v := range vs {
		if gspmd {
			d.inSharding = append(d.inSharding, f.newValue(v.shape))
			g.args = append(g.args, g.newValue(locals[i]))
		} else {
			g.args = append(g.args, g.newArg(locals[i]))
		}
	}
	outs := body(g, g.Args())
	if f.failed() {
		return zeros
	}
	if len(outs) != len(outSpecs) {
		f.failf(opName, -1, nil, ErrSharding, "body returned %d values for %d out_specs", len(outs), len(outSpecs))
		return zeros
	}
	rs, ok := g.check("sdy.return", outs...)
	if !ok {
		return zeros
	}
	globals := make([]Shape, len(rs))
	for i, r := range rs {
		r = g.materialize(r, r.shape)
		rs[i] = r
		text, global, err := f.m.manualSharding(m, sym.name, outSpecs[i], r.shape, manual, partial, false)
		if err != nil {
			f.fail(opName, -1, nil, fmt.Errorf("result %d: %w", i, err))
			return zeros
		}
		d.out = append(d.out, text)
		globals[i] = global
	}
	if f.failed() {
		return zeros
	}
	g.results = rs
	g.returned = true
	d.body = g
	if gspmd {
		for _, r := range rs {
			d.outManual = append(d.outManual, f.newValue(r.shape))
		}
	}
	o := &op{name: opName, operands: vs, regions: []*Function{g}, data: d, print: printManual}
	if gspmd {
		// One result per output, each a plain value (printed as separate custom calls).
		res := make([]Value, len(globals))
		for i, s := range globals {
			r := f.newValue(s)
			o.results = append(o.results, r)
			res[i] = Value{r}
		}
		f.ops = append(f.ops, o)
		return res
	}
	return f.emitMulti(o, globals)
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
	other := NewShape(shape.dtype, dims...)
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

func printManual(p *printer, o *op) {
	d := o.data.(*shardMapData)
	if d.gspmd {
		printManualGSPMD(p, o, d)
		return
	}
	p.line()
	p.lhs(o)
	p.str("sdy.manual_computation(")
	p.vals(o.operands)
	p.str(") in_shardings=[")
	p.str(strings.Join(d.in, ", "))
	p.str("] out_shardings=[")
	p.str(strings.Join(d.out, ", "))
	p.str("] manual_axes={")
	for i, n := range d.manual {
		if i > 0 {
			p.str(", ")
		}
		p.str(strconv.Quote(n))
	}
	p.str("} (")
	for i, a := range d.body.args {
		if i > 0 {
			p.str(", ")
		}
		p.defArg(a)
	}
	p.str(") {\n")
	p.indent++
	d.body.printOps(p)
	p.line()
	p.str("sdy.return")
	if len(d.body.results) > 0 {
		p.str(" ")
		p.vals(d.body.results)
		p.str(" : ")
		p.types(d.body.results)
	}
	p.str("\n")
	p.indent--
	p.line()
	p.str("} : (")
	p.types(o.operands)
	p.str(") -> ")
	p.resultTypes(o.results)
	p.str("\n")
}

func printManualGSPMD(p *printer, o *op, d *shardMapData) {
	cc := func(r *value, target string, x *value, sharding string) {
		printCustomCall(p, &op{operands: []*value{x}, results: []*value{r}, data: target, attrs: "mhlo.sharding = " + strconv.Quote(sharding)})
	}
	for i, x := range o.operands {
		cc(d.inSharding[i], "Sharding", x, d.in[i])
		cc(d.body.args[i], "SPMDFullToShardShape", d.inSharding[i], shardy.GSPMDManual)
	}
	d.body.printOps(p)
	for i, r := range d.body.results {
		cc(d.outManual[i], "Sharding", r, shardy.GSPMDManual)
		cc(o.results[i], "SPMDShardToFullShape", d.outManual[i], d.out[i])
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
