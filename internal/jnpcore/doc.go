// Package jnpcore holds what packages jnp and nn share: NumPy's axis arguments and jnp's
// float reductions (sums and means accumulated in f32 for f16 and bf16), on the builder of
// package stablehlo. It sits with them, on the floor above stablehlo, and only they import
// it. Errors are recorded on the function, as every builder op records them.
package jnpcore
