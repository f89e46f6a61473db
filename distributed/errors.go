package distributed

import (
	"errors"
	"fmt"
)

// Sentinel errors, wrapped with the job, the processes and the times involved.
var (
	// ErrConfig: the Config (or an environment variable FromEnv read) is invalid.
	ErrConfig = errors.New("invalid job configuration")
	// ErrCoordinator: process 0 could not start the embedded etcd server (e.g. the coordinator
	// port is taken), or the store cannot be reached.
	ErrCoordinator = errors.New("coordinator unavailable")
	// ErrInitTimeout: not every process joined within the initialisation timeout; the message
	// lists the missing ones.
	ErrInitTimeout = errors.New("processes did not join in time")
	// ErrDuplicateProcess: another live process of the job already has this process id.
	ErrDuplicateProcess = errors.New("process id taken")
	// ErrBarrierTimeout: a barrier (or Shutdown's) was not reached by every process in time; the
	// message lists the missing ones.
	ErrBarrierTimeout = errors.New("barrier timed out")
	// ErrProcessLost: a process of the job died, stopped sending heartbeats or left without
	// shutting down. The error is a *ProcessLostError naming it.
	ErrProcessLost = errors.New("process lost")
	// ErrClosed: the job was shut down or closed in this process.
	ErrClosed = errors.New("job closed")
	// ErrTooLarge: a key, or a value, is larger than the store takes (see MaxValueBytes); it is
	// refused before anything is sent, and the job goes on.
	ErrTooLarge = errors.New("too large for the store")
	// ErrCorrupt: a value read from the store is not one this package wrote (a chunk of a large
	// value is missing or altered, or the value was written without Put).
	ErrCorrupt = errors.New("value corrupt")
	// ErrTLS: the connection to the coordinator failed its mutual TLS check: this process has no
	// certificate, or one the coordinator does not trust, or the coordinator's certificate is
	// not signed by this process's CA, or only one side uses TLS. The message names the address;
	// the underlying crypto/tls or crypto/x509 error is wrapped too.
	ErrTLS = errors.New("mutual TLS refused")
)

// ProcessLostError says which process of which job was lost and how it was noticed. Every
// blocking call of a Job returns it (and Err reports it) once a process is lost; it matches
// ErrProcessLost.
type ProcessLostError struct {
	JobID   string
	Process int    // the lost process's id
	Reason  string // e.g. "no heartbeat for 3s (killed, hung, or cut off)"
}

// Error returns e.g. `distributed: job "demo": process 2 lost: no heartbeat for 3s`.
func (e *ProcessLostError) Error() string {
	return fmt.Sprintf("distributed: job %q: process %d lost: %s", e.JobID, e.Process, e.Reason)
}

// Is makes errors.Is(err, ErrProcessLost) true.
func (e *ProcessLostError) Is(target error) bool { return target == ErrProcessLost }
