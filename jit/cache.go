package jit

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// cached is what a cache holds: release frees what a value holds (an executable), if anything.
type cached interface{ release() }

// cache maps signatures to values computed once, however many goroutines ask at the same time,
// and counts hits and misses. A computed error stays (the same inputs fail the same way), except
// an error marked uncached: that one goes to the caller that computed it, and the next request
// computes again. A computation that panics leaves nothing behind either. Values that hold
// resources are released when the cache drops them (evict, close) or when a computation ends
// after its entry was dropped.
type cache[S any, V cached] struct {
	mu           sync.Mutex
	entries      map[uint64][]*cacheEntry[S, V]
	closed       bool
	hits, misses atomic.Int64
}

type cacheEntry[S any, V cached] struct {
	sig       S
	done      chan struct{} // closed once val and err are final, or the computation gave up
	val       V
	err       error
	abandoned bool // the computation panicked or ended uncached: ask again
	dropped   bool // evicted or closed while computing
}

// uncached marks an error that is returned but not kept: a Body's panic is the caller's problem
// of the moment, not a property of the inputs.
type uncached struct{ error }

func (u uncached) Unwrap() error { return u.error }

// errCacheClosed is what lookup returns on a closed cache; the Function reports it as its own
// ErrClosed.
var errCacheClosed = errors.New("cache closed")

// errDropped is the result of a computation whose entry was dropped while it ran.
var errDropped = fmt.Errorf("jit: function %w while compiling", ErrClosed)

// A cache is used in four steps, written out at each call site so that a hit allocates nothing
// (a compute closure handed to a method that may start a goroutine would escape on every call):
//
//	for {
//		h, e, fresh, err := lookupX(c, sig)       // err: errCacheClosed
//		if fresh { c.computeInline(h, e, f) or go c.finish(h, e, f()) }
//		v, err, retry := e.wait(ctx)              // retry: the computation was withdrawn
//	}
//
// The look-ups are written per signature type: a generic one would compare signatures through
// the instantiation's dictionary, which makes the compiler keep every signature on the heap.

// lookupLowering finds the lowering entry for the abstract mesh abs and argument types args, or
// adds a fresh one that the caller must compute; it counts a hit or a miss. abs and args come
// apart so that only a copy of args is kept (escape analysis does not tell struct fields apart).
func lookupLowering(c *cache[loweringSig, *lowering], abs mesh.Abstract, args []ArgType) (uint64, *cacheEntry[loweringSig, *lowering], bool, error) {
	sig := loweringSig{abs: abs, args: args}
	h := sig.hash()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return h, nil, false, errCacheClosed
	}
	for _, e := range c.entries[h] {
		if e.sig.equal(sig) {
			c.hits.Add(1)
			return h, e, false, nil
		}
	}
	return h, c.add(h, loweringSig{abs: abs, args: slices.Clone(args)}), true, nil
}

// lookupCompiled is lookupLowering for executables.
func lookupCompiled(c *cache[compileKey, *compiled], key compileKey) (uint64, *cacheEntry[compileKey, *compiled], bool, error) {
	h := key.hash()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return h, nil, false, errCacheClosed
	}
	for _, e := range c.entries[h] {
		if e.sig == key {
			c.hits.Add(1)
			return h, e, false, nil
		}
	}
	return h, c.add(h, key), true, nil
}

// add adds a fresh entry for the owned signature sig under hash h and counts a miss; c.mu is held.
func (c *cache[S, V]) add(h uint64, sig S) *cacheEntry[S, V] {
	if c.entries == nil {
		c.entries = map[uint64][]*cacheEntry[S, V]{}
	}
	e := &cacheEntry[S, V]{sig: sig, done: make(chan struct{})}
	c.entries[h] = append(c.entries[h], e)
	c.misses.Add(1)
	return e
}

// computeInline runs compute for the fresh entry e on this goroutine. If compute panics, the
// entry is withdrawn (waiters ask again) and the panic continues up the caller's stack.
func (c *cache[S, V]) computeInline(h uint64, e *cacheEntry[S, V], compute func() (V, error)) (v V, err error) {
	finished := false
	defer func() {
		if !finished {
			c.abandon(h, e)
		}
	}()
	v, err = compute()
	finished = true
	if u, ok := err.(uncached); ok {
		c.abandon(h, e)
		var zero V
		return zero, u.error
	}
	c.finish(h, e, v, err)
	return v, err
}

