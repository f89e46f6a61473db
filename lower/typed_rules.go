package lower

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// The sharding rules of sharding in types: for each op, the types of its results from the
// types of its operands, or JAX's ShardingTypeError. Each rule is JAX 0.12's (jax/_src/lax),
// with JAX's messages; the oracle group "explicit" checks them against JAX.

// jaxNames maps StableHLO op names to the names of the JAX primitives that lower to them,
// which JAX's messages use.
var jaxNames = map[string]string{
	"subtract": "sub", "multiply": "mul", "divide": "div", "maximum": "max", "minimum": "min",
	"exponential": "exp", "negate": "neg", "remainder": "rem", "power": "pow", "abs": "abs",
	"log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt", "tanh": "tanh", "logistic": "logistic",
	"exponential_minus_one": "expm1", "log_plus_one": "log1p", "select": "select_n",
	"convert": "convert_element_type", "and": "and", "or": "or", "xor": "xor", "not": "not",
	"sine": "sin", "cosine": "cos", "floor": "floor", "ceil": "ceil", "sign": "sign",
	"atan2": "atan2", "clamp": "clamp", "dot_general": "dot_general", "reshape": "reshape",
	"transpose": "transpose", "broadcast_in_dim": "broadcast_in_dim", "iota": "iota",
	"concatenate": "concatenate", "slice": "slice", "sort": "sort", "reverse": "rev",
}

// jaxName returns the JAX primitive name of op o (its StableHLO name without the dialect
// when JAX has no other).
func jaxName(o *stablehlo.Op) string {
	n := o.Name()
	if i := strings.IndexByte(n, '.'); i >= 0 {
		n = n[i+1:]
	}
	if p, ok := o.Params().(stablehlo.CompareParams); ok && n == "compare" {
		return strings.ToLower(p.Dir.String())
	}
	if j, ok := jaxNames[n]; ok {
		return j
	}
	return n
}

// shardingTypeErr is an error wrapping ErrShardingType with JAX's text.
func shardingTypeErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrShardingType}, args...)...)
}

