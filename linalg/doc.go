// Package linalg holds jnp.linalg's decompositions and solves built on the StableHLO builder,
// lowered as JAX lowers them on CPU: Cholesky, TriangularSolve, LU, Solve, QR, Eigh and SVD
// each emit jaxlib's LAPACK kernel (stablehlo.custom_call @lapack_spotrf_ffi, ...) with the
// operands, attributes, column-major layouts, batch dimensions and sharding rule JAX gives it,
// and JAX's ops around it (symmetrizing the input, NaN where LAPACK reports a failure, the
// triangle kept, pivots made a permutation).
//
// # Where it sits
//
// linalg sits beside package jnp, on the floor above package stablehlo, and imports the
// builder, shapes and jnp. Each function takes the *stablehlo.Function it adds its ops to and
// values of that function. Packages lower and jit use it through a lower.Function, which
// embeds the builder (pass f.Function).
//
//	f := m.Main()
//	a := f.Arg(stablehlo.NewShape(dtypes.Float32, 4, 4))
//	f.Return(linalg.Cholesky(f, a))
//
// # Running it
//
// The kernels are jaxlib's, which no PJRT plugin has: package pjrt registers xlamesh's own
// (cc/xlamesh_lapack.c) with every CPU client it opens, over the LAPACK `make setup` installs
// (pjrt.Plugin.LAPACK says what is served). A module using this package runs on such a CPU
// client; on another platform XLA refuses the custom call at compile, as it refuses JAX's CPU
// export of the same function.
//
// # Gradients
//
// Each function gives the module it builds in the transpose rules of its kernels
// (autodiff.RegisterCustomCallFor), so that package autodiff differentiates through them as
// JAX does: each rule is the transpose of JAX's JVP rule, checked against jax.grad on float32,
// float64, complex64 and complex128 (internal/oracletest, TestLinalgGradCPUOnly). Where JAX
// defines no derivative, neither does this package, and differentiating records an error
// wrapping autodiff.ErrNotDifferentiable that says so: the LU of a non-square matrix, the QR of
// a wide one (or a complete one that is not square), an SVD with full matrices.
//
// # Errors
//
// Errors stick in the function's module, as the builder's do: an operand of the wrong rank,
// shape or element type records an *stablehlo.OpError wrapping stablehlo.ErrShape or
// stablehlo.ErrDType, with jax.numpy's message, and returns zero Values.
package linalg
