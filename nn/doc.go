// Package nn holds functions of jax.nn built on the StableHLO builder, with the numerics of
// jax.nn and flax: Softmax, LogSoftmax, LogSumExp, Relu, Gelu (tanh or exact), OneHot and
// flax.linen.LayerNorm's computation (LayerNorm, configured by LayerNormOptions).
//
// # Where it sits
//
// nn sits beside package autodiff, on the floor above package stablehlo, and imports the
// builder and what it shares with package jnp (reductions over NumPy's axis arguments): each
// function takes the *stablehlo.Function it adds its ops to, and stablehlo.Values of that
// function, and returns values of it. It is built from the builder's ops in the order JAX
// builds each function, so results agree with JAX's to rounding and a gradient
// (package autodiff) is JAX's: Relu's maximum carries stablehlo.ReluParams, which autodiff
// differentiates as jax.nn.relu. Packages lower and jit use it through a lower.Function,
// which embeds the builder (pass f.Function); examples/gpt is its user.
//
//	f := m.Main()
//	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 8, 16))
//	f.Return(nn.Softmax(f, nn.LayerNorm(f, x, nn.LayerNormOptions{})))
//
// # Errors
//
// Errors stick in the function's module, as the builder's do: a function given a bad
// operand records an *stablehlo.OpError (a Softmax of integers is a "softmax" error
// wrapping stablehlo.ErrDType) and returns the zero Value, and every later op is a no-op;
// Module.Build returns the error.
package nn
