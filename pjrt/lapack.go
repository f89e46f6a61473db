package pjrt

/*
#include <stdlib.h>
#include "xlamesh_lapack.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/xlamesh/xlamesh/pjrt/plugins"
)

// EnvLAPACK names the variable that chooses the LAPACK library (a path to a shared library with
// the Fortran LAPACK and BLAS routines and 32-bit integers, e.g. a system liblapack.so.3 or
// OpenBLAS) over which CPU clients serve jnp.linalg's kernels; unset, the one `xlamesh
// install-plugin -plugin lapack` installs (plugins.LAPACK) is used. A library with 64-bit
// integers (an ILP64 build) is refused with ErrNoLAPACK.
const EnvLAPACK = "XLAMESH_LAPACK"

// ErrNoLAPACK: no LAPACK library was found or loaded, so the lapack_*_ffi kernels of jnp.linalg
// programs are not served (Plugin.LAPACK says why).
var ErrNoLAPACK = errors.New("no LAPACK library")

// LAPACKHint says how to get a LAPACK library for jnp.linalg programs.
const LAPACKHint = "install one with `xlamesh install-plugin -plugin lapack` (or `make setup` in a checkout), " +
	"or set " + EnvLAPACK + " to a LAPACK shared library"

// LAPACKStatus says what a plugin serves of the LAPACK kernels JAX's CPU programs call.
type LAPACKStatus struct {
	// Library is the LAPACK library loaded ("" if none).
	Library string
	// Targets are the custom-call targets registered with the plugin, e.g. "lapack_spotrf_ffi".
	Targets []string
	// Err is why none or only some are served: it matches ErrNoLAPACK when no library was
	// found, ErrUnimplemented when the plugin has no FFI extension to register them with. nil
	// when every kernel xlamesh has is served, or when no client with LAPACK was opened yet.
	Err error
}

// lapackState is a plugin's registration, done once by the first CPU client opened without
// WithoutLAPACK, before it compiles anything: XLA's handler registry is the plugin's, for all of
// its clients.
type lapackState struct {
	mu     sync.Mutex // held while registering, so that LAPACK waits for it
	done   bool
	status LAPACKStatus
}

// WithoutLAPACK opens a client that does not register xlamesh's LAPACK kernels with the
// plugin, for a program that registers its own (XLA keeps one handler per target, and the first
// registered wins). It has no effect once another client of the plugin registered them.
func WithoutLAPACK() Option { return func(c *openConfig) { c.noLAPACK = true } }

// LAPACK reports what the plugin serves of the lapack_*_ffi kernels: after a CPU client was
// opened (without WithoutLAPACK), the library found and the targets registered.
func (p *Plugin) LAPACK() LAPACKStatus {
	p.lapack.mu.Lock()
	defer p.lapack.mu.Unlock()
	s := p.lapack.status
	s.Targets = append([]string(nil), s.Targets...)
	return s
}

// registerLAPACK registers the LAPACK kernels with the plugin once; what it found is
// Plugin.LAPACK's. A failure is not Open's: programs that call no LAPACK kernel run without one.
func (p *Plugin) registerLAPACK() {
	p.lapack.mu.Lock()
	defer p.lapack.mu.Unlock()
	if !p.lapack.done {
		p.lapack.status, p.lapack.done = p.doRegisterLAPACK(), true
	}
}

func (p *Plugin) doRegisterLAPACK() LAPACKStatus {
	var s LAPACKStatus
	if C.xm_ffi_can_register(p.api.p) == 0 {
		s.Err = fmt.Errorf("pjrt: LAPACK kernels: %w: plugin %s has no PJRT FFI extension to register them with", ErrUnimplemented, p.Path())
		return s
	}
	lib, err := findLAPACK()
	if err != nil {
		s.Err = err
		return s
	}
	if err := loadLAPACK(lib); err != nil {
		s.Err = err
		return s
	}
	s.Library = lib
	var failed []string
	for i := range int(C.xm_lapack_target_count()) {
		target := C.GoString(C.xm_lapack_target(C.int(i)))
		if C.xm_lapack_target_ready(C.int(i)) == 0 {
			failed = append(failed, target+": the library has no such routine")
			continue
		}
		if msg := C.xm_lapack_register(p.api.p, C.int(i)); msg != nil {
			failed = append(failed, target+": "+C.GoString(msg))
			C.free(unsafe.Pointer(msg))
			continue
		}
		s.Targets = append(s.Targets, target)
	}
	if len(failed) > 0 {
		s.Err = fmt.Errorf("pjrt: LAPACK kernels of %s over %s: %w: %s", p.Path(), lib, ErrUnimplemented, strings.Join(failed, "; "))
	}
	return s
}

// loadLAPACK loads the library once per process (the kernels call one library whichever
// plugin runs them).
func loadLAPACK(path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if msg := C.xm_lapack_load(cpath); msg != nil {
		defer C.free(unsafe.Pointer(msg))
		return fmt.Errorf("pjrt: LAPACK %s: %w: %s", path, ErrNoLAPACK, C.GoString(msg))
	}
	return nil
}

// findLAPACK returns the library to load: $XLAMESH_LAPACK, else plugins.LAPACK where `xlamesh
// install-plugin` puts it (plugins.Dir), else, with XLAMESH_CACHE_DIR unset inside an xlamesh
// checkout, in the checkout's cache. The error matches ErrNoLAPACK and lists where it looked.
func findLAPACK() (string, error) {
	if v := os.Getenv(EnvLAPACK); v != "" {
		abs, err := filepath.Abs(v)
		if err != nil || !fileExists(abs) {
			return "", fmt.Errorf("pjrt: %s=%q: %w: no such file", EnvLAPACK, v, ErrNoLAPACK)
		}
		return abs, nil
	}
	var tried []string
	if dir, err := plugins.Dir(); err == nil {
		path := plugins.LAPACK.Path(dir)
		if fileExists(path) {
			return path, nil
		}
		tried = append(tried, path)
	}
	if os.Getenv(plugins.EnvCacheDir) == "" {
		if cache := plugins.CheckoutCache(); cache != "" {
			path := plugins.LAPACK.Path(cache)
			if fileExists(path) {
				return path, nil
			}
			tried = append(tried, path)
		}
	}
	return "", fmt.Errorf("pjrt: %w (looked for %s); %s", ErrNoLAPACK, strings.Join(tried, ", "), LAPACKHint)
}
