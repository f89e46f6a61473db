package pjrt

/*
#include <stdlib.h>
#include "xlamesh_pjrt.h"

PJRT_Error* xm_on_ready(const PJRT_Api* api, PJRT_Event* event, uintptr_t handle);
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// onReady calls done on a plugin thread once ev completes, with the event's error as an *Error of
// the given kind (nil on success); the event is consumed. If the plugin cannot register the
// callback (no PJRT_Event_OnReady), the event is awaited here and done is called before onReady
// returns.
func (a *api) onReady(op string, kind error, ev *C.PJRT_Event, done func(error)) {
	if ev == nil {
		done(nil)
		return
	}
	if !a.has(fnEventOnReady) {
		done(a.awaitEvent(op, kind, ev))
		return
	}
	h := cgo.NewHandle(readyCallback{op: op, kind: kind, done: done})
	if err := a.toError(op, kind, C.xm_on_ready(a.p, ev, C.uintptr_t(h))); err != nil {
		h.Delete()
		done(a.awaitEvent(op, kind, ev))
	}
}

type readyCallback struct {
	op   string
	kind error
	done func(error)
}

//export xmGoEventReady
func xmGoEventReady(h C.uintptr_t, code C.int, msg *C.char) {
	handle := cgo.Handle(h)
	cb := handle.Value().(readyCallback)
	handle.Delete()
	var err error
	if msg != nil {
		err = &Error{Op: cb.op, Code: Code(code), Msg: C.GoString(msg), Kind: cb.kind}
		C.free(unsafe.Pointer(msg))
	}
	cb.done(err)
}
