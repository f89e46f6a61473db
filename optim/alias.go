package optim

import (
	"slices"

	"github.com/gomlx/gopjrt/dtypes"
)

// SGD returns optax.sgd(lr, momentum, nesterov): Chain(Trace(momentum, nesterov),
// ScaleByLearningRate(lr)), or with momentum 0 and nesterov false just
// ScaleByLearningRate(lr) (optax's momentum=None; no trace in the state). Hyperparameters out of range give an error
// wrapping ErrHyperparameter.
func SGD(lr Schedule, momentum float64, nesterov bool) (Transformation, error) {
	s, err := ScaleByLearningRate(lr)
	if err != nil {
		return nil, err
	}
	if momentum == 0 && !nesterov {
		return Chain(s), nil
	}
	t, err := Trace(momentum, nesterov)
	if err != nil {
		return nil, err
	}
	return Chain(t, s), nil
}

// Adam returns optax.adam(lr, p.B1, p.B2, p.Eps, p.EpsRoot, nesterov=p.Nesterov):
// Chain(ScaleByAdam(p), ScaleByLearningRate(lr)). Its state is the Adam step count, the
// first moments, the second moments, then the schedule's step count unless lr is a
// Constant. Hyperparameters out of range give an error wrapping ErrHyperparameter.
func Adam(lr Schedule, p AdamParams) (Transformation, error) {
	return AdamW(lr, p, 0, nil)
}

// AdamW returns optax.adamw(lr, ..., weight_decay=weightDecay, mask=mask):
// Chain(ScaleByAdam(p), AddDecayedWeights(weightDecay, mask), ScaleByLearningRate(lr)), so
// the decay is added to the Adam direction and the sum is scaled by -lr:
// p' = p - lr*(adam + weightDecay*p). mask, when not nil, has one entry per parameter; a
// parameter whose entry is false gets no decay (nil: every parameter decays). optax's
// default weightDecay is 1e-4. Hyperparameters out of range give an error wrapping
// ErrHyperparameter; a mask of the wrong length makes Init and Update record an error
// wrapping ErrLength.
func AdamW(lr Schedule, p AdamParams, weightDecay float64, mask []bool) (Transformation, error) {
	a, err := ScaleByAdam(p)
	return decayed(a, err, weightDecay, mask, lr)
}

// Lion returns optax.lion(lr, b1, b2, weight_decay=weightDecay, mask=mask):
// Chain(ScaleByLion(b1, b2), AddDecayedWeights(weightDecay, mask), ScaleByLearningRate(lr)).
// optax's defaults are b1 0.9, b2 0.99, weightDecay 1e-3; mask is as AdamW's.
// Hyperparameters out of range give an error wrapping ErrHyperparameter; a mask of the
// wrong length makes Init and Update record an error wrapping ErrLength.
func Lion(lr Schedule, b1, b2, weightDecay float64, mask []bool) (Transformation, error) {
	l, err := ScaleByLion(b1, b2)
	return decayed(l, err, weightDecay, mask, lr)
}

// decayed chains a scaling (made with error err), decoupled weight decay (none when
// weightDecay is 0) and the learning rate, as optax's adamw and lion do.
func decayed(scale Transformation, err error, weightDecay float64, mask []bool, lr Schedule) (Transformation, error) {
	if err != nil {
		return nil, err
	}
	d, err := AddDecayedWeights(weightDecay, mask)
	if err != nil {
		return nil, err
	}
	s, err := ScaleByLearningRate(lr)
	if err != nil {
		return nil, err
	}
	if weightDecay == 0 {
		return Chain(scale, s), nil
	}
	return Chain(scale, d, s), nil
}

