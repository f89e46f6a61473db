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

// The plugin's side of a key-value exchange, for the bridge's own test (kvstore.go,
// kvBridgeExchange): what a GPU plugin does with the callbacks during client creation.
typedef struct {
  int code;
  char message[256];
} xm_kv_test_error;

static xm_kv_test_error kv_test_last;

static PJRT_Error* kv_test_callback_error(PJRT_Error_Code code, const char* message, size_t size) {
  kv_test_last.code = (int)code;
  size_t n = size < sizeof kv_test_last.message - 1 ? size : sizeof kv_test_last.message - 1;
  memcpy(kv_test_last.message, message, n);
  kv_test_last.message[n] = '\0';
  return (PJRT_Error*)&kv_test_last;  // a non-NULL marker; never dereferenced as a PJRT_Error
}

// xm_kv_exchange puts key=value, gets it back with a blocking get, then try-gets `missing`.
// It fills got (capacity cap) with the value read and returns the code the try-get failed with
// (0 if it did not fail), or -1 if the put or the get failed (message in *msg).
int xm_kv_exchange(void* user_arg, const char* key, const char* value, const char* missing, char* got,
                   size_t cap, const char** msg) {
  PJRT_CallbackError callback_error = kv_test_callback_error;
  PJRT_KeyValuePutCallback_Args put = {0};
  put.struct_size = PJRT_KeyValuePutCallback_Args_STRUCT_SIZE;
  put.key = key;
  put.key_size = strlen(key);
  put.value = value;
  put.value_size = strlen(value);
  put.callback_error = &callback_error;
  put.user_arg = user_arg;
  *msg = kv_test_last.message;
  if (xm_kv_put(&put) != NULL) return -1;
  PJRT_KeyValueGetCallback_Args get = {0};
  get.struct_size = PJRT_KeyValueGetCallback_Args_STRUCT_SIZE;
  get.key = key;
  get.key_size = strlen(key);
  get.timeout_in_ms = 1000;
  get.callback_error = &callback_error;
  get.user_arg = user_arg;
  if (xm_kv_get(&get) != NULL) return -1;
  size_t n = get.value_size < cap - 1 ? get.value_size : cap - 1;
  memcpy(got, get.value, n);
  got[n] = '\0';
  get.value_deleter_callback(get.value);
  PJRT_KeyValueTryGetCallback_Args try_get = {0};
  try_get.struct_size = PJRT_KeyValueTryGetCallback_Args_STRUCT_SIZE;
  try_get.key = missing;
  try_get.key_size = strlen(missing);
  try_get.callback_error = &callback_error;
  try_get.user_arg = user_arg;
  kv_test_last.code = 0;
  if (xm_kv_try_get(&try_get) == NULL) {
    try_get.value_deleter_callback(try_get.value);
    return 0;
  }
  return kv_test_last.code;
}
