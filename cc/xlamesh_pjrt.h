// xlamesh_pjrt.h: the C side of xlamesh's PJRT binding.
//
// Plain C11 over the vendored PJRT C API header (include/xla/pjrt/c/pjrt_c_api.h, a marked
// third-party file). Built by cgo from the Go package pjrt/ (pjrt/cc_amalgam.c includes the .c
// file) and by Bazel as //cc:xlamesh_pjrt. No global state but the staging pool (and the thread
// that empties it when idle); nothing here allocates memory the caller cannot free.
//
// The binding speaks every plugin whose PJRT C API is 0.x with x >= XM_MIN_API_MINOR: argument
// structs carry this header's (newer, larger) struct_size, which older plugins accept, and no
// function is called unless its slot lies inside the plugin's PJRT_Api.struct_size and is
// non-null (xm_has).
#ifndef XLAMESH_CC_XLAMESH_PJRT_H_
#define XLAMESH_CC_XLAMESH_PJRT_H_

#include <stddef.h>
#include <stdint.h>

#include "xla/pjrt/c/pjrt_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

// The oldest PJRT C API minor version the binding is tested with (xla-cpu-pjrt 0.0.1).
#define XM_MIN_API_MINOR 81

// The size of PJRT_Api at API 0.81 (the table of the oldest plugin accepted); a smaller table
// is corrupt or not a PJRT plugin.
#define XM_MIN_API_STRUCT_SIZE 984

// Failure codes of xm_probe, outside PJRT's own PJRT_Error_Code range (0..16).
enum {
  XM_ERR_DLOPEN = 100,      // dlopen failed: missing file, not an ELF shared object, unresolved symbols
  XM_ERR_NO_SYMBOL = 101,   // the library has no GetPjrtApi symbol: not a PJRT plugin
  XM_ERR_NULL_API = 102,    // GetPjrtApi returned NULL
  XM_ERR_SMALL_API = 103,   // PJRT_Api.struct_size is smaller than XM_MIN_API_STRUCT_SIZE
  XM_ERR_BAD_ARGUMENT = 104 // a NULL argument
};

// xm_probe opens the shared library at path with dlopen(RTLD_NOW | RTLD_LOCAL), finds
// GetPjrtApi, calls it, and reads PJRT_Api.struct_size and the API version while the library
// is loaded. On success the library stays loaded for the life of the process (plugins are never
// unloaded) and *api, *struct_size, *major and *minor are set; on failure it is closed again
// and a malloc'd message is returned with *code one of XM_ERR_*.
char* xm_probe(const char* path, const PJRT_Api** api, size_t* struct_size, int* major, int* minor,
               int* code);

// xm_has reports whether the plugin's function table has a non-null entry at byte offset
// `offset` (offsetof(PJRT_Api, PJRT_X)): the slot must lie inside api->struct_size.
int xm_has(const PJRT_Api* api, size_t offset);

// xm_errorf returns a malloc'd message formatted like printf (NULL if out of memory).
char* xm_errorf(const char* format, ...);

// xm_error_take reads a PJRT_Error's code and message into *code and a malloc'd,
// NUL-terminated *msg (the caller frees it), then destroys the error.
void xm_error_take(const PJRT_Api* api, PJRT_Error* err, int* code, char** msg);

