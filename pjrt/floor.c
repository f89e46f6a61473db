// The binding's floor, for benchmarks only (pjrt's BenchmarkFloor*): executions of one
// executable in a C loop with nothing of Go in between. Set beside the same work driven from Go
// (pjrt's BenchmarkExecute*, jit's BenchmarkCall and BenchmarkChained*), it separates the cost
// of the binding and of the jit layer from the plugin's own cost per execution.
#include <string.h>

#include "xlamesh_pjrt.h"

enum { XM_FLOOR_MAX_DEVICES = 64 };

// floor_execute is one execution: xm_execute as Executable.Execute makes it, or with raw set,
// without completion events or in-flight accounting (a NULL counter).
static PJRT_Error* floor_execute(const PJRT_Api* api, xm_inflight* fl, PJRT_LoadedExecutable* exe,
                                 PJRT_Buffer* const* args, size_t nd, size_t na, PJRT_Buffer** outs,
                                 size_t no, int raw) {
  int started = 0;
  return xm_execute(api, raw ? NULL : fl, NULL, exe, args, nd, na, NULL, 0, outs, no, &started);
}

// destroy_all destroys n buffers and returns the first error.
static PJRT_Error* destroy_all(const PJRT_Api* api, PJRT_Buffer** bufs, size_t n, PJRT_Error* err) {
  for (size_t i = 0; i < n; i++) {
    PJRT_Error* derr = xm_buffer_destroy(api, bufs[i]);
    if (err == NULL) err = derr;
  }
  return err;
}

// xm_floor_loop runs exe n times on nd <= 64 devices with na arguments each (args[d*na + i]),
// the no results of every device landing in outs (nd*no cells). Without chain each execution
// is waited for and its results destroyed. With chain (na == no) each execution takes the
// previous one's results as its arguments, the previous results are destroyed once the next
// execution is enqueued, and only the last results are waited for. Returns the first error.
PJRT_Error* xm_floor_loop(const PJRT_Api* api, xm_inflight* fl, PJRT_LoadedExecutable* exe,
                          PJRT_Buffer* const* args, size_t nd, size_t na, PJRT_Buffer** outs,
                          size_t no, int n, int raw, int chain) {
  if (nd > XM_FLOOR_MAX_DEVICES || (chain && na != no)) return NULL;
  PJRT_Buffer* prev[XM_FLOOR_MAX_DEVICES * 4];
  if (chain && nd * na > sizeof prev / sizeof prev[0]) return NULL;
  size_t failed;
  PJRT_Buffer* const* in = args;
  for (int it = 0; it < n; it++) {
    PJRT_Error* err = floor_execute(api, fl, exe, in, nd, na, outs, no, raw);
    if (err != NULL) return err;
    if (!chain) {
      err = xm_buffers_await(api, outs, nd * no, &failed);
      err = destroy_all(api, outs, nd * no, err);
      if (err != NULL) return err;
      continue;
    }
    if (in != args) {
      err = destroy_all(api, prev, nd * na, NULL);
      if (err != NULL) return err;
    }
    memcpy(prev, outs, nd * no * sizeof outs[0]);
    in = prev;
  }
  if (chain && in != args) {
    PJRT_Error* err = xm_buffers_await(api, prev, nd * na, &failed);
    return destroy_all(api, prev, nd * na, err);
  }
  return NULL;
}
