package optim

import (
	"fmt"
	"math"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// Schedule is a learning-rate schedule, computed from the step count inside the graph, as an
// optax schedule is a function of the count.
type Schedule interface {
	// At builds the schedule's value at count (an int32 scalar of f, 0 at the first step): a
	// float32 scalar.
	At(f *stablehlo.Function, count Value) Value
}

// Constant returns the schedule of the fixed value v. A learning rate that is a Constant
// scales the updates by -v with no step count in the state, as optax does with a float
// learning rate.
func Constant(v float64) Schedule { return constant(v) }

type constant float64

func (c constant) At(f *stablehlo.Function, _ Value) Value {
	return f.ConstantOf(dtypes.Float32, float32(c))
}

// Linear returns optax.linear_schedule(init, end, steps, begin): init until step begin, then
// a straight line to end over steps steps, then end. steps must be positive and begin
// non-negative, or the error wraps ErrHyperparameter (optax instead falls back to a
// constant, or to begin = 0).
func Linear(init, end float64, steps, begin int) (Schedule, error) {
	if steps <= 0 || begin < 0 {
		return nil, fmt.Errorf("optim: linear schedule: %w: steps = %d, begin = %d (want steps > 0, begin >= 0)", ErrHyperparameter, steps, begin)
	}
	if err := checkFinite("init", init); err != nil {
		return nil, err
	}
	if err := checkFinite("end", end); err != nil {
		return nil, err
	}
	return linear{init: init, end: end, steps: steps, begin: begin}, nil
}

type linear struct {
	init, end    float64
	steps, begin int
}

// At is optax.polynomial_schedule with power 1: clip the count to [0, steps] after
// subtracting begin, frac = 1 - count/steps in float32, (init-end)*frac + end.
func (l linear) At(f *stablehlo.Function, count Value) Value {
	c := f.Clamp(f.ConstantOf(dtypes.Int32, int32(0)), f.Sub(count, f.ConstantOf(dtypes.Int32, int32(l.begin))),
		f.ConstantOf(dtypes.Int32, int32(l.steps)))
	frac := f.Sub(f.Constant(1.0), f.Div(f.Convert(c, dtypes.Float32), f.ConstantOf(dtypes.Float32, float32(l.steps))))
	return f.Add(f.Mul(f.Constant(l.init-l.end), frac), f.Constant(l.end))
}

// CosineDecay returns optax.cosine_decay_schedule(init, steps, alpha, exponent): init times
// (1-alpha)*c^exponent + alpha, with c = (1 + cos(pi*min(count, steps)/steps))/2. steps
// must be positive (ErrHyperparameter).
func CosineDecay(init float64, steps int, alpha, exponent float64) (Schedule, error) {
	if steps <= 0 {
		return nil, fmt.Errorf("optim: cosine decay schedule: %w: steps = %d (want steps > 0)", ErrHyperparameter, steps)
	}
	for _, p := range []struct {
		n string
		v float64
	}{{"init", init}, {"alpha", alpha}, {"exponent", exponent}} {
		if err := checkFinite(p.n, p.v); err != nil {
			return nil, err
		}
	}
	return cosine{init: init, steps: steps, alpha: alpha, exponent: exponent}, nil
}

type cosine struct {
	init, alpha, exponent float64
	steps                 int
}

func (c cosine) At(f *stablehlo.Function, count Value) Value {
	steps := f.ConstantOf(dtypes.Float32, float32(c.steps))
	n := f.Min(f.Convert(count, dtypes.Float32), steps)
	cd := f.Mul(f.Constant(0.5), f.Add(f.Constant(1.0), f.Cos(f.Div(f.Mul(f.Constant(math.Pi), n), steps))))
	if c.exponent != 1 {
		cd = f.Pow(cd, f.Constant(c.exponent))
	}
	decayed := f.Add(f.Mul(f.Constant(1-c.alpha), cd), f.Constant(c.alpha))
	return f.Mul(f.Constant(c.init), decayed)
}

// WarmupCosineDecay returns optax.warmup_cosine_decay_schedule(init, peak, warmup, decay,
// end): a Linear schedule from init to peak over warmup steps, then a CosineDecay from peak
// to end over decay-warmup steps (alpha = end/peak, exponent 1), then end. decay must
// exceed warmup and warmup must not be negative (ErrHyperparameter).
func WarmupCosineDecay(init, peak float64, warmup, decay int, end float64) (Schedule, error) {
	if warmup < 0 || decay <= warmup {
		return nil, fmt.Errorf("optim: warmup cosine decay schedule: %w: warmup = %d, decay = %d (want 0 <= warmup < decay)", ErrHyperparameter, warmup, decay)
	}
	for _, p := range []struct {
		n string
		v float64
	}{{"init", init}, {"peak", peak}, {"end", end}} {
		if err := checkFinite(p.n, p.v); err != nil {
			return nil, err
		}
	}
	alpha := 0.0
	if peak != 0 {
		alpha = end / peak
	}
	cos, err := CosineDecay(peak, decay-warmup, alpha, 1)
	if err != nil {
		return nil, err
	}
	w := warmupCosine{cos: cos, warmup: warmup}
	if warmup > 0 {
		w.linear = linear{init: init, end: peak, steps: warmup}
	}
	return w, nil
}

type warmupCosine struct {
	linear Schedule // nil when there is no warmup
	cos    Schedule
	warmup int
}

// At is optax.join_schedules: the warmup before step warmup, the decay of count-warmup from
// there on.
func (w warmupCosine) At(f *stablehlo.Function, count Value) Value {
	b := f.ConstantOf(dtypes.Int32, int32(w.warmup))
	after := w.cos.At(f, f.Sub(count, b))
	if w.linear == nil {
		return after
	}
	return f.Select(f.Less(count, b), w.linear.At(f, count), after)
}

func checkFinite(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("optim: %w: %s = %v (want a finite value)", ErrHyperparameter, name, v)
	}
	return nil
}
