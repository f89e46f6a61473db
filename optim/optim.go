package optim

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Value is a value of the function under construction.
type Value = stablehlo.Value

// State is the state of a Transformation: a flat, ordered list of values. Each leaf has the
// shape and element type of a parameter, except the step counts, which are int32 scalars;
// Transformation.Layout tells them apart.
type State []Value

// Scalar is the Layout entry of a state leaf that is an int32 scalar (a step count) rather
// than a value shaped like a parameter.
const Scalar = -1

// Transformation is a gradient transformation, optax's GradientTransformation over flat
// lists of values. A Transformation holds only hyperparameters and is safe for concurrent
// use; the values it builds belong to the function they are built in.
type Transformation interface {
	// Init builds the initial state for params in f: zeros shaped like the parameters for
	// moments and traces, zero step counts.
	Init(f *stablehlo.Function, params []Value) State
	// Update builds in f the updates for grads (one per parameter, shaped like it) and the
	// next state. params are the current parameters; transformations that do not read them
	// (all but AddDecayedWeights and those built on it) accept nil. After an error (lists of
	// lengths that do not fit, a non-float gradient, ...) it records the error in f and
	// returns nil lists.
	Update(f *stablehlo.Function, grads []Value, state State, params []Value) ([]Value, State)
	// Layout returns, for n parameters, one entry per state leaf in order: the index of the
	// parameter whose shape and element type the leaf has, or Scalar for a step count. It
	// lets a caller shard each leaf like its parameter.
	Layout(n int) []int
}

// ApplyUpdates returns params + updates, each converted to its parameter's element type, as
// optax.apply_updates. Lists of different lengths, or an update whose shape differs from its
// parameter's, record an error in f (ErrLength, ErrShape) and give nil.
func ApplyUpdates(f *stablehlo.Function, params, updates []Value) []Value {
	const op = "optim.apply_updates"
	if !checkLeaves(f, op, "updates", params, updates, false) {
		return nil
	}
	out := make([]Value, len(params))
	for i, p := range params {
		u := updates[i]
		if u.DType() != p.DType() {
			u = f.Convert(u, p.DType())
		}
		out[i] = f.Add(p, u)
	}
	if f.Failed() {
		return nil
	}
	return out
}

// Chain returns the transformation that applies ts in turn, each to the updates of the one
// before, as optax.chain. Its state is the states of ts, concatenated in order.
func Chain(ts ...Transformation) Transformation { return chain(ts) }

type chain []Transformation

func (c chain) Init(f *stablehlo.Function, params []Value) State {
	var s State
	for _, t := range c {
		ts := t.Init(f, params)
		if f.Failed() {
			return nil
		}
		s = append(s, ts...)
	}
	return s
}

func (c chain) Update(f *stablehlo.Function, grads []Value, state State, params []Value) ([]Value, State) {
	if f.Failed() {
		return nil, nil
	}
	if n := len(c.Layout(len(grads))); len(state) != n {
		f.Failf("optim.chain", -1, Value{}, ErrLength, "state has %d leaves; %d gradients need %d", len(state), len(grads), n)
		return nil, nil
	}
	var next State
	u := grads
	for _, t := range c {
		n := len(t.Layout(len(grads)))
		var s State
		u, s = t.Update(f, u, state[:n], params)
		if f.Failed() {
			return nil, nil
		}
		state = state[n:]
		next = append(next, s...)
	}
	return u, next
}

func (c chain) Layout(n int) []int {
	var l []int
	for _, t := range c {
		l = append(l, t.Layout(n)...)
	}
	return l
}

