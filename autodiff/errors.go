package autodiff

import "errors"

// Sentinel errors. The builder records them, wrapped in a *stablehlo.OpError that names the
// function and the op, as the module's first error (the builder's sticky error); Build
// returns it. Test with errors.Is.
var (
	// ErrNotDifferentiable: the walk met an op without a transpose rule (the OpError's Op is
	// its full name, e.g. "stablehlo.sort"), or an op whose rule cannot handle its
	// parameters, on the path from the differentiated values to the outputs.
	ErrNotDifferentiable = errors.New("not differentiable")
	// ErrNotFloat: Grad or ValueAndGrad was asked for the gradient with respect to a value
	// that is neither floating point nor complex, or of a loss that is not real floating
	// point (JAX's grad raises TypeError for both).
	ErrNotFloat = errors.New("not a floating-point value")
	// ErrCotangent: a cotangent does not fit its output (shape or element type), an output or
	// a differentiated value is not a value of the function, or a loss is not a scalar.
	ErrCotangent = errors.New("invalid cotangent")
)
