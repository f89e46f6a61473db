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

// The plugin's side of a key-value exchange, for the bridge's own tests (kvstore.go,
// kvBridgeExchange and kvBridgeConcurrent): what a GPU plugin does with the callbacks during client
// creation, from one thread or from several at once. Like a plugin's, the callback_error here makes
// a fresh error object per failure, so concurrent callers never share one.
#include <pthread.h>
#include <stdio.h>

typedef struct {
  int code;
  char message[256];
} xm_kv_test_error;

static PJRT_Error* kv_test_callback_error(PJRT_Error_Code code, const char* message, size_t size) {
  xm_kv_test_error* e = calloc(1, sizeof *e);
  if (e == NULL) return NULL;
  e->code = (int)code;
  size_t n = size < sizeof e->message - 1 ? size : sizeof e->message - 1;
  memcpy(e->message, message, n);
  e->message[n] = '\0';
  return (PJRT_Error*)e;  // an opaque error to the caller, as the plugin's own would be
}

// kv_test_take reads the code and message of an error made by kv_test_callback_error and frees it.
static int kv_test_take(PJRT_Error* err, char* msg, size_t cap) {
  xm_kv_test_error* e = (xm_kv_test_error*)err;
  if (msg != NULL && cap > 0) snprintf(msg, cap, "%s", e->message);
  int code = e->code;
  free(e);
  return code;
}

static PJRT_CallbackError kv_test_error_fn = kv_test_callback_error;

static PJRT_Error* kv_test_put(void* user_arg, const char* key, const char* value) {
  PJRT_KeyValuePutCallback_Args put = {0};
  put.struct_size = PJRT_KeyValuePutCallback_Args_STRUCT_SIZE;
  put.key = key;
  put.key_size = strlen(key);
  put.value = value;
  put.value_size = strlen(value);
  put.callback_error = &kv_test_error_fn;
  put.user_arg = user_arg;
  return xm_kv_put(&put);
}

// kv_test_get runs a blocking get; on success it copies the value into got (capacity cap) and
// frees it through the deleter the callback set, as the plugin does.
static PJRT_Error* kv_test_get(void* user_arg, const char* key, int timeout_ms, char* got, size_t cap) {
  PJRT_KeyValueGetCallback_Args get = {0};
  get.struct_size = PJRT_KeyValueGetCallback_Args_STRUCT_SIZE;
  get.key = key;
  get.key_size = strlen(key);
  get.timeout_in_ms = timeout_ms;
  get.callback_error = &kv_test_error_fn;
  get.user_arg = user_arg;
  PJRT_Error* err = xm_kv_get(&get);
  if (err != NULL) return err;
  size_t n = get.value_size < cap - 1 ? get.value_size : cap - 1;
  memcpy(got, get.value, n);
  got[n] = '\0';
  get.value_deleter_callback(get.value);
  return NULL;
}

// kv_test_try_get runs a try-get; a found value is copied and freed like kv_test_get's.
static PJRT_Error* kv_test_try_get(void* user_arg, const char* key, char* got, size_t cap) {
  PJRT_KeyValueTryGetCallback_Args try_get = {0};
  try_get.struct_size = PJRT_KeyValueTryGetCallback_Args_STRUCT_SIZE;
  try_get.key = key;
  try_get.key_size = strlen(key);
  try_get.callback_error = &kv_test_error_fn;
  try_get.user_arg = user_arg;
  PJRT_Error* err = xm_kv_try_get(&try_get);
  if (err != NULL) return err;
  size_t n = try_get.value_size < cap - 1 ? try_get.value_size : cap - 1;
  memcpy(got, try_get.value, n);
  got[n] = '\0';
  try_get.value_deleter_callback(try_get.value);
  return NULL;
}

// xm_kv_exchange puts key=value, gets it back with a blocking get, then try-gets `missing`.
// It fills got (capacity cap) with the value read and returns the code the try-get failed with
// (0 if it did not fail), or -1 if the put or the get failed (message in msg, capacity msg_cap).
int xm_kv_exchange(void* user_arg, const char* key, const char* value, const char* missing, char* got,
                   size_t cap, char* msg, size_t msg_cap) {
  PJRT_Error* err = kv_test_put(user_arg, key, value);
  if (err == NULL) err = kv_test_get(user_arg, key, 1000, got, cap);
  if (err != NULL) {
    kv_test_take(err, msg, msg_cap);
    return -1;
  }
  char scratch[256];
  err = kv_test_try_get(user_arg, missing, scratch, sizeof scratch);
  return err == NULL ? 0 : kv_test_take(err, NULL, 0);
}