// checkLeaves checks that got has one value per parameter, of its shape and type
// (sameDType) or of its shape, and that every parameter is real floating point.
func checkLeaves(f *stablehlo.Function, op, what string, params, got []Value, sameDType bool) bool {
	if f.Failed() {
		return false
	}
	if len(got) != len(params) {
		f.Failf(op, -1, Value{}, ErrLength, "%d %s for %d parameters", len(got), what, len(params))
		return false
	}
	for i, p := range params {
		if !p.Valid() || !got[i].Valid() {
			f.Failf(op, i, Value{}, ErrLength, "%s %d: invalid value", what, i)
			return false
		}
		if !shapes.IsFloat(p.DType()) {
			f.Failf(op, i, p, ErrNotFloat, "parameter %d is %s (want a float type)", i, p.Shape())
			return false
		}
		g := got[i].Shape()
		if !shapes.IsFloat(g.DType()) {
			f.Failf(op, i, got[i], ErrNotFloat, "%s %d is %s (want a float type)", what, i, g)
			return false
		}
		if !g.EqualDims(p.Shape().Dims()) || (sameDType && g.DType() != p.DType()) {
			f.Failf(op, i, got[i], ErrShape, "%s %d is %s; its parameter is %s", what, i, g, p.Shape())
			return false
		}
	}
	return true
}

// checkGrads checks grads (float values) and a state of the given layout: leaf k shaped like
// grads[layout[k]], or an int32 scalar.
func checkGrads(f *stablehlo.Function, op string, grads []Value, state State, layout []int) bool {
	if f.Failed() {
		return false
	}
	for i, g := range grads {
		if !g.Valid() {
			f.Failf(op, i, Value{}, ErrLength, "gradient %d: invalid value", i)
			return false
		}
		if !shapes.IsFloat(g.DType()) {
			f.Failf(op, i, g, ErrNotFloat, "gradient %d is %s (want a float type)", i, g.Shape())
			return false
		}
	}
	if len(state) != len(layout) {
		f.Failf(op, -1, Value{}, ErrLength, "state has %d leaves; %d gradients need %d", len(state), len(grads), len(layout))
		return false
	}
	for k, j := range layout {
		s := state[k]
		want := stablehlo.NewShape(dtypes.Int32)
		if j != Scalar {
			want = grads[j].Shape()
		}
		if !s.Valid() || !s.Shape().EqualDims(want.Dims()) || (j == Scalar && s.DType() != dtypes.Int32) {
			got := "an invalid value"
			if s.Valid() {
				got = s.Shape().String()
			}
			f.Failf(op, k, s, ErrShape, "state leaf %d is %s; want %s", k, got, want)
			return false
		}
	}
	return true
}

// paramLayout is the layout of a state with one leaf per parameter.
func paramLayout(n int) []int {
	l := make([]int, n)
	for i := range l {
		l[i] = i
	}
	return l
}

// zerosLike returns a zero value shaped like each of vs.
func zerosLike(f *stablehlo.Function, vs []Value) State {
	s := make(State, len(vs))
	for i, v := range vs {
		s[i] = f.Full(v.Shape(), 0)
	}
	return s
}

// zeroCount is a step count of 0.
func zeroCount(f *stablehlo.Function) Value { return f.ConstantOf(dtypes.Int32, int32(0)) }

// increment is optax.safe_increment of an int32 count: count+1, saturating at the largest
// int32.
func increment(f *stablehlo.Function, count Value) Value {
	top := f.ConstantOf(dtypes.Int32, int32(1<<31-1))
	return f.Select(f.Less(count, top), f.Add(count, f.ConstantOf(dtypes.Int32, int32(1))), top)
}

// checkParams checks params for Init: every one valid and real floating point.
func checkParams(f *stablehlo.Function, op string, params []Value) bool {
	if f.Failed() {
		return false
	}
	for i, p := range params {
		if !p.Valid() {
			f.Failf(op, i, Value{}, ErrLength, "parameter %d: invalid value", i)
			return false
		}
		if !shapes.IsFloat(p.DType()) {
			f.Failf(op, i, p, ErrNotFloat, "parameter %d is %s (want a float type)", i, p.Shape())
			return false
		}
	}
	return true
}

// checkRate reports a hyperparameter that must lie in [0, 1).
func checkRate(name string, v float64) error {
	if !(v >= 0 && v < 1) {
		return fmt.Errorf("optim: %w: %s = %v (want 0 <= %s < 1)", ErrHyperparameter, name, v, name)
	}
	return nil
}

// checkNonNegative reports a hyperparameter that must be finite and >= 0.
func checkNonNegative(name string, v float64) error {
	if !(v >= 0) || v > 1e308 {
		return fmt.Errorf("optim: %w: %s = %v (want a finite value >= 0)", ErrHyperparameter, name, v)
	}
	return nil
}
