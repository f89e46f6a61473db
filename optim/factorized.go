package optim

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/jnp"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// FactoredRMSParams are the hyperparameters of ScaleByFactoredRMS, optax's
// scale_by_factored_rms arguments.
type FactoredRMSParams struct {
	// Factored enables the factored second moments of parameters of rank 2 or more
	// (factored).
	Factored bool
	// DecayRate is the exponent of the decay schedule 1 - t^-DecayRate (decay_rate).
	DecayRate float64
	// StepOffset is subtracted from the step count in that schedule (step_offset).
	StepOffset int
	// MinDimSizeToFactor: a parameter is factored only if its two largest dimensions are
	// at least this size (min_dim_size_to_factor).
	MinDimSizeToFactor int
	// Eps is added to the squared gradients (epsilon).
	Eps float64
}

// FactoredRMSDefaults returns optax.scale_by_factored_rms's defaults: Factored true,
// DecayRate 0.8, StepOffset 0, MinDimSizeToFactor 128, Eps 1e-30.
func FactoredRMSDefaults() FactoredRMSParams {
	return FactoredRMSParams{Factored: true, DecayRate: 0.8, MinDimSizeToFactor: 128, Eps: 1e-30}
}

func (p FactoredRMSParams) check() error {
	if p.MinDimSizeToFactor < 0 {
		return fmt.Errorf("optim: %w: min_dim_size_to_factor = %d (want >= 0)", ErrHyperparameter, p.MinDimSizeToFactor)
	}
	if err := checkNonNegative("decay_rate", p.DecayRate); err != nil {
		return err
	}
	return checkNonNegative("eps", p.Eps)
}

// ScaleByFactoredRMS returns optax.scale_by_factored_rms: Adafactor's scaling by a factored
// estimate of the gradients' root mean square. A parameter of rank 2 or more whose two
// largest dimensions d0 (the largest; the last of equal ones) and d1 (the next) are at
// least p.MinDimSizeToFactor keeps a Row second moment without d0 and a Col one without d1;
// any other keeps a full (Like) second moment. With t = count - p.StepOffset + 1 and
// decay = 1 - t^-p.DecayRate in float32, and s = g^2 + p.Eps: v' = decay v + (1-decay)
// mean(s) over the dimension the leaf lacks (v' = decay v + (1-decay) s unfactored), and the
// update is g * (row/mean(row))^-1/2 * col^-1/2 (g * v'^-1/2). The state is a step count,
// then per parameter the Row leaves, the Col leaves and the full second moments, with a
// Dummy leaf of shape (1,) in each slot a parameter does not use, as optax keeps them.
// Update needs the parameters. A hyperparameter out of range gives an error wrapping
// ErrHyperparameter.
func ScaleByFactoredRMS(p FactoredRMSParams) (Transformation, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	return factoredRMS(p), nil
}

type factoredRMS FactoredRMSParams

// factoredDims is optax's _factored_dims: the largest dimension d0 and the next d1 of dims
// (ties broken by position, as NumPy's argsort), and whether to factor at all.
func (r factoredRMS) factoredDims(dims []int) (d1, d0 int, ok bool) {
	if !r.Factored || len(dims) < 2 {
		return 0, 0, false
	}
	idx := make([]int, len(dims))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return dims[idx[a]] < dims[idx[b]] })
	d1, d0 = idx[len(idx)-2], idx[len(idx)-1]
	if dims[d1] < r.MinDimSizeToFactor {
		return 0, 0, false
	}
	return d1, d0, true
}

func (r factoredRMS) Layout(params []shapes.Shape) []Leaf {
	n := len(params)
	rows, cols, vs := make([]Leaf, n), make([]Leaf, n), make([]Leaf, n)
	for i, p := range params {
		if d1, d0, ok := r.factoredDims(p.Dims()); ok {
			rows[i], cols[i], vs[i] = reducedLeaf(Row, i, p, d0), reducedLeaf(Col, i, p, d1), dummyLeaf(i, p)
		} else {
			rows[i], cols[i], vs[i] = dummyLeaf(i, p), dummyLeaf(i, p), Leaf{Kind: Like, Param: i, Dim: -1, Shape: p}
		}
	}
	return append(append(append([]Leaf{countLeaf()}, rows...), cols...), vs...)
}

func (r factoredRMS) Init(f *stablehlo.Function, params []Value) State {
	return zeroState(f, "optim.scale_by_factored_rms", r, params)
}

