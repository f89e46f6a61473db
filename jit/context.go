package jit

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// errNilContext is the error of a call given a nil context.Context.
var errNilContext = fmt.Errorf("%w: nil context.Context (use context.Background())", ErrArguments)

// background counts the compilations running on their own goroutines and the work that a
// cancelled call left running (an execution or a transfer cannot be interrupted inside PJRT);
// tests wait for it before counting live buffers and executables.
var background sync.WaitGroup

// inBackground runs work on a goroutine and returns its result, or, when ctx is done first, an
// error wrapping ctx.Err() at once; the work then runs to its end in the background, where
// discard (if not nil) frees its result. A result that is there when the caller finds ctx done
// too, or its deadline passed, is discarded the same way: once ctx is done the call fails,
// whichever of the two the runtime happened to see first. The deadline is read from the clock,
// not only from ctx.Err(), whose timer may fire late while the work keeps every CPU busy.
func inBackground[T any](ctx context.Context, op string, work func() (T, error), discard func(T)) (T, error) {
	type result struct {
		val T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := work()
		ch <- result{v, err}
	}()
	var zero T
	select {
	case r := <-ch:
		err := ctx.Err()
		if d, ok := ctx.Deadline(); ok && err == nil && !time.Now().Before(d) {
			err = context.DeadlineExceeded
		}
		if err == nil {
			return r.val, r.err
		}
		if r.err == nil && discard != nil {
			discard(r.val)
		}
		return zero, fmt.Errorf("jit: %s: %w", op, err)
	case <-ctx.Done():
		background.Add(1)
		go func() {
			defer background.Done()
			if r := <-ch; r.err == nil && discard != nil {
				discard(r.val)
			}
		}()
	}
	return zero, fmt.Errorf("jit: %s: %w", op, ctx.Err())
}

// checkContext returns the error for a nil or finished ctx.
func checkContext(op string, ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("jit: %s: %w", op, errNilContext)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jit: %s: %w", op, err)
	}
	return nil
}

// wrapContext adds the operation to an error that is a bare ctx.Err().
func wrapContext(op string, err error) error {
	if err == context.Canceled || err == context.DeadlineExceeded {
		return fmt.Errorf("jit: %s: %w", op, err)
	}
	return err
}
