package pjrt

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, wrapped with context by every function of the package; test them with errors.Is.
var (
	// ErrPluginNotFound: no plugin file at the given path, or none found by name or in the project cache.
	ErrPluginNotFound = errors.New("PJRT plugin not found")
	// ErrNotPlugin: the file exists but is not a loadable PJRT plugin (not a shared object, no GetPjrtApi).
	ErrNotPlugin = errors.New("not a PJRT plugin")
	// ErrPluginVersion: the plugin speaks a PJRT C API older than MinAPIMinor, or a major version
	// other than 0.
	ErrPluginVersion = errors.New("unsupported PJRT C API version")
	// ErrUnimplemented: the plugin lacks a PJRT C API function (its slot is null or past the
	// end of its function table); the message names the function and the plugin's version.
	ErrUnimplemented = errors.New("not implemented by the plugin")
	// ErrCreateClient: the plugin could not create a client (e.g. no GPU on this machine).
	ErrCreateClient = errors.New("cannot create client")
	// ErrCreateOption: a client create option has a value type PJRT cannot carry.
	ErrCreateOption = errors.New("invalid create option")
	// ErrClosed: the client, executable or buffer was already closed.
	ErrClosed = errors.New("already closed")
	// ErrCompile: the plugin rejected a program.
	ErrCompile = errors.New("compile failed")
	// ErrExecute: the plugin failed to run an executable, or its arguments do not fit it.
	ErrExecute = errors.New("execute failed")
	// ErrDevice: a device id, device or device assignment is not valid for the client.
	ErrDevice = errors.New("invalid device")
	// ErrHostData: host data does not match the declared dtype or dimensions.
	ErrHostData = errors.New("invalid host data")
	// ErrStillRunning: a close gave up waiting for calls or executions that have not ended (a
	// program that never ends, for one); what they hold is released when they end. The error
	// is a *StillRunningError, which counts them.
	ErrStillRunning = errors.New("still running")
)

// errDonating is the error of an operation on a buffer that a call under way consumes (it was
// donated to it): as good as closed.
var errDonating = fmt.Errorf("%w: donated to a call under way", ErrClosed)

// Error is an error reported by the PJRT plugin itself: the operation, PJRT's error code and the
// plugin's message. Match it with errors.As; it also matches the sentinel given as Kind.
type Error struct {
	Op   string // the PJRT call or xlamesh operation, e.g. "compile"
	Code Code   // the PJRT error code (Unknown when the plugin did not say)
	Msg  string // the plugin's message
	Kind error  // the sentinel this error is a case of (ErrCompile, ErrExecute, ...), or nil
}

// Error formats the error as "pjrt: op: message (Code)".
func (e *Error) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("pjrt: %s: %s (%s)", e.Op, e.Msg, e.Code)
	}
	return fmt.Sprintf("pjrt: %s: %s", e.Op, e.Msg)
}

// Unwrap lets errors.Is match the error's Kind.
func (e *Error) Unwrap() error { return e.Kind }

// Code is a PJRT error code (PJRT_Error_Code, the same numbering as absl::StatusCode).
type Code int

// PJRT error codes.
const (
	Cancelled          Code = 1
	Unknown            Code = 2
	InvalidArgument    Code = 3
	DeadlineExceeded   Code = 4
	NotFound           Code = 5
	AlreadyExists      Code = 6
	PermissionDenied   Code = 7
	ResourceExhausted  Code = 8
	FailedPrecondition Code = 9
	Aborted            Code = 10
	OutOfRange         Code = 11
	Unimplemented      Code = 12
	Internal           Code = 13
	Unavailable        Code = 14
	DataLoss           Code = 15
	Unauthenticated    Code = 16
)

var codeNames = map[Code]string{
	Cancelled: "Cancelled", Unknown: "Unknown", InvalidArgument: "InvalidArgument",
	DeadlineExceeded: "DeadlineExceeded", NotFound: "NotFound", AlreadyExists: "AlreadyExists",
	PermissionDenied: "PermissionDenied", ResourceExhausted: "ResourceExhausted",
	FailedPrecondition: "FailedPrecondition", Aborted: "Aborted", OutOfRange: "OutOfRange",
	Unimplemented: "Unimplemented", Internal: "Internal", Unavailable: "Unavailable",
	DataLoss: "DataLoss", Unauthenticated: "Unauthenticated",
}

// String returns the code's name, e.g. "InvalidArgument".
func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// explainMissingHandler adds to a compile error about a custom call that no FFI handler serves
// ("No FFI handler registered for lapack_spotrf_ffi ...") where its kernels come from: the
// lapack_* and blas_* targets of jax.numpy.linalg (and ducc_fft) are jaxlib's own CPU kernels,
// which jaxlib registers with XLA inside its Python extension; plain XLA PJRT plugins do not
// have them. xlamesh serves some of the LAPACK ones itself (lapack.go): the error says which,
// or why none are (p's LAPACKStatus). Any other error is returned as it is.
func explainMissingHandler(err error, p *Plugin) error {
	const marker = "No FFI handler registered for "
	msg := err.Error()
	i := strings.Index(msg, marker)
	if i < 0 {
		return err
	}
	target := msg[i+len(marker):]
	if j := strings.IndexAny(target, " \n"); j >= 0 {
		target = target[:j]
	}
	switch {
	case strings.HasPrefix(target, "lapack_") || strings.HasPrefix(target, "blas_"):
		st := p.LAPACK()
		why := "xlamesh serves " + strings.Join(st.Targets, ", ") + "; not this one yet"
		switch {
		case st.Err != nil && len(st.Targets) == 0:
			why = st.Err.Error()
		case len(st.Targets) == 0:
			why = "this client was opened with WithoutLAPACK, or is not a CPU client"
		}
		return fmt.Errorf("%w (%s is a LAPACK kernel of jaxlib, which registers it with XLA from jaxlib's "+
			"Python extension (jaxlib/cpu/lapack); PJRT plugins do not have it: %s)", err, target, why)
	case strings.HasPrefix(target, "ducc_"):
		return fmt.Errorf("%w (%s is jaxlib's FFT kernel (jaxlib/cpu, DUCC), which PJRT plugins do not have)", err, target)
	}
	return err
}
