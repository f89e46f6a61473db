package closegate

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReleaseOnceAfterLastCall closes a gate while 8 goroutines enter and exit it: Release runs
// exactly once, never while an admitted call is inside, and every Enter after Close fails.
// Run with -race.
func TestReleaseOnceAfterLastCall(t *testing.T) {
	for round := range 50 {
		var g Gate
		var inside, releases atomic.Int64
		g.Release = func() {
			releases.Add(1)
			if n := inside.Load(); n != 0 {
				t.Errorf("round %d: released with %d calls inside", round, n)
			}
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for g.Enter() {
					inside.Add(1)
					inside.Add(-1)
					g.Exit()
				}
			})
		}
		time.Sleep(time.Duration(round%5) * 100 * time.Microsecond)
		if !g.Close() {
			t.Fatal("the first Close reports it closed the gate")
		}
		if g.Close() {
			t.Fatal("a second Close reports it closed the gate")
		}
		wg.Wait()
		if !g.Wait(context.Background()) {
			t.Fatal("Wait without a deadline returns true")
		}
		if got := releases.Load(); got != 1 {
			t.Fatalf("round %d: %d releases, want 1", round, got)
		}
		if g.Enter() {
			t.Fatal("Enter after Close")
		}
		if g.Calls() != 0 || !g.IsClosed() {
			t.Fatalf("Calls %d, IsClosed %v after the last call", g.Calls(), g.IsClosed())
		}
	}
}

// TestWaitGivesUp: a call that stays inside keeps the resource; Wait gives up at its deadline,
// and the call's Exit releases.
func TestWaitGivesUp(t *testing.T) {
	var g Gate
	released := make(chan struct{})
	g.Release = func() { close(released) }
	if !g.Enter() {
		t.Fatal("Enter on an open gate")
	}
	g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if g.Wait(ctx) {
		t.Fatal("Wait returned true with a call inside")
	}
	if g.Calls() != 1 {
		t.Fatalf("Calls = %d, want 1", g.Calls())
	}
	g.Exit()
	<-released
	if !g.Wait(ctx) {
		t.Fatal("Wait after the release returns true, even past its deadline")
	}
}