// finish stores the result of e's computation, or releases it when e was dropped meanwhile.
func (c *cache[S, V]) finish(h uint64, e *cacheEntry[S, V], v V, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.val, e.err = v, err
	if e.dropped && err == nil {
		v.release()
		var zero V
		e.val, e.err = zero, errDropped
	}
	close(e.done)
}

// abandon withdraws e, whose computation ended without a value to keep.
func (c *cache[S, V]) abandon(h uint64, e *cacheEntry[S, V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(h, e)
	e.abandoned = true
	close(e.done)
}

// remove deletes e from its bucket; c.mu is held.
func (c *cache[S, V]) remove(h uint64, e *cacheEntry[S, V]) {
	list := c.entries[h]
	for i, x := range list {
		if x == e {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(c.entries, h)
	} else {
		c.entries[h] = list
	}
}

// wait returns e's result once it is final, or ctx.Err() first if ctx is done. retry says the
// computation was withdrawn and the caller should ask again.
func (e *cacheEntry[S, V]) wait(ctx context.Context) (v V, err error, retry bool) {
	select {
	case <-e.done:
	default:
		select {
		case <-e.done:
		case <-ctx.Done():
			return v, ctx.Err(), false
		}
	}
	if e.abandoned {
		return v, nil, true
	}
	return e.val, e.err, false
}

// evict drops the entries whose signature satisfies drop and releases their values; entries
// still computing release theirs when they finish.
func (c *cache[S, V]) evict(drop func(S) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, list := range c.entries {
		for _, e := range list {
			if drop(e.sig) {
				c.drop(e)
				c.remove(h, e)
			}
		}
	}
}

// close drops every entry and makes later gets fail. It returns the values it released (those
// still computing release theirs when they finish, and are not listed).
func (c *cache[S, V]) close() []V {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var released []V
	for _, list := range c.entries {
		for _, e := range list {
			if c.drop(e) {
				released = append(released, e.val)
			}
		}
	}
	c.entries = nil
	return released
}

// drop releases e's value if it has one, or marks it for release when it arrives; c.mu is held.
// It reports whether it released a value.
func (c *cache[S, V]) drop(e *cacheEntry[S, V]) bool {
	select {
	case <-e.done:
		if e.err == nil && !e.abandoned {
			e.val.release()
			return true
		}
	default:
		e.dropped = true
	}
	return false
}

// seed keys the hashes of this process's cache signatures.
var seed = maphash.MakeSeed()

// loweringSig is what a lowering depends on: the abstract mesh and the arguments' types, specs
// and memory kinds.
type loweringSig struct {
	abs  mesh.Abstract
	args []ArgType
}

func (s loweringSig) hash() uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(s.abs.Key())
	var b [8]byte
	word := func(n int) {
		binary.LittleEndian.PutUint64(b[:], uint64(n))
		h.Write(b[:])
	}
	for _, a := range s.args {
		word(int(a.Shape.DType()))
		word(a.Shape.Rank())
		for i := range a.Shape.Rank() {
			word(a.Shape.Dim(i))
		}
		// Axis names stay out of the hash (reading them allocates); specs that differ only in
		// names share a bucket and are told apart by equal.
		word(a.Spec.Len())
		for i := range a.Spec.Len() {
			d := a.Spec.Dim(i)
			switch {
			case d.IsReplicated():
				h.WriteByte(0)
			case d.IsUnconstrained():
				h.WriteByte(1)
			default:
				h.WriteByte(2)
			}
		}
		h.WriteString(a.memory())
		h.WriteByte(0)
	}
	return h.Sum64()
}

func (s loweringSig) equal(t loweringSig) bool {
	if !s.abs.Equal(t.abs) || len(s.args) != len(t.args) {
		return false
	}
	for i, a := range s.args {
		if !a.Shape.Equal(t.args[i].Shape) || !a.Spec.Equal(t.args[i].Spec) || a.memory() != t.args[i].memory() {
			return false
		}
	}
	return true
}

// compileKey is what an executable depends on: the client that compiled it, the lowering and
// the concrete mesh (its device assignment). The client is part of the key: an executable of
// one client cannot run on the buffers of another, even when their device ids agree.
type compileKey struct {
	client *pjrt.Client
	low    *lowering
	mesh   string // mesh.Mesh.Key: axes and device ids
}

func (k compileKey) hash() uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(k.mesh)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], k.low.hash)
	h.Write(b[:])
	return h.Sum64() // clients are told apart by equal
}
