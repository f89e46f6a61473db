package distributed

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Default timeouts. The initialisation and shutdown defaults are JAX's (initialization_timeout
// and shutdown_timeout of jax.distributed.initialize, 300 s); the heartbeat default is shorter
// than JAX's 100 s, since a lost process should stop a job in seconds, not minutes.
const (
	DefaultInitTimeout      = 5 * time.Minute
	DefaultHeartbeatTimeout = 10 * time.Second
	DefaultBarrierTimeout   = 5 * time.Minute
	DefaultShutdownTimeout  = 5 * time.Minute
	// DefaultJobID names the job when Config.JobID is empty.
	DefaultJobID = "xlamesh"
)

// Config describes one process of a job. ProcessID, NumProcesses and either Coordinator or
// Endpoints are required; every timeout left zero takes its default.
type Config struct {
	// JobID names the job: every key lives under /xlamesh/<JobID>/, so several jobs can share
	// one etcd cluster. Default DefaultJobID. It may not contain "/".
	JobID string
	// ProcessID is this process's index, 0 ≤ ProcessID < NumProcesses.
	ProcessID int
	// NumProcesses is the number of processes of the job.
	NumProcesses int
	// Coordinator is host:port of the coordinator. Without Endpoints, process 0 runs an embedded
	// etcd server listening there (on exactly that host: give the address of the network the
	// processes share, e.g. 127.0.0.1:7700 on one machine) and every process connects to it.
	// The port must be given (1 to 65535): port 0 is refused with ErrConfig.
	Coordinator string
	// Endpoints are the client URLs of an existing etcd cluster (e.g. http://10.0.0.5:2379).
	// When set, no process runs a server and Coordinator is not used.
	Endpoints []string
	// DataDir is where process 0's embedded server keeps its data; default a new temporary
	// directory, removed when the server stops (etcd preallocates 128 MB of log there). If
	// process 0 is killed first, the next process 0 on the machine that uses a temporary
	// directory removes it.
	DataDir string
	// InitTimeout bounds Join (every process present) and the device exchange of pjrt.Open.
	InitTimeout time.Duration
	// HeartbeatTimeout is how long a process may go unheard before the others declare it lost.
	// It is an etcd lease's TTL, so it is rounded up to whole seconds.
	HeartbeatTimeout time.Duration
	// BarrierTimeout bounds every Barrier, whatever its context says.
	BarrierTimeout time.Duration
	// ShutdownTimeout bounds Shutdown: waiting for every process to reach it, and process 0
	// waiting for the others to leave before its server stops.
	ShutdownTimeout time.Duration
	// CertFile, KeyFile and CAFile turn on mutual TLS, as jax.distributed.initialize's
	// mtls_cert_file, mtls_key_file and mtls_ca_file do: this process's certificate (PEM) and its
	// private key, and the CA (PEM) that signed every certificate of the job. Set all three or
	// none. Process 0's embedded server then serves https only and refuses every client without
	// a certificate signed by CAFile, and every process checks the server's certificate against
	// CAFile too; the certificate must therefore be valid for both server and client
	// authentication and name the coordinator's host (IP or DNS SAN). `xlamesh launch` makes a
	// CA and certificates for each job. With Endpoints, the external cluster's client URLs must
	// be https and trust the same CA.
	CertFile, KeyFile, CAFile string
	// Logger receives the job's own notes (a lost process, the server's address). Default
	// slog.Default().
	Logger *slog.Logger
}

// Environment variables read by FromEnv; `xlamesh launch` sets the first four for each process,
// and the three mutual TLS files unless it runs with -tls=false.
const (
	EnvCoordinator      = "XLAMESH_COORDINATOR"       // host:port
	EnvProcessID        = "XLAMESH_PROCESS_ID"        // integer
	EnvNumProcesses     = "XLAMESH_NUM_PROCESSES"     // integer
	EnvJobID            = "XLAMESH_JOB_ID"            // string
	EnvEndpoints        = "XLAMESH_ETCD_ENDPOINTS"    // comma-separated URLs
	EnvInitTimeout      = "XLAMESH_INIT_TIMEOUT"      // Go duration, e.g. 30s
	EnvHeartbeatTimeout = "XLAMESH_HEARTBEAT_TIMEOUT" // Go duration
	EnvBarrierTimeout   = "XLAMESH_BARRIER_TIMEOUT"   // Go duration
	EnvShutdownTimeout  = "XLAMESH_SHUTDOWN_TIMEOUT"  // Go duration
	EnvCertFile         = "XLAMESH_MTLS_CERT_FILE"    // path of this process's certificate (PEM)
	EnvKeyFile          = "XLAMESH_MTLS_KEY_FILE"     // path of its private key (PEM)
	EnvCAFile           = "XLAMESH_MTLS_CA_FILE"      // path of the job's CA certificate (PEM)
)

