package pjrt

import (
	"sync"
	"unsafe"
)

// heldSet is the set of buffers one operation (Execute, WaitAll, CopyToHostAll) holds locked,
// each once however often it is passed, in the order they were first added. The first few live
// in an inline array, so that the common call allocates nothing and a lookup is a short scan;
// past that an open-addressing hash index over the buffers, taken from a pool, keeps every
// lookup O(1), so an operation on n buffers costs O(n) (a scan of everything held for each new
// buffer made calls with many arguments on many devices quadratic).
//
// No slice points into the struct, so that it stays on the caller's stack. Not safe for
// concurrent use: each operation has its own.
type heldSet struct {
	n      int
	inline [heldInline]heldArg
	spill  *heldSpill // nil until more than heldInline buffers are held
}

// heldInline is how many buffers a heldSet holds without its spill: a scan of 8 pointers costs
// less than hashing one.
const heldInline = 8

type heldArg struct {
	st        *bufferState
	exclusive bool
}

// heldSpill is the pooled part of a heldSet: the buffers past the inline ones and the hash index
// of all of them.
type heldSpill struct {
	more  []heldArg
	slots []*bufferState // power-of-two table, nil = empty slot
	shift uint           // 64 - log2(len(slots))
}

// heldSpillMax is the table size from which a spill is dropped instead of pooled, so that one
// huge call does not pin its table for the life of the process.
const heldSpillMax = 1 << 16

var heldSpills = sync.Pool{New: func() any { return new(heldSpill) }}

// at returns the i-th buffer held.
func (h *heldSet) at(i int) heldArg {
	if i < heldInline {
		return h.inline[i]
	}
	return h.spill.more[i-heldInline]
}

// has reports whether st is held.
func (h *heldSet) has(st *bufferState) bool {
	if h.spill != nil {
		return h.spill.find(st)
	}
	for i := range h.n {
		if h.inline[i].st == st {
			return true
		}
	}
	return false
}

// add records st as held (the caller checked has first and took the lock); hint is how many
// buffers the operation may hold in all, which sizes the index once.
func (h *heldSet) add(st *bufferState, exclusive bool, hint int) {
	if h.n < heldInline {
		h.inline[h.n] = heldArg{st, exclusive}
		h.n++
		return
	}
	if h.spill == nil {
		h.spill = heldSpills.Get().(*heldSpill)
		h.spill.reset(max(hint, 2*heldInline))
		for _, a := range h.inline {
			h.spill.insert(a.st)
		}
	}
	h.spill.more = append(h.spill.more, heldArg{st, exclusive})
	h.spill.insert(st)
	h.n++
}

// release ends the use of every buffer held and gives the spill back to the pool. The set is empty
// afterwards.
func (h *heldSet) release() {
	for i := range h.n {
		if a := h.at(i); a.exclusive {
			a.st.exitExclusive()
		} else {
			a.st.exit()
		}
	}
	h.n = 0
	if s := h.spill; s != nil {
		h.spill = nil
		if len(s.slots) <= heldSpillMax {
			clear(s.more)
			s.more = s.more[:0]
			clear(s.slots)
			heldSpills.Put(s)
		}
	}
}

// reset sizes the (empty) index for n buffers: at most half full, so that probes stay short. A
// pooled table is reused when it is at most 4 times that size (release clears all of it).
func (s *heldSpill) reset(n int) {
	size, bits := 16, uint(4)
	for size < 2*n {
		size <<= 1
		bits++
	}
	for len(s.slots) > size && len(s.slots) <= 4*size {
		size <<= 1
		bits++
	}
	if len(s.slots) != size {
		s.slots = make([]*bufferState, size)
	}
	s.shift = 64 - bits
}

// slot returns the index of st's first probe: Fibonacci hashing of its address.
func (s *heldSpill) slot(st *bufferState) uintptr {
	return uintptr(uint64(uintptr(unsafe.Pointer(st))) * 0x9e3779b97f4a7c15 >> s.shift)
}

func (s *heldSpill) find(st *bufferState) bool {
	mask := uintptr(len(s.slots) - 1)
	for i := s.slot(st); ; i = (i + 1) & mask {
		switch s.slots[i] {
		case st:
			return true
		case nil:
			return false
		}
	}
}

// insert adds st to the index, growing it when it is half full (when the hint was too small).
func (s *heldSpill) insert(st *bufferState) {
	if n := len(s.more) + heldInline; 2*n > len(s.slots) {
		old := s.slots
		s.slots = nil
		s.reset(n)
		for _, x := range old {
			if x != nil {
				s.put(x)
			}
		}
	}
	s.put(st)
}

func (s *heldSpill) put(st *bufferState) {
	mask := uintptr(len(s.slots) - 1)
	for i := s.slot(st); ; i = (i + 1) & mask {
		switch s.slots[i] {
		case st:
			return
		case nil:
			s.slots[i] = st
			return
		}
	}
}
