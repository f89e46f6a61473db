// Package jit is the user-facing top of xlamesh: global arrays laid out over a mesh, and
// functions compiled once and called many times on them, after jax.Array and jax.jit.
//
// In the data flow it joins the other packages: an Array pairs a mesh.NamedSharding with one
// pjrt.Buffer per addressable device (Put, FromCallback, FromShards; ToHost gathers it back).
// A Function's Body is written with package lower (ops from package stablehlo, shardings
// from lower); Call lowers it for the arguments' abstract
// mesh, types and specs (cached), compiles the text with pjrt for the client and the mesh's
// device assignment (cached per client and device list), runs it, and returns Arrays with the
// declared result shardings, or, for results left unspecified, the sharding XLA chose. A call
// whose arguments have the same types, shardings and devices as the previous call's goes
// straight to its executable: it builds no key and looks nothing up.
//
// # Programs written elsewhere
//
// FromText, FromBytecode and FromExported make a Function of a StableHLO module written
// elsewhere: MLIR text (jax.export's mlir_module(), any other tool's), MLIR bytecode, or a
// jax.export artifact read by package jaxexport. Without InSpecs and OutSpecs it runs as
// written: its own shardings, compiled for its partition count on the arguments' mesh, which
// must have that many devices; each argument must already be laid out as the compiled program
// expects (pjrt.Executable.InputShardings tells), else the call fails with ErrArguments, or with
// Reshard moves it. With InSpecs (and OutSpecs) the caller's mesh and specs replace the module's
// annotations (wrap.Module with ReplaceShardings), on any mesh, subset or order of devices. Both
// share New's caches, statistics, argument checks and donation. A module given as bytecode is
// read as text by package mlir/bytecode where text is needed.
//
// A module exported with symbolic shapes (jax.export.symbolic_shape) takes arrays of any size
// its specification allows: package refine makes it static for each call's shapes, checking
// its shape assertions (JAX's message, with ErrArguments), and it is compiled once per distinct
// shapes. A call without arguments runs on WithMesh's mesh or the client's first device; a
// module that does not say mhlo.num_partitions takes NumPartitions.
//
// # Trees
//
// NewTree makes a TreeFunction, as jax.jit of a function of pytrees: its body is any
// func(*lower.Function, A1, ..., An) (R1, ..., Rm) whose arguments and results are trees
// (package tree: structs, slices, maps) of lower.Value. Call takes one tree of *Array per
// argument and fills one tree of *Array per result through pointers. The layout is one tree
// (or prefix tree) of specs per argument and result (InTree, OutTree; InSpecs and OutSpecs
// for one spec per tree), the donation whole arguments (Donate) or paths (DonatePaths). A
// struct generic in its leaves serves every side: Params[*Array] for the call,
// Params[lower.Value] in the body, Params[mesh.PartitionSpec] for InTree;
// autodiff.ValueAndGradTree and optim.StepTree keep the tree in the body. Errors name the
// leaf's path, the arguments numbered as a list ("[0].Blocks[1].Wq"). CloseTree closes a
// tree of arrays.
//
// # Ownership
//
// Arrays own device memory and must be closed. A Function owns its lowerings and executables:
// Close frees them all (pjrt.LiveExecutables drops back), Release frees those of one client,
// to be called before closing a client the Function outlives. Nothing is cached process-wide;
// ReshardArray compiles its identity for each call and frees it.
//
// # Several processes
//
// In a multi-process job (pjrt.WithDistributed; package distributed) a mesh built from the
// client's Devices spans every process, and each process holds only its own shards: Put and
// FromCallback place (and call back for) this process's shards only, FromProcessLocalData builds
// the global array from this process's part of the data (jax.make_array_from_process_local_data),
// Array.ProcessLocalData reads that part back, AddressableShards lists what this process holds,
// ToHost of an array with shards elsewhere fails with ErrNotAddressable, and ProcessAllgather
// brings an array to every process through the job's key-value store. A Function called with
// such global arrays compiles over the mesh's devices in every process and runs each process's
// part; its results are global arrays (their global sharding, this process's shards), so
// FromProcessLocalData, Call, ProcessAllgather is the round trip (Example_multiController). It
// needs a plugin that runs a program over several processes' devices: the CPU plugins refuse
// the call with an error wrapping pjrt.ErrMultiController. See docs/multihost.md.
//
// # Contexts
//
// Every call that can block has a variant taking a context.Context first: Function.CallContext,
// PutContext, Array.ToHostContext (and pjrt.Client.CompileContext). They are variants, as in
// database/sql (Query and QueryContext), rather than a context argument on every call, so the
// common case reads as before and the context-free calls stay the fast path: with a context
// that can be cancelled, the blocking work runs on a goroutine of its own. When the context ends
// first, the call returns an error wrapping ctx.Err() at once. PJRT can interrupt neither a
// compilation, nor an execution, nor a transfer, so the work goes on in the background and cleans
// up after itself: a compilation lands in the Function's cache, results and transfers are freed.
// Everything stays usable.
//
// A program that never ends (a while loop whose condition always holds) cannot be stopped
// either. Closing never waits on it for good: Function.CloseContext and pjrt.Client.CloseContext
// close at once (later calls fail with ErrClosed, or pjrt.ErrClosed, without waiting), wait for
// the calls still running until their context is done, and then report them with a
// *pjrt.StillRunningError (pjrt.ErrStillRunning); what those calls hold (their executable, the
// client) is freed by the last of them to end, if it ever does. Close is CloseContext bounded by
// pjrt.CloseTimeout. Other functions and clients keep working meanwhile.
//
// # Panics in a Body
//
// A Body is user code. When it panics with a runtime error (a nil dereference, an index out of
// range), that is a bug, and the panic goes on up the stack of the goroutine that called Call or
// Lower, as text/template's errRecover does. Any other panic value is returned as an error
// wrapping ErrLowering (and the value, if it is an error). Neither is cached: the next call runs
// the Body again.
//
// # Errors
//
// Errors wrap the package's sentinels (ErrArguments, ErrShard, ErrDevice, ErrClosed,
// ErrLowering, ErrExternal, ErrNotAddressable, ErrNil) and keep mesh's and pjrt's (mesh.ErrIndivisible,
// pjrt.ErrCompile, ...) and the context's (context.Canceled) matchable with errors.Is. Methods
// of a nil *Array or *Function return errors wrapping ErrNil instead of panicking. Arrays and
// Functions are safe for concurrent use.
package jit
