// Package jnp holds functions of jax.numpy built on the StableHLO builder: NumPy's where,
// tril and triu, take_along_axis, clip, arange and linspace, and reductions with jnp's
// numerics (sums, maxima and minima that keep their dimensions, mean and var accumulated in
// f32 for f16 and bf16).
//
// # Where it sits
//
// jnp sits beside package autodiff, on the floor above package stablehlo, and imports only
// the builder, shapes and internal/jnpcore (the axis handling and reductions it shares with
// package nn): each function takes the *stablehlo.Function it adds its ops to, and
// stablehlo.Values of that function, and returns values of it. Its ops are the builder's own
// (compare, select, iota, reduce, gather, ...), so a pass over Function.Ops, such as
// reverse-mode differentiation, sees nothing new. Packages lower and jit use it through a
// lower.Function, which embeds the builder (pass f.Function); optim and examples/gpt use it.
//
//	f := m.Main()
//	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4, 4))
//	f.Return(jnp.Tril(f, x, 0), jnp.Mean(f, x, -1))
//
// # Errors
//
// Errors stick in the function's module, as the builder's do: a function given a bad
// operand records an *stablehlo.OpError naming the op it would emit (a Tril of a vector is a
// "select" error wrapping stablehlo.ErrShape, with jax.numpy's message) and returns the zero
// Value, and every later op is a no-op; Module.Build returns the error.
package jnp