func (r factoredRMS) Update(f *stablehlo.Function, grads []Value, state State, params []Value) ([]Value, State) {
	const op = "optim.scale_by_factored_rms"
	if !checkGrads(f, op, grads, state, r) || !checkLeaves(f, op, "gradients", params, grads, false) {
		return nil, nil
	}
	n := len(grads)
	count := state[0]
	rows, cols, vs := state[1:1+n], state[1+n:1+2*n], state[1+2*n:]
	// decay_rate_t = 1 - (count - offset + 1)^-decay_rate, in float32.
	t := f.Convert(f.Add(f.Sub(count, f.ConstantOf(dtypes.Int32, int32(r.StepOffset))), f.ConstantOf(dtypes.Int32, int32(1))), dtypes.Float32)
	rate := f.Sub(f.Constant(1.0), f.Pow(t, f.ConstantOf(dtypes.Float32, float32(-r.DecayRate))))
	keep := f.Sub(f.Constant(1.0), rate)
	u := make([]Value, n)
	nextRows, nextCols, nextVs := make(State, n), make(State, n), make(State, n)
	for i, g := range grads {
		p := params[i]
		dt := p.DType()
		acc := promote(dtypes.Float32, dt)
		rateA, keepA := convertTo(f, rate, acc), convertTo(f, keep, acc)
		sq := f.Add(f.Mul(g, g), f.Constant(r.Eps))
		// average is rate*v + (1-rate)*x in the promoted type, then in the parameter's.
		average := func(v, x Value) Value {
			return convertTo(f, f.Add(f.Mul(rateA, convertTo(f, v, acc)), f.Mul(keepA, convertTo(f, x, acc))), dt)
		}
		dummy := f.Full(shapes.Make(dt, 1), 0)
		dims := g.Shape().Dims()
		if d1, d0, ok := r.factoredDims(dims); ok {
			row := average(rows[i], jnp.Mean(f, sq, d0))
			col := average(cols[i], jnp.Mean(f, sq, d1))
			rd1 := d1
			if d1 > d0 {
				rd1 = d1 - 1
			}
			rowDims := row.Shape().Dims()
			mean := f.BroadcastInDim(jnp.Mean(f, row, rd1), rowDims, without(seq(len(rowDims)), rd1))
			rowFactor := f.Pow(f.Div(row, mean), f.Constant(-0.5))
			colFactor := f.Pow(col, f.Constant(-0.5))
			x := mulPromoted(f, g, f.BroadcastInDim(rowFactor, dims, without(seq(len(dims)), d0)))
			u[i] = mulPromoted(f, x, f.BroadcastInDim(colFactor, dims, without(seq(len(dims)), d1)))
			nextRows[i], nextCols[i], nextVs[i] = row, col, dummy
		} else {
			v := average(vs[i], sq)
			u[i] = mulPromoted(f, g, f.Pow(v, f.Constant(-0.5)))
			nextRows[i], nextCols[i], nextVs[i] = dummy, dummy, v
		}
	}
	if f.Failed() {
		return nil, nil
	}
	next := append(State{increment(f, count)}, nextRows...)
	return u, append(append(next, nextCols...), nextVs...)
}

// ClipByBlockRMS returns optax.clip_by_block_rms(threshold): each update u becomes
// u / max(1, rms(u)/threshold), with rms(u) = sqrt(mean(u^2)). It has no state. threshold
// must be positive and finite (ErrHyperparameter).
func ClipByBlockRMS(threshold float64) (Transformation, error) {
	if !(threshold > 0) || math.IsInf(threshold, 0) {
		return nil, fmt.Errorf("optim: %w: threshold = %v (want a finite value > 0)", ErrHyperparameter, threshold)
	}
	return leafwise{op: "optim.clip_by_block_rms", fn: func(f *stablehlo.Function, g, _ Value) Value {
		return f.Div(g, f.Max(f.Constant(1.0), f.Div(f.Sqrt(jnp.Mean(f, f.Mul(g, g))), f.Constant(threshold))))
	}}, nil
}

// ScaleByParamBlockRMS returns optax.scale_by_param_block_rms(minScale): each update is
// multiplied by its parameter's root mean square sqrt(mean(p^2)), or by minScale where that
// is at most minScale. It has no state; Update needs the parameters. minScale must be finite
// and non-negative (ErrHyperparameter).
func ScaleByParamBlockRMS(minScale float64) (Transformation, error) {
	if err := checkNonNegative("min_scale", minScale); err != nil {
		return nil, err
	}
	return leafwise{op: "optim.scale_by_param_block_rms", params: true, fn: func(f *stablehlo.Function, g, p Value) Value {
		rms := f.Sqrt(jnp.Mean(f, f.Mul(p, p)))
		floor := f.ConstantOf(p.DType(), minScale)
		return mulPromoted(f, g, f.Select(f.Compare(rms, floor, stablehlo.LE), floor, rms))
	}}, nil
}

