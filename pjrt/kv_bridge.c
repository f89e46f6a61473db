// kv_bridge.c: the C trampolines PJRT calls for a client's key-value store; each calls the Go
// store through the functions kvstore.go exports. cgo-only (it needs _cgo_export.h), so it lives
// here rather than in ../cc.
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "xlamesh_pjrt.h"

static void kv_free(char* value) { free(value); }

// kv_error turns a Go failure into a PJRT_Error made by the plugin's own callback_error.
static PJRT_Error* kv_error(PJRT_CallbackError* callback_error, int code, char* msg) {
  PJRT_Error* err = NULL;
  if (callback_error != NULL && *callback_error != NULL) {
    err = (*callback_error)((PJRT_Error_Code)code, msg != NULL ? msg : "", msg != NULL ? strlen(msg) : 0);
  }
  free(msg);
  return err;
}

PJRT_Error* xm_kv_get(PJRT_KeyValueGetCallback_Args* args) {
  char* value = NULL;
  size_t size = 0;
  int code = 0;
  char* msg = NULL;
  xmGoKVGet(*(uintptr_t*)args->user_arg, (char*)args->key, args->key_size, args->timeout_in_ms, &value,
            &size, &code, &msg);
  if (code != 0) return kv_error(args->callback_error, code, msg);
  args->value = value;
  args->value_size = size;
  args->value_deleter_callback = kv_free;
  return NULL;
}

PJRT_Error* xm_kv_try_get(PJRT_KeyValueTryGetCallback_Args* args) {
  char* value = NULL;
  size_t size = 0;
  int code = 0;
  char* msg = NULL;
  xmGoKVTryGet(*(uintptr_t*)args->user_arg, (char*)args->key, args->key_size, &value, &size, &code, &msg);
  if (code != 0) return kv_error(args->callback_error, code, msg);
  args->value = value;
  args->value_size = size;
  args->value_deleter_callback = kv_free;
  return NULL;
}

PJRT_Error* xm_kv_put(PJRT_KeyValuePutCallback_Args* args) {
  int code = 0;
  char* msg = NULL;
  xmGoKVPut(*(uintptr_t*)args->user_arg, (char*)args->key, args->key_size, (char*)args->value,
            args->value_size, &code, &msg);
  if (code != 0) return kv_error(args->callback_error, code, msg);
  return NULL;
}
