// event_bridge.c: the C side of PJRT_Event_OnReady callbacks. The plugin calls xm_event_ready
// on one of its threads when an event completes; it reads the error (if any), destroys it and the
// event, and hands the outcome to Go (events.go). cgo-only: it needs _cgo_export.h.
#include <stdlib.h>

#include "_cgo_export.h"
#include "xlamesh_pjrt.h"

typedef struct {
  const PJRT_Api* api;
  PJRT_Event* event;
  uintptr_t handle;
} xm_ready_arg;

static void xm_event_ready(PJRT_Error* err, void* user_arg) {
  xm_ready_arg* a = (xm_ready_arg*)user_arg;
  int code = 0;
  char* msg = NULL;
  if (err != NULL) xm_error_take(a->api, err, &code, &msg);
  PJRT_Event_Destroy_Args d = {0};
  d.struct_size = PJRT_Event_Destroy_Args_STRUCT_SIZE;
  d.event = a->event;
  PJRT_Error* derr = a->api->PJRT_Event_Destroy(&d);
  if (derr != NULL) {
    int ignored;
    char* dmsg;
    xm_error_take(a->api, derr, &ignored, &dmsg);
    free(dmsg);
  }
  uintptr_t handle = a->handle;
  free(a);
  xmGoEventReady(handle, code, msg);  // Go frees msg
}

// xm_on_ready registers xm_event_ready on event, which then owns the event. On failure the
// event is left to the caller and the PJRT_Error is returned.
PJRT_Error* xm_on_ready(const PJRT_Api* api, PJRT_Event* event, uintptr_t handle) {
  xm_ready_arg* a = malloc(sizeof *a);
  a->api = api;
  a->event = event;
  a->handle = handle;
  PJRT_Event_OnReady_Args args = {0};
  args.event = event;
  args.callback = xm_event_ready;
  args.user_arg = a;
  PJRT_Error* err = xm_Event_OnReady(api, &args);
  if (err != NULL) free(a);
  return err;
}
