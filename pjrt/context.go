package pjrt

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// errNilContext is returned for a nil context.Context; it wraps no sentinel of its own because
// it is a programming error, reported instead of the panic the standard library would raise.
var errNilContext = errors.New("nil context.Context (use context.Background())")

// abandoned counts the compilations CompileContext gave up on that are still running; tests wait
// for them before counting live executables.
var abandoned sync.WaitGroup

// CompileContext is Compile with a context. PJRT's compile call cannot be interrupted, so when ctx
// can be cancelled the compilation runs on a goroutine of its own: if ctx is done first,
// CompileContext returns an error wrapping ctx.Err() at once, and the compilation, finishing in
// the background, closes its executable (LiveExecutables returns to its count then). The client
// stays usable throughout; Client.Close waits for that background compilation to end.
//
// With a context that is never done (context.Background()) it is exactly Compile.
func (c *Client) CompileContext(ctx context.Context, mlir string, opts CompileOptions) (*Executable, error) {
	if ctx == nil {
		return nil, fmt.Errorf("pjrt: compile: %w", errNilContext)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pjrt: compile: %w", err)
	}
	if ctx.Done() == nil {
		return c.Compile(mlir, opts)
	}
	type result struct {
		e   *Executable
		err error
	}
	ch := make(chan result, 1)
	go func() {
		e, err := c.Compile(mlir, opts)
		ch <- result{e, err}
	}()
	select {
	case r := <-ch:
		return r.e, r.err
	case <-ctx.Done():
		select {
		case r := <-ch: // finished at the same moment: prefer the result
			return r.e, r.err
		default:
		}
		abandoned.Add(1)
		go func() {
			defer abandoned.Done()
			if r := <-ch; r.e != nil {
				_ = r.e.Close()
			}
		}()
		return nil, fmt.Errorf("pjrt: compile: %w", ctx.Err())
	}
}
