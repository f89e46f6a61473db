package kv

import (
	"errors"
	"time"
)

// Store is the key-value store a multi-process client shares between its processes: the plugin
// publishes its local topology and collective ids with Put and reads the other processes' with
// Get. Implementations must be safe for concurrent use; the plugin calls them from its own
// threads.
type Store interface {
	// Get returns the value of key, waiting up to timeout for another process to put it. When
	// the time runs out it returns an error wrapping ErrKeyNotFound (or any other error).
	Get(key string, timeout time.Duration) ([]byte, error)
	// TryGet returns the value of key at once, or an error wrapping ErrKeyNotFound.
	TryGet(key string) ([]byte, error)
	// Put stores value under key.
	Put(key string, value []byte) error
}

// ErrKeyNotFound is what a Store returns for a key that is not (yet) there; a PJRT plugin sees it
// as PJRT's NotFound (or DeadlineExceeded after a Get's timeout).
var ErrKeyNotFound = errors.New("key not found")

// Distributed is one process's membership in a multi-process job: which process it is, how many
// there are, and the key-value store they share (JAX's jax.distributed client). Package
// distributed implements it with etcd (distributed.Job); anything else that does may be used, an
// in-memory store for tests for one. Implementations must be safe for concurrent use.
type Distributed interface {
	Store
	// ProcessID returns this process's index, 0 ≤ ProcessID < NumProcesses.
	ProcessID() int
	// NumProcesses returns the number of processes of the job.
	NumProcesses() int
	// InitTimeout bounds how long pjrt.Open waits for the other processes while it creates the
	// client.
	InitTimeout() time.Duration
}
