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
	return AdamW(lr, p, 0)
}

// AdamW returns optax.adamw(lr, ..., weight_decay=weightDecay) without a mask (every
// parameter decays): Chain(ScaleByAdam(p), AddDecayedWeights(weightDecay),
// ScaleByLearningRate(lr)), so the decay is added to the Adam direction and the sum is
// scaled by -lr: p' = p - lr*(adam + weightDecay*p). optax's default weightDecay is 1e-4.
// Hyperparameters out of range give an error wrapping ErrHyperparameter.
func AdamW(lr Schedule, p AdamParams, weightDecay float64) (Transformation, error) {
	a, err := ScaleByAdam(p)
	return decayed(a, err, weightDecay, lr)
}

// Lion returns optax.lion(lr, b1, b2, weight_decay=weightDecay) without a mask:
// Chain(ScaleByLion(b1, b2), AddDecayedWeights(weightDecay), ScaleByLearningRate(lr)).
// optax's defaults are b1 0.9, b2 0.99, weightDecay 1e-3. Hyperparameters out of range give
// an error wrapping ErrHyperparameter.
func Lion(lr Schedule, b1, b2, weightDecay float64) (Transformation, error) {
	l, err := ScaleByLion(b1, b2)
	return decayed(l, err, weightDecay, lr)
}

// decayed chains a scaling (made with error err), decoupled weight decay (none when
// weightDecay is 0) and the learning rate, as optax's adamw and lion do.
func decayed(scale Transformation, err error, weightDecay float64, lr Schedule) (Transformation, error) {
	if err != nil {
		return nil, err
	}
	d, err := AddDecayedWeights(weightDecay)
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
