// Package optim builds optimizer steps into StableHLO functions: the gradient
// transformations of optax (SGD with momentum and Nesterov, Adam, AdamW, Lion, global-norm
// clipping, chains) and its learning-rate schedules, with optax's arithmetic.
//
// # Where it sits
//
// optim works on builder values: parameters and gradients come in as stablehlo.Values of a
// function under construction (typically a jit Body, with gradients from autodiff.Grad),
// and updates, new parameters and new optimizer state go out as stablehlo.Values of the
// same function, to be returned by it. Nothing runs here; the ops run when the function is
// compiled and called (package jit, or package pjrt directly). optim imports only
// stablehlo and shapes, so it sits on the floor of autodiff (floor 3).
//
// # State
//
// An optimizer's state is a State: a flat, ordered list of values, so that a jitted train
// step takes it as arguments and returns the next one as results. Every leaf has the shape
// and element type of one parameter (moments, traces) except the step counts, which are
// int32 scalars; Transformation.Layout says which is which, so the caller can lay out and
// shard each leaf like its parameter and replicate the counts. Parameters and gradients are
// flat lists too, in one order that the caller chooses; a tree package can flatten its
// trees into that order.
//
// # A train step
//
//	opt, err := optim.Adam(optim.Constant(1e-3), optim.AdamDefaults())
//	...
//	// In the init function: state := opt.Init(f, params)
//	// In the step function, whose arguments are params then state:
//	grads := autodiff.Grad(f, loss, params...)
//	updates, state := opt.Update(f, grads, state, params)
//	f.Return(append(optim.ApplyUpdates(f, params, updates), state...)...)
//
// # Semantics
//
// Each transformation computes what its optax namesake computes, in the same order of
// operations: optax.adam's bias correction 1-b^t with t the incremented count and eps
// outside the square root (EpsRoot inside), optax.adamw's weight decay added to the Adam
// direction before the learning rate scales it, optax.trace's Nesterov form g + d(g + d m),
// optax.lion's sign of the interpolation. Learning rates are Schedules evaluated on the
// step count inside the graph, as optax.scale_by_schedule does (the count before this
// step, starting at 0). Gradients and parameters must be of real floating-point types;
// constants take the parameter's type.
//
// # Errors
//
// Constructors validate hyperparameters and return an error wrapping ErrHyperparameter.
// Init, Update and ApplyUpdates cannot return errors, as every builder op: they record the
// first error (ErrLength, ErrNotFloat, ErrShape) in the function, return nil lists, and the
// module's Build reports it.
package optim