// rule returns the types of o's results. pend is the out sharding the program gave the op
// (nil for none).
func (m *Module) rule(o *stablehlo.Op, pend *pendingOut) ([]Type, error) {
	tg := m.typing
	ops := o.Operands()
	in := make([]Type, len(ops))
	for i, v := range ops {
		in[i], _ = m.typeOf(v)
	}
	res := o.Results()
	prim := jaxName(o)
	if pend != nil {
		if _, rng := o.Params().(stablehlo.RngParams); rng {
			// The out sharding is the bits' (the second result); the state keeps its type.
			t, err := m.outType(o, in, res[1].Shape(), pend.out)
			return []Type{in[0], t}, err
		}
		t, err := m.outType(o, in, res[0].Shape(), pend.out)
		if err != nil {
			return nil, err
		}
		return []Type{t}, nil
	}
	if p, ok := o.Params().(stablehlo.CallParams); ok {
		// A call's results have the types of what the callee returns (JAX types a called
		// computation with its operands' types: ComputeOnHost gives its body's arguments them).
		out := make([]Type, len(res))
		callee := p.Callee.Results()
		for i, r := range res {
			out[i] = tg.replicated(r.Shape())
			if i < len(callee) {
				if t, ok := m.typeOf(callee[i]); ok {
					out[i] = t.withShape(r.Shape())
				}
			}
		}
		return out, nil
	}
	one := func(t Type, err error) ([]Type, error) {
		if err != nil {
			return nil, err
		}
		if err := checkDuplicates(prim, in, t); err != nil {
			return nil, err
		}
		return []Type{t}, nil
	}
	if len(o.Regions()) == 0 {
		switch p := o.Params().(type) {
		case nil, stablehlo.CompareParams, stablehlo.ReluParams: // Relu's maximum is max's
			switch o.Name() {
			case "stablehlo.select":
				return one(m.selectRule(in, res[0].Shape()))
			case "stablehlo.clamp":
				// JAX's clamp takes its operand's sharding; the bounds are constrained to it.
				t := in[1]
				t.shape = res[0].Shape()
				return one(t, nonLinearIfUnreduced("clamp", in))
			case "stablehlo.dynamic_update_slice":
				return one(m.dusRule(in[0], in[1]))
			}
			if elementwise(o) {
				return one(m.naryRule(prim, in, res[0].Shape()))
			}
			if o.Name() == "stablehlo.reshape" {
				return one(m.reshapeRule(in[0], res[0].Shape()))
			}
		case stablehlo.IotaParams:
			return []Type{tg.replicated(res[0].Shape())}, nil
		case stablehlo.BroadcastParams:
			t := tg.replicated(res[0].Shape())
			for i, d := range p.Dims {
				if in[0].shape.Dim(i) == res[0].Shape().Dim(d) {
					t.dims[d] = in[0].dims[i]
				}
			}
			t.unreduced = in[0].unreduced
			return one(t, nil)
		case stablehlo.TransposeParams:
			t := tg.replicated(res[0].Shape())
			for i, d := range p.Perm {
				t.dims[i] = in[0].dims[d]
			}
			t.unreduced = in[0].unreduced
			return one(t, nil)
		case stablehlo.SliceParams:
			t, err := m.varyingShapeRule("slicing", in[0], res[0].Shape())
			return one(t, errors.Join(err, noUnreduced(prim, in[:1])))
		case stablehlo.DynamicSliceParams:
			t, err := m.varyingShapeRule("dynamic_slice", in[0], res[0].Shape())
			return one(t, errors.Join(err, noUnreduced(prim, in[:1])))
		case stablehlo.PadParams:
			t, err := m.varyingShapeRule("padding", in[0], res[0].Shape())
			t.unreduced = in[0].unreduced // JAX pads a partial sum as it is
			return one(t, err)
		case stablehlo.ReverseParams:
			return one(in[0].withShape(res[0].Shape()), noUnreduced(prim, in))
		case stablehlo.ConcatenateParams:
			return one(m.concatRule(in, res[0].Shape()))
		case stablehlo.DotDims:
			return one(m.dotRule(in[0], in[1], p, res[0].Shape()))
		}
	}
	switch p := o.Params().(type) {
	case stablehlo.GatherParams:
		return one(m.gatherRule(in[0], in[1], p, res[0].Shape()))
	case stablehlo.ScatterParams:
		return one(m.scatterRule(in[0], in[1], in[2], p))
	case stablehlo.RngParams:
		// JAX's rng_bit_generator: the new key keeps the key's type; the bits are replicated
		// (RngBitGeneratorOut gives them an out sharding).
		return []Type{in[0], m.typing.replicated(res[1].Shape())}, noUnreduced("rng_bit_generator", in)
	case ShardMapParams:
		// shard_map's results have the types of its out_specs (their Explicit axes).
		out := make([]Type, len(res))
		for i, r := range res {
			t := m.typing.replicated(r.Shape())
			spec := p.OutSpec[i]
			for d := range min(spec.Len(), r.Shape().Rank()) {
				for _, ax := range spec.Dim(d).Axes() {
					if at, _ := m.typing.abs.AxisType(ax); at == mesh.Explicit {
						t.dims[d] = append(t.dims[d], ax)
					}
				}
			}
			out[i] = t
		}
		return out, nil
	case stablehlo.WhileParams:
		return m.whileRule(o, in, p)
	case nil:
		if n := o.Name(); n == "stablehlo.if" || n == "stablehlo.case" {
			return m.branchRule(o)
		}
	case stablehlo.ArgReduceParams:
		// JAX's argmax/argmin drops the reduced dimension from the spec.
		t := in[0].withShape(res[0].Shape())
		t.dims = slices.Delete(slices.Clone(in[0].dims), p.Axis, p.Axis+1)
		u := t
		u.shape = res[1].Shape()
		return []Type{t, u}, noUnreduced(prim, in[:1])
	case stablehlo.TopKParams:
		axis := in[0].shape.Rank() - 1
		if len(in[0].dims[axis]) > 0 {
			return nil, shardingTypeErr("The input should be unsharded over the axis along which to compute the top_k values. Got input type=%s and axis=%d", in[0], axis)
		}
		t := in[0].withShape(res[0].Shape())
		u := t
		u.shape = res[1].Shape()
		return []Type{t, u}, noUnreduced(prim, in)
	case stablehlo.ReduceWindowParams:
		t, err := m.varyingShapeRule("reduce_window", in[0], res[0].Shape())
		if err = errors.Join(err, noUnreduced(prim, in[:1])); err != nil {
			return nil, err
		}
		return []Type{t}, nil
	case stablehlo.CumulativeParams:
		if len(in[0].dims[p.Axis]) > 0 {
			return nil, shardingTypeErr("Input should be unsharded over the axis being reduced. Got input type=%s and axis=%d", in[0], p.Axis)
		}
		return one(in[0].withShape(res[0].Shape()), noUnreduced(prim, in[:1]))
	case stablehlo.ReduceParams:
		return m.reduceRule(in, res, p)
	case stablehlo.SortParams:
		return m.sortRule(in, p)
	}
	return nil, shardingTypeErr("sharding rule for %s is not implemented. Please file an issue at https://github.com/jax-ml/jax/issues. You can work around this error by dropping that operation into full auto sharding mode via: `jax.sharding.auto_axes(fun, out_shardings=...)`", prim)
}

// gatherRule is JAX's gather rule (_gather_spec_computation): the result's sharding when it
// follows unambiguously from the operand's and the indices' without communication (the
// indexed operand dimensions fully sliced or unsharded, batching dimensions agreeing, the
// other index dimensions unsharded), else JAX's request for an out sharding.
func (m *Module) gatherRule(x, idx Type, p stablehlo.GatherParams, out Shape) (Type, error) {
	t := m.typing.replicated(out)
	if err := noUnreduced("gather", []Type{x, idx}); err != nil {
		return Type{}, err
	}
	sharded := false
	for _, d := range append(slices.Clone(x.dims), idx.dims...) {
		sharded = sharded || len(d) > 0
	}
	if !sharded {
		return t, nil
	}
	d := p.Dims
	ok := true
	for _, i := range d.StartIndexMap {
		ok = ok && (p.SliceSizes[i] == x.shape.Dim(i) || len(x.dims[i]) == 0)
	}
	idxSpec := slices.Clone(idx.dims)
	for k, od := range d.OperandBatchingDims {
		id := d.StartIndicesBatchingDims[k]
		if len(x.dims[od]) > 0 && len(idxSpec[id]) > 0 && !slices.Equal(x.dims[od], idxSpec[id]) {
			ok = false
		}
	}
	for i, s := range idx.dims {
		if !slices.Contains(d.StartIndicesBatchingDims, i) && len(s) > 0 {
			ok = false
		}
	}
	if !ok {
		return Type{}, shardingTypeErr("Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather indexing as out sharding could not be resolved unambiguously (or would require collectives on inputs). Got operand=ShapedArray(%s), indices=ShapedArray(%s)", x, idx)
	}
	for k, od := range d.OperandBatchingDims {
		id := d.StartIndicesBatchingDims[k]
		if len(idxSpec[id]) == 0 {
			idxSpec[id] = x.dims[od]
		}
	}
	var offsets [][]string
	for i := range x.shape.Rank() {
		if !slices.Contains(d.CollapsedSliceDims, i) && !slices.Contains(d.OperandBatchingDims, i) {
			offsets = append(offsets, x.dims[i])
		}
	}
	var batch [][]string
	for i, s := range idxSpec {
		if i != d.IndexVectorDim {
			batch = append(batch, s)
		}
	}
	for i := range out.Rank() {
		if slices.Contains(d.OffsetDims, i) {
			t.dims[i], offsets = offsets[0], offsets[1:]
		} else {
			t.dims[i], batch = batch[0], batch[1:]
		}
	}
	return t, nil
}

