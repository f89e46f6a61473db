// Package pjrt is xlamesh's binding to XLA through the PJRT C API: it finds and loads a PJRT
// plugin, opens a client, lists the client's devices with their attributes, compiles StableHLO
// text with Shardy or GSPMD partitioning for an explicit device assignment, moves buffers between
// host and devices, and executes SPMD programs on every device of an executable.
//
// In xlamesh's data flow it sits at the bottom: mesh describes where data lives, stablehlo
// builds a program and lower adds its shardings, writing MLIR text, and pjrt compiles and runs
// that text. It imports neither mesh nor stablehlo nor lower; its *Device satisfies mesh.Device by having the same methods.
//
// The binding is xlamesh's own: Go here, plain C in ../cc, compiled against the PJRT C API header
// 0.114 vendored in ../cc/include. It speaks every plugin of API 0.81 or newer (no upper bound):
// argument structs carry the header's sizes, which plugins accept, and every function slot is
// checked against the plugin's table before it is called. Element types are gopjrt's
// dtypes.DType. Beyond compiling and running it offers client create options of every PJRT type,
// key-value-store callbacks for multi-process clients (a kv.Store of package pjrt/kv), device attributes and
// memory statistics, executable serialisation (Executable.Serialize, Client.LoadExecutable) and a
// persistent compile cache (WithCompileCache) whose entries are verified (header, key, checksum,
// regular file, size) before the plugin reads them. Errors from the plugin are *Error values carrying
// PJRT's code and matching a sentinel (ErrCompile, ErrExecute, ...); see docs/plugins.md.
//
// Transfers run at the speed of a memory copy where device memory is host memory (the CPU
// platform): BuffersFromHost gathers each block, on all cores, into staging memory outside Go's
// heap that the device buffer then lives in (PJRT's zero-copy host buffers; the block is recycled
// when the buffer is closed, and given back to the operating system after SetStagingIdleTime,
// 2 s, unused), and CopyToHostAll copies each buffer straight from device memory
// into its place in the destination, strided where HostCopy.DstByteStrides says. Other platforms
// and plugins lacking PJRT_Buffer_UnsafePointer take PJRT's own copies.
//
// Devices address memories of several kinds (Memory; JAX's memory kinds): "device", the
// default, and on XLA's CPU and GPU plugins "pinned_host" and "unpinned_host" (Device.Memories,
// DefaultMemory, Memory(kind)). HostTransfer.Memory puts a buffer in one of them,
// Buffer.CopyToMemory copies it to another, Buffer.Memory says where a buffer is, and
// Executable.InputMemoryKinds and OutputMemoryKinds say where a program expects its arguments and
// makes its results. A plugin lacking a memory function gives errors wrapping ErrUnimplemented.
//
// What the compiler made of a program can be read back from its executable: the layout it
// expects of each argument and gives each result (Executable.InputShardings, OutputShardings, as
// OpSharding values that shardy.FromGSPMD reads as PartitionSpecs), every collective the SPMD partitioner inserted with its
// replica groups and the bytes it moves (Executable.Collectives), and the memory planned per
// device (Executable.MemoryStats). `xlamesh inspect` prints them.
//
// A plugin with PJRT's profiler extension (the CUDA plugin; the CPU plugins have none, which
// StartProfiler reports as ErrNoProfiler) records what it and its devices do between
// Plugin.StartProfiler and Profiler.Stop, an XSpace that WriteChromeTrace turns into a trace
// ui.perfetto.dev opens. `xlamesh bench -trace` writes one around its timed calls.
//
// jnp.linalg programs exported for CPU call jaxlib's LAPACK kernels (custom calls to
// lapack_*_ffi), which no plugin has: a CPU client registers xlamesh's own handlers for them
// through the plugin's FFI extension when it opens (../cc/xlamesh_lapack.c), over the LAPACK
// library of EnvLAPACK or `xlamesh install-plugin -plugin lapack`; Plugin.LAPACK says what is
// served, WithoutLAPACK opts out.
//
// A client can be one process's part of a multi-process job (WithDistributed, given a
// kv.Distributed such as package distributed's Job): the plugin gets the job's store and its
// node_id/num_nodes (or process_id), and Devices lists the job's devices, AddressableDevices
// this process's; see docs/multihost.md. Compile takes a device assignment over several
// processes' devices (multi-controller execution): the executable runs on this process's part,
// or the plugin refuses with an error wrapping ErrMultiController, as the CPU plugins do.
//
// The default plugin is JAX 0.11.2's CPU plugin (PJRT API 0.115) from the pinned
// lammps-jax-pjrt-cpu wheel (xla-cpu-pjrt 0.0.1, API 0.81, is the other one tested), installed into the
// user cache by `xlamesh install-plugin` (package pjrt/install; `make setup` in the repository)
// and found there without configuration (package pjrt/plugins names the pinned plugins and their
// paths; pjrt does not link the installer); see Open and FindCPUPlugin. XLA's C++ logging is kept at
// warning level unless TF_CPP_MIN_LOG_LEVEL is set. Every value here is safe for concurrent use; resources holding device memory have
// Close methods, with finalizers only as a safety net. Client and Executable also have
// CloseContext: closing never blocks other calls, and an execution that never ends (PJRT cannot
// interrupt one) is reported as a *StillRunningError rather than waited for forever; it frees
// what it holds when it ends. Close is CloseContext bounded by CloseTimeout.
package pjrt
