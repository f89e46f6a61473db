// Package lower lowers JAX-style shardings into StableHLO modules built in Go.
//
// It sits between the model and the compiler: mesh.Mesh and mesh.NamedSharding (package
// mesh) describe where data lives; shardy turns them into Shardy attributes; package
// stablehlo builds the ops and functions and prints them; lower adds what is about
// shardings — `sdy.mesh` symbols, `sdy.sharding` on @main's arguments and results,
// sharding constraints, shard_map regions and collectives over mesh axes — and writes the
// whole module as MLIR text that XLA's StableHLO parser accepts; package pjrt compiles that
// text with the mesh's device assignment and runs it.
//
// # Building
//
// A Module wraps a stablehlo.Module and holds functions. A Function embeds
// *stablehlo.Function, so every op of the builder is a method of it (f.Mul, f.DotGeneral,
// f.Reduce, ...), next to lower's sharding methods; Value, Shape, DType, DotDims and the
// Reduction and Comparison constants are stablehlo's, under the same names here. Each
// method adds one op and returns its result, so a program reads like the math it computes:
//
//	m := lower.NewModule("jit_f")
//	f := m.Main()
//	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 2), sharding) // sdy.sharding on %arg0
//	f.Return(f.Mul(x, f.Constant(2.0)))                               // weak constant: f32, broadcast to 8x2
//	f.ShardResults(sharding)
//	prog, err := m.Build()
//
// No method of lower's shadows one of the builder's: f.Arg (an argument without a
// sharding), f.Call (f.Call(g.Function, ...) calls a lower Function g), f.Module (the
// builder's module; ModuleOf gives lower's) and the collectives named after StableHLO ops,
// which take replica groups, are the builder's. lower's own have names of their own:
// ShardedArg adds an argument with a sharding, and the collectives over mesh axes are below.
//
// Element types are gopjrt's dtypes.DType values (lower.DType is an alias of it, numbered
// as PJRT numbers buffer types); MLIRType and ParseDType convert to and from the names
// StableHLO text uses ("f32", "i1").
//
// FunctionOf gives the lower Function of any function or region body of a lower Module's
// builder, so code handed a *stablehlo.Function (a region body that a stablehlo op builds)
// can still use lower's methods, such as the axis-named collectives inside a shard_map.
//
// Ops infer their result shapes and check their operands. The first error sticks: later
// ops are no-ops returning the zero Value, and Build returns that error as an *OpError
// naming the function, the op and the operand, wrapping a sentinel such as ErrShape,
// ErrForeignValue, ErrUnknownAxis, ErrMeshMismatch or ErrIndivisible.
//
// # Shardings
//
// Shardings are mesh.NamedSharding values. The module keeps one `sdy.mesh @mesh` per mesh
// shape (a second shape is an error unless WithMultipleMeshes is given); lowering depends
// only on the abstract mesh, so the same program on two meshes of one shape prints the
// same text, apart from `device_ids` when a mesh orders the module's devices differently.
// ShardingConstraint is JAX's with_sharding_constraint; ShardMap is shard_map, lowered to
// `sdy.manual_computation`, with the collectives over mesh axes and AxisIndex available
// in its body over the manual axes. The collectives have JAX's names where one is exact:
// Psum, Pmax, Pmin, PsumScatter and Ppermute; the others are named after their StableHLO
// op with "Over" (mesh axes): AllReduceOver and ReduceScatterOver take any reduction,
// AllGatherOver and AllToAllOver are JAX's all_gather and all_to_all with tiled=True, and
// AllGatherUntiled and AllToAllUntiled the same with tiled=False. (The builder's AllReduce,
// AllGather, ReduceScatter, AllToAll and CollectivePermute take replica groups of partition
// ids instead.) ShardMap checks replication as JAX's check_vma does: a result whose
// out_spec leaves out a manual axis the value varies over is an error wrapping
// ErrReplication; ShardMapUnchecked is check_vma=False. In a module with a mesh, Build
// annotates every @main argument and result: unannotated arguments (f.Arg) are replicated,
// unannotated results are left open for XLA to choose.
//
// # Sharding in types
//
// On a mesh with Explicit axes (an argument sharded over one, or WithMesh, which is JAX's
// set_mesh), every value has a sharding type, as in JAX since 0.9: TypeOf(v) prints it as
// jax.typeof does ("float32[8@X,4@Y]", "float32[8,16]{U:X}"). Each op computes its result's
// type from its operands' by JAX 0.12's rule, or fails with an error wrapping
// ErrShardingType that carries JAX's message; where JAX asks for out_sharding, the ...Out
// methods take one (DotGeneralOut, EinsumOut, ReshapeOut, ReduceOut, GatherOut, ScatterOut,
// IotaOut, FullOut, RngBitGeneratorOut; Out(spec, unreduced...) names partial sums). In a
// shard_map body TypeOf gives the per-device type with the manual axes the value varies over
// ("float32[4,1]{V:(X,Y)}"), and Pcast is JAX's lax.pcast to varying. Reshard moves a value to another sharding
// (reducing its unreduced axes); ShardingConstraint is an assertion on an all-Explicit mesh and
// may name only Auto axes on a mixed one; AutoAxes and ExplicitAxes (JAX's auto_axes and
// explicit_axes) build a part of the program with some axes of another type. The lowering is JAX's: an `sdy.sharding_constraint` to the result's
// type after each op (closed dimensions, or open ones with the unused Explicit axes
// replicated when the mesh has Auto axes), the operands of an elementwise op constrained to
// its result's sharding first, and on an all-Explicit mesh the results' types as @main's
// result shardings. Rules exist for the elementwise ops, convert, compare, select and clamp,
// broadcast_in_dim, transpose, reshape, slice, dynamic_slice, dynamic_update_slice, pad,
// concatenate, reverse, dot_general, reductions, argmax/argmin, reduce_window, sort, top_k,
// the cumulative ops, gather, scatter, rng_bit_generator, shard_map (in_specs inferred from
// the arguments' types when nil) and the loops and branches (While, ForLoop, If, Case:
// carried values and branch results keep their types); any other op is an ErrShardingType
// naming it (JAX's "sharding rule for ... is not implemented"; AutoAxes is JAX's way
// around it). Combiner and comparator bodies are not typed; Scan bodies are not yet. Gradients are typed too: autodiff's cotangents are resharded to their
// primals' types, as JAX's transpose rules give them.
// Meshes whose axes are all Auto build as before. The oracle group "explicit" checks types,
// errors, constraints and numbers against JAX.
//
// # Gradients
//
// Package autodiff differentiates lower's programs (autodiff.Grad(f.Function, loss, ...)):
// each module NewModule makes carries the transpose rules of lower's ops (autodiff.RegisterFor),
// so a module built with the builder alone differentiates the same whether or not lower is
// linked. A sharding constraint's cotangent gets the
// same constraint; a shard_map's transpose is a shard_map over the same manual axes that
// replays the body and walks it back, with JAX's rules for the collectives (psum and
// pbroadcast, all_gather and psum_scatter, ppermute and its inverse, all_to_all) and a sum
// over the axes along which a cotangent contribution varies and its value does not
// (VaryingAxes). Shardings on @main's arguments and results, and the partitioner, do the
// rest: a data-parallel gradient's all-reduce is XLA's.
//
// # Donation
//
// Donate marks @main's arguments whose buffers the caller gives up (jax.jit's
// donate_argnums). Build pairs each with a result as JAX's lowering does, by per-device shard
// type and memory kind, and writes `tf.aliasing_output = N` (the result reuses the argument's
// memory) or `jax.buffer_donor = true` (XLA decides, after choosing layouts); PJRT reuses
// the memory only where the program says so.
//
// # Partitioners
//
// WithPartitioner(GSPMD) writes the same program for XLA's older GSPMD partitioner:
// `mhlo.sharding` strings, `@Sharding` custom calls for constraints and
// `@SPMDFullToShardShape`/`@SPMDShardToFullShape` around a `func.call` of each shard_map
// body, printed as a private function (@shmap_body, @shmap_body_1, ...) as JAX does. A
// module never mixes the two; compile it with the partitioner Program.Partitioner reports.
//
// # Modules written elsewhere
//
// Package lower/wrap attaches shardings to StableHLO text another tool wrote (for example
// jax.export) and re-shards modules that carry their own, by editing the text. It writes the
// shardings lower writes: a Module is the registry of its meshes (EntryShardingAttr, Meshes,
// NumPartitions, DeviceAssignment), and NewProgram makes the Program of its text. MeshGroups
// gives the replica groups of mesh axes, the groups of the collectives here and of those wrap
// moves onto another mesh.
//
// # Names and sizes
//
// Symbol names print bare when they are MLIR identifiers and quoted otherwise
// (`module @"jit_my-fn"`); a module or function name outside mlir.CheckName's class
// (printable ASCII without '\') is a build error. Every shape an op produces must have an
// element count and a byte size that fit int64 (ErrShape), so no arithmetic wraps.
//
// # Printing
//
// Ops are printed in MLIR's generic form ("stablehlo.add"(...) : (...) -> ...), which
// every StableHLO version parses; constants, custom calls, calls and the sdy ops use their
// pretty forms. lower's ops are added to the builder with stablehlo.Function.AddOp and
// print themselves through stablehlo.Printer; their Params (ShardingConstraintParams,
// ShardMapParams) are what a pass over stablehlo.Function.Ops reads. Every form here is
// compiled by the XLA CPU plugin in the integration tests.
package lower
