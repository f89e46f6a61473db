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

char* xm_probe(const char* path, const PJRT_Api** api, size_t* struct_size, int* major, int* minor,
               int* code) {
  if (path == NULL || api == NULL || struct_size == NULL || major == NULL || minor == NULL ||
      code == NULL) {
    if (code != NULL) *code = XM_ERR_BAD_ARGUMENT;
    return errorf("xm_probe: NULL argument");
  }
  dlerror();  // clear
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
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
  // Every field is read while the library is loaded; on failure it is closed only afterwards.
  size_t size = a->struct_size;
  if (size < XM_MIN_API_STRUCT_SIZE) {
    dlclose(handle);
    *code = XM_ERR_SMALL_API;
    return errorf("PJRT_Api struct_size %zu is smaller than %d, the size at PJRT C API 0.%d", size,
                  XM_MIN_API_STRUCT_SIZE, XM_MIN_API_MINOR);
  }
  *api = a;
  *struct_size = size;
  *major = a->pjrt_api_version.major_version;
  *minor = a->pjrt_api_version.minor_version;
  return NULL;  // the handle stays open: plugins live as long as the process
}

int xm_has(const PJRT_Api* api, size_t offset) {
  if (api == NULL || offset + sizeof(void*) > api->struct_size) return 0;
  void* fn;
  memcpy(&fn, (const char*)api + offset, sizeof fn);
  return fn != NULL;
}

void xm_error_take(const PJRT_Api* api, PJRT_Error* err, int* code, char** msg) {
  *code = PJRT_Error_Code_UNKNOWN;
  *msg = NULL;
  if (err == NULL) return;
  PJRT_Error_Message_Args m = {0};
  m.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  m.error = err;
  api->PJRT_Error_Message(&m);
  *msg = errorf("%.*s", (int)m.message_size, m.message != NULL ? m.message : "");
  PJRT_Error_GetCode_Args g = {0};
  g.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  g.error = err;
  PJRT_Error* code_err = api->PJRT_Error_GetCode(&g);
  if (code_err == NULL) {
    *code = (int)g.code;
  } else {
    PJRT_Error_Destroy_Args d = {0};
    d.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
    d.error = code_err;
    api->PJRT_Error_Destroy(&d);
  }
  PJRT_Error_Destroy_Args d = {0};
  d.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  d.error = err;
  api->PJRT_Error_Destroy(&d);
}

#define XM_DEFINE(name)                                                        \
  PJRT_Error* xm_##name(const PJRT_Api* api, PJRT_##name##_Args* args) {       \
    args->struct_size = PJRT_##name##_Args_STRUCT_SIZE;                        \
    return api->PJRT_##name(args);                                             \
  }
XM_FUNCTIONS(XM_DEFINE)
#undef XM_DEFINE

void xm_serialized_free(PJRT_Executable_Serialize_Args* args) {
  if (args->serialized_executable_deleter != NULL && args->serialized_executable != NULL) {
    args->serialized_executable_deleter(args->serialized_executable);
  }
}
