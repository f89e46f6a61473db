// xlamesh_pjrt.h: the C side of xlamesh's PJRT binding.
//
// Plain C11 over the vendored PJRT C API header (include/xla/pjrt/c/pjrt_c_api.h, a marked
// third-party file). Built by cgo from the Go package pjrt/ (pjrt/cc_amalgam.c includes the .c
// file) and by Bazel as //cc:xlamesh_pjrt. No global state; nothing here allocates memory the
// caller cannot free.
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
  X(LoadedExecutable_Destroy)              \
  X(LoadedExecutable_GetExecutable)        \
  X(LoadedExecutable_Execute)              \
  X(LoadedExecutable_AddressableDevices)   \
  X(Buffer_Destroy)                        \
  X(Buffer_ToHostBuffer)                   \
  X(Buffer_ReadyEvent)

#define XM_DECLARE(name) PJRT_Error* xm_##name(const PJRT_Api* api, PJRT_##name##_Args* args);
XM_FUNCTIONS(XM_DECLARE)
#undef XM_DECLARE

// xm_serialized_free calls the deleter a PJRT_Executable_Serialize call returned.
void xm_serialized_free(PJRT_Executable_Serialize_Args* args);

#ifdef __cplusplus
}
#endif

#endif  // XLAMESH_CC_XLAMESH_PJRT_H_
