// xlamesh_pjrt.h: the PJRT C API calls xlamesh needs beyond what gopjrt v0.10.0 exposes.
//
// Plain C (C11), no allocation the caller cannot free, no global state. Built by cgo from
// the Go package pjrt/ (which includes xlamesh_pjrt.c) and by Bazel as //cc:xlamesh_pjrt.
//
// Every function that can fail returns NULL on success, or a malloc'd, NUL-terminated error
// message the caller frees with free(); *code receives the PJRT error code (PJRT_Error_Code,
// or one of the XM_ERR_* codes below for failures before any PJRT call).
#ifndef XLAMESH_CC_XLAMESH_PJRT_H_
#define XLAMESH_CC_XLAMESH_PJRT_H_

#include <stddef.h>
#include <stdint.h>

#include "xla/pjrt/c/pjrt_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

// Failure codes of xm_probe, outside PJRT's own PJRT_Error_Code range (0..16).
enum {
  XM_ERR_DLOPEN = 100,      // dlopen failed: missing file, not an ELF shared object, unresolved symbols
  XM_ERR_NO_SYMBOL = 101,   // the library has no GetPjrtApi symbol: not a PJRT plugin
  XM_ERR_NULL_API = 102,    // GetPjrtApi returned NULL
  XM_ERR_SMALL_API = 103,   // PJRT_Api is too small to hold a version: corrupt or not a plugin
  XM_ERR_BAD_ARGUMENT = 104 // a NULL argument
};

// xm_probe opens the shared library at path with dlopen(RTLD_LAZY | RTLD_LOCAL), finds
// GetPjrtApi, calls it and reads the PJRT API version, without calling anything else.
// On success the library stays open (so a later dlopen of the same path by gopjrt gets the
// same instance) and *api, *major and *minor are set.
char* xm_probe(const char* path, const PJRT_Api** api, int* major, int* minor, int* code);

// The facts a device reports about itself (PJRT_DeviceDescription and PJRT_Device).
#define XM_MAX_COORDS 8
#define XM_MAX_TEXT 128
typedef struct {
  int64_t id;                 // PJRT_DeviceDescription_Id: global device id
  int64_t process_index;      // PJRT_DeviceDescription_ProcessIndex
  int64_t local_hardware_id;  // PJRT_Device_LocalHardwareId (-1 if none)
  int addressable;            // PJRT_Device_IsAddressable
  char kind[XM_MAX_TEXT];     // PJRT_DeviceDescription_Kind, e.g. "cpu", "TPU v4"
  char to_string[XM_MAX_TEXT];  // PJRT_DeviceDescription_ToString, e.g. "CpuDevice(id=0)"
  int num_coords;             // number of "coords" attribute entries (0 if absent)
  int64_t coords[XM_MAX_COORDS];
  int has_core_on_chip;       // "core_on_chip" attribute present
  int64_t core_on_chip;
  int has_slice_index;        // "slice_index" attribute present
  int64_t slice_index;
  int num_attributes;         // all attributes the plugin reported
} xm_device_info;

// xm_device_info_get fills *out for device.
char* xm_device_info_get(const PJRT_Api* api, PJRT_Device* device, xm_device_info* out, int* code);

// The output signature of a compiled executable (per device, i.e. per shard).
typedef struct {
  size_t num_outputs;
  size_t num_partitions;
  int32_t* element_types;  // [num_outputs] PJRT_Buffer_Type values; malloc'd
  size_t* ranks;           // [num_outputs]; malloc'd
  int64_t* dims;           // concatenated dimensions, sum(ranks) entries; malloc'd
  char* fingerprint;       // malloc'd, NUL-terminated; NULL when the plugin does not implement it
} xm_executable_info;

// xm_executable_info_get reads the output element types and dimensions, the number of
// partitions and the fingerprint of a loaded executable. Free with xm_executable_info_free.
char* xm_executable_info_get(const PJRT_Api* api, PJRT_LoadedExecutable* executable,
                             xm_executable_info* out, int* code);

// xm_executable_info_free releases what xm_executable_info_get allocated; safe on a zero value.
void xm_executable_info_free(xm_executable_info* info);

// xm_executable_optimized_program returns the serialized optimized program of a loaded
// executable (PJRT_Executable_OptimizedProgram: for XLA an HloModuleProto, format "hlo").
// *code (malloc'd, *code_size bytes) and *format (malloc'd, NUL-terminated) are the caller's to free.
char* xm_executable_optimized_program(const PJRT_Api* api, PJRT_LoadedExecutable* executable,
                                      char** code, size_t* code_size, char** format, int* code_out);

#ifdef __cplusplus
}
#endif

#endif  // XLAMESH_CC_XLAMESH_PJRT_H_