// scatterRule is JAX's scatter rule (_scatter_spec_computation), the gather rule in inverse:
// the operand's sharding, completed from the indices' and updates' batching and window
// dimensions, when they all agree without communication; else JAX's request for an out
// sharding.
func (m *Module) scatterRule(x, idx, upd Type, p stablehlo.ScatterParams) (Type, error) {
	if err := noUnreduced("scatter", []Type{x, idx, upd}); err != nil {
		return Type{}, err
	}
	sharded := false
	for _, d := range slices.Concat(x.dims, idx.dims, upd.dims) {
		sharded = sharded || len(d) > 0
	}
	if !sharded {
		return m.typing.replicated(x.shape), nil
	}
	d := p.Dims
	var queries []int // the indices dimensions other than the index vector's
	for i := range idx.shape.Rank() {
		if i != d.IndexVectorDim {
			queries = append(queries, i)
		}
	}
	// The updates dimension of each indices dimension (JAX's _get_updates_batching_dims).
	inUpdates := slices.Clone(queries)
	for _, w := range d.UpdateWindowDims {
		if w <= len(inUpdates) {
			inUpdates = slices.Insert(inUpdates, w, -1)
		}
	}
	updBatch := make([]int, len(d.ScatterIndicesBatchingDims))
	for k, id := range d.ScatterIndicesBatchingDims {
		updBatch[k] = slices.Index(inUpdates, id)
	}
	var windows []int // operand dimensions of the update windows
	for i := range x.shape.Rank() {
		if !slices.Contains(d.InsertedWindowDims, i) && !slices.Contains(d.InputBatchingDims, i) {
			windows = append(windows, i)
		}
	}
	resolvable := func(specs ...[]string) bool {
		var first []string
		for _, s := range specs {
			if len(s) == 0 {
				continue
			}
			if first != nil && !slices.Equal(first, s) {
				return false
			}
			first = s
		}
		return true
	}
	ok := true
	for k, od := range d.InputBatchingDims {
		if updBatch[k] < 0 || !resolvable(x.dims[od], idx.dims[d.ScatterIndicesBatchingDims[k]], upd.dims[updBatch[k]]) {
			ok = false
		}
	}
	for k, ud := range d.UpdateWindowDims {
		od := windows[k]
		full := upd.shape.Dim(ud) == x.shape.Dim(od) && slices.Equal(upd.dims[ud], x.dims[od])
		if !full && (len(upd.dims[ud]) > 0 || len(x.dims[od]) > 0) {
			ok = false
		}
	}
	for _, i := range d.InsertedWindowDims {
		ok = ok && len(x.dims[i]) == 0
	}
	for i, s := range upd.dims {
		if !slices.Contains(updBatch, i) && !slices.Contains(d.UpdateWindowDims, i) && len(s) > 0 {
			ok = false
		}
	}
	for i, s := range idx.dims {
		if !slices.Contains(d.ScatterIndicesBatchingDims, i) && len(s) > 0 {
			ok = false // a query dimension, or the index vector dimension, that is sharded
		}
	}
	if !ok {
		return Type{}, shardingTypeErr("Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for the scatter update as out sharding could not be resolved unambiguously (or would require collectives on inputs). Got operand=ShapedArray(%s), indices=ShapedArray(%s), updates=ShapedArray(%s)", x, idx, upd)
	}
	t := x
	t.dims = slices.Clone(x.dims)
	for k, od := range d.InputBatchingDims {
		if len(t.dims[od]) == 0 {
			t.dims[od] = idx.dims[d.ScatterIndicesBatchingDims[k]]
			if len(t.dims[od]) == 0 {
				t.dims[od] = upd.dims[updBatch[k]]
			}
		}
	}
	for k, ud := range d.UpdateWindowDims {
		if od := windows[k]; len(t.dims[od]) == 0 {
			t.dims[od] = upd.dims[ud]
		}
	}
	return t, nil
}

// sameType reports whether a and b have the same sharding and unreduced axes.
func sameType(a, b Type) bool {
	return slices.EqualFunc(a.dims, b.dims, slices.Equal) && slices.Equal(a.unreduced, b.unreduced)
}

