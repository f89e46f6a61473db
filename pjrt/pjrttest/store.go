package pjrttest

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/xlamesh/xlamesh/pjrt/kv"
)

// MemoryStore is a kv.Store in this process's memory, for tests whose "processes" are
// goroutines (the real multi-process store is package distributed). The zero value is empty and
// ready; it is safe for concurrent use.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

var _ kv.Store = (*MemoryStore)(nil)

// Get returns the value of key, polling until it is there or timeout has passed (then the error
// wraps kv.ErrKeyNotFound).
func (s *MemoryStore) Get(key string, timeout time.Duration) ([]byte, error) {
	deadline := time.Now().Add(timeout)
	for {
		if v, err := s.TryGet(key); err == nil || time.Now().After(deadline) {
			return v, err
		}
		time.Sleep(time.Millisecond)
	}
}

// TryGet returns a copy of the value of key, or an error wrapping kv.ErrKeyNotFound.
func (s *MemoryStore) TryGet(key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	if !ok {
		return nil, fmt.Errorf("pjrttest: memory store: %q: %w", key, kv.ErrKeyNotFound)
	}
	return slices.Clone(v), nil
}

// Put stores a copy of value under key.
func (s *MemoryStore) Put(key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[key] = slices.Clone(value)
	return nil
}

// Len returns the number of keys stored.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