// AdafactorParams are the hyperparameters of Adafactor, optax.adafactor's arguments after
// the learning rate. Where optax takes None to leave a step out, a zero value does.
type AdafactorParams struct {
	// MinDimSizeToFactor: a parameter's second moment is factored only if its two largest
	// dimensions are at least this size (min_dim_size_to_factor).
	MinDimSizeToFactor int
	// DecayRate is the exponent of the second moments' decay schedule 1 - t^-DecayRate
	// (decay_rate).
	DecayRate float64
	// DecayOffset is subtracted from the step count in that schedule, for fine-tuning
	// (decay_offset).
	DecayOffset int
	// MultiplyByParameterScale scales the updates by each parameter's root mean square, at
	// least 1e-3 (multiply_by_parameter_scale).
	MultiplyByParameterScale bool
	// ClippingThreshold clips each update to this root mean square; 0 clips nothing
	// (clipping_threshold=None).
	ClippingThreshold float64
	// Momentum, in [0, 1), keeps a float32 exponential moving average of the updates; 0
	// keeps none (momentum=None).
	Momentum float64
	// Eps is added to the squared gradients (eps).
	Eps float64
	// Factored enables the factored second moments (factored).
	Factored bool
	// WeightDecayRate adds WeightDecayRate*p to the updates; 0 adds nothing
	// (weight_decay_rate=None).
	WeightDecayRate float64
	// WeightDecayMask, when not nil, has one entry per parameter; a parameter whose entry
	// is false gets no weight decay (weight_decay_mask).
	WeightDecayMask []bool
}

// AdafactorDefaults returns optax.adafactor's defaults: MinDimSizeToFactor 128, DecayRate
// 0.8, DecayOffset 0, MultiplyByParameterScale true, ClippingThreshold 1, no momentum, Eps
// 1e-30, Factored true, no weight decay.
func AdafactorDefaults() AdafactorParams {
	return AdafactorParams{MinDimSizeToFactor: 128, DecayRate: 0.8, MultiplyByParameterScale: true,
		ClippingThreshold: 1, Eps: 1e-30, Factored: true}
}

// Adafactor returns optax.adafactor(lr, ...) with the hyperparameters p:
// Chain(ScaleByFactoredRMS(...), ClipByBlockRMS(p.ClippingThreshold),
// ScaleByLearningRate(lr) without its sign flip, ScaleByParamBlockRMS(1e-3),
// EMA(p.Momentum, false, float32), AddDecayedWeights(p.WeightDecayRate, p.WeightDecayMask),
// Scale(-1)), each step but the first and the last left out as optax leaves it out (lr nil:
// no learning rate, as optax's None). Its state is the factored step count, then per
// parameter the Row leaves, the Col leaves and the unfactored second moments (Dummy leaves
// where a slot is unused), then the schedule's step count unless lr is nil or a Constant,
// then the momentum's step count and float32 averages. Hyperparameters out of range give an
// error wrapping ErrHyperparameter naming the parameter; a mask of the wrong length makes
// Init and Update record an error wrapping ErrLength.
func Adafactor(lr Schedule, p AdafactorParams) (Transformation, error) {
	rms, err := ScaleByFactoredRMS(FactoredRMSParams{Factored: p.Factored, DecayRate: p.DecayRate,
		StepOffset: p.DecayOffset, MinDimSizeToFactor: p.MinDimSizeToFactor, Eps: p.Eps})
	if err != nil {
		return nil, err
	}
	ts := []Transformation{rms}
	if err := checkNonNegative("clipping_threshold", p.ClippingThreshold); err != nil {
		return nil, err
	}
	if p.ClippingThreshold > 0 {
		c, err := ClipByBlockRMS(p.ClippingThreshold)
		if err != nil {
			return nil, err
		}
		ts = append(ts, c)
	}
	if lr != nil {
		s, err := newScaleLR(lr, 1)
		if err != nil {
			return nil, err
		}
		ts = append(ts, s)
	}
	if p.MultiplyByParameterScale {
		s, err := ScaleByParamBlockRMS(1e-3)
		if err != nil {
			return nil, err
		}
		ts = append(ts, s)
	}
	if err := checkRate("momentum", p.Momentum); err != nil {
		return nil, err
	}
	if p.Momentum > 0 {
		e, err := EMA(p.Momentum, false, dtypes.Float32)
		if err != nil {
			return nil, err
		}
		ts = append(ts, e)
	}
	if err := checkNonNegative("weight_decay_rate", p.WeightDecayRate); err != nil {
		return nil, err
	}
	if p.WeightDecayRate > 0 {
		ts = append(ts, decay{rate: p.WeightDecayRate, mask: slices.Clone(p.WeightDecayMask)})
	}
	s, err := Scale(-1)
	if err != nil {
		return nil, err
	}
	return Chain(append(ts, s)...), nil
}
