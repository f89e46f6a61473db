package optim

import "errors"

// Sentinel errors of package optim, always wrapped with the numbers at fault. Constructors
// (SGD, Adam, Linear, ...) return them; Init, Update and ApplyUpdates record them in the
// function's sticky error as a *stablehlo.OpError whose Op names the optimizer step
// ("optim.adam", "optim.apply_updates", ...), so Build returns them. Test with errors.Is.
var (
	// ErrHyperparameter: a hyperparameter is out of its range, such as a negative or NaN
	// learning rate, a decay rate outside [0, 1), or a schedule with no steps.
	ErrHyperparameter = errors.New("invalid hyperparameter")
	// ErrLength: the lists of parameters, gradients, updates and state do not have the
	// lengths that fit each other.
	ErrLength = errors.New("list lengths differ")
	// ErrNotFloat: a parameter or gradient is not of a real floating-point type.
	ErrNotFloat = errors.New("not a real floating-point value")
	// ErrShape: a gradient, update or state leaf does not have the shape and type of its
	// parameter.
	ErrShape = errors.New("shape does not match its parameter")
)
