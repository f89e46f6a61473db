// Package closegate counts the calls inside a resource so that it can be closed while calls
// are still running, without a lock held across them: the resource is released by whoever
// leaves it last. pjrt's Client and Executable and jit's Function close through it, so that a
// program that never ends cannot make Close, or the calls behind a pending Close, wait forever.
package closegate

import (
	"context"
	"sync"
	"sync/atomic"
)

// closedBit is the bit of Gate.state that says the gate is closed; the bits below count the
// calls inside.
const closedBit = 1 << 62

// Gate counts the calls inside a resource (a pjrt.Client or Executable, a jit.Function) without a lock
// held across them, so that closing never blocks a call and a call never blocks a close: Close
// marks the gate closed (later Enters fail), and Release runs exactly once, on whichever
// goroutine sees the gate closed and empty first: Close itself, or the Exit of the last call.
// Ownership of the resource passes that way to whoever finishes last. The zero Gate is open,
// with no Release. Enter and Exit are one atomic operation each, like RLock and RUnlock.
type Gate struct {
	state    atomic.Int64 // closedBit | calls inside
	released atomic.Bool  // release ran (or is running)
	Release  func()       // frees the resource; set before the gate is used, called once

	mu   sync.Mutex
	done chan struct{} // closed once release returned; made on demand
	over bool          // release returned
}

// Enter admits a call; false when the gate is closed (the caller must not use the resource).
func (g *Gate) Enter() bool {
	if g.state.Add(1)&closedBit != 0 {
		g.Exit()
		return false
	}
	return true
}

// Exit ends a call that Enter admitted, and releases the resource if it was the last call of a
// closed gate.
func (g *Gate) Exit() {
	if g.state.Add(-1) == closedBit {
		g.finish()
	}
}

// IsClosed reports whether Close was called.
func (g *Gate) IsClosed() bool { return g.state.Load()&closedBit != 0 }

// Calls returns the number of calls inside.
func (g *Gate) Calls() int { return int(g.state.Load() &^ closedBit) }

// Close closes the gate (releasing the resource at once when no call is inside) and reports
// whether this call closed it.
func (g *Gate) Close() bool {
	for {
		v := g.state.Load()
		if v&closedBit != 0 {
			return false
		}
		if g.state.CompareAndSwap(v, v|closedBit) {
			if v == 0 {
				g.finish()
			}
			return true
		}
	}
}

// finish runs Release once.
func (g *Gate) finish() {
	if !g.released.CompareAndSwap(false, true) {
		return
	}
	if g.Release != nil {
		g.Release()
	}
	g.mu.Lock()
	g.over = true
	if g.done != nil {
		close(g.done)
	}
	g.mu.Unlock()
}

// Wait waits until Release has returned, or ctx is done; it reports whether release returned.
func (g *Gate) Wait(ctx context.Context) bool {
	g.mu.Lock()
	if g.over {
		g.mu.Unlock()
		return true
	}
	if g.done == nil {
		g.done = make(chan struct{})
	}
	done := g.done
	g.mu.Unlock()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
}
