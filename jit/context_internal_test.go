package jit

import (
	"context"
	"errors"
	"testing"
	"time"
)

// lateTimer is a context whose deadline has passed but whose timer has not fired yet: Err is
// nil and Done is open, as when the work keeps every CPU busy past the deadline.
type lateTimer struct{ context.Context }

func (lateTimer) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }
func (lateTimer) Err() error                  { return nil }
func (lateTimer) Done() <-chan struct{}       { return make(chan struct{}) }

// TestInBackgroundDeadlineFromClock: a result that arrives after the deadline, before the
// context's timer fired, is freed and the call fails with the deadline.
func TestInBackgroundDeadlineFromClock(t *testing.T) {
	freed := 0
	v, err := inBackground(lateTimer{context.Background()}, "put", func() (int, error) { return 7, nil },
		func(int) { freed++ })
	if !errors.Is(err, context.DeadlineExceeded) || v != 0 || freed != 1 {
		t.Fatalf("got %d, %v, freed %d; want 0, DeadlineExceeded, freed 1", v, err, freed)
	}
	// Without a deadline the result comes back.
	v, err = inBackground(context.Background(), "put", func() (int, error) { return 7, nil }, nil)
	if err != nil || v != 7 {
		t.Fatalf("got %d, %v; want 7, nil", v, err)
	}
}
