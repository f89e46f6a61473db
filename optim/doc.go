// Package optim builds optimizer steps into StableHLO functions: the gradient
// transformations of optax (SGD with momentum and Nesterov, Adam, AdamW and Lion with
// optional weight-decay masks, Adafactor and its factored second moments, global-norm and
// block-RMS clipping, chains) and its learning-rate schedules, with optax's arithmetic.
//
// # Where it sits
//
// optim works on builder values: parameters and gradients come in as stablehlo.Values of a
// function under construction (typically a jit Body, with gradients from autodiff.Grad),
// and updates, new parameters and new optimizer state go out as stablehlo.Values of the
// same function, to be returned by it. Nothing runs here; the ops run when the function is
// compiled and called (package jit, or package pjrt directly). optim imports only
// stablehlo, jnp (for jnp.Mean), shapes, mesh (for StateSpecs) and tree, so it sits just
// above the floor of autodiff and jnp (floor 3), below lower.
//
// # State
//
// An optimizer's state is a State: a flat, ordered list of values, in the order of optax's
// jax.tree.leaves of its state, so that a jitted train step takes it as arguments and
// returns the next one as results. Transformation.Layout says, for parameters of given
// shapes, what each leaf is (a Leaf): an int32 step count (Count), a value shaped like its
// parameter (Like: moments, traces), one of Adafactor's factored second moments (Row, Col:
// the parameter's shape without one dimension) or a (1,)-shaped placeholder optax keeps in
// a slot that a parameter does not use (Dummy). Parameters and gradients are flat lists too, in one
// order that the caller chooses, or trees (package tree) for InitTree, UpdateTree,
// ApplyUpdatesTree and StepTree, which flatten them in tree order.
//
// # Sharding the state
//
// StateSpecs derives each leaf's partition spec from its parameter's: a Like leaf is
// sharded as its parameter, a Row or Col leaf as its parameter without the dimension it
// lacks, counts and dummies are replicated. So a model whose parameters are sharded (FSDP,
// tensor parallelism) keeps a sharded optimizer state:
//
//	specs, err := optim.StateSpecs(opt, paramShapes, paramSpecs)
//	// jit.InSpecs(append(paramSpecs, specs...)...), jit.OutSpecs(...)
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
// optax.lion's sign of the interpolation, optax.adafactor's decay schedule 1 - t^-0.8 and
// its row and column averages, clipping, parameter scale and momentum in optax's chain
// order. A weight-decay mask ([]bool, one entry per parameter) leaves the parameters whose
// entry is false undecayed, as optax's mask= argument. Learning rates are Schedules
// evaluated on the step count inside the graph, as optax.scale_by_schedule does (the count
// before this step, starting at 0). Gradients and parameters must be of real floating-point types;
// constants take the parameter's type.
//
// # Errors
//
// Constructors validate hyperparameters and return an error wrapping ErrHyperparameter.
// Init, Update and ApplyUpdates cannot return errors, as every builder op: they record the
// first error (ErrLength, ErrNotFloat, ErrShape) in the function, return nil lists, and the
// module's Build reports it; a weight-decay mask whose length differs from the number of
// parameters is such an ErrLength. StateSpecs returns its errors (ErrLength, ErrShape).
package optim
