// xlamesh_pjrt.c: see xlamesh_pjrt.h.
#include "xlamesh_pjrt.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// errorf returns a malloc'd message formatted like printf.
static char* errorf(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf(NULL, 0, format, ap);
  va_end(ap);
  if (n < 0) n = 0;
  char* msg = malloc((size_t)n + 1);
  if (msg == NULL) return NULL;
  va_start(ap, format);
  vsnprintf(msg, (size_t)n + 1, format, ap);
  va_end(ap);
  return msg;
}

// take_error converts a PJRT_Error into a malloc'd message and its code, and destroys it.
// It returns NULL when err is NULL.
static char* take_error(const PJRT_Api* api, PJRT_Error* err, const char* what, int* code) {
  if (err == NULL) return NULL;
  PJRT_Error_Message_Args m = {0};
  m.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  m.error = err;
  api->PJRT_Error_Message(&m);
  PJRT_Error_GetCode_Args g = {0};
  g.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  g.error = err;
  *code = PJRT_Error_Code_UNKNOWN;
  if (api->PJRT_Error_GetCode(&g) == NULL) *code = (int)g.code;
  char* msg = errorf("%s: %.*s", what, (int)m.message_size, m.message);
  PJRT_Error_Destroy_Args d = {0};
  d.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  d.error = err;
  api->PJRT_Error_Destroy(&d);
  return msg;
}

// An API pointer is usable for a call only if its table reaches that function's slot.
#define HAS_FN(api, fn) \
  ((api)->struct_size >= offsetof(PJRT_Api, fn) + sizeof((api)->fn) && (api)->fn != NULL)

