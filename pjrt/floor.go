package pjrt

/*
#include <stdlib.h>
#include "xlamesh_pjrt.h"

PJRT_Error* xm_floor_loop(const PJRT_Api* api, xm_inflight* fl, PJRT_LoadedExecutable* exe,
                          PJRT_Buffer* const* args, size_t nd, size_t na, PJRT_Buffer** outs,
                          size_t no, int n, int raw, int chain);
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// floorLoop runs e n times on args (one list per device) in one C loop (floor.c): the binding's
// floor, for benchmarks. Each execution is waited for and its results destroyed, or, with chain,
// takes the previous results as arguments and only the last is waited for. raw executes without
// completion events or in-flight accounting.
func (e *Executable) floorLoop(args [][]*Buffer, n int, raw, chain bool) error {
	nd, no := len(e.devices), len(e.info.outputs)
	if len(args) != nd || nd > 64 {
		return fmt.Errorf("pjrt: floor: %w: %d argument lists for %d devices", ErrExecute, len(args), nd)
	}
	na := len(args[0])
	cells := C.calloc(C.size_t(nd*na+nd*no+1), C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(cells)
	all := unsafe.Slice((**C.PJRT_Buffer)(cells), nd*na+nd*no+1)
	for d := range nd {
		for i, b := range args[d] {
			all[d*na+i] = b.st.c
		}
	}
	if chain && na != no {
		return fmt.Errorf("pjrt: floor: %w: a chain needs as many results as arguments", ErrExecute)
	}
	a := e.client.api
	return a.toError("floor", ErrExecute, C.xm_floor_loop(a.p, e.client.inflight, e.c, &all[0], C.size_t(nd),
		C.size_t(na), &all[nd*na], C.size_t(no), C.int(n), cbool(raw), cbool(chain)))
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