// whileRule is JAX's check of a loop: each carried value keeps its type through the body;
// the results have the initial values' types. A loop with a trip count is JAX's fori_loop,
// which JAX runs as a scan and words as one.
func (m *Module) whileRule(o *stablehlo.Op, in []Type, p stablehlo.WhileParams) ([]Type, error) {
	body := o.Regions()[1]
	kind, name, first := "while_loop", "carry", 0
	switch {
	case p.Scan != nil:
		kind, name, first = "scan", "carry", 1 // JAX counts lax.scan's carry without the counter
	case p.TripCount >= 0:
		kind, name = "scan", "loop_carry"
	}
	out := slices.Clone(in)
	for i, v := range body.Results() {
		t, _ := m.typeOf(v)
		if p.Scan != nil && i >= 1+p.Scan.Carry+p.Scan.Xs {
			out[i] = t // a stacked output: its type is the body's (its initial zeros have none)
			continue
		}
		if !sameType(t, in[i]) {
			return nil, shardingTypeErr("%s body function carry input and carry output must have equal types, but they differ:\n"+
				"The input carry component %s[%d] has type %s but the corresponding output carry component has type %s.\n"+
				"Revise the function so that all output types match the corresponding input types.", kind, name, i-first, in[i], t)
		}
	}
	return out, nil
}

// branchRule is JAX's check of cond and switch: the branches' results have equal types,
// which the results take.
func (m *Module) branchRule(o *stablehlo.Op) ([]Type, error) {
	regions := o.Regions()
	first := make([]Type, len(o.Results()))
	for i, v := range regions[0].Results() {
		first[i], _ = m.typeOf(v)
	}
	for k, g := range regions[1:] {
		for i, v := range g.Results() {
			t, _ := m.typeOf(v)
			if !sameType(t, first[i]) {
				if o.Name() == "stablehlo.if" {
					// stablehlo.if's first region is the true branch, JAX's the false one.
					return nil, shardingTypeErr("cond branches must have equal output types but they differ.\n"+
						"The output of true_fun has type %s but the corresponding output of false_fun has type %s.", first[i], t)
				}
				return nil, shardingTypeErr("switch branches must have equal output types but they differ.\n"+
					"The output of branch 0 has type %s but the corresponding output of branch %d has type %s.", first[i], k+1, t)
			}
		}
	}
	for i, r := range o.Results() {
		first[i].shape = r.Shape()
	}
	return first, nil
}

// nonLinearIfUnreduced is JAX's refusal of unreduced operands by a non-linear n-ary op.
func nonLinearIfUnreduced(prim string, in []Type) error {
	for _, t := range in {
		if len(t.unreduced) > 0 {
			return nonLinear(prim, in)
		}
	}
	return nil
}

// dusRule is JAX's dynamic_update_slice rule: the update has the operand's sharding.
func (m *Module) dusRule(x, u Type) (Type, error) {
	if !slices.EqualFunc(x.dims, u.dims, slices.Equal) {
		return Type{}, shardingTypeErr("dynamic_update_slice operand sharding must be equal to update sharding, got operand sharding %s and update sharding %s.",
			m.withAxisTypes(x), m.withAxisTypes(u))
	}
	if !slices.Equal(x.unreduced, u.unreduced) {
		return Type{}, shardingTypeErr("dynamic_update_slice operand and update must be unreduced along the same mesh axes")
	}
	return x, nil
}

// withAxisTypes is a type as JAX's str_short(mesh_axis_types=True) writes it:
// "float32[8@X,4]({Explicit: ('X', 'Y')})", the mesh's axes grouped by type.
func (m *Module) withAxisTypes(t Type) string {
	var order []mesh.AxisType
	groups := map[mesh.AxisType][]string{}
	types := m.typing.abs.AxisTypes()
	for i, n := range m.typing.abs.AxisNames() {
		if _, ok := groups[types[i]]; !ok {
			order = append(order, types[i])
		}
		groups[types[i]] = append(groups[types[i]], n)
	}
	parts := make([]string, len(order))
	for i, at := range order {
		q := make([][]string, len(groups[at]))
		for j, n := range groups[at] {
			q[j] = []string{n}
		}
		parts[i] = at.String() + ": " + pyTuple(q)
	}
	return t.String() + "({" + strings.Join(parts, ", ") + "})"
}

// withShape returns t with shape s (same rank) and no unreduced axes.
func (t Type) withShape(s Shape) Type {
	t.shape = s
	t.unreduced = nil
	return t
}

// elementwise reports whether o is an elementwise op: every operand of rank > 0 has the
// result's dimensions, and one has (a reshape of a scalar to [1] is not elementwise).
func elementwise(o *stablehlo.Op) bool {
	r := o.Results()
	if len(r) != 1 {
		return false
	}
	same := r[0].Shape().Rank() == 0 // a scalar op; else some operand has the result's dimensions
	for _, v := range o.Operands() {
		if v.Shape().Rank() > 0 && !slices.Equal(v.Shape().Dims(), r[0].Shape().Dims()) {
			return false
		}
		same = same || v.Shape().Rank() > 0
	}
	return same
}

// checkDuplicates is JAX's check that no mesh axis shards two dimensions of a result.
func checkDuplicates(prim string, in []Type, t Type) error {
	seen := map[string]bool{}
	for _, d := range t.dims {
		for _, ax := range d {
			if seen[ax] {
				s := make([]string, len(in))
				for i, a := range in {
					s[i] = a.short()
				}
				return shardingTypeErr("%s operation with inputs: %s produces an illegally sharded result: %s", prim, strings.Join(s, ", "), t.short())
			}
			seen[ax] = true
		}
	}
	return nil
}

