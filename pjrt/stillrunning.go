package pjrt

import (
	"context"
	"fmt"
	"time"
)

// CloseTimeout bounds how long Close (of a Client or an Executable) waits for the calls and
// executions still running: Close is CloseContext with this timeout.
const CloseTimeout = 10 * time.Second

// StillRunningError is the error of a close that gave up waiting: the thing was closed (later
// calls fail with ErrClosed at once), but calls or executions in it have not finished (an
// execution that never ends, for one: PJRT cannot interrupt it). What it holds is released when
// the last of them ends. It matches ErrStillRunning with errors.Is.
type StillRunningError struct {
	What       string // what was closed, e.g. "Client(cpu, 8 devices)"
	Calls      int    // calls into it that have not returned
	Executions int    // executions started and not finished on every device (those of Calls included)
}

// Error says what is still running, e.g. "Client(cpu, 8 devices): 1 call in flight, 0
// executions unfinished: still running (released when they end)".
func (e *StillRunningError) Error() string {
	return fmt.Sprintf("%s: %s in flight, %s unfinished: %v (released when they end)",
		e.What, plural(e.Calls, "call"), plural(e.Executions, "execution"), ErrStillRunning)
}

// Unwrap lets errors.Is match ErrStillRunning.
func (e *StillRunningError) Unwrap() error { return ErrStillRunning }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// closeContext returns a context for Close: CloseTimeout from now.
func closeContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), CloseTimeout)
}
