// Package wrap attaches shardings to StableHLO modules written elsewhere, such as the text
// jax.export writes, and re-shards modules that already carry their own.
//
// It sits beside package lower, which builds modules in Go: both end in a *lower.Program that
// package pjrt compiles and package jit runs. Where lower prints the shardings of a module it
// built, wrap edits text it did not write. Its input is MLIR text (from jax.export, another
// compiler, or package mlir/bytecode's reading of a portable artifact); it checks the text with
// mlir.Check, reads the module header and @main's signature with the MLIR scanner (text in
// strings and comments is never taken for code), and changes only what it must: the rest of the
// text is kept byte for byte. The shardings it writes are lower's own (lower.Module's
// EntryShardingAttr: `sdy.sharding` with Shardy, `mhlo.sharding` with GSPMD, on meshes named as
// lower names them), so a wrapped module reads like a built one. Package jit wraps the modules of
// jit.FromText, FromBytecode and FromExported.
//
// # Attaching shardings
//
// Module takes the text and one sharding per argument and per result of @main (a zero
// mesh.NamedSharding leaves that one unannotated), adds the `sdy.mesh` symbol (with Shardy) and
// sets mhlo.num_partitions and mhlo.num_replicas:
//
//	prog, err := wrap.Module(text, []mesh.NamedSharding{s}, []mesh.NamedSharding{s})
//	prog, err := wrap.Module(text, args, results, wrap.WithPartitioner(lower.GSPMD))
//
// # Re-sharding
//
// A module that already carries shardings — Shardy's `sdy.mesh` symbols and `sdy.sharding`
// attributes, Shardy's round-trip form (the same attributes as strings in
// `mhlo.frontend_attributes = {xla.sdy.sharding = "..."}`, with the meshes in `xla.sdy.meshes`
// and result shardings on `xla.sdy.FuncResultSharding` calls), or GSPMD's `mhlo.sharding` —
// is re-sharded with ReplaceShardings: the new mesh and shardings replace the module's, on any
// subset or order of devices, and the sharding constraints, manual computations and collective
// replica groups in the body move onto the new mesh (an axis the new mesh lacks is an error
// that names it). KeepShardings reads such a module as it is (its signature, partition count
// and partitioner), for running it as exported:
//
//	prog, err := wrap.Module(text, args, results, wrap.ReplaceShardings())
//	prog, err := wrap.Module(text, nil, nil, wrap.KeepShardings())
//
// # Errors
//
// Text Module cannot read or annotate is an error wrapping ErrModule (and mlir.Check's sentinel
// where the checker refused it); a sharding that does not fit its argument or result is a
// *lower.OpError wrapping lower's sentinel (lower.ErrSharding, ...), and a sharding in the body
// that cannot move to the new mesh wraps lower.ErrUnknownAxis, lower.ErrMeshMismatch or
// lower.ErrPartitioner besides ErrModule.
package wrap