// noUnreduced is JAX's refusal of unreduced operands by ops without an unreduced rule.
func noUnreduced(prim string, in []Type) error {
	for _, t := range in {
		if len(t.unreduced) > 0 {
			return fmt.Errorf("%w: unreduced/reduced rule for %s is not implemented. Please file an issue at https://github.com/jax-ml/jax/issues", ErrShardingType, prim)
		}
	}
	return nil
}

// naryRule is JAX's broadcasting_sharding_rule and the unreduced rules of add, sub and mul.
func (m *Module) naryRule(prim string, in []Type, out Shape) (Type, error) {
	t := m.typing.replicated(out)
	var ranked []Type
	for _, a := range in {
		if a.shape.Rank() > 0 {
			ranked = append(ranked, a)
		}
	}
	for i := range out.Rank() {
		first := ranked[0].dims[i]
		same := true
		for _, a := range ranked[1:] {
			same = same && slices.Equal(a.dims[i], first)
		}
		if same {
			t.dims[i] = first
			continue
		}
		for _, a := range ranked {
			if len(a.dims[i]) == 0 {
				continue
			}
			if t.dims[i] != nil && !slices.Equal(t.dims[i], a.dims[i]) {
				s := make([]string, len(ranked))
				for j, r := range ranked {
					s[j] = pyTuple(r.dims)
				}
				return Type{}, shardingTypeErr("%s got incompatible shardings for broadcasting: %s.", prim, strings.Join(s, ", "))
			}
			t.dims[i] = a.dims[i]
		}
	}
	u, err := unreducedNary(prim, in)
	t.unreduced = u
	return t, err
}

// unreducedNary is JAX's unreduced rule of the elementwise ops: add and sub keep equal
// unreduced axes; mul refuses two unreduced operands (and one, without reduced axes, which
// xlamesh does not have); neg and convert_element_type keep them; other ops, non-linear,
// refuse them.
func unreducedNary(prim string, in []Type) ([]string, error) {
	var any bool
	for _, t := range in {
		any = any || len(t.unreduced) > 0
	}
	if !any {
		return nil, nil
	}
	if len(in) == 1 {
		if prim == "neg" || prim == "convert_element_type" {
			return in[0].unreduced, nil
		}
		return nil, shardingTypeErr("%s is a non-linear operation and cannot accept input that is unreduced. Got %s", prim, in[0])
	}
	if len(in) != 2 {
		return nil, nonLinear(prim, in)
	}
	x, y := in[0].unreduced, in[1].unreduced
	switch prim {
	case "add", "sub":
		switch {
		case len(x) > 0 && len(y) > 0:
			if !slices.Equal(x, y) {
				return nil, shardingTypeErr("lhs and rhs to `%s` must be unreduced along the same mesh axes. Got lhs=%s, rhs=%s", prim, pySet(x), pySet(y))
			}
			return x, nil
		case len(x) > 0:
			return nil, shardingTypeErr("lhs is unreduced while rhs is not. `%s` operation does not allow this because there will be implicit communication. Please reduce lhs via `reshard` before calling `%s`.", prim, prim)
		default:
			return nil, shardingTypeErr("rhs is unreduced while lhs is not. `%s` operation does not allow this because there will be implicit communication. Please reduce rhs via `reshard` before calling `%s`.", prim, prim)
		}
	case "mul":
		if len(x) > 0 && len(y) > 0 {
			return nil, shardingTypeErr("lhs and rhs to `mul` cannot be unreduced since mul is bilinear. Got lhs=%s, rhs=%s", pySet(x), pySet(y))
		}
		if len(x) > 0 {
			return nil, shardingTypeErr("RHS should be reduced along the same axes LHS is unreduced on. Got lhs=%s and rhs=%s", in[0], in[1])
		}
		return nil, shardingTypeErr("LHS should be reduced along the same axes RHS is unreduced on. Got lhs=%s and rhs=%s", in[0], in[1])
	}
	return nil, nonLinear(prim, in)
}

// nonLinear is JAX's refusal of unreduced operands by an n-ary op that is not linear.
func nonLinear(prim string, in []Type) error {
	s := make([]string, len(in))
	for i, t := range in {
		s[i] = "ShapedArray(" + t.String() + ")"
	}
	return shardingTypeErr("%s is a non-linear operation and cannot accept inputs that are unreduced. Got (%s)", prim, strings.Join(s, ", "))
}

// pyIntSet is a set of integers as Python prints a frozenset: "frozenset({0, 1})".
func pyIntSet(xs []int) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Itoa(x)
	}
	return "frozenset({" + strings.Join(q, ", ") + "})"
}

// pySet is a set of axis names as Python prints a frozenset: "frozenset({'X'})".
func pySet(axes []string) string {
	q := make([]string, len(axes))
	for i, a := range axes {
		q[i] = "'" + a + "'"
	}
	return "frozenset({" + strings.Join(q, ", ") + "})"
}

