// xlamesh_profiler.h: the PJRT profiler extension, seen from xlamesh's binding.
//
// A plugin may chain a PJRT_Extension_Base of type PJRT_Extension_Type_Profiler from
// PJRT_Api.extension_start (the CUDA plugin does, the CPU plugins do not). That extension points
// at a table of profiler functions (XLA's PLUGIN_Profiler_Api, declared in
// xla/backends/profiler/plugin/profiler_c_api.h, not vendored here): create a profiler from a
// serialized tensorflow.ProfileOptions, start, stop, collect a serialized
// tensorflow.profiler.XSpace, destroy. The xm_prof_* structs below restate that ABI, field for
// field; they are only ever read from or passed to the plugin.
#ifndef XLAMESH_CC_XLAMESH_PROFILER_H_
#define XLAMESH_CC_XLAMESH_PROFILER_H_

#include <stddef.h>
#include <stdint.h>

#include "xla/pjrt/c/pjrt_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xm_prof_handle xm_prof_handle;  // PLUGIN_Profiler
typedef struct xm_prof_error xm_prof_error;    // PLUGIN_Profiler_Error

typedef struct {
  size_t struct_size;
  void* priv;
  xm_prof_error* error;
} xm_prof_error_destroy_args;

typedef struct {
  size_t struct_size;
  void* priv;
  const xm_prof_error* error;
  const char* message;  // out, lives as long as error
  size_t message_size;  // out
} xm_prof_error_message_args;

typedef struct {
  size_t struct_size;
  const char* options;  // serialized tensorflow.ProfileOptions
  size_t options_size;
  xm_prof_handle* profiler;  // out
} xm_prof_create_args;

// The args of destroy, start and stop.
typedef struct {
  size_t struct_size;
  xm_prof_handle* profiler;
} xm_prof_handle_args;

typedef struct {
  size_t struct_size;
  xm_prof_handle* profiler;
  uint8_t* buffer;              // in/out
  size_t buffer_size_in_bytes;  // out
} xm_prof_collect_args;

// xm_prof_api is PLUGIN_Profiler_Api.
typedef struct {
  size_t struct_size;
  void* priv;
  void (*error_destroy)(xm_prof_error_destroy_args*);
  void (*error_message)(xm_prof_error_message_args*);
  void* error_get_code;
  xm_prof_error* (*create)(xm_prof_create_args*);
  xm_prof_error* (*destroy)(xm_prof_handle_args*);
  xm_prof_error* (*start)(xm_prof_handle_args*);
  xm_prof_error* (*stop)(xm_prof_handle_args*);
  xm_prof_error* (*collect_data)(xm_prof_collect_args*);
} xm_prof_api;

// xm_profiler_api returns the profiler table of the plugin's profiler extension, or NULL when
// the plugin has none (or its extension or table is too small to hold every function). It walks
// at most 64 links of the extension chain.
const xm_prof_api* xm_profiler_api(const PJRT_Api* api);

// The calls below return NULL on success, else a malloc'd message (the plugin's) that the caller
// frees.

// xm_profiler_create creates a profiler with the serialized options; *out is set on success.
char* xm_profiler_create(const xm_prof_api* p, const char* options, size_t size, xm_prof_handle** out);
char* xm_profiler_start(const xm_prof_api* p, xm_prof_handle* h);
char* xm_profiler_stop(const xm_prof_api* p, xm_prof_handle* h);
// xm_profiler_collect copies the serialized XSpace into a malloc'd *data of *size bytes (NULL
// and 0 when the profiler collected nothing); the caller frees *data.
char* xm_profiler_collect(const xm_prof_api* p, xm_prof_handle* h, uint8_t** data, size_t* size);
char* xm_profiler_destroy(const xm_prof_api* p, xm_prof_handle* h);

#ifdef __cplusplus
}
#endif

#endif  // XLAMESH_CC_XLAMESH_PROFILER_H_
