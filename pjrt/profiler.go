package pjrt

/*
#include <stdlib.h>
#include "xlamesh_profiler.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

var (
	// ErrNoProfiler: the plugin has no PJRT profiler extension (XLA's CPU plugins have none; the
	// CUDA plugin has one).
	ErrNoProfiler = errors.New("plugin has no profiler extension")
	// ErrProfiler: the plugin's profiler failed, or the Profiler was used out of order.
	ErrProfiler = errors.New("profiler failed")
)

// HasProfiler reports whether the plugin has the PJRT profiler extension StartProfiler needs.
func (p *Plugin) HasProfiler() bool { return C.xm_profiler_api(p.api.p) != nil }

// profileOptions is the serialized tensorflow.ProfileOptions a profiler is created with
// (tsl/profiler/protobuf/profiler_options.proto): version 1, host_tracer_level 2 (program
// execution details) and device_tracer_level 1 (device activity on).
var profileOptions = func() []byte {
	var b []byte
	b = protowire.AppendTag(b, 5, protowire.VarintType) // version
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 2, protowire.VarintType) // host_tracer_level
	b = protowire.AppendVarint(b, 2)
	b = protowire.AppendTag(b, 3, protowire.VarintType) // device_tracer_level
	b = protowire.AppendVarint(b, 1)
	return b
}()

// profilerMu serializes profiling: the plugin's profiler records process-wide, one session at a
// time.
var profilerMu sync.Mutex

// Profiler is a running session of the plugin's profiler (PJRT_Profiler_Extension): what the
// plugin and its devices do between StartProfiler and Stop is recorded. Only one Profiler is
// active in a process at a time; StartProfiler fails while another one is. Close releases it.
type Profiler struct {
	plugin *Plugin
	api    *C.xm_prof_api
	mu     sync.Mutex
	h      *C.xm_prof_handle // nil once closed
	state  int               // profStarted, profStopped
}

const (
	profStarted = iota + 1
	profStopped
)

// StartProfiler creates and starts a session of the plugin's profiler. It fails with
// ErrNoProfiler when the plugin has no profiler extension, and with ErrProfiler when the plugin
// refuses or another Profiler of this process is still open.
func (p *Plugin) StartProfiler() (*Profiler, error) {
	papi := C.xm_profiler_api(p.api.p)
	if papi == nil {
		major, minor := p.APIVersion()
		return nil, fmt.Errorf("pjrt: plugin %s (PJRT C API %d.%d): %w: it cannot record a trace", p.Path(), major, minor, ErrNoProfiler)
	}
	if !profilerMu.TryLock() {
		return nil, fmt.Errorf("pjrt: start profiler of %s: %w: another profiler of this process is open (close it first)", p.Path(), ErrProfiler)
	}
	opts := C.CBytes(profileOptions)
	defer C.free(opts)
	var h *C.xm_prof_handle
	if err := profErr("profiler", C.xm_profiler_create(papi, (*C.char)(opts), C.size_t(len(profileOptions)), &h)); err != nil {
		profilerMu.Unlock()
		return nil, err
	}
	pr := &Profiler{plugin: p, api: papi, h: h}
	if err := profErr("profiler", C.xm_profiler_start(papi, h)); err != nil {
		_ = profErr("profiler", C.xm_profiler_destroy(papi, h))
		profilerMu.Unlock()
		return nil, err
	}
	pr.state = profStarted
	return pr, nil
}

// Stop stops recording and returns what was recorded, a serialized
// tensorflow.profiler.XSpace (see WriteChromeTrace). It may be called once.
func (pr *Profiler) Stop() ([]byte, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	switch {
	case pr.h == nil:
		return nil, fmt.Errorf("pjrt: stop profiler: %w", ErrClosed)
	case pr.state != profStarted:
		return nil, fmt.Errorf("pjrt: stop profiler: %w: it was already stopped", ErrProfiler)
	}
	pr.state = profStopped
	if err := profErr("profiler", C.xm_profiler_stop(pr.api, pr.h)); err != nil {
		return nil, err
	}
	var data *C.uint8_t
	var size C.size_t
	if err := profErr("profiler", C.xm_profiler_collect(pr.api, pr.h, &data, &size)); err != nil {
		return nil, err
	}
	if data == nil {
		return nil, nil
	}
	defer C.free(unsafe.Pointer(data))
	return C.GoBytes(unsafe.Pointer(data), C.int(size)), nil
}

// Close stops the profiler if it is still recording and releases it; closing twice is a no-op.
func (pr *Profiler) Close() error {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.h == nil {
		return nil
	}
	var err error
	if pr.state == profStarted {
		err = profErr("profiler", C.xm_profiler_stop(pr.api, pr.h))
	}
	err = errors.Join(err, profErr("profiler", C.xm_profiler_destroy(pr.api, pr.h)))
	pr.h = nil
	profilerMu.Unlock()
	return err
}

// profErr turns a message of xlamesh_profiler.c into an *Error of kind ErrProfiler and frees it.
func profErr(op string, msg *C.char) error {
	if msg == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(msg))
	return &Error{Op: op, Msg: C.GoString(msg), Kind: ErrProfiler}
}
