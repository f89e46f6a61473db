// Package kv holds the contract between a multi-process job and the PJRT binding: Store, the
// key-value store the processes of a job share; Distributed, one process's membership in the job
// (a Store plus its process id, the number of processes and an init timeout); and
// ErrKeyNotFound, what a Store returns for a key that is not there.
//
// In xlamesh's data flow it sits below both sides of that contract: package distributed
// implements Distributed with etcd (distributed.Job), package pjrt consumes it
// (pjrt.WithDistributed, pjrt.WithKeyValueStore) and hands the store to the plugin's callbacks,
// and package jit gathers values across processes through it (jit.ProcessAllgather). It is pure
// Go and imports no other xlamesh package, so distributed links neither cgo nor the binding.
//
//	job, err := distributed.Join(ctx, cfg) // a kv.Distributed
//	if err != nil { ... }
//	client, err := pjrt.Open(pjrt.WithDistributed(job))
//
// Any other implementation will do, an in-memory one for tests for one (pjrttest.MemoryStore is
// a Store). Implementations must be safe for concurrent use: plugins call a Store from their own
// threads.
package kv