// selectRule is JAX's select_n rule: the cases have one sharding; a non-scalar predicate has
// it too.
func (m *Module) selectRule(in []Type, out Shape) (Type, error) {
	which, cases := in[0], in[1:]
	for _, c := range cases[1:] {
		if !slices.EqualFunc(c.dims, cases[0].dims, slices.Equal) {
			// JAX's select_n takes the cases in the reverse order of stablehlo.select's.
			rev := slices.Clone(cases)
			slices.Reverse(rev)
			return Type{}, shardingTypeErr("select cases must have the same shardings, got [%s].", m.pyShardings(rev))
		}
	}
	if which.shape.Rank() > 0 && !slices.EqualFunc(which.dims, cases[0].dims, slices.Equal) {
		return Type{}, shardingTypeErr("select `which` must be scalar or have the same sharding as cases, got `which` sharding %s but case sharding %s.",
			m.pyShardings(in[:1]), m.pyShardings(cases[:1]))
	}
	t := cases[0]
	t.shape = out
	return t, nil
}

// pyShardings writes the types' shardings as JAX's messages do: str(NamedSharding), but for
// the device kind, core count and platform JAX's abstract mesh of a concrete mesh prints,
// which an abstract mesh does not know.
func (m *Module) pyShardings(ts []Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = "NamedSharding(mesh=" + m.typing.abs.String() + ", spec=" + t.Spec().String() + ")"
	}
	return strings.Join(s, ", ")
}

// concatRule is JAX's: every operand has one sharding.
func (m *Module) concatRule(in []Type, out Shape) (Type, error) {
	for _, a := range in[1:] {
		if !slices.EqualFunc(a.dims, in[0].dims, slices.Equal) {
			return Type{}, shardingTypeErr("All operands should have the same sharding. Got shardings %s", m.pyShardings(in))
		}
	}
	for _, a := range in[1:] {
		if !slices.Equal(a.unreduced, in[0].unreduced) {
			return Type{}, noUnreduced("concatenate", in)
		}
	}
	t := in[0]
	t.shape = out
	return t, nil
}

// subSpecSize is the number of shards of a dimension sharded over axes.
func (m *Module) subSpecSize(axes []string) int {
	n := 1
	for _, a := range axes {
		s, _ := m.typing.abs.AxisSize(a)
		n *= s
	}
	return n
}

// varyingShapeRule is JAX's rule for ops whose result may differ in size from the operand
// (slice, dynamic_slice, pad, reduce_window): the operand's sharding, where every changed
// sharded dimension still divides. The result has no unreduced axes (callers decide).
func (m *Module) varyingShapeRule(name string, x Type, out Shape) (Type, error) {
	allOne := true
	for _, d := range out.Dims() {
		allOne = allOne && d == 1
	}
	if allOne {
		return m.typing.replicated(out), nil
	}
	for i := range out.Rank() {
		if len(x.dims[i]) > 0 && x.shape.Dim(i) != out.Dim(i) && out.Dim(i)%m.subSpecSize(x.dims[i]) != 0 {
			spec := x.dims[i][0]
			if len(x.dims[i]) > 1 {
				spec = pyEntry(x.dims[i])
			}
			return Type{}, shardingTypeErr("%s on sharded dims where out dim (%d) is not divisible by mesh axes (%d) with spec (%s) is not implemented. Got input type=%s and output shape=%s",
				name, out.Dim(i), m.subSpecSize(x.dims[i]), spec, x.short(), shapes.PyTuple(out.Dims()))
		}
	}
	return x.withShape(out), nil
}

// dotRule is JAX's dot_general rule without an out sharding.
func (m *Module) dotRule(l, r Type, d DotDims, out Shape) (Type, error) {
	if len(l.unreduced) > 0 || len(r.unreduced) > 0 {
		return Type{}, shardingTypeErr("lhs or rhs passed to dot_general cannot be unreduced. Got lhs=ShapedArray(%s) and rhs=ShapedArray(%s)", l, r)
	}
	pick := func(t Type, idx []int) [][]string {
		s := make([][]string, len(idx))
		for i, j := range idx {
			s[i] = t.dims[j]
		}
		return s
	}
	lb, rb := pick(l, d.LhsBatch), pick(r, d.RhsBatch)
	for i := range lb {
		if !slices.Equal(lb[i], rb[i]) {
			return Type{}, shardingTypeErr("dot_general requires lhs batch dimensions and rhs batch dimensions to have the same sharding, got %s and %s.", pyTuple(lb), pyTuple(rb))
		}
	}
	lc, rc := pick(l, d.LhsContracting), pick(r, d.RhsContracting)
	for i := range lc {
		if len(lc[i]) > 0 && len(rc[i]) > 0 {
			return Type{}, shardingTypeErr("Contracting dimensions are sharded and it is ambiguous how the output should be sharded. Please specify the output sharding via the `out_sharding` parameter. Got lhs_contracting_spec=%s and rhs_contracting_spec=%s", pyTuple(lc), pyTuple(rc))
		}
	}
	t := m.typing.replicated(out)
	t.dims = append(t.dims[:0], lb...)
	for _, src := range []struct {
		t    Type
		skip []int
	}{{l, append(slices.Clone(d.LhsBatch), d.LhsContracting...)}, {r, append(slices.Clone(d.RhsBatch), d.RhsContracting...)}} {
		for i, ax := range src.t.dims {
			if !slices.Contains(src.skip, i) {
				t.dims = append(t.dims, ax)
			}
		}
	}
	return t, nil
}

