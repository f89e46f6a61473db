package optim

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Value is a value of the function under construction.
type Value = stablehlo.Value

// State is the state of a Transformation: a flat, ordered list of values, in the order of
// optax's jax.tree.leaves of its state. Transformation.Layout says what each leaf is.
type State []Value

// Transformation is a gradient transformation, optax's GradientTransformation over flat
// lists of values. A Transformation holds only hyperparameters and is safe for concurrent
// use; the values it builds belong to the function they are built in.
type Transformation interface {
	// Init builds the initial state for params in f: zeros shaped like the parameters for
	// moments and traces, zero step counts.
	Init(f *stablehlo.Function, params []Value) State
	// Update builds in f the updates for grads (one per parameter, shaped like it) and the
	// next state. params are the current parameters; transformations that do not read them
	// accept nil (those that do: AddDecayedWeights, ScaleByFactoredRMS,
	// ScaleByParamBlockRMS and the optimizers built on them). After an error (lists of
	// lengths that do not fit, a non-float gradient, ...) it records the error in f and
	// returns nil lists.
	Update(f *stablehlo.Function, grads []Value, state State, params []Value) ([]Value, State)
	// Layout returns, for parameters of the given shapes, one Leaf per state leaf in order:
	// which parameter the leaf belongs to and how its shape derives from the parameter's.
	// It lets a caller lay out and shard each leaf (see StateSpecs).
	Layout(params []shapes.Shape) []Leaf
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
	if !checkGradValues(f, "optim.chain", grads) {
		return nil, nil
	}
	gs := shapesOf(grads)
	if n := len(c.Layout(gs)); len(state) != n {
		f.Failf("optim.chain", -1, Value{}, ErrLength, "state has %d leaves; %d gradients need %d", len(state), len(grads), n)
		return nil, nil
	}
	var next State
	u := grads
	for _, t := range c {
		n := len(t.Layout(gs))
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

func (c chain) Layout(params []shapes.Shape) []Leaf {
	var l []Leaf
	for _, t := range c {
		l = append(l, t.Layout(params)...)
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

// checkGradValues checks that every gradient is a valid value of a real floating-point type.
func checkGradValues(f *stablehlo.Function, op string, grads []Value) bool {
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
	return true
}

// checkGrads checks grads (float values) and a state of t's layout for them: each leaf of
// the dimensions its Leaf says, and step counts int32 scalars.
func checkGrads(f *stablehlo.Function, op string, grads []Value, state State, t Transformation) bool {
	if !checkGradValues(f, op, grads) {
		return false
	}
	layout := t.Layout(shapesOf(grads))
	if len(state) != len(layout) {
		f.Failf(op, -1, Value{}, ErrLength, "state has %d leaves; %d gradients need %d", len(state), len(grads), len(layout))
		return false
	}
	for k, l := range layout {
		s := state[k]
		want := l.Shape
		if !s.Valid() || !s.Shape().EqualDims(want.Dims()) || (l.Kind == Count && s.DType() != dtypes.Int32) {
			got := "an invalid value"
			if s.Valid() {
				got = s.Shape().String()
			}
			f.Failf(op, k, s, ErrShape, "state leaf %d (%s) is %s; want %s", k, l, got, want)
			return false
		}
	}
	return true
}

// shapesOf returns the shapes of vs.
func shapesOf(vs []Value) []shapes.Shape {
	out := make([]shapes.Shape, len(vs))
	for i, v := range vs {
		out[i] = v.Shape()
	}
	return out
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