// EMA returns optax.ema(decay, debias, accumulator): the state is a step count and one
// average per parameter, m' = (1-decay) g + decay m, and the update is m' (with debias,
// m'/(1-decay^t) with t the incremented count). The averages have element type accumulator,
// or their parameters' when it is dtypes.InvalidDType (optax's None). decay must lie in
// [0, 1) and accumulator be a float type or InvalidDType (ErrHyperparameter).
func EMA(decay float64, debias bool, accumulator dtypes.DType) (Transformation, error) {
	if err := checkRate("decay", decay); err != nil {
		return nil, err
	}
	if accumulator != dtypes.InvalidDType && !shapes.IsFloat(accumulator) {
		return nil, fmt.Errorf("optim: %w: accumulator_dtype = %s (want a float type)", ErrHyperparameter, accumulator)
	}
	return ema{decay: decay, debias: debias, acc: accumulator}, nil
}

type ema struct {
	decay  float64
	debias bool
	acc    dtypes.DType
}

func (e ema) Layout(params []shapes.Shape) []Leaf {
	l := likeLeaves(params)
	if e.acc != dtypes.InvalidDType {
		for i := range l {
			l[i].Shape = l[i].Shape.WithDType(e.acc)
		}
	}
	return append([]Leaf{countLeaf()}, l...)
}

func (e ema) Init(f *stablehlo.Function, params []Value) State {
	return zeroState(f, "optim.ema", e, params)
}

func (e ema) Update(f *stablehlo.Function, grads []Value, state State, _ []Value) ([]Value, State) {
	if !checkGrads(f, "optim.ema", grads, state, e) {
		return nil, nil
	}
	n := len(grads)
	t := increment(f, state[0])
	u, next := make([]Value, n), make(State, n)
	for i, g := range grads {
		m := state[1+i]
		d := promote(g.DType(), m.DType())
		// Each product in its operand's type, the sum in their promotion, as JAX computes
		// (1-decay)*g + decay*m.
		avg := f.Add(convertTo(f, f.Mul(f.Constant(1-e.decay), g), d), convertTo(f, f.Mul(f.Constant(e.decay), m), d))
		u[i] = avg
		if e.debias {
			u[i] = biasCorrection(f, avg, e.decay, t)
		}
		next[i] = convertTo(f, avg, m.DType())
	}
	return u, append(State{t}, next...)
}

// Scale returns optax.scale(step): each update is step*g. It has no state. step must be
// finite (ErrHyperparameter).
func Scale(step float64) (Transformation, error) {
	if err := checkFinite("step_size", step); err != nil {
		return nil, err
	}
	return leafwise{op: "optim.scale", fn: func(f *stablehlo.Function, g, _ Value) Value {
		return f.Mul(f.Constant(step), g)
	}}, nil
}

// leafwise is a transformation without state that maps each update on its own: fn(f, g, p),
// with p the update's parameter when params is set (Update then needs the parameters), else
// the zero Value.
type leafwise struct {
	op     string
	params bool
	fn     func(f *stablehlo.Function, g, p Value) Value
}

func (l leafwise) Init(f *stablehlo.Function, params []Value) State {
	checkParams(f, l.op, params)
	return nil
}

func (l leafwise) Update(f *stablehlo.Function, grads []Value, state State, params []Value) ([]Value, State) {
	if !checkGrads(f, l.op, grads, state, l) || l.params && !checkLeaves(f, l.op, "gradients", params, grads, false) {
		return nil, nil
	}
	u := make([]Value, len(grads))
	for i, g := range grads {
		var p Value
		if l.params {
			p = params[i]
		}
		u[i] = l.fn(f, g, p)
	}
	return u, State{}
}

func (l leafwise) Layout([]shapes.Shape) []Leaf { return nil }

// promote is JAX's promotion of two float types: their type when they agree, else float64
// if one is, else float32.
func promote(a, b dtypes.DType) dtypes.DType {
	switch {
	case a == b:
		return a
	case a == dtypes.Float64 || b == dtypes.Float64:
		return dtypes.Float64
	}
	return dtypes.Float32
}

// convertTo converts v to d unless it has that type.
func convertTo(f *stablehlo.Function, v Value, d dtypes.DType) Value {
	if v.DType() == d {
		return v
	}
	return f.Convert(v, d)
}

// mulPromoted is x*y in the promotion of their types.
func mulPromoted(f *stablehlo.Function, x, y Value) Value {
	d := promote(x.DType(), y.DType())
	return f.Mul(convertTo(f, x, d), convertTo(f, y, d))
}

// seq returns 0, 1, ..., n-1.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// without returns xs without its entry at i.
func without(xs []int, i int) []int { return slices.Delete(xs, i, i+1) }

// zeroState is the initial state of t for params: one zero leaf per entry of t's Layout,
// of that entry's shape and type (counts, moments, factored moments alike).
func zeroState(f *stablehlo.Function, op string, t Transformation, params []Value) State {
	if !checkParams(f, op, params) {
		return nil
	}
	layout := t.Layout(shapesOf(params))
	s := make(State, len(layout))
	for k, l := range layout {
		s[k] = f.Full(l.Shape, 0)
	}
	return s
}
