package jit

import "errors"

// Sentinel errors of package jit, wrapped with context. Errors about shapes and specs come from
// package mesh (mesh.ErrRank, mesh.ErrIndivisible, ...), errors from the device layer from
// package pjrt (pjrt.ErrCompile, pjrt.ErrClosed, ...); both stay matchable with errors.Is.
var (
	// ErrShard: a shard (callback result or buffer) does not fit its place: wrong dtype, shape or device.
	ErrShard = errors.New("shard does not match the sharding")
	// ErrDevice: a mesh device is not a device of the client, or not addressable.
	ErrDevice = errors.New("device not usable")
	// ErrArguments: the arguments of a call do not match what the function was compiled for.
	ErrArguments = errors.New("arguments do not match")
	// ErrClosed: the array was closed (or donated), or the function was closed.
	ErrClosed = errors.New("already closed")
	// ErrNotAddressable: the operation needs data held by devices of other processes.
	ErrNotAddressable = errors.New("not fully addressable")
	// ErrLowering: the function's body failed to build or lower, or panicked with a value that
	// is not a runtime error (runtime errors are bugs and go on panicking).
	ErrLowering = errors.New("lowering failed")
	// ErrExternal: a module written elsewhere cannot be read or run: not MLIR, a signature that
	// is not static tensors, bytecode mlir/bytecode cannot read, or a jax.export artifact for
	// several platforms or another platform than the client's.
	ErrExternal = errors.New("cannot run external module")
	// ErrNil: a method was called on a nil *Array or *Function, or FromCallback got a nil callback.
	ErrNil = errors.New("nil value")
)