#define REQUIRE_FN(api, fn, code)                                      \
  do {                                                                 \
    if (!HAS_FN(api, fn)) {                                            \
      *(code) = PJRT_Error_Code_UNIMPLEMENTED;                         \
      return errorf("plugin does not implement %s", #fn);              \
    }                                                                  \
  } while (0)

char* xm_probe(const char* path, const PJRT_Api** api, int* major, int* minor, int* code) {
  if (path == NULL || api == NULL || major == NULL || minor == NULL || code == NULL) {
    if (code != NULL) *code = XM_ERR_BAD_ARGUMENT;
    return errorf("xm_probe: NULL argument");
  }
  dlerror();  // clear
  void* handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (handle == NULL) {
    const char* why = dlerror();
    *code = XM_ERR_DLOPEN;
    return errorf("%s", why != NULL ? why : "dlopen failed");
  }
  typedef const PJRT_Api* (*get_api_fn)(void);
  get_api_fn get_api = (get_api_fn)dlsym(handle, "GetPjrtApi");
  if (get_api == NULL) {
    dlclose(handle);
    *code = XM_ERR_NO_SYMBOL;
    return errorf("no GetPjrtApi symbol: not a PJRT plugin");
  }
  const PJRT_Api* a = get_api();
  if (a == NULL) {
    dlclose(handle);
    *code = XM_ERR_NULL_API;
    return errorf("GetPjrtApi returned NULL");
  }
  size_t need = offsetof(PJRT_Api, pjrt_api_version) + sizeof(a->pjrt_api_version);
  if (a->struct_size < need) {
    dlclose(handle);
    *code = XM_ERR_SMALL_API;
    return errorf("PJRT_Api struct_size %zu is smaller than %zu", a->struct_size, need);
  }
  *api = a;
  *major = a->pjrt_api_version.major_version;
  *minor = a->pjrt_api_version.minor_version;
  // The handle stays open on purpose: the plugin is about to be loaded for real.
  return NULL;
}

// copy_text copies a (pointer, size) string into a fixed buffer, truncating.
static void copy_text(char* dst, size_t cap, const char* src, size_t n) {
  if (n >= cap) n = cap - 1;
  if (src != NULL && n > 0) memcpy(dst, src, n);
  dst[n] = '\0';
}

// read_attributes fills the attribute fields of out from a PJRT_NamedValue list.
static void read_attributes(const PJRT_NamedValue* attrs, size_t n, xm_device_info* out) {
  out->num_attributes = (int)n;
  for (size_t i = 0; i < n; i++) {
    const PJRT_NamedValue* v = &attrs[i];
    if (v->name == NULL) continue;
    if (v->name_size == 6 && strncmp(v->name, "coords", 6) == 0 &&
        v->type == PJRT_NamedValue_kInt64List) {
      size_t k = v->value_size < XM_MAX_COORDS ? v->value_size : XM_MAX_COORDS;
      for (size_t j = 0; j < k; j++) out->coords[j] = v->int64_array_value[j];
      out->num_coords = (int)k;
    } else if (v->name_size == 12 && strncmp(v->name, "core_on_chip", 12) == 0 &&
               v->type == PJRT_NamedValue_kInt64) {
      out->has_core_on_chip = 1;
      out->core_on_chip = v->int64_value;
    } else if (v->name_size == 11 && strncmp(v->name, "slice_index", 11) == 0 &&
               v->type == PJRT_NamedValue_kInt64) {
      out->has_slice_index = 1;
      out->slice_index = v->int64_value;
    }
  }
}

char* xm_device_info_get(const PJRT_Api* api, PJRT_Device* device, xm_device_info* out, int* code) {
  if (api == NULL || device == NULL || out == NULL || code == NULL) {
    if (code != NULL) *code = XM_ERR_BAD_ARGUMENT;
    return errorf("xm_device_info_get: NULL argument");
  }
  memset(out, 0, sizeof(*out));
  out->local_hardware_id = -1;

  REQUIRE_FN(api, PJRT_Device_GetDescription, code);
  PJRT_Device_GetDescription_Args gd = {0};
  gd.struct_size = PJRT_Device_GetDescription_Args_STRUCT_SIZE;
  gd.device = device;
  char* msg = take_error(api, api->PJRT_Device_GetDescription(&gd), "PJRT_Device_GetDescription", code);
  if (msg != NULL) return msg;
  PJRT_DeviceDescription* desc = gd.device_description;

  REQUIRE_FN(api, PJRT_DeviceDescription_Id, code);
  PJRT_DeviceDescription_Id_Args id = {0};
  id.struct_size = PJRT_DeviceDescription_Id_Args_STRUCT_SIZE;
  id.device_description = desc;
  msg = take_error(api, api->PJRT_DeviceDescription_Id(&id), "PJRT_DeviceDescription_Id", code);
  if (msg != NULL) return msg;
  out->id = id.id;

  REQUIRE_FN(api, PJRT_DeviceDescription_ProcessIndex, code);
  PJRT_DeviceDescription_ProcessIndex_Args pi = {0};
  pi.struct_size = PJRT_DeviceDescription_ProcessIndex_Args_STRUCT_SIZE;
  pi.device_description = desc;
  msg = take_error(api, api->PJRT_DeviceDescription_ProcessIndex(&pi),
                   "PJRT_DeviceDescription_ProcessIndex", code);
  if (msg != NULL) return msg;
  out->process_index = pi.process_index;

  REQUIRE_FN(api, PJRT_DeviceDescription_Kind, code);
  PJRT_DeviceDescription_Kind_Args k = {0};
  k.struct_size = PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE;
  k.device_description = desc;
  msg = take_error(api, api->PJRT_DeviceDescription_Kind(&k), "PJRT_DeviceDescription_Kind", code);
  if (msg != NULL) return msg;
  copy_text(out->kind, sizeof(out->kind), k.device_kind, k.device_kind_size);

  if (HAS_FN(api, PJRT_DeviceDescription_ToString)) {
    PJRT_DeviceDescription_ToString_Args s = {0};
    s.struct_size = PJRT_DeviceDescription_ToString_Args_STRUCT_SIZE;
    s.device_description = desc;
    msg = take_error(api, api->PJRT_DeviceDescription_ToString(&s),
                     "PJRT_DeviceDescription_ToString", code);
    if (msg != NULL) return msg;
    copy_text(out->to_string, sizeof(out->to_string), s.to_string, s.to_string_size);
  }

  if (HAS_FN(api, PJRT_DeviceDescription_Attributes)) {
    PJRT_DeviceDescription_Attributes_Args at = {0};
    at.struct_size = PJRT_DeviceDescription_Attributes_Args_STRUCT_SIZE;
    at.device_description = desc;
    msg = take_error(api, api->PJRT_DeviceDescription_Attributes(&at),
                     "PJRT_DeviceDescription_Attributes", code);
    if (msg != NULL) return msg;
    read_attributes(at.attributes, at.num_attributes, out);
  }

  REQUIRE_FN(api, PJRT_Device_IsAddressable, code);
  PJRT_Device_IsAddressable_Args ad = {0};
  ad.struct_size = PJRT_Device_IsAddressable_Args_STRUCT_SIZE;
  ad.device = device;
  msg = take_error(api, api->PJRT_Device_IsAddressable(&ad), "PJRT_Device_IsAddressable", code);
  if (msg != NULL) return msg;
  out->addressable = ad.is_addressable ? 1 : 0;

  if (out->addressable && HAS_FN(api, PJRT_Device_LocalHardwareId)) {
    PJRT_Device_LocalHardwareId_Args lh = {0};
    lh.struct_size = PJRT_Device_LocalHardwareId_Args_STRUCT_SIZE;
    lh.device = device;
    msg = take_error(api, api->PJRT_Device_LocalHardwareId(&lh), "PJRT_Device_LocalHardwareId", code);
    if (msg != NULL) return msg;
    out->local_hardware_id = lh.local_hardware_id;
  }
  return NULL;
}

static void destroy_executable(const PJRT_Api* api, PJRT_Executable* e) {
  PJRT_Executable_Destroy_Args d = {0};
  d.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE;
  d.executable = e;
  PJRT_Error* err = api->PJRT_Executable_Destroy(&d);
  if (err != NULL) {
    int ignored;
    free(take_error(api, err, "PJRT_Executable_Destroy", &ignored));
  }
}

// executable_info_fill does the work of xm_executable_info_get on an unloaded executable.
static char* executable_info_fill(const PJRT_Api* api, PJRT_Executable* e, xm_executable_info* out,
                                  int* code) {
  REQUIRE_FN(api, PJRT_Executable_NumOutputs, code);
  PJRT_Executable_NumOutputs_Args no = {0};
  no.struct_size = PJRT_Executable_NumOutputs_Args_STRUCT_SIZE;
  no.executable = e;
  char* msg = take_error(api, api->PJRT_Executable_NumOutputs(&no), "PJRT_Executable_NumOutputs", code);
  if (msg != NULL) return msg;
  out->num_outputs = no.num_outputs;

  REQUIRE_FN(api, PJRT_Executable_NumPartitions, code);
  PJRT_Executable_NumPartitions_Args np = {0};
  np.struct_size = PJRT_Executable_NumPartitions_Args_STRUCT_SIZE;
  np.executable = e;
  msg = take_error(api, api->PJRT_Executable_NumPartitions(&np), "PJRT_Executable_NumPartitions", code);
  if (msg != NULL) return msg;
  out->num_partitions = np.num_partitions;

  REQUIRE_FN(api, PJRT_Executable_OutputElementTypes, code);
  PJRT_Executable_OutputElementTypes_Args et = {0};
  et.struct_size = PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE;
  et.executable = e;
  msg = take_error(api, api->PJRT_Executable_OutputElementTypes(&et),
                   "PJRT_Executable_OutputElementTypes", code);
  if (msg != NULL) return msg;

  REQUIRE_FN(api, PJRT_Executable_OutputDimensions, code);
  PJRT_Executable_OutputDimensions_Args od = {0};
  od.struct_size = PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE;
  od.executable = e;
  msg = take_error(api, api->PJRT_Executable_OutputDimensions(&od),
                   "PJRT_Executable_OutputDimensions", code);
  if (msg != NULL) return msg;
  if (et.num_output_types != out->num_outputs || od.num_outputs != out->num_outputs) {
    *code = PJRT_Error_Code_INTERNAL;
    return errorf("plugin reported %zu outputs, %zu output types and %zu output shapes",
                  out->num_outputs, et.num_output_types, od.num_outputs);
  }

  size_t n = out->num_outputs, total = 0;
  out->element_types = calloc(n > 0 ? n : 1, sizeof(int32_t));
  out->ranks = calloc(n > 0 ? n : 1, sizeof(size_t));
  for (size_t i = 0; i < n; i++) total += od.dim_sizes[i];
  out->dims = calloc(total > 0 ? total : 1, sizeof(int64_t));
  if (out->element_types == NULL || out->ranks == NULL || out->dims == NULL) {
    *code = PJRT_Error_Code_RESOURCE_EXHAUSTED;
    return errorf("out of memory reading %zu output shapes", n);
  }
  for (size_t i = 0; i < n; i++) {
    out->element_types[i] = (int32_t)et.output_types[i];
    out->ranks[i] = od.dim_sizes[i];
  }
  if (total > 0) memcpy(out->dims, od.dims, total * sizeof(int64_t));

  if (HAS_FN(api, PJRT_Executable_Fingerprint)) {
    PJRT_Executable_Fingerprint_Args fp = {0};
    fp.struct_size = PJRT_Executable_Fingerprint_Args_STRUCT_SIZE;
    fp.executable = e;
    PJRT_Error* err = api->PJRT_Executable_Fingerprint(&fp);
    if (err != NULL) {
      int ignored;  // Unimplemented on some plugins: leave the fingerprint NULL.
      free(take_error(api, err, "PJRT_Executable_Fingerprint", &ignored));
    } else if (fp.executable_fingerprint != NULL) {
      out->fingerprint = errorf("%.*s", (int)fp.executable_fingerprint_size, fp.executable_fingerprint);
    }
  }
  return NULL;
}

char* xm_executable_info_get(const PJRT_Api* api, PJRT_LoadedExecutable* executable,
                             xm_executable_info* out, int* code) {
  if (api == NULL || executable == NULL || out == NULL || code == NULL) {
    if (code != NULL) *code = XM_ERR_BAD_ARGUMENT;
    return errorf("xm_executable_info_get: NULL argument");
  }
  memset(out, 0, sizeof(*out));
  REQUIRE_FN(api, PJRT_LoadedExecutable_GetExecutable, code);
  PJRT_LoadedExecutable_GetExecutable_Args ge = {0};
  ge.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  ge.loaded_executable = executable;
  char* msg = take_error(api, api->PJRT_LoadedExecutable_GetExecutable(&ge),
                         "PJRT_LoadedExecutable_GetExecutable", code);
  if (msg != NULL) return msg;
  msg = executable_info_fill(api, ge.executable, out, code);
  destroy_executable(api, ge.executable);
  if (msg != NULL) xm_executable_info_free(out);
  return msg;
}

void xm_executable_info_free(xm_executable_info* info) {
  if (info == NULL) return;
  free(info->element_types);
  free(info->ranks);
  free(info->dims);
  free(info->fingerprint);
  memset(info, 0, sizeof(*info));
}

char* xm_executable_optimized_program(const PJRT_Api* api, PJRT_LoadedExecutable* executable,
                                      char** code, size_t* code_size, char** format, int* code_out) {
  if (api == NULL || executable == NULL || code == NULL || code_size == NULL || format == NULL ||
      code_out == NULL) {
    if (code_out != NULL) *code_out = XM_ERR_BAD_ARGUMENT;
    return errorf("xm_executable_optimized_program: NULL argument");
  }
  *code = NULL;
  *code_size = 0;
  *format = NULL;
  REQUIRE_FN(api, PJRT_LoadedExecutable_GetExecutable, code_out);
  REQUIRE_FN(api, PJRT_Executable_OptimizedProgram, code_out);
  PJRT_LoadedExecutable_GetExecutable_Args ge = {0};
  ge.struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE;
  ge.loaded_executable = executable;
  char* msg = take_error(api, api->PJRT_LoadedExecutable_GetExecutable(&ge),
                         "PJRT_LoadedExecutable_GetExecutable", code_out);
  if (msg != NULL) return msg;

  PJRT_Program program = {0};
  program.struct_size = PJRT_Program_STRUCT_SIZE;
  PJRT_Executable_OptimizedProgram_Args op = {0};
  op.struct_size = PJRT_Executable_OptimizedProgram_Args_STRUCT_SIZE;
  op.executable = ge.executable;
  op.program = &program;
  // First call: the size; second call: the bytes.
  msg = take_error(api, api->PJRT_Executable_OptimizedProgram(&op), "PJRT_Executable_OptimizedProgram", code_out);
  if (msg == NULL) {
    char* buf = malloc(program.code_size > 0 ? program.code_size : 1);
    if (buf == NULL) {
      *code_out = PJRT_Error_Code_RESOURCE_EXHAUSTED;
      msg = errorf("out of memory for a %zu-byte optimized program", program.code_size);
    } else {
      program.code = buf;
      msg = take_error(api, api->PJRT_Executable_OptimizedProgram(&op), "PJRT_Executable_OptimizedProgram",
                       code_out);
      if (msg == NULL) {
        *code = buf;
        *code_size = program.code_size;
        *format = errorf("%.*s", (int)program.format_size, program.format != NULL ? program.format : "");
      } else {
        free(buf);
      }
    }
  }
  destroy_executable(api, ge.executable);
  return msg;
}
