package optim

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