// XM_FUNCTIONS lists the PJRT C API functions the binding calls. For each, xlamesh_pjrt.c
// defines xm_<name>(api, args), a plain C call through the plugin's table that cgo can make.
// Callers check the slot with xm_has first.
#define XM_FUNCTIONS(X)                    \
  X(Plugin_Initialize)                     \
  X(Plugin_Attributes)                     \
  X(Event_Destroy)                         \
  X(Event_Await)                           \
  X(Event_IsReady)                         \
  X(Event_Error)                           \
  X(Event_OnReady)                         \
  X(Client_Create)                         \
  X(Client_Destroy)                        \
  X(Client_PlatformName)                   \
  X(Client_ProcessIndex)                   \
  X(Client_PlatformVersion)                \
  X(Client_Devices)                        \
  X(Client_AddressableDevices)             \
  X(Client_Compile)                        \
  X(Client_BufferFromHostBuffer)           \
  X(Client_CreateErrorBuffer)              \
  X(DeviceDescription_Id)                  \
  X(DeviceDescription_ProcessIndex)        \
  X(DeviceDescription_Attributes)          \
  X(DeviceDescription_Kind)                \
  X(DeviceDescription_ToString)            \
  X(Device_GetDescription)                 \
  X(Device_IsAddressable)                  \
  X(Device_LocalHardwareId)                \
  X(Device_MemoryStats)                    \
  X(Device_DefaultMemory)                  \
  X(Device_AddressableMemories)            \
  X(Memory_Id)                             \
  X(Memory_Kind)                           \
  X(Memory_ToString)                       \
  X(Memory_AddressableByDevices)           \
  X(Executable_Destroy)                    \
  X(Executable_NumPartitions)              \
  X(Executable_NumOutputs)                 \
  X(Executable_OutputElementTypes)         \
  X(Executable_OutputDimensions)           \
  X(Executable_Fingerprint)                \
  X(Executable_OptimizedProgram)           \
  X(Executable_Serialize)                  \
  X(Executable_DeserializeAndLoad)         \
  X(Executable_GetCompiledMemoryStats)     \
  X(Executable_OutputMemoryKinds)          \
  X(Executable_ParameterMemoryKinds)       \
  X(LoadedExecutable_Destroy)              \
  X(LoadedExecutable_GetExecutable)        \
  X(LoadedExecutable_Execute)              \
  X(LoadedExecutable_AddressableDevices)   \
  X(Buffer_Destroy)                        \
  X(Buffer_ToHostBuffer)                   \
  X(Buffer_ReadyEvent)                     \
  X(Buffer_IsOnCpu)                        \
  X(Buffer_GetMemoryLayout)                \
  X(Buffer_OnDeviceSizeInBytes)            \
  X(Buffer_UnsafePointer)                  \
  X(Buffer_Memory)                         \
  X(Buffer_CopyToMemory)                   \
  X(Buffer_IncreaseExternalReferenceCount) \
  X(Buffer_DecreaseExternalReferenceCount)

#define XM_DECLARE(name) PJRT_Error* xm_##name(const PJRT_Api* api, PJRT_##name##_Args* args);
XM_FUNCTIONS(XM_DECLARE)
#undef XM_DECLARE

// xm_serialized_free calls the deleter a PJRT_Executable_Serialize call returned.
void xm_serialized_free(PJRT_Executable_Serialize_Args* args);

// Staging memory: host memory, XM_STAGING_ALIGN-aligned, that a host-to-device transfer hands to
// the plugin with PJRT_HostBufferSemantics_kImmutableZeroCopy. On the CPU platform the device
// buffer then lives in it (no copy) until the buffer is destroyed; elsewhere the plugin copies
// from it. Blocks of at least XM_STAGING_POOL_MIN bytes are rounded up to a size class, mapped
// on their own (mmap) and kept in a pool when freed (up to a limit of idle bytes, and for at most
// an idle time, after which a background thread unmaps them), so that the next transfer of the
// same size soon after finds its pages already faulted in while memory nobody uses goes back to
// the operating system; smaller ones go back to malloc. Thread-safe.
#define XM_STAGING_ALIGN 64
#define XM_STAGING_POOL_MIN (1 << 20)

// xm_staging_alloc returns a block of at least size bytes (NULL when out of memory) and its
// capacity in *cap, which xm_staging_free needs back.
void* xm_staging_alloc(size_t size, size_t* cap);

// xm_staging_free returns a block to the pool, or to malloc.
void xm_staging_free(void* block, size_t cap);

// xm_staging_stats reports the blocks handed out and not yet freed (count and bytes) and the
// bytes idle in the pool.
void xm_staging_stats(int64_t* live_blocks, int64_t* live_bytes, int64_t* idle_bytes);

// xm_staging_set_idle_limit sets the most bytes the pool keeps idle (default
// XM_STAGING_IDLE_LIMIT) and frees idle blocks beyond it; 0 empties the pool and disables it.
void xm_staging_set_idle_limit(int64_t bytes);
#define XM_STAGING_IDLE_LIMIT ((int64_t)1 << 30)

// xm_staging_set_idle_time sets how long a freed block stays in the pool, in nanoseconds
// (default XM_STAGING_IDLE_NS); after that it is unmapped. 0 or less keeps idle blocks until
// the idle limit drops them. Returns the previous idle time.
int64_t xm_staging_set_idle_time(int64_t ns);
#define XM_STAGING_IDLE_NS ((int64_t)2000000000)

// xm_buffer_from_staging runs PJRT_Client_BufferFromHostBuffer on args (filled by the caller but
// for data and host_buffer_semantics) with data = block and kImmutableZeroCopy, and registers a
// callback on done_with_host_buffer that frees the block to the pool once the plugin is done with
// it. It owns the block in every case: on failure it is freed before returning, and no buffer is
// left (args->buffer is NULL; with a NULL result too when malloc failed). The plugin must have
// PJRT_Event_OnReady.
PJRT_Error* xm_buffer_from_staging(const PJRT_Api* api, PJRT_Client_BufferFromHostBuffer_Args* args,
                                   void* block, size_t cap);

