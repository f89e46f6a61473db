// Package distributed runs a job of several processes, JAX's jax.distributed for xlamesh: a
// rendezvous, a key-value store, barriers, heartbeats that turn a dead process into a typed
// error in every other one, and a clean shutdown. The store is etcd: process 0 runs an embedded
// etcd server (go.etcd.io/etcd/server/v3/embed) on the coordinator address unless the job is
// pointed at an existing etcd cluster, and every process talks to it with the etcd client.
//
// # Place in the data flow
//
// A Job comes first: Join, with a Config from the program or from the environment (FromEnv;
// `xlamesh launch` sets it for each process). The Job is a kv.Distributed (package pjrt/kv), so
// pjrt.Open(pjrt.WithDistributed(job)) opens this process's client of the job: GPU and TPU
// plugins exchange their topology and collective ids through the job's store (PJRT's kv_get,
// kv_try_get and kv_put callbacks), and CPU plugins' devices are exchanged by pjrt itself. The
// client's Devices are then the job's global devices and its AddressableDevices this process's;
// mesh builds a global Mesh of them, and jit's process-local entry points (FromProcessLocalData,
// ProcessAllgather) fill and gather global arrays. Package pjrt does not import this one: any
// kv.Distributed will do. Nor does this package import pjrt: the contract between the two is
// package pjrt/kv, pure Go, so a program that joins or coordinates a job without opening a
// client links neither the binding nor its C code.
//
// # Keys
//
// Everything lives under /xlamesh/<JobID>/<run>/, where run is a random id process 0 makes at
// each start and holds with its lease: a restarted job with the same JobID never reads an earlier
// run's keys. Get, TryGet and Put use <run>/kv/; a blocking Get is a get followed by a watch
// from the get's revision until the key appears or the timeout ends. pjrt prefixes the plugin's
// keys with "<platform>:", as JAX does.
//
// Values larger than ChunkBytes go in chunks (chunks/<id>/<i>, written before a checksummed
// index under kv/), so Put takes values up to MaxValueBytes whatever etcd's request limit is;
// larger ones, and keys over MaxKeyBytes, are refused before sending with ErrTooLarge.
//
// # Mutual TLS
//
// With Config.CertFile, KeyFile and CAFile (XLAMESH_MTLS_CERT_FILE, _KEY_FILE, _CA_FILE; JAX's
// mtls_cert_file, mtls_key_file, mtls_ca_file), process 0's embedded etcd serves https only and
// takes only clients whose certificate the job's CA signed (etcd's ClientCertAuth, on the
// client and the loopback-only peer URL), and every process checks the server's certificate
// against the same CA. Join checks the handshake before anything else, so a process without
// valid credentials, or TLS on one side only, gets an error wrapping ErrTLS at once.
// NewCredentials makes a CA and per-process certificates for a job; `xlamesh launch` uses it
// and turns mutual TLS on for every local job. Without credentials anyone who reaches the
// coordinator can read and write the store and join the job.
//
// # Failure
//
// Each process keeps an etcd lease of Config.HeartbeatTimeout alive and watches the others'.
// When a process dies, hangs or is cut off, its lease expires and every other process's Job
// records a *ProcessLostError naming it; every blocking call (Get, Barrier, Shutdown) returns it
// at once, Err reports it and Lost is closed. A process that closes without Shutdown is lost the
// same way, at once. When process 0 (the coordinator) dies, the others notice their heartbeats
// go unanswered and name process 0. Only the heartbeat ends a job: a call that fails because the
// caller's context ended (its error wraps ctx.Err()), because a key or value is too large
// (ErrTooLarge) or because the store refused it (ErrCoordinator) fails alone. Nothing blocks
// without a bound: Join has InitTimeout,
// Barrier BarrierTimeout and its context, Shutdown ShutdownTimeout, Get its timeout.
//
// # Sketch
//
//	cfg, err := distributed.FromEnv()        // XLAMESH_COORDINATOR, XLAMESH_PROCESS_ID, ...
//	job, err := distributed.Join(ctx, cfg)   // everybody is here
//	defer job.Close()
//	client, err := pjrt.Open(pjrt.WithDistributed(job))
//	m, err := mesh.New(jit.Devices(client), []int{job.NumProcesses(), 2}, "proc", "x")
//	...
//	err = job.Barrier(ctx, "step")
//	err = job.Shutdown(ctx)
package distributed