// One thread of xm_kv_concurrent: its index, the shared arguments, and its first failure.
typedef struct {
  void* user_arg;
  int thread, threads, rounds, timeout_ms;
  char failure[512];
} kv_thread;

static void* kv_thread_main(void* p) {
  kv_thread* t = p;
  char key[128], want[128], got[256], msg[256];
  for (int r = 0; r < t->rounds && t->failure[0] == '\0'; r++) {
    // Publish this thread's value for round r.
    snprintf(key, sizeof key, "thread/%d/round/%d", t->thread, r);
    snprintf(want, sizeof want, "value of thread %d in round %d", t->thread, r);
    PJRT_Error* err = kv_test_put(t->user_arg, key, want);
    if (err != NULL) {
      kv_test_take(err, msg, sizeof msg);
      snprintf(t->failure, sizeof t->failure, "thread %d: put %s: %s", t->thread, key, msg);
      break;
    }
    // Wait for the next thread's value of the same round: a blocking get that may have to wait.
    int next = (t->thread + 1) % t->threads;
    snprintf(key, sizeof key, "thread/%d/round/%d", next, r);
    snprintf(want, sizeof want, "value of thread %d in round %d", next, r);
    err = kv_test_get(t->user_arg, key, t->timeout_ms, got, sizeof got);
    if (err != NULL) {
      int code = kv_test_take(err, msg, sizeof msg);
      snprintf(t->failure, sizeof t->failure, "thread %d: get %s: code %d: %s", t->thread, key, code, msg);
      break;
    }
    if (strcmp(got, want) != 0) {
      snprintf(t->failure, sizeof t->failure, "thread %d: get %s: got \"%s\", want \"%s\"", t->thread, key, got, want);
      break;
    }
    // A key nobody puts: try_get fails at once with NOT_FOUND, a get with a short timeout with
    // DEADLINE_EXCEEDED.
    snprintf(key, sizeof key, "missing/%d/%d", t->thread, r);
    err = kv_test_try_get(t->user_arg, key, got, sizeof got);
    int code = err == NULL ? 0 : kv_test_take(err, msg, sizeof msg);
    if (code != PJRT_Error_Code_NOT_FOUND) {
      snprintf(t->failure, sizeof t->failure, "thread %d: try_get %s: code %d, want NOT_FOUND (%d)", t->thread, key,
               code, PJRT_Error_Code_NOT_FOUND);
      break;
    }
    if (r == 0) {
      err = kv_test_get(t->user_arg, key, 20, got, sizeof got);
      code = err == NULL ? 0 : kv_test_take(err, msg, sizeof msg);
      if (code != PJRT_Error_Code_DEADLINE_EXCEEDED) {
        snprintf(t->failure, sizeof t->failure, "thread %d: get %s with a 20 ms timeout: code %d, want DEADLINE_EXCEEDED (%d)",
                 t->thread, key, code, PJRT_Error_Code_DEADLINE_EXCEEDED);
        break;
      }
    }
  }
  return NULL;
}

// xm_kv_concurrent runs `threads` C threads at once, each doing `rounds` rounds of: put its own
// key, blocking get of the next thread's key of the same round (timeout_ms), try_get of a
// missing key (NOT_FOUND) and, in round 0, a get of it with a 20 ms timeout (DEADLINE_EXCEEDED).
// It returns 0, or -1 with the first failure in msg (capacity cap).
int xm_kv_concurrent(void* user_arg, int threads, int rounds, int timeout_ms, char* msg, size_t cap) {
  if (threads < 1 || threads > 64) {
    snprintf(msg, cap, "threads = %d, want 1..64", threads);
    return -1;
  }
  kv_thread ts[64];
  pthread_t ids[64];
  int started = 0;
  for (int i = 0; i < threads; i++) {
    ts[i] = (kv_thread){.user_arg = user_arg, .thread = i, .threads = threads, .rounds = rounds, .timeout_ms = timeout_ms};
    if (pthread_create(&ids[i], NULL, kv_thread_main, &ts[i]) != 0) {
      snprintf(msg, cap, "pthread_create failed for thread %d", i);
      break;
    }
    started++;
  }
  for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
  if (started < threads) return -1;
  for (int i = 0; i < threads; i++) {
    if (ts[i].failure[0] != '\0') {
      snprintf(msg, cap, "%s", ts[i].failure);
      return -1;
    }
  }
  return 0;
}
