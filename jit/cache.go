package jit

import (
	"sync"
	"sync/atomic"
)

// cache maps keys to values computed once, however many goroutines ask at the same time, and
// counts hits and misses. Errors are cached too: the same inputs fail the same way.
type cache[V any] struct {
	mu           sync.Mutex
	entries      map[string]*cacheEntry[V]
	hits, misses atomic.Int64
}

type cacheEntry[V any] struct {
	once sync.Once
	val  V
	err  error
}

// get returns the value for key, computing it with compute on the first request.
func (c *cache[V]) get(key string, compute func() (V, error)) (V, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*cacheEntry[V]{}
	}
	e, ok := c.entries[key]
	if !ok {
		e = &cacheEntry[V]{}
		c.entries[key] = e
	}
	c.mu.Unlock()
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	e.once.Do(func() { e.val, e.err = compute() })
	return e.val, e.err
}