// reduceRule is JAX's reduction rule: the reduced dimensions leave the spec; a sum keeps its
// operand's unreduced axes, other reductions refuse them.
func (m *Module) reduceRule(in []Type, res []Value, p stablehlo.ReduceParams) ([]Type, error) {
	out := make([]Type, len(res))
	for i := range res {
		x := in[i]
		t := m.typing.replicated(res[i].Shape())
		t.dims = t.dims[:0]
		for j, ax := range x.dims {
			if !slices.Contains(p.Dims, j) {
				t.dims = append(t.dims, ax)
			}
		}
		if len(x.unreduced) > 0 {
			if p.Reduction != stablehlo.Sum {
				return nil, noUnreduced("reduce_"+strings.ToLower(p.Reduction.String()), []Type{x})
			}
			t.unreduced = x.unreduced
		}
		out[i] = t
	}
	return out, nil
}

// sortRule is JAX's: the operands are unsharded along the sorted dimension and share one
// sharding.
func (m *Module) sortRule(in []Type, p stablehlo.SortParams) ([]Type, error) {
	for _, t := range in {
		if len(t.dims[p.Dim]) > 0 {
			return nil, shardingTypeErr("Arguments to sort must be unsharded over the sorting dimension. Got arg sharding=%s and sorting dimension=%d", m.pyShardings([]Type{t}), p.Dim)
		}
		if !slices.EqualFunc(t.dims, in[0].dims, slices.Equal) {
			return nil, shardingTypeErr("Arguments to sort must have equal shardings, got: %s", m.pyShardings(in))
		}
	}
	if err := noUnreduced("sort", in); err != nil {
		return nil, err
	}
	return slices.Clone(in), nil
}

// outType is the type an op given an out sharding produces, after JAX's checks of it (o is
// nil for FullOut's constant).
func (m *Module) outType(o *stablehlo.Op, in []Type, s Shape, out OutSharding) (Type, error) {
	tg := m.typing
	prim, params := "broadcast_in_dim", any(nil) // FullOut's: JAX broadcasts a scalar
	if o != nil {
		prim, params = jaxName(o), o.Params()
	}
	spec := out.Spec
	if spec.Len() > s.Rank() {
		return Type{}, fmt.Errorf("%w: out sharding %v has %d entries for a rank-%d result", ErrSharding, spec, spec.Len(), s.Rank())
	}
	for _, ax := range append(spec.UsedAxes(), out.Unreduced...) {
		if _, ok := tg.abs.AxisSize(ax); !ok {
			return Type{}, fmt.Errorf("%w: axis %q is not an axis of the mesh %v", ErrUnknownAxis, ax, tg.abs)
		}
	}
	t := tg.replicated(s)
	for i := range spec.Len() {
		t.dims[i] = spec.Dim(i).Axes()
	}
	t.unreduced = tg.meshOrder(out.Unreduced)
	if err := checkDuplicates(prim, in, t); err != nil {
		return Type{}, err
	}
	if sh, err := t.Sharding(); err != nil {
		return Type{}, fmt.Errorf("%w: %w", ErrSharding, err)
	} else if err := sh.CheckShape(s.Dims()); err != nil {
		return Type{}, fmt.Errorf("%w: %w", ErrIndivisible, err)
	}
	switch p := params.(type) {
	case stablehlo.DotDims:
		l, r := in[0], in[1]
		if len(l.unreduced) > 0 || len(r.unreduced) > 0 {
			return Type{}, shardingTypeErr("lhs or rhs passed to dot_general cannot be unreduced. Got lhs=ShapedArray(%s) and rhs=ShapedArray(%s)", l, r)
		}
		if len(t.unreduced) > 0 {
			var lc, rc [][]string
			var flat []string
			for i := range p.LhsContracting {
				lc = append(lc, l.dims[p.LhsContracting[i]])
				rc = append(rc, r.dims[p.RhsContracting[i]])
				flat = append(flat, l.dims[p.LhsContracting[i]]...)
			}
			if !slices.EqualFunc(lc, rc, slices.Equal) {
				return Type{}, shardingTypeErr("lhs and rhs contracting dims should be sharded identically when out_sharding provided to dot_general mentions unreduced_axes. Got lhs_contracting_spec=%s, rhs_contracting_spec=%s", pyTuple(lc), pyTuple(rc))
			}
			if !slices.Equal(t.unreduced, tg.meshOrder(flat)) || len(flat) != len(t.unreduced) {
				return Type{}, shardingTypeErr("out_sharding's unreduced axes should be equal to the contracting specs. Got unreduced axes=%s and contracting spec=%s", pySet(t.unreduced), pyTuple(lc))
			}
		}
	case stablehlo.ReduceParams:
		x := in[0]
		if len(t.unreduced) > 0 {
			var summed []string
			for _, d := range p.Dims {
				summed = append(summed, x.dims[d]...)
			}
			for _, u := range t.unreduced {
				if !slices.Contains(summed, u) {
					return Type{}, shardingTypeErr("out_sharding's unreduced axes should be in operand's specs that were reduce_sum over. Got operand=ShapedArray(%s), axes=%s, unreduced_spec=%s", x, pyIntSet(p.Dims), pySet(t.unreduced))
				}
			}
		}
	default:
		if len(t.unreduced) > 0 {
			return Type{}, fmt.Errorf("%w: unreduced/reduced rule for %s is not implemented. Please file an issue at https://github.com/jax-ml/jax/issues", ErrShardingType, prim)
		}
	}
	return t, nil
}

