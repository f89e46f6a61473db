package optim

import (
	"fmt"
	"math"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Trace returns optax.trace(decay, nesterov): the state is one trace per parameter, t' = g +
// decay*t, and the update is t' (or g + decay*t' with nesterov). decay must lie in [0, 1)
// (ErrHyperparameter).
func Trace(decay float64, nesterov bool) (Transformation, error) {
	if err := checkRate("momentum", decay); err != nil {
		return nil, err
	}
	return trace{decay: decay, nesterov: nesterov}, nil
}

type trace struct {
	decay    float64
	nesterov bool
}

func (t trace) Init(f *stablehlo.Function, params []Value) State {
	if !checkParams(f, "optim.trace", params) {
		return nil
	}
	return zerosLike(f, params)
}

func (t trace) Update(f *stablehlo.Function, grads []Value, state State, _ []Value) ([]Value, State) {
	if !checkGrads(f, "optim.trace", grads, state, t) {
		return nil, nil
	}
	u, next := make([]Value, len(grads)), make(State, len(grads))
	for i, g := range grads {
		next[i] = f.Add(g, f.Mul(f.Constant(t.decay), state[i]))
		u[i] = next[i]
		if t.nesterov {
			u[i] = f.Add(g, f.Mul(f.Constant(t.decay), next[i]))
		}
	}
	return u, next
}

func (t trace) Layout(params []shapes.Shape) []Leaf { return likeLeaves(params) }

// AdamParams are the hyperparameters of Adam's scaling (optax.scale_by_adam): the decay rates
// B1 and B2 of the first and second moments, Eps added to the square root of the second
// moment and EpsRoot added under it, and Nesterov for NAdam.
type AdamParams struct {
	B1, B2, Eps, EpsRoot float64
	Nesterov             bool
}

// AdamDefaults returns optax.adam's defaults: B1 0.9, B2 0.999, Eps 1e-8, EpsRoot 0.
func AdamDefaults() AdamParams { return AdamParams{B1: 0.9, B2: 0.999, Eps: 1e-8} }

func (p AdamParams) check() error {
	if err := checkRate("b1", p.B1); err != nil {
		return err
	}
	if err := checkRate("b2", p.B2); err != nil {
		return err
	}
	if err := checkNonNegative("eps", p.Eps); err != nil {
		return err
	}
	return checkNonNegative("eps_root", p.EpsRoot)
}

// ScaleByAdam returns optax.scale_by_adam: the state is a step count, then the first moments,
// then the second moments (one per parameter each). With t the incremented count,
// m' = (1-b1) g + b1 m, v' = (1-b2) g^2 + b2 v, and the update is
// m̂ / (sqrt(v̂ + eps_root) + eps) with m̂ = m'/(1-b1^t), v̂ = v'/(1-b2^t) (Nesterov: m̂ =
// b1 m'/(1-b1^(t+1)) + (1-b1) g/(1-b1^t)). A hyperparameter out of range gives an error
// wrapping ErrHyperparameter.
func ScaleByAdam(p AdamParams) (Transformation, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	return adam(p), nil
}

type adam AdamParams

func (a adam) Init(f *stablehlo.Function, params []Value) State {
	if !checkParams(f, "optim.adam", params) {
		return nil
	}
	return append(append(State{zeroCount(f)}, zerosLike(f, params)...), zerosLike(f, params)...)
}

func (a adam) Update(f *stablehlo.Function, grads []Value, state State, _ []Value) ([]Value, State) {
	n := len(grads)
	if !checkGrads(f, "optim.adam", grads, state, a) {
		return nil, nil
	}
	count, mu, nu := state[0], state[1:1+n], state[1+n:]
	t := increment(f, count)
	u := make([]Value, n)
	nextMu, nextNu := make(State, n), make(State, n)
	for i, g := range grads {
		nextMu[i] = f.Add(f.Mul(f.Constant(1-a.B1), g), f.Mul(f.Constant(a.B1), mu[i]))
		nextNu[i] = f.Add(f.Mul(f.Constant(1-a.B2), f.Mul(g, g)), f.Mul(f.Constant(a.B2), nu[i]))
		var mHat Value
		if a.Nesterov {
			mHat = f.Add(f.Mul(f.Constant(a.B1), biasCorrection(f, nextMu[i], a.B1, increment(f, t))),
				f.Mul(f.Constant(1-a.B1), biasCorrection(f, g, a.B1, t)))
		} else {
			mHat = biasCorrection(f, nextMu[i], a.B1, t)
		}
		vHat := biasCorrection(f, nextNu[i], a.B2, t)
		u[i] = f.Div(mHat, f.Add(f.Sqrt(f.Add(vHat, f.Constant(a.EpsRoot))), f.Constant(a.Eps)))
	}
	return u, append(append(State{t}, nextMu...), nextNu...)
}

func (a adam) Layout(params []shapes.Shape) []Leaf {
	l := append([]Leaf{countLeaf()}, likeLeaves(params)...)
	return append(l, likeLeaves(params)...)
}

// biasCorrection is optax.tree.bias_correction: m / (1 - decay^count), the power taken in
// float32 and the quotient in m's type.
func biasCorrection(f *stablehlo.Function, m Value, decay float64, count Value) Value {
	c := f.Sub(f.Constant(1.0), f.Pow(f.ConstantOf(dtypes.Float32, float32(decay)), f.Convert(count, dtypes.Float32)))
	if m.DType() != dtypes.Float32 {
		c = f.Convert(c, m.DType())
	}
	return f.Div(m, c)
}

// ScaleByLion returns optax.scale_by_lion(b1, b2): the state is a step count and one moment
// per parameter; the update is sign((1-b1) g + b1 m) and m' = (1-b2) g + b2 m. b1 and b2
// must lie in [0, 1) (ErrHyperparameter).
func ScaleByLion(b1, b2 float64) (Transformation, error) {
	if err := checkRate("b1", b1); err != nil {
		return nil, err
	}
	if err := checkRate("b2", b2); err != nil {
		return nil, err
	}
	return lion{b1: b1, b2: b2}, nil
}

type lion struct{ b1, b2 float64 }

func (l lion) Init(f *stablehlo.Function, params []Value) State {
	if !checkParams(f, "optim.lion", params) {
		return nil
	}
	return append(State{zeroCount(f)}, zerosLike(f, params)...)
}

func (l lion) Update(f *stablehlo.Function, grads []Value, state State, _ []Value) ([]Value, State) {
	n := len(grads)
	if !checkGrads(f, "optim.lion", grads, state, l) {
		return nil, nil
	}
	u, next := make([]Value, n), make(State, n)
	for i, g := range grads {
		m := state[1+i]
		u[i] = f.Sign(f.Add(f.Mul(f.Constant(1-l.b1), g), f.Mul(f.Constant(l.b1), m)))
		next[i] = f.Add(f.Mul(f.Constant(1-l.b2), g), f.Mul(f.Constant(l.b2), m))
	}
	return u, append(State{increment(f, state[0])}, next...)
}

func (l lion) Layout(params []shapes.Shape) []Leaf {
	return append([]Leaf{countLeaf()}, likeLeaves(params)...)
}

// AddDecayedWeights returns optax.add_decayed_weights(weightDecay, mask): the update is
// g + weightDecay*p, so Update needs the parameters. It has no state. mask, when not nil,
// has one entry per parameter, and a parameter whose entry is false gets no decay (its
// update is g), as with optax's mask; a nil mask decays every parameter. weightDecay must be
// finite and non-negative (ErrHyperparameter); a mask whose length differs from the number
// of parameters makes Init and Update record an error wrapping ErrLength.
func AddDecayedWeights(weightDecay float64, mask []bool) (Transformation, error) {
	if err := checkNonNegative("weight_decay", weightDecay); err != nil {
		return nil, err
	}
	return decay{rate: weightDecay, mask: slices.Clone(mask)}, nil
}

type decay struct {
	rate float64
	mask []bool // nil: every parameter
}

// checkMask checks that the mask, if any, has one entry per each of n parameters.
func (d decay) checkMask(f *stablehlo.Function, op string, n int) bool {
	if d.mask != nil && len(d.mask) != n {
		f.Failf(op, -1, Value{}, ErrLength, "weight decay mask has %d entries for %d parameters", len(d.mask), n)
		return false
	}
	return true
}

func (d decay) Init(f *stablehlo.Function, params []Value) State {
	const op = "optim.add_decayed_weights"
	if checkParams(f, op, params) {
		d.checkMask(f, op, len(params))
	}
	return nil
}

func (d decay) Update(f *stablehlo.Function, grads []Value, state State, params []Value) ([]Value, State) {
	const op = "optim.add_decayed_weights"
	if !checkGrads(f, op, grads, state, d) || !checkLeaves(f, op, "gradients", params, grads, false) ||
		!d.checkMask(f, op, len(grads)) {
		return nil, nil
	}
	if d.rate == 0 {
		return grads, State{}
	}
	u := make([]Value, len(grads))
	for i, g := range grads {
		if d.mask != nil && !d.mask[i] {
			u[i] = g
			continue
		}
		p := params[i]
		if p.DType() != g.DType() {
			p = f.Convert(p, g.DType())
		}
		u[i] = f.Add(g, f.Mul(f.Constant(d.rate), p))
	}
	return u, State{}
}

func (d decay) Layout([]shapes.Shape) []Leaf { return nil }

// ScaleByLearningRate returns optax.scale_by_learning_rate(lr): the update is -lr*g. A
// Constant lr needs no state; any other Schedule keeps a step count, evaluates lr at it
// (before incrementing it) and converts the value to each gradient's type, as
// optax.scale_by_schedule. A Constant lr must be finite and non-negative (ErrHyperparameter).
func ScaleByLearningRate(lr Schedule) (Transformation, error) { return newScaleLR(lr, -1) }

// newScaleLR checks lr and returns the scaling by sign*lr.
func newScaleLR(lr Schedule, sign float64) (Transformation, error) {
	if lr == nil {
		return nil, fmt.Errorf("optim: %w: nil learning rate", ErrHyperparameter)
	}
	if c, ok := lr.(constant); ok {
		if err := checkNonNegative("learning_rate", float64(c)); err != nil {
			return nil, err
		}
	}
	return scaleLR{lr: lr, sign: sign}, nil
}

// scaleLR is optax.scale_by_learning_rate with flip_sign (sign -1) or without (sign 1).
type scaleLR struct {
	lr   Schedule
	sign float64
}

func (s scaleLR) Init(f *stablehlo.Function, params []Value) State {
	if !checkParams(f, "optim.scale_by_learning_rate", params) {
		return nil
	}
	if _, ok := s.lr.(constant); ok {
		return State{}
	}
	return State{zeroCount(f)}
}

func (s scaleLR) Update(f *stablehlo.Function, grads []Value, state State, _ []Value) ([]Value, State) {
	if !checkGrads(f, "optim.scale_by_learning_rate", grads, state, s) {
		return nil, nil
	}
	u := make([]Value, len(grads))
	if c, ok := s.lr.(constant); ok {
		for i, g := range grads {
			u[i] = f.Mul(f.Constant(s.sign*float64(c)), g)
		}
		return u, State{}
	}
	step := s.lr.At(f, state[0])
	if s.sign < 0 {
		step = f.Neg(step)
	}
	for i, g := range grads {
		st := step
		if g.DType() != st.DType() {
			st = f.Convert(st, g.DType())
		}
		u[i] = f.Mul(st, g)
	}
	return u, State{increment(f, state[0])}
}

func (s scaleLR) Layout([]shapes.Shape) []Leaf {
	if _, ok := s.lr.(constant); ok {
		return nil
	}
	return []Leaf{countLeaf()}
}

// ClipByGlobalNorm returns optax.clip_by_global_norm(maxNorm): with n the square root of the
// sum of the squares of all gradients (each gradient's sum in float32 for narrower types, as
// jnp.sum; the total in the gradients' common type as JAX promotes them), the updates are the gradients when n < maxNorm and
// g/n*maxNorm otherwise. It has no state. maxNorm must be positive and finite
// (ErrHyperparameter).
func ClipByGlobalNorm(maxNorm float64) (Transformation, error) {
	if !(maxNorm > 0) || math.IsInf(maxNorm, 0) {
		return nil, fmt.Errorf("optim: %w: max_norm = %v (want a finite value > 0)", ErrHyperparameter, maxNorm)
	}
	return clip(maxNorm), nil
}

type clip float64

func (c clip) Init(f *stablehlo.Function, params []Value) State {
	checkParams(f, "optim.clip_by_global_norm", params)
	return nil
}

func (c clip) Update(f *stablehlo.Function, grads []Value, state State, _ []Value) ([]Value, State) {
	if !checkGrads(f, "optim.clip_by_global_norm", grads, state, c) {
		return nil, nil
	}
	if len(grads) == 0 {
		return grads, State{}
	}
	total := sumType(grads)
	var sq Value
	for i, g := range grads {
		s := sumSquares(f, g)
		if s.DType() != total {
			s = f.Convert(s, total)
		}
		if i == 0 {
			sq = s
		} else {
			sq = f.Add(sq, s)
		}
	}
	norm := f.Sqrt(sq)
	trigger := f.Less(norm, f.Constant(float64(c)))
	u := make([]Value, len(grads))
	for i, g := range grads {
		n := norm
		if n.DType() != g.DType() {
			n = f.Convert(n, g.DType())
		}
		u[i] = f.Select(trigger, g, f.Mul(f.Div(g, n), f.Constant(float64(c))))
	}
	return u, State{}
}

func (c clip) Layout([]shapes.Shape) []Leaf { return nil }

// sumSquares is jnp.sum(g*g): for float types narrower than float32, the squares are summed
// in float32 and the sum converted back, as jnp.sum upcasts them.
func sumSquares(f *stablehlo.Function, g Value) Value {
	sq := f.Mul(g, g)
	if shapes.ElementBytes(g.DType()) >= 4 {
		return f.Sum(sq)
	}
	return f.Convert(f.Sum(f.Convert(sq, dtypes.Float32)), g.DType())
}

// sumType is the type JAX's promotion gives the sum of float values of the types of gs: their
// type when they share one, else float64 if one is float64, else float32.
func sumType(gs []Value) dtypes.DType {
	d := gs[0].DType()
	mixed := false
	for _, g := range gs[1:] {
		if g.DType() != d {
			mixed = true
		}
	}
	if !mixed {
		return d
	}
	for _, g := range gs {
		if g.DType() == dtypes.Float64 {
			return dtypes.Float64
		}
	}
	return dtypes.Float32
}
