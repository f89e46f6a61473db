package autodiff

import (
	"fmt"
	"sort"
	"sync"

	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Value and Shape are the builder's.
type (
	Value = stablehlo.Value
	Shape = stablehlo.Shape
)

// Rule transposes one recorded op: given the cotangents of the op's results (cts, one per
// result, the zero Value for a result that has none), it adds to b.Function() the ops that
// compute the cotangents of the op's inputs and returns them, one per input (see Inputs: the
// operands, then for an op with open regions the values they capture). An input that gets
// no cotangent (an integer index, a constant, an operand for which b.Active is
// false) gets the zero Value. A rule that cannot handle an op's parameters returns b.Fail's
// result.
//
// Every returned cotangent must have its operand's type: a rule never leaves broadcasting to
// the walk. Rules may use the op's operands and results, which are values of b.Function().
type Rule func(b *Backward, op *stablehlo.Op, cts []Value) []Value

var (
	rulesMu sync.RWMutex
	rules   = map[string]Rule{}
)

// Register makes r the transpose rule of the ops named name ("stablehlo.add") in every module,
// replacing any rule registered before. This package registers the rules of the builder's ops
// this way; a package that makes ops of its own gives their rules to the modules it makes
// (RegisterFor), so that what a program's derivative is never depends on which packages the
// binary links. Safe for concurrent use.
func Register(name string, r Rule) {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	if r == nil {
		delete(rules, name)
		return
	}
	rules[name] = r
}

// Registered returns the names of the ops that have a transpose rule, sorted.
func Registered() []string {
	rulesMu.RLock()
	defer rulesMu.RUnlock()
	names := make([]string, 0, len(rules))
	for n := range rules {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// moduleRulesKey is the stablehlo.Module context key of a module's own rules (RegisterFor).
type moduleRulesKey struct{}

// moduleRules are the rules one module was given: by op name, and for custom calls by target.
type moduleRules struct {
	ops, calls map[string]Rule
}

// rulesOf returns m's own rules, made on first use when create is set (nil otherwise).
func rulesOf(m *stablehlo.Module, create bool) *moduleRules {
	if m == nil {
		return nil
	}
	r, _ := m.Context(moduleRulesKey{}).(*moduleRules)
	if r == nil && create {
		r = &moduleRules{ops: map[string]Rule{}, calls: map[string]Rule{}}
		m.SetContext(moduleRulesKey{}, r)
	}
	return r
}

// RegisterFor makes r the transpose rule of the ops named name in module m alone, before any
// rule Register gave them. Package lower gives each module it makes the rules of its ops
// (sharding constraints, shard_map bodies, the collectives over mesh axes): they travel with
// the module, so the same program differentiates the same way whatever the binary links, and a
// module built without lower has no rule for them. A nil r removes the module's rule. Like the
// module, not safe for concurrent use.
func RegisterFor(m *stablehlo.Module, name string, r Rule) {
	setRule(rulesOf(m, true).ops, name, r)
}

// RegisterCustomCallFor makes r the transpose rule of module m's custom calls to target
// (stablehlo.custom_call ops are told apart by their target); package lower gives its modules
// the rule of annotate_device_placement. A nil r removes it.
func RegisterCustomCallFor(m *stablehlo.Module, target string, r Rule) {
	setRule(rulesOf(m, true).calls, target, r)
}

func setRule(rules map[string]Rule, name string, r Rule) {
	if r == nil {
		delete(rules, name)
		return
	}
	rules[name] = r
}

// lookup returns the rule of op in function f: the module's own, else the registered one.
func lookup(f *stablehlo.Function, name string) (Rule, bool) {
	if mr := rulesOf(f.Module(), false); mr != nil {
		if r, ok := mr.ops[name]; ok {
			return r, true
		}
	}
	rulesMu.RLock()
	defer rulesMu.RUnlock()
	r, ok := rules[name]
	return r, ok
}

// Option configures VJP.
type Option func(*config)

type config struct {
	contribution func(b *Backward, primal, ct Value, from *stablehlo.Op) Value
}

// WithContribution sets a function that sees every cotangent contribution before the walk
// adds it to the cotangent of its primal value: ct is what op from's rule returned for its
// operand primal, and the function returns what is added instead. Package lower uses it in
// shard_map bodies, where a contribution that varies along mesh axes along which its primal
// does not is summed over them (the transpose of JAX's implicit pvary).
func WithContribution(fn func(b *Backward, primal, ct Value, from *stablehlo.Op) Value) Option {
	return func(c *config) { c.contribution = fn }
}

// ContributionKey is the stablehlo.Module context key of a module's own contribution
// function (a func(b *Backward, primal, ct Value, from *stablehlo.Op) Value): every walk in
// the module passes each cotangent contribution through it, after the walk's
// WithContribution. Package lower sets one on modules with sharding in types, giving each
// contribution its primal value's sharding type, as JAX's cotangents have their primals'.
type ContributionKey struct{}

// transposingKey is the stablehlo.Module context key under which a walk counts the rules
// running now (an *int).
type transposingKey struct{}

// Transposing reports whether a transpose rule is running in f's module: the ops being added
// compute cotangents. Package lower's sharding in types reads it, resolving as JAX's transpose
// rules do (with the primal's sharding) what its op rules would refuse for want of an out
// sharding.
func Transposing(f *stablehlo.Function) bool {
	if f == nil {
		return false
	}
	n, ok := f.Module().Context(transposingKey{}).(*int)
	return ok && *n > 0
}

// transposing runs rule on op with the module marked as transposing.
func transposing(b *Backward, rule Rule, op *stablehlo.Op, cts []Value) []Value {
	m := b.f.Module()
	n, ok := m.Context(transposingKey{}).(*int)
	if !ok {
		n = new(int)
		m.SetContext(transposingKey{}, n)
	}
	*n++
	defer func() { *n-- }()
	return rule(b, op, cts)
}

// Backward is the state of one reverse walk, handed to rules: the function that receives
// the backward ops and which values the walk differentiates.
type Backward struct {
	f      *stablehlo.Function
	cfg    *config
	active map[Value]bool
}

// Function returns the function (or region body) the backward ops go to: the one holding
// the op being transposed.
func (b *Backward) Function() *stablehlo.Function { return b.f }

// Active reports whether v depends on a differentiated value through differentiable ops, so
// that its cotangent is wanted. Integer and pred values are never active.
func (b *Backward) Active(v Value) bool { return b.active[v] }

// Zeros returns a constant of shape s filled with zeros.
func (b *Backward) Zeros(s Shape) Value { return b.f.Full(s, 0) }

// Fail records that op cannot be differentiated (an error wrapping ErrNotDifferentiable whose
// OpError names the op) and returns nil, for a rule to return.
func (b *Backward) Fail(op *stablehlo.Op, format string, args ...any) []Value {
	b.f.Fail(op.Name(), -1, Value{}, fmt.Errorf("vjp: %w: "+format, append([]any{ErrNotDifferentiable}, args...)...))
	return nil
}

// Inputs returns what op's result depends on: its operands, then the values its regions
// capture from outside them (stablehlo.Function.Captures: the open regions of while, if and
// case) that are not operands, each once.
func Inputs(op *stablehlo.Op) []Value {
	in := op.Operands()
	for _, g := range op.Regions() {
		for _, v := range g.Captures() {
			if !containsValue(in, v) {
				in = append(in, v)
			}
		}
	}
	return in
}

// VJPIn is VJP with the options of the walk b belongs to, in fn, a region nested in
// b.Function() (a loop or branch body a rule builds): wrt and cts may be values of fn or of
// the functions enclosing it.
func (b *Backward) VJPIn(fn *stablehlo.Function, ops []*stablehlo.Op, outputs, wrt, cts []Value) []Value {
	return run(fn, b.cfg, ops, outputs, wrt, cts)
}

// VJP transposes ops, a run of ops recorded in b.Function() (typically ones a rule has just
// replayed there), from outputs with cotangents cts back to wrt, with the options of the
// walk b belongs to; see the package function VJP. Rules use it for ops with bodies.
func (b *Backward) VJP(ops []*stablehlo.Op, outputs, wrt, cts []Value) []Value {
	return run(b.f, b.cfg, ops, outputs, wrt, cts)
}

// VJP adds to f the backward pass of f's recorded ops: from outputs, whose cotangents are
// cts, back to the values wrt, and returns the cotangent of each value of wrt (JAX's
// jax.vjp, built into the same function). f must not have returned yet; outputs and wrt are
// values of f (function arguments or op results; in a region, wrt and cts may also be values
// of the functions enclosing it). A value of wrt that the outputs do not
// depend on gets zeros; an integer or pred value of wrt gets zeros of its own type (JAX
// gives float0 zeros). Only the ops on a path from wrt to outputs are transposed; an op
// there without a transpose rule records an error wrapping ErrNotDifferentiable that names
// it (see Register). The cotangent of an integer or pred output is ignored and may be the
// zero Value. Floating-point values of every width (float8 and float4 included) and complex
// values have cotangents of their own type; a complex cotangent is JAX's plain transpose,
// without conjugation (see the package doc).
//
// Errors stick in the module like the builder's: VJP then returns one zero Value per value
// of wrt, and Build reports the error.
func VJP(f *stablehlo.Function, outputs, wrt, cts []Value, opts ...Option) []Value {
	cfg := &config{}
	for _, o := range opts {
		o(cfg)
	}
	if f == nil {
		return make([]Value, len(wrt))
	}
	return run(f, cfg, f.Ops(), outputs, wrt, cts)
}

// run is one reverse walk over ops in f.
func run(f *stablehlo.Function, cfg *config, ops []*stablehlo.Op, outputs, wrt, cts []Value) []Value {
	const opName = "vjp"
	res := make([]Value, len(wrt))
	if f.Failed() {
		return res
	}
	if len(cts) != len(outputs) {
		f.Failf(opName, -1, Value{}, ErrCotangent, "%d cotangents for %d outputs", len(cts), len(outputs))
		return res
	}
	for i, o := range outputs {
		if !o.Valid() || o.Function() != f || o.IsWeak() {
			f.Failf(opName, i, o, ErrCotangent, "output %d is not a value of this function", i)
			return res
		}
		if !shapes.IsInexact(o.DType()) {
			continue
		}
		c := cts[i]
		if !c.Valid() || !visible(c, f) || !c.Shape().Equal(o.Shape()) {
			f.Failf(opName, i, c, ErrCotangent, "cotangent %d is %v, output %d is %v", i, c.Shape(), i, o.Shape())
			return res
		}
	}
	for i, w := range wrt {
		if !w.Valid() || !visible(w, f) || w.IsWeak() {
			f.Failf(opName, -1, w, ErrCotangent, "differentiated value %d is not a value of this function", i)
			return res
		}
	}
	b := &Backward{f: f, cfg: cfg, active: make(map[Value]bool)}
	keep := make(map[Value]bool, len(wrt)) // cotangents the walk returns
	for _, w := range wrt {
		keep[w] = true
		if shapes.IsInexact(w.DType()) {
			b.active[w] = true
		}
	}
	stops := stopped(f)
	for _, op := range ops {
		rs := op.Results()
		if len(rs) == 1 && stops[rs[0]] {
			continue
		}
		live := false
		for _, v := range Inputs(op) {
			if b.active[v] {
				live = true
				break
			}
		}
		if !live {
			continue
		}
		for _, r := range rs {
			if shapes.IsInexact(r.DType()) {
				b.active[r] = true
			}
		}
	}
	ct := make(map[Value]Value)
	add := func(v, c Value) bool {
		if !c.Shape().Equal(v.Shape()) {
			f.Failf(opName, -1, v, ErrCotangent, "a rule returned a cotangent %v for a value %v", c.Shape(), v.Shape())
			return false
		}
		if old, ok := ct[v]; ok {
			c = f.Add(old, c)
		}
		ct[v] = c
		return !f.Failed()
	}
	for i, o := range outputs {
		if b.active[o] && !add(o, cts[i]) {
			return res
		}
	}
	for k := len(ops) - 1; k >= 0; k-- {
		op := ops[k]
		rs := op.Results()
		rcts := make([]Value, len(rs))
		found := false
		for i, r := range rs {
			if c, ok := ct[r]; ok {
				rcts[i] = c
				found = true
				if !keep[r] {
					delete(ct, r)
				}
			}
		}
		if !found {
			continue
		}
		operands := Inputs(op)
		live := false
		for _, v := range operands {
			live = live || b.active[v]
		}
		if !live {
			continue
		}
		rule, ok := lookup(f, op.Name())
		if !ok {
			b.Fail(op, "no transpose rule for %s", op.Name())
			return res
		}
		ocs := transposing(b, rule, op, rcts)
		if f.Failed() {
			return res
		}
		if len(ocs) != len(operands) {
			b.Fail(op, "the rule of %s returned %d cotangents for %d inputs", op.Name(), len(ocs), len(operands))
			return res
		}
		for i, v := range operands {
			c := ocs[i]
			if !b.active[v] || !c.Valid() {
				continue
			}
			if cfg.contribution != nil {
				c = cfg.contribution(b, v, c, op)
				if f.Failed() {
					return res
				}
			}
			if mc, ok := f.Module().Context(ContributionKey{}).(func(b *Backward, primal, ct Value, from *stablehlo.Op) Value); ok {
				c = mc(b, v, c, op)
				if f.Failed() {
					return res
				}
			}
			if !add(v, c) {
				return res
			}
		}
	}
	for i, w := range wrt {
		if c, ok := ct[w]; ok {
			res[i] = c
		} else {
			res[i] = b.Zeros(w.Shape())
		}
	}
	if f.Failed() {
		return make([]Value, len(wrt))
	}
	return res
}

// visible reports whether v is a value of f or of a function enclosing f.
func visible(v Value, f *stablehlo.Function) bool {
	for g := f; g != nil; g = g.Parent() {
		if v.Function() == g {
			return true
		}
	}
	return false
}