// reshapeRule is JAX's reshape rule without an out sharding: a replicated operand stays
// replicated; adding or removing size-1 dimensions keeps the specs; splitting one dimension
// spreads its axes over the pieces, merging dimensions keeps the major one's axes when the
// minor ones are unsharded; anything else asks for an out sharding.
func (m *Module) reshapeRule(x Type, out Shape) (Type, error) {
	t := m.typing.replicated(out)
	t.unreduced = x.unreduced
	sharded := false
	for _, d := range x.dims {
		sharded = sharded || len(d) > 0
	}
	if !sharded {
		return t, nil
	}
	fail := func() (Type, error) {
		return Type{}, shardingTypeErr("This reshape is not supported. Please specify the sharding of the output via the `out_sharding` argument of jax.lax.reshape. Got operand type: %s, new sizes: %s", x, shapes.PyTuple(out.Dims()))
	}
	opShape, newSizes := x.shape.Dims(), out.Dims()
	var opNon1 []int
	var opSpec [][]string
	for i, s := range opShape {
		if s != 1 {
			opNon1 = append(opNon1, s)
			opSpec = append(opSpec, x.dims[i])
		}
	}
	var newNon1 []int
	for _, s := range newSizes {
		if s != 1 {
			newNon1 = append(newNon1, s)
		}
	}
	// place puts the specs of the non-1 result dimensions in order, with the size-1
	// dimensions keeping the operand's spec where the operand has size 1 at that position.
	place := func(spec [][]string, keep1 bool) Type {
		k := 0
		for i, n := range newSizes {
			if n == 1 {
				if keep1 && i < len(opShape) && opShape[i] == 1 {
					t.dims[i] = x.dims[i]
				}
				continue
			}
			t.dims[i] = spec[k]
			k++
		}
		return t
	}
	if slices.Equal(opNon1, newNon1) {
		return place(opSpec, false), nil
	}
	// splitPartitions spreads the axes tup over the pieces out, as JAX's split_partitions.
	splitPartitions := func(tup []string, pieces []int) ([][]string, bool) {
		var parts [][]string
		k := 0
		for _, o := range pieces {
			var dim []string
			for o > 1 && k < len(tup) {
				size, _ := m.typing.abs.AxisSize(tup[k])
				if o%size != 0 {
					return nil, false
				}
				o /= size
				dim = append(dim, tup[k])
				k++
			}
			parts = append(parts, dim)
		}
		return parts, k == len(tup)
	}
	if split, groups, err := splitOnOneAxis(opNon1, newNon1); err != nil {
		return fail()
	} else if split {
		var spec [][]string
		for i, g := range groups {
			if !isSplitGroup(groups, i) {
				spec = append(spec, opSpec[i])
				continue
			}
			if len(opSpec[i]) == 0 {
				spec = append(spec, make([][]string, len(g))...)
				continue
			}
			parts, ok := splitPartitions(opSpec[i], g)
			if !ok {
				return fail()
			}
			spec = append(spec, parts...)
		}
		return place(spec, true), nil
	}
	merge, groups, err := splitOnOneAxis(newNon1, opNon1)
	if err != nil || !merge {
		return fail()
	}
	var spec [][]string
	k := 0
	for i, g := range groups {
		if !isSplitGroup(groups, i) {
			spec = append(spec, opSpec[k])
			k++
			continue
		}
		tup := opSpec[k : k+len(g)]
		k += len(g)
		var flat []string
		allNone := true
		n := len(tup)
		for n > 0 && len(tup[n-1]) == 0 {
			n--
		}
		for j, e := range tup {
			if len(e) > 0 {
				allNone = false
			} else if j < n {
				return fail() // an unsharded dimension before a sharded one
			}
			flat = append(flat, e...)
		}
		if allNone {
			spec = append(spec, nil)
			continue
		}
		parts, ok := splitPartitions(flat, []int{newNon1[i]})
		if !ok {
			return fail()
		}
		spec = append(spec, parts...)
	}
	return place(spec, true), nil
}

// splitOnOneAxis is JAX's _split_on_one_axis on shapes without size-1 dimensions: whether
// new splits exactly one dimension of op into several, and per dimension of op the sizes it
// becomes. A second split is an error.
func splitOnOneAxis(op, new []int) (bool, [][]int, error) {
	if len(new) <= len(op) {
		return false, nil, nil
	}
	var out [][]int
	i, j, count := 0, 0, 0
	for j < len(new) {
		if i >= len(op) {
			return false, nil, nil
		}
		if op[i] == new[j] {
			out = append(out, []int{op[i]})
		} else {
			count++
			if count > 1 {
				return false, nil, errReshape
			}
			temp := []int{new[j]}
			prod := new[j]
			for prod != op[i] {
				if prod > op[i] || j+1 >= len(new) {
					return false, nil, nil
				}
				j++
				temp = append(temp, new[j])
				prod *= new[j]
			}
			out = append(out, temp)
		}
		i++
		j++
	}
	if len(out) != len(op) {
		return false, nil, nil
	}
	return true, out, nil
}

var errReshape = fmt.Errorf("reshape splits more than one dimension")

// isSplitGroup reports whether group i of splitOnOneAxis's result is a split (JAX keeps these
// as lists): more than one piece. A group of one piece equal to its dimension is not.
func isSplitGroup(groups [][]int, i int) bool { return len(groups[i]) > 1 }
