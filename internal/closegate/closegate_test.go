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

// TestUsers walks the ownership rule of Users: Close frees at once when unused, else the last
// user does, exactly once; an exclusive user shuts out shared ones and the reverse.
func TestUsers(t *testing.T) {
	var u Users
	for i := range 2 {
		if !u.Enter() {
			t.Fatalf("Enter %d on an open Users failed", i+1)
		}
	}
	if u.EnterExclusive() {
		t.Fatal("EnterExclusive succeeded while shared users are inside")
	}
	if u.Close() {
		t.Fatal("Close said to free while 2 users are inside")
	}
	if !u.IsClosed() || u.InUse() != 2 {
		t.Fatalf("after Close: closed %v, in use %d; want true, 2", u.IsClosed(), u.InUse())
	}
	if u.Enter() {
		t.Fatal("Enter succeeded on a closed Users")
	}
	if u.Close() {
		t.Fatal("a second Close said to free")
	}
	if u.Exit() {
		t.Fatal("the first of 2 Exits said to free")
	}
	if !u.Exit() {
		t.Fatal("the last Exit of a closed Users did not say to free")
	}

	var x Users
	if !x.EnterExclusive() {
		t.Fatal("EnterExclusive on an open, unused Users failed")
	}
	if x.Enter() || x.EnterExclusive() {
		t.Fatal("a second user entered beside an exclusive one")
	}
	if x.InUse() != 1 {
		t.Fatalf("in use %d, want 1", x.InUse())
	}
	if x.ExitExclusive() {
		t.Fatal("ExitExclusive of an open Users said to free")
	}
	if !x.Enter() {
		t.Fatal("Enter after ExitExclusive failed")
	}
	x.Exit()
	if !x.EnterExclusive() || x.Close() || !x.ExitExclusive() {
		t.Fatal("Close under an exclusive user: the exclusive user must free")
	}

	var z Users
	if !z.Close() {
		t.Fatal("Close of an unused Users did not say to free")
	}
}

// TestUsersConcurrent: however Enters, Exits and a Close interleave, exactly one party frees.
func TestUsersConcurrent(t *testing.T) {
	for range 200 {
		var u Users
		var frees atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					if u.Enter() && u.Exit() {
						frees.Add(1)
					}
				}
			}()
		}
		if u.Close() {
			frees.Add(1)
		}
		wg.Wait()
		if frees.Load() != 1 {
			t.Fatalf("%d frees, want 1", frees.Load())
		}
	}
}
