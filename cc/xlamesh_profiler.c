// xlamesh_profiler.c: see xlamesh_profiler.h.
#include "xlamesh_profiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The PJRT_Profiler_Extension: a PJRT_Extension_Base followed by the table pointer (and a
// traceme context id this binding does not use).
typedef struct {
  size_t struct_size;
  PJRT_Extension_Type type;
  PJRT_Extension_Base* next;
  const xm_prof_api* profiler_api;
} xm_prof_extension;

const xm_prof_api* xm_profiler_api(const PJRT_Api* api) {
  if (api == NULL || api->struct_size < offsetof(PJRT_Api, extension_start) + sizeof(api->extension_start)) {
    return NULL;
  }
  const PJRT_Extension_Base* ext = api->extension_start;
  for (int i = 0; ext != NULL && i < 64; i++, ext = ext->next) {
    if (ext->type != PJRT_Extension_Type_Profiler) continue;
    if (ext->struct_size < offsetof(xm_prof_extension, profiler_api) + sizeof(void*)) return NULL;
    const xm_prof_api* p = ((const xm_prof_extension*)ext)->profiler_api;
    if (p == NULL || p->struct_size < offsetof(xm_prof_api, collect_data) + sizeof(p->collect_data)) return NULL;
    if (p->error_destroy == NULL || p->error_message == NULL || p->create == NULL || p->destroy == NULL ||
        p->start == NULL || p->stop == NULL || p->collect_data == NULL) {
      return NULL;
    }
    return p;
  }
  return NULL;
}

// take turns a profiler error into a malloc'd message and destroys it.
static char* take(const xm_prof_api* p, xm_prof_error* err, const char* op) {
  if (err == NULL) return NULL;
  xm_prof_error_message_args m = {0};
  m.struct_size = sizeof m;
  m.error = err;
  p->error_message(&m);
  const char* msg = m.message != NULL ? m.message : "";
  int n = (int)m.message_size;
  size_t cap = strlen(op) + 2 + (size_t)n + 1;
  char* out = malloc(cap);
  if (out != NULL) snprintf(out, cap, "%s: %.*s", op, n, msg);
  xm_prof_error_destroy_args d = {0};
  d.struct_size = sizeof d;
  d.error = err;
  p->error_destroy(&d);
  return out != NULL ? out : strdup("profiler: out of memory");
}

char* xm_profiler_create(const xm_prof_api* p, const char* options, size_t size, xm_prof_handle** out) {
  xm_prof_create_args a = {0};
  a.struct_size = sizeof a;
  a.options = options;
  a.options_size = size;
  char* msg = take(p, p->create(&a), "create");
  if (msg == NULL && a.profiler == NULL) return strdup("create: the plugin returned no profiler");
  *out = a.profiler;
  return msg;
}

char* xm_profiler_start(const xm_prof_api* p, xm_prof_handle* h) {
  xm_prof_handle_args a = {sizeof a, h};
  return take(p, p->start(&a), "start");
}

char* xm_profiler_stop(const xm_prof_api* p, xm_prof_handle* h) {
  xm_prof_handle_args a = {sizeof a, h};
  return take(p, p->stop(&a), "stop");
}

char* xm_profiler_destroy(const xm_prof_api* p, xm_prof_handle* h) {
  xm_prof_handle_args a = {sizeof a, h};
  return take(p, p->destroy(&a), "destroy");
}

// Collection is one or two calls with the same args. The first (buffer NULL) sizes the data; XLA's
// own implementation also serializes it into a buffer the profiler owns and returns that in
// buffer, and then does nothing on a second call, so that buffer is copied when there is one.
// Otherwise a second call fills a buffer of ours, as the header of the C API describes.
char* xm_profiler_collect(const xm_prof_api* p, xm_prof_handle* h, uint8_t** data, size_t* size) {
  *data = NULL;
  *size = 0;
  xm_prof_collect_args a = {0};
  a.struct_size = sizeof a;
  a.profiler = h;
  char* msg = take(p, p->collect_data(&a), "collect data");
  if (msg != NULL || a.buffer_size_in_bytes == 0) return msg;
  size_t n = a.buffer_size_in_bytes;
  uint8_t* buf = malloc(n);
  if (buf == NULL) return strdup("collect data: out of memory");
  if (a.buffer != NULL) {
    memcpy(buf, a.buffer, n);
  } else {
    a.buffer = buf;
    if ((msg = take(p, p->collect_data(&a), "collect data")) != NULL) {
      free(buf);
      return msg;
    }
    if (a.buffer_size_in_bytes < n) n = a.buffer_size_in_bytes;
  }
  *data = buf;
  *size = n;
  return NULL;
}
