package lower

import (
	"slices"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Transpose rules of lower's ops for package autodiff, so that a gradient of a program with
// shardings keeps them:
//
//   - the cotangent of a sharding constraint gets the same constraint;
//   - a shard_map's transpose is a shard_map with the same mesh and manual axes whose body
//     replays the forward body and walks it back: its operands are the forward operands
//     (in_specs as before) and the results' cotangents (the results' out_specs), its results
//     the operands' cotangents (out_specs the operands' in_specs);
//   - in a body, a collective's transpose is JAX's: psum gives the cotangent back unchanged
//     (pbroadcast; times the group size along axes its operand does not vary over),
//     all_gather and psum_scatter swap, all_to_all swaps its split and concat dimensions,
//     ppermute sends back along the inverted pairs; pmax and pmin have none, as in JAX;
//   - a cotangent contribution that varies along manual axes its primal value does not
//     (x * w with a varying x and a replicated w) is summed over them, the transpose of
//     JAX's implicit pvary; the cotangent of each operand thus varies as the operand does,
//     and the replication check of the backward shard_map holds.
//
// A shard_map built with ShardMapUnchecked (check_vma=False) has no rule: without the
// replication types JAX differentiates it with other rules, which this package does not
// copy.
//
// NewModule gives each module these rules (autodiff.RegisterFor): they travel with the modules
// lower makes, never registered globally, so a module built with the builder alone has no rule
// for a collective whether or not this package is linked.
func registerRules(m *stablehlo.Module) {
	autodiff.RegisterFor(m, "sdy.sharding_constraint", autodiff.SelfTranspose)
	autodiff.RegisterCustomCallFor(m, PlacementTarget, placementRule)
	autodiff.RegisterFor(m, "sdy.manual_computation", shardMapRule)
	autodiff.RegisterFor(m, "stablehlo.all_reduce", allReduceRule)
	autodiff.RegisterFor(m, "stablehlo.all_gather", allGatherRule)
	autodiff.RegisterFor(m, "stablehlo.reduce_scatter", reduceScatterRule)
	autodiff.RegisterFor(m, "stablehlo.all_to_all", allToAllRule)
	autodiff.RegisterFor(m, "stablehlo.collective_permute", collectivePermuteRule)
}

// ReplayParams gives a copy of a shard_map made by stablehlo.Function.Replay fresh values
// for the custom calls its GSPMD form prints.
func (p ShardMapParams) ReplayParams(f *stablehlo.Function) any {
	q := p
	q.InSpecs, q.OutSpec, q.Manual = slices.Clone(p.InSpecs), slices.Clone(p.OutSpec), slices.Clone(p.Manual)
	q.in, q.out = slices.Clone(p.in), slices.Clone(p.out)
	if p.gspmd {
		fresh := func(vs []Value) []Value {
			out := make([]Value, len(vs))
			for i, v := range vs {
				out[i] = f.NewValue(v.Shape())
			}
			return out
		}
		q.inSharding, q.inManual, q.outManual = fresh(p.inSharding), fresh(p.inManual), fresh(p.outManual)
		shapes := make([]Shape, len(p.called))
		for i, v := range p.called {
			shapes[i] = v.Shape()
		}
		q.called = f.NewValues(shapes...)
	}
	return q
}

// vmaOf answers which manual axes values of a shard_map body vary over, walking the body
// once and again only when it meets a value added since.
type vmaOf struct {
	g   *Function
	k   *vmaChecker
	n   int // ops of the body when k was computed
	ctx *manualCtx
}

func newVMA(g *Function) *vmaOf {
	c := g.manualCtx()
	if c == nil || c.abs.NumAxes() > 64 {
		return nil
	}
	return &vmaOf{g: g, ctx: c}
}

// mask returns v's axes as a bit set over the mesh's axes, and false if v is unknown.
func (s *vmaOf) mask(v Value) (uint64, bool) {
	if s.k != nil && len(s.ctx.body.Ops()) == s.n {
		if m, ok := s.k.env[v]; ok {
			return m, true
		}
	}
	// A value added since (to the body, or to a region of one of its ops): walk again.
	rules, _ := s.g.m.hlo.Context(vmaKey{}).(map[Value]vmaRule)
	k := &vmaChecker{abs: s.ctx.abs, rules: rules, env: make(map[Value]uint64)}
	if err := k.body(s.ctx); err != nil {
		return 0, false
	}
	s.k, s.n = k, len(s.ctx.body.Ops())
	m, ok := s.k.env[v]
	return m, ok
}

// axes returns the names of the mesh axes in bit set m, in mesh order.
func axesOf(a mesh.Abstract, m uint64) []string {
	var out []string
	for i, n := range a.AxisNames() {
		if m&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// contribution sums a cotangent contribution over the manual axes along which op from's
// results vary and its primal does not.
func (s *vmaOf) contribution(b *autodiff.Backward, primal, ct Value, from *stablehlo.Op) Value {
	want, ok := s.mask(primal)
	if !ok {
		return ct
	}
	var have uint64
	for _, r := range from.Results() {
		m, ok := s.mask(r)
		if !ok {
			return ct
		}
		have |= m
	}
	extra := have &^ want
	if extra == 0 {
		return ct
	}
	g := FunctionOf(b.Function())
	if g == nil {
		return ct
	}
	return g.Psum(ct, axesOf(s.ctx.abs, extra)...)
}

// shardMapRule transposes a shard_map: see the init comment.
func shardMapRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := op.Params().(ShardMapParams)
	if !ok {
		return b.Fail(op, "parameters %T, want ShardMapParams", op.Params())
	}
	if !p.CheckVMA {
		return b.Fail(op, "a shard_map built with ShardMapUnchecked (check_vma=False) has no transpose rule; build it with ShardMap")
	}
	f := FunctionOf(b.Function())
	if f == nil {
		return b.Fail(op, "not in a module of package lower")
	}
	operands := op.Operands()
	body := op.Regions()[0]
	results := op.Results()
	// The backward shard_map's operands: every forward operand, then the cotangents of the
	// float and complex results (zeros where a result has none).
	args := slices.Clone(operands)
	inSpecs := slices.Clone(p.InSpecs)
	var ctAt []int // result index of each cotangent operand
	for i, r := range results {
		if !shapes.IsInexact(r.DType()) {
			continue
		}
		c := cts[i]
		if !c.Valid() {
			c = b.Zeros(r.Shape())
		}
		args = append(args, c)
		inSpecs = append(inSpecs, p.OutSpec[i])
		ctAt = append(ctAt, i)
	}
	var wrt []int // operands that get a cotangent
	var outSpecs []mesh.PartitionSpec
	for i, v := range operands {
		if b.Active(v) && shapes.IsInexact(v.DType()) {
			wrt = append(wrt, i)
			outSpecs = append(outSpecs, p.InSpecs[i])
		}
	}
	if len(wrt) == 0 {
		return make([]Value, len(operands))
	}
	n := len(operands)
	back := f.ShardMap(p.Mesh, inSpecs, outSpecs, p.Manual, func(g *Function, a []Value) []Value {
		env := make(map[Value]Value, len(body.Ops())+n)
		for i, x := range body.Args() {
			env[x] = a[i]
		}
		if !autodiff.Replay(g.Function, body.Ops(), env) {
			return nil
		}
		vma := newVMA(g)
		if vma == nil {
			g.Failf("sdy.manual_computation", -1, Value{}, autodiff.ErrNotDifferentiable, "vjp: no shard_map context for the backward body")
			return nil
		}
		// The outputs and their cotangents; a cotangent varying along axes its output does
		// not (an output replicated along an axis its out_spec names) is summed over them.
		var outs, seeds []Value
		for k, i := range ctAt {
			r := env[body.Results()[i]]
			c := a[n+k]
			if want, ok := vma.mask(r); ok {
				if have, ok := vma.mask(c); ok && have&^want != 0 {
					c = g.Psum(c, axesOf(p.Mesh, have&^want)...)
				}
			}
			outs, seeds = append(outs, r), append(seeds, c)
		}
		ws := make([]Value, len(wrt))
		for k, i := range wrt {
			ws[k] = a[i]
		}
		return autodiff.VJP(g.Function, outs, ws, seeds, autodiff.WithContribution(vma.contribution))
	}, args...)
	out := make([]Value, len(operands))
	for k, i := range wrt {
		if k < len(back) {
			out[i] = back[k]
		}
	}
	return out
}

// collectiveCtx returns the shard_map context of the function a collective's rule runs in,
// and the operand's varying axes; it records an error and returns false outside one.
func collectiveCtx(b *autodiff.Backward, op *stablehlo.Op) (*Function, *vmaOf, uint64, bool) {
	f := FunctionOf(b.Function())
	var vma *vmaOf
	if f != nil {
		vma = newVMA(f)
	}
	if vma == nil {
		b.Fail(op, "%s outside a shard_map body of package lower has no transpose rule", op.Name())
		return nil, nil, 0, false
	}
	m, ok := vma.mask(op.Operands()[0])
	if !ok {
		b.Fail(op, "%s: the varying axes of its operand are unknown", op.Name())
		return nil, nil, 0, false
	}
	return f, vma, m, true
}

// allReduceRule: psum's transpose passes the cotangent back (JAX's pbroadcast), times the
// group size along the axes its operand does not vary over (psum of a replicated value
// multiplies it by the group size). pmax and pmin have no rule, as in JAX.
func allReduceRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := op.Params().(stablehlo.AllReduceParams)
	if !ok || p.Reduction != stablehlo.Sum {
		return b.Fail(op, "all_reduce with %v has no transpose rule (JAX differentiates psum only)", p.Reduction)
	}
	f, vma, m, ok := collectiveCtx(b, op)
	if !ok {
		return nil
	}
	k := &vmaChecker{abs: vma.ctx.abs}
	times := 1
	sizes := vma.ctx.abs.AxisSizes()
	for i := range sizes {
		if k.groupAxes(p.Groups)&(1<<i) != 0 && m&(1<<i) == 0 {
			times *= sizes[i]
		}
	}
	g := cts[0]
	if times != 1 {
		g = f.Mul(g, f.Full(g.Shape(), times))
	}
	return []Value{g}
}

// allGatherRule: all_gather's transpose is psum_scatter over the same groups and dimension.
func allGatherRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := op.Params().(stablehlo.AllGatherParams)
	if !ok {
		return b.Fail(op, "parameters %T", op.Params())
	}
	f, _, _, ok := collectiveCtx(b, op)
	if !ok {
		return nil
	}
	return []Value{f.ReduceScatter(cts[0], stablehlo.Sum, p.Dim, p.Groups, viaOf(p.Via)...)}
}

