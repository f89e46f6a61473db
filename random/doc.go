// Package random computes jax.random's numbers on the StableHLO builder, bit for bit: Key
// (jax.random.PRNGKey), Bits, Uniform, Normal, Split and FoldIn, from JAX's default
// generator, threefry2x32 with jax_threefry_partitionable on (JAX's default since 0.5), so a
// Go program and a JAX program given the same key draw the same numbers.
//
// # Keys
//
// A key is jax.random's raw threefry2x32 key data, a u32[2] stablehlo.Value
// (jax.random.PRNGKey(seed), or jax.random.key_data of a typed key): Key makes one from a
// seed, Split and FoldIn derive new ones, and the draws take one. Threefry2x32, the block
// cipher underneath, is built from plain u32 ops (adds, xors, shifts), so any backend runs
// it and the numbers do not depend on the backend's own generator; that generator is the
// builder's op Function.RngBitGenerator, whose bits are the backend's choice.
//
// # Where it sits
//
// random sits beside package autodiff, on the floor above package stablehlo, and imports
// only the builder (and shapes): each function takes the *stablehlo.Function it adds its ops
// to. Packages lower and jit use it through a lower.Function, which embeds the builder (pass
// f.Function).
//
//	f := m.Main()
//	key := random.Key(f, f.ConstantOf(dtypes.Int32, 0))
//	f.Return(random.Normal(f, key, dtypes.Float32, 3, 3))
//
// # Errors
//
// Errors stick in the function's module, as the builder's do: a key that is not u32[2]
// records an *stablehlo.OpError ("random_bits" for Bits, ...) wrapping stablehlo.ErrShape,
// returns the zero Value, and makes every later op a no-op; Module.Build returns the error.
package random