// xm_host_views gives direct read access to the memory of n buffers whose memory is host memory:
// for each buffer it checks PJRT_Buffer_IsOnCpu, a dense row-major layout of ranks[i] dimensions
// (PJRT_Buffer_GetMemoryLayout: minor_to_major n-1..0, no tiles) and an on-device size of
// sizes[i] bytes. If any buffer fails a check (or the plugin lacks a function), *ok is 0 and
// nothing else happens. Otherwise it waits for every buffer to be ready, and returns the first
// buffer's error (*failed its index) if one is not; else takes an external reference on each
// (when the plugin has PJRT_Buffer_IncreaseExternalReferenceCount), stores its address in
// ptrs[i] and sets *ok to 1; the caller then reads the memory and calls xm_host_views_release.
PJRT_Error* xm_host_views(const PJRT_Api* api, PJRT_Buffer* const* bufs, const int64_t* sizes,
                          const int32_t* ranks, size_t n, void** ptrs, int* ok, size_t* failed);

// xm_host_views_release drops the external references xm_host_views took.
void xm_host_views_release(const PJRT_Api* api, PJRT_Buffer* const* bufs, size_t n);

// ---- Executions in flight ----

// xm_inflight counts a client's executions that have started and not finished on every device,
// and bounds them (XLA's max_inflight_computations, kept by the binding for every plugin).
typedef struct xm_inflight xm_inflight;

// xm_inflight_new returns a counter allowing max executions at once (NULL when out of memory).
xm_inflight* xm_inflight_new(int max);

// xm_inflight_drain waits until no execution is in flight; xm_inflight_free frees the counter,
// which must be drained.
void xm_inflight_drain(xm_inflight* fl);
// xm_inflight_count returns the executions in flight now.
int xm_inflight_count(xm_inflight* fl);
void xm_inflight_free(xm_inflight* fl);

// xm_unfinished counts one executable's executions that have started and not finished on every
// device. It is reference-counted: its owner holds one reference and each such execution one, so
// that an execution may outlive the executable it ran and still count down.
typedef struct xm_unfinished xm_unfinished;

// xm_unfinished_new returns a counter at 0 holding the owner's reference (NULL when out of memory).
xm_unfinished* xm_unfinished_new(void);

// xm_unfinished_count returns the executions counted now; the caller holds the owner's reference.
int xm_unfinished_count(xm_unfinished* un);

// xm_unfinished_drop drops the owner's reference; the counter is freed when the last execution
// it counts has finished.
void xm_unfinished_drop(xm_unfinished* un);

// xm_execute runs an executable on nd devices in one call: it takes an in-flight slot (waiting
// while fl's limit is reached), counts the execution in un (which may be NULL) until it has
// finished on every device, calls PJRT_LoadedExecutable_Execute with args[d*na + i] as
// argument i of device d and the na - nkeep arguments not listed in keep donated, and stores
// result i of device d in outs[d*no + i]. The slot is given back when every device's completion
// event has fired, so that the caller never waits and nothing calls back into Go: events already
// ready are consumed at once, and a C callback (PJRT_Event_OnReady) waits on the first that is not,
// then goes on from there (usually one callback per execution, however many devices). With no results (no == 0) nothing
// would carry an asynchronous error back: it waits for the events and returns their first error.
// *started is 1 when the execution started (0 with no error: out of memory). With fl NULL the
// execution requests no completion events and is not counted (pjrt's benchmark floor, "bare"):
// nothing then reports the asynchronous error of a program without results.
PJRT_Error* xm_execute(const PJRT_Api* api, xm_inflight* fl, xm_unfinished* un,
                       PJRT_LoadedExecutable* exe, PJRT_Buffer* const* args, size_t nd, size_t na,
                       const int64_t* keep, size_t nkeep, PJRT_Buffer** outs, size_t no,
                       int* started);

// xm_buffer_destroy is PJRT_Buffer_Destroy taking its argument by value (no argument struct
// for cgo to move to the heap).
PJRT_Error* xm_buffer_destroy(const PJRT_Api* api, PJRT_Buffer* buffer);

// xm_buffers_await waits until each of n buffers is ready (PJRT_Buffer_ReadyEvent and
// PJRT_Event_Await in one call) and returns the first error, *failed its index.
PJRT_Error* xm_buffers_await(const PJRT_Api* api, PJRT_Buffer* const* bufs, size_t n, size_t* failed);

#ifdef __cplusplus
}
#endif

#endif  // XLAMESH_CC_XLAMESH_PJRT_H_