// reduceScatterRule: psum_scatter's transpose is all_gather over the same groups and
// dimension.
func reduceScatterRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := op.Params().(stablehlo.ReduceScatterParams)
	if !ok || p.Reduction != stablehlo.Sum {
		return b.Fail(op, "reduce_scatter with %v has no transpose rule", p.Reduction)
	}
	f, _, _, ok := collectiveCtx(b, op)
	if !ok {
		return nil
	}
	return []Value{f.AllGather(cts[0], p.Dim, p.Groups, viaOf(p.Via)...)}
}

// allToAllRule: all_to_all's transpose is all_to_all with split and concat dimensions
// swapped.
func allToAllRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := op.Params().(stablehlo.AllToAllParams)
	if !ok {
		return b.Fail(op, "parameters %T", op.Params())
	}
	f, _, _, ok := collectiveCtx(b, op)
	if !ok {
		return nil
	}
	return []Value{f.AllToAll(cts[0], p.ConcatDim, p.SplitDim, p.Groups, viaOf(p.Via)...)}
}

// collectivePermuteRule: ppermute's transpose sends each cotangent back from target to
// source.
func collectivePermuteRule(b *autodiff.Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := op.Params().(stablehlo.CollectivePermuteParams)
	if !ok {
		return b.Fail(op, "parameters %T", op.Params())
	}
	f, _, _, ok := collectiveCtx(b, op)
	if !ok {
		return nil
	}
	inv := make([][2]int, len(p.Pairs))
	for i, q := range p.Pairs {
		inv[i] = [2]int{q[1], q[0]}
	}
	return []Value{f.CollectivePermute(cts[0], inv)}
}

// viaOf passes a collective's mesh-axes naming on to its transpose (none when unset).
func viaOf(v stablehlo.MeshAxes) []stablehlo.MeshAxes {
	if v.Mesh == "" {
		return nil
	}
	return []stablehlo.MeshAxes{v}
}
