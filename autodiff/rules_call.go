package autodiff

import (
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func init() {
	Register("func.call", callRule)
	Register("stablehlo.custom_call", customCallRule)
}

// Replay copies ops, recorded in some function or region, into f: env maps the values the
// ops (and their regions) use that they do not define (the arguments of their function, say)
// to values of f, and Replay adds each op's results, mapped to those of its copy (see
// stablehlo.Function.ReplayWith). A value missing from env is used as it is, which the
// builder accepts where f sees it (a value an open region captures). Results of
// StopGradient stay stopped in the copy. It reports whether every op was copied; on error
// (a builder error, which is recorded) it returns false.
func Replay(f *stablehlo.Function, ops []*stablehlo.Op, env map[Value]Value) bool {
	for _, op := range ops {
		src := op.Operands()
		args := make([]Value, len(src))
		for i, v := range src {
			if w, ok := env[v]; ok {
				args[i] = w
			} else {
				args[i] = v // a value f sees (a capture of an open region); the builder checks it
			}
		}
		res := f.ReplayWith(op, env, args...)
		if f.Failed() {
			return false
		}
		for i, r := range op.Results() {
			env[r] = res[i]
			if IsStopped(r) {
				markStopped(f, res[i])
			}
		}
	}
	return true
}

// markStopped adds v to the module's StopGradient results.
func markStopped(f *stablehlo.Function, v Value) {
	m := f.Module()
	set, _ := m.Context(stopKey{}).(map[Value]bool)
	if set == nil {
		set = make(map[Value]bool)
		m.SetContext(stopKey{}, set)
	}
	set[v] = true
}

// callRule differentiates a call of a private function by replaying the callee's body at
// the call site and walking the copy back; XLA inlines the call and merges the two copies of
// the forward computation.
func callRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.CallParams](b, op)
	if !ok {
		return nil
	}
	f := b.f
	g := p.Callee
	operands := op.Operands()
	env := make(map[Value]Value, len(operands))
	for i, a := range g.Args() {
		env[a] = operands[i]
	}
	start := len(f.Ops())
	if !Replay(f, g.Ops(), env) {
		return nil
	}
	ops := f.Ops()[start:]
	outs := make([]Value, len(g.Results()))
	full := make([]Value, len(cts))
	for i, r := range g.Results() {
		outs[i] = env[r]
		full[i] = cts[i]
		if !full[i].Valid() && shapes.IsInexact(r.DType()) {
			full[i] = b.Zeros(r.Shape())
		}
	}
	var wrt []Value
	var at []int
	for i, v := range operands {
		if b.Active(v) && !containsValue(wrt, v) {
			wrt = append(wrt, v)
			at = append(at, i)
		}
	}
	res := b.VJP(ops, outs, wrt, full)
	out := make([]Value, len(operands))
	for k, i := range at {
		out[i] = res[k]
	}
	return out
}

func containsValue(vs []Value, v Value) bool {
	for _, w := range vs {
		if w == v {
			return true
		}
	}
	return false
}

// customCallRule: lower's GSPMD sharding constraint, `@Sharding`, is the identity on
// values, so its transpose is the same constraint on the cotangent. No other custom call is
// differentiable.
func customCallRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.CustomCallParams](b, op)
	if !ok {
		return nil
	}
	if p.Target == "Sharding" && len(op.Operands()) == 1 && len(op.Results()) == 1 {
		return SelfTranspose(b, op, cts)
	}
	if mr := rulesOf(b.f.Module(), false); mr != nil {
		if r, ok := mr.calls[p.Target]; ok {
			return r(b, op, cts)
		}
	}
	return b.Fail(op, "custom call @%s has no transpose rule", p.Target)
}

// SelfTranspose is the rule of a one-operand op that is the identity on values and so its
// own transpose, such as a sharding constraint: it replays the op on the cotangent, so that
// the cotangent gets the same annotation (package lower gives it to its modules for
// sdy.sharding_constraint).
func SelfTranspose(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	return b.f.Replay(op, cts[0])
}
