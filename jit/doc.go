// Package jit is the user-facing top of xlamesh: global arrays laid out over a mesh, and
// functions compiled once and called many times on them, after jax.Array and jax.jit.
//
// In the data flow it joins the other packages: an Array pairs a mesh.NamedSharding with one
// pjrt.Buffer per addressable device (Put, FromCallback, FromShards; ToHost gathers it back).
// A Function's Body is written with package lower; Call lowers it for the arguments' abstract
// mesh, types and specs (cached), compiles the text with pjrt for the mesh's device assignment
// (cached per device list), runs it, and returns Arrays with the declared result shardings, or,
// for results left unspecified, the sharding XLA chose.
//
// Errors wrap the package's sentinels (ErrArguments, ErrShard, ErrDevice, ErrClosed,
// ErrLowering, ErrNotAddressable) and keep mesh's and pjrt's (mesh.ErrIndivisible,
// pjrt.ErrCompile, ...) matchable with errors.Is. Arrays and Functions are safe for concurrent
// use; Arrays own device memory and must be closed.
package jit
