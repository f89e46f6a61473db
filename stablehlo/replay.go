package stablehlo

// Replaying ops. A pass that rebuilds part of a function elsewhere (reverse-mode
// differentiation recomputes a shard_map body or a callee inside the code that needs its
// intermediate values) copies recorded ops with Replay instead of knowing how to call the
// builder method of each.

// Replayer is implemented by op parameters that hold state which must not be shared by two
// copies of an op: Replay calls ReplayParams to get the copy's parameters, made for function
// f that will hold it. lower's GSPMD shard_map implements it to give the copy fresh values
// for the custom calls its printer writes. Parameters without such state need not
// implement it.
type Replayer interface {
	ReplayParams(f *Function) any
}

// Replay appends to f a copy of op o, recorded in any function or region of f's module,
// applied to operands instead of o's own, and returns the copy's results. Each operand must
// have the type of o's operand at its position (ErrShape); a weak constant takes that type.
// The copy has o's name, parameters and printer; its regions are copies of o's (with their
// contexts); collectives get fresh channel handles; parameters implementing Replayer are
// replaced by theirs. On error (or after an earlier one) it returns one zero Value per
// result of o.
func (f *Function) Replay(o *Op, operands ...Value) []Value {
	return f.ReplayWith(o, nil, operands...)
}

// ReplayWith is Replay for an op whose regions are open (While, If, Case: see region.go):
// a value its regions use from outside them (Region.Captures) is replaced in the copy by
// outer[value] when outer has it, and used as it is otherwise (it must then be visible from
// f).
func (f *Function) ReplayWith(o *Op, outer map[Value]Value, operands ...Value) []Value {
	opName := "replay"
	if o != nil {
		opName = o.name
	}
	var zeros []Value
	if o != nil {
		zeros = make([]Value, len(o.results))
	}
	vals, ok := f.check(opName, operands...)
	if !ok {
		return zeros
	}
	if o == nil {
		f.failf(opName, -1, nil, ErrFunction, "nil op")
		return zeros
	}
	if len(vals) != len(o.operands) {
		f.failf(opName, -1, nil, ErrShape, "%s takes %d operands, got %d", o.name, len(o.operands), len(vals))
		return zeros
	}
	for i, v := range vals {
		v = f.materialize(v, o.operands[i].shape)
		if f.failed() {
			return zeros
		}
		if !v.shape.Equal(o.operands[i].shape) {
			f.failf(opName, i, v, ErrShape, "operand %d of %s is %v, got %v", i, o.name, o.operands[i].shape, v.shape)
			return zeros
		}
		vals[i] = v
	}
	c := &Op{name: o.name, operands: vals, params: f.replayParams(o.params), print: o.print}
	for _, r := range o.regions {
		g := f.cloneRegion(r, outer)
		if g == nil {
			return zeros
		}
		c.regions = append(c.regions, g)
	}
	shapes := make([]Shape, len(o.results))
	separate := len(o.results) > 1
	for i, r := range o.results {
		shapes[i] = r.shape
		separate = separate && r.sub < 0
	}
	if !separate {
		return f.emitMulti(c, shapes)
	}
	out := make([]Value, len(shapes))
	for i, s := range shapes {
		v := f.newValue(s)
		c.results = append(c.results, v)
		out[i] = Value{v}
	}
	f.ops = append(f.ops, c)
	return out
}

// replayParams returns the parameters of a copy of an op with parameters p.
func (f *Function) replayParams(p any) any {
	switch q := p.(type) {
	case Replayer:
		return q.ReplayParams(f)
	case AllReduceParams:
		q.Channel = f.m.nextChannel()
		return q
	case AllGatherParams:
		q.Channel = f.m.nextChannel()
		return q
	case ReduceScatterParams:
		q.Channel = f.m.nextChannel()
		return q
	case AllToAllParams:
		q.Channel = f.m.nextChannel()
		return q
	case CollectivePermuteParams:
		q.Channel = f.m.nextChannel()
		return q
	}
	return p
}

// cloneRegion returns a copy of region body r nested in f: the same argument types and
// context, each op replayed, ended with the corresponding values. It returns nil after an
// error.
func (f *Function) cloneRegion(r *Function, outer map[Value]Value) *Function {
	shapes := make([]Shape, len(r.args))
	for i, a := range r.args {
		shapes[i] = a.shape
	}
	g := f.region(r.inline, shapes)
	if f.failed() {
		return nil
	}
	g.captures = r.captures
	if r.ctx != nil {
		g.ctx = make(map[any]any, len(r.ctx))
		for k, v := range r.ctx {
			g.ctx[k] = v
		}
	}
	m := make(map[*value]*value, len(r.args)+2*len(r.ops))
	for i, a := range r.args {
		m[a] = g.args[i]
	}
	mapped := func(vs []*value) []Value {
		out := make([]Value, len(vs))
		for i, v := range vs {
			w, ok := m[v]
			switch {
			case ok:
				out[i] = Value{w}
			case outer != nil && outer[Value{v}].v != nil:
				out[i] = outer[Value{v}]
			default:
				out[i] = Value{v} // a capture from beyond the region
			}
		}
		return out
	}
	for _, o := range r.ops {
		res := g.ReplayWith(o, outer, mapped(o.operands)...)
		if f.failed() {
			return nil
		}
		for i, v := range o.results {
			m[v] = res[i].v
		}
	}
	if !r.returned {
		f.failf("region", -1, nil, ErrFunction, "copying a region that has not ended")
		return nil
	}
	res := mapped(r.results)
	if vs, ok := g.check("region", res...); ok {
		g.results = vs
	} else {
		return nil
	}
	g.returned = true
	return g
}