// FromEnv reads a Config from the environment variables above, as torchrun's workers read
// RANK and WORLD_SIZE. Unset variables leave their fields zero (defaults apply in Join); a
// variable that does not parse gives an error wrapping ErrConfig that names it.
func FromEnv() (Config, error) {
	var c Config
	c.JobID = os.Getenv(EnvJobID)
	c.Coordinator = os.Getenv(EnvCoordinator)
	c.CertFile, c.KeyFile, c.CAFile = os.Getenv(EnvCertFile), os.Getenv(EnvKeyFile), os.Getenv(EnvCAFile)
	if v := os.Getenv(EnvEndpoints); v != "" {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				c.Endpoints = append(c.Endpoints, e)
			}
		}
	}
	ints := []struct {
		name string
		dst  *int
	}{{EnvProcessID, &c.ProcessID}, {EnvNumProcesses, &c.NumProcesses}}
	for _, f := range ints {
		if v := os.Getenv(f.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return Config{}, fmt.Errorf("distributed: %w: %s=%q is not an integer", ErrConfig, f.name, v)
			}
			*f.dst = n
		}
	}
	durations := []struct {
		name string
		dst  *time.Duration
	}{{EnvInitTimeout, &c.InitTimeout}, {EnvHeartbeatTimeout, &c.HeartbeatTimeout},
		{EnvBarrierTimeout, &c.BarrierTimeout}, {EnvShutdownTimeout, &c.ShutdownTimeout}}
	for _, f := range durations {
		if v := os.Getenv(f.name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return Config{}, fmt.Errorf("distributed: %w: %s=%q is not a positive duration (e.g. 30s)", ErrConfig, f.name, v)
			}
			*f.dst = d
		}
	}
	return c, nil
}

// withDefaults fills the zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.JobID == "" {
		c.JobID = DefaultJobID
	}
	if strings.Contains(c.JobID, "/") {
		return c, fmt.Errorf("distributed: %w: job id %q contains \"/\"", ErrConfig, c.JobID)
	}
	if c.NumProcesses < 1 || c.ProcessID < 0 || c.ProcessID >= c.NumProcesses {
		return c, fmt.Errorf("distributed: %w: process id %d of %d processes (need 0 ≤ id < processes; set %s and %s)",
			ErrConfig, c.ProcessID, c.NumProcesses, EnvProcessID, EnvNumProcesses)
	}
	if c.Coordinator == "" && len(c.Endpoints) == 0 {
		return c, fmt.Errorf("distributed: %w: no coordinator address (host:port) and no etcd endpoints (set %s or %s)",
			ErrConfig, EnvCoordinator, EnvEndpoints)
	}
	if len(c.Endpoints) == 0 {
		if err := checkCoordinator(c.Coordinator); err != nil {
			return c, err
		}
	}
	if set := c.CertFile != "" || c.KeyFile != "" || c.CAFile != ""; set && (c.CertFile == "" || c.KeyFile == "" || c.CAFile == "") {
		return c, fmt.Errorf("distributed: %w: mutual TLS needs a certificate, a key and a CA file; got cert %q, key %q, CA %q (set %s, %s and %s)",
			ErrConfig, c.CertFile, c.KeyFile, c.CAFile, EnvCertFile, EnvKeyFile, EnvCAFile)
	}
	for _, t := range []struct {
		d   *time.Duration
		def time.Duration
	}{{&c.InitTimeout, DefaultInitTimeout}, {&c.HeartbeatTimeout, DefaultHeartbeatTimeout},
		{&c.BarrierTimeout, DefaultBarrierTimeout}, {&c.ShutdownTimeout, DefaultShutdownTimeout}} {
		if *t.d < 0 {
			return c, fmt.Errorf("distributed: %w: negative timeout %s", ErrConfig, *t.d)
		}
		if *t.d == 0 {
			*t.d = t.def
		}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// checkCoordinator refuses a coordinator address that is not host:port with a port from 1 to
// 65535: port 0 would make process 0 listen on a port nobody else knows.
func checkCoordinator(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("distributed: %w: coordinator address %q is not host:port: %v", ErrConfig, addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("distributed: %w: coordinator address %q: port %q is not 1 to 65535 (the other processes must know the port)",
			ErrConfig, addr, port)
	}
	return nil
}

// tlsOn says whether the job uses mutual TLS.
func (c Config) tlsOn() bool { return c.CertFile != "" }

// leaseTTL is the heartbeat timeout in whole seconds, at least 1.
func (c Config) leaseTTL() int64 {
	return max(1, int64((c.HeartbeatTimeout+time.Second-1)/time.Second))
}
