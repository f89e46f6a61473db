package pjrt

import (
	"fmt"
	"testing"
)

// TestHeldSet adds n distinct buffer states, each passed several times, and checks that each is
// held once, in first-seen order, whatever the size hint, and that release lets go of all.
func TestHeldSet(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 17, 300, 3000} {
		for _, hint := range []int{0, n, 3 * n} {
			t.Run(fmt.Sprintf("n=%d/hint=%d", n, hint), func(t *testing.T) {
				sts := make([]*bufferState, n)
				for i := range sts {
					sts[i] = new(bufferState)
				}
				var h heldSet
				for pass := range 3 {
					for i, st := range sts {
						if got, want := h.has(st), pass > 0; got != want {
							t.Fatalf("pass %d: has(state %d) = %v, want %v", pass, i, got, want)
						}
						if pass == 0 {
							st.users.Enter()
							h.add(st, false, hint)
						}
					}
				}
				if h.has(new(bufferState)) {
					t.Fatal("has reports a state never added")
				}
				if h.n != n {
					t.Fatalf("%d held, want %d", h.n, n)
				}
				for i := range n {
					if h.at(i).st != sts[i] {
						t.Fatalf("held[%d] is not the %d-th state added", i, i)
					}
				}
				h.release()
				for i, st := range sts {
					if st.users.InUse() != 0 {
						t.Fatalf("state %d still in use after release", i)
					}
				}
				if h.n != 0 || h.spill != nil {
					t.Fatalf("after release: %d held, spill %v", h.n, h.spill)
				}
			})
		}
	}
}

// TestHeldSetExclusive checks that release undoes exclusive holds as well as shared ones.
func TestHeldSetExclusive(t *testing.T) {
	sts := make([]*bufferState, 20)
	var h heldSet
	for i := range sts {
		sts[i] = new(bufferState)
		if i%3 == 0 {
			sts[i].users.EnterExclusive()
			h.add(sts[i], true, len(sts))
		} else {
			sts[i].users.Enter()
			h.add(sts[i], false, len(sts))
		}
	}
	h.release()
	for i, st := range sts {
		if st.users.InUse() != 0 || !st.users.EnterExclusive() {
			t.Fatalf("state %d still in use after release", i)
		}
	}
}

// TestHeldSetPooledTable: a table pooled by a large set is reused by a set of a similar size
// only, and every reuse starts empty.
func TestHeldSetPooledTable(t *testing.T) {
	for _, c := range []struct{ first, next, wantSlots int }{
		{3000, 3000, 8192}, // the same size: reused
		{3000, 1000, 8192}, // 8192 slots <= 4 x 2048: reused
		{3000, 20, 64},     // 8192 slots > 4 x 64: a new table
		{20, 3000, 8192},   // too small: a new table
	} {
		s := new(heldSpill)
		s.reset(c.first)
		s.put(new(bufferState))
		clear(s.slots)
		s.reset(c.next)
		if len(s.slots) != c.wantSlots {
			t.Errorf("reset(%d) after reset(%d): %d slots, want %d", c.next, c.first, len(s.slots), c.wantSlots)
		}
		if 1<<(64-s.shift) != len(s.slots) {
			t.Errorf("reset(%d) after reset(%d): shift %d for %d slots", c.next, c.first, s.shift, len(s.slots))
		}
		for i := range c.next {
			st := new(bufferState)
			if s.find(st) {
				t.Fatalf("a new state found in a reused table")
			}
			s.more = append(s.more, heldArg{st: st})
			s.insert(st)
			if !s.find(st) {
				t.Fatalf("state %d not found after insert", i)
			}
		}
	}
}
