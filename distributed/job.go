package distributed

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/xlamesh/xlamesh/pjrt/kv"
)

// Job is this process's membership in a running job, made by Join: JAX's distributed client.
// It is a kv.Distributed, so pjrt.Open(pjrt.WithDistributed(job)) makes this process's client
// of the job. All methods are safe for concurrent use.
//
// Every blocking method is bounded by a context or a timeout, and fails at once with a
// *ProcessLostError when any process of the job is lost: the job is then over for everyone.
type Job struct {
	cfg    Config
	srv    *server // process 0's embedded server, or nil
	cli    *clientv3.Client
	lease  clientv3.LeaseID
	root   string // /xlamesh/<job>/
	runKey string // root + "run": the current run's id, held by process 0's lease
	prefix string // root + <run id> + "/": every key of this run

	ctx     context.Context // this process's part of the job; cancelled when it leaves
	cancel  context.CancelFunc
	ops     context.Context // cancelled when the job is lost or left: stops blocking calls
	stopOps context.CancelCauseFunc
	wg      sync.WaitGroup // the heartbeat and monitor goroutines

	lostMu    sync.Mutex
	lost      error // the first *ProcessLostError (or lost coordinator), or nil
	lostCh    chan struct{}
	storeGone bool // the store stopped answering: leaving skips talking to it

	mu       sync.Mutex
	barriers map[string]int // how many times this process entered each barrier
	leaving  bool           // Shutdown or Close was called
	quiet    bool           // this process is leaving: the others going is no loss any more
	leaveErr error
	left     chan struct{} // closed when leave has finished
}

var _ kv.Distributed = (*Job)(nil)

// Key layout, below the run's prefix:
//
//	procs/<p>                      process p is alive (held by its heartbeat lease)
//	status/barrier/<name>/<gen>/<p> process p reached barrier name for the gen-th time
//	status/exit/<p>/<how>          process p left: "shutdown" (clean) or "closed"
//	kv/<key>                       the key-value store of Get, TryGet and Put
const (
	procsDir   = "procs/"
	barrierDir = "status/barrier/"
	exitDir    = "status/exit/"
	statusDir  = "status/"
	kvDir      = "kv/"

	exitShutdown = "shutdown"
	exitClosed   = "closed"

	shutdownBarrier = "xlamesh.shutdown"
)

// Join makes this process a member of the job cfg describes and returns once every process has
// joined (the rendezvous), at most cfg.InitTimeout later (or when ctx ends). Without
// cfg.Endpoints, process 0 first starts an embedded etcd server on cfg.Coordinator; the others
// wait for it. Every process then holds a heartbeat lease of cfg.HeartbeatTimeout and watches
// the others' leases: a process whose lease expires (killed, hung, cut off) or that closes
// without Shutdown is lost, and every blocking call of every other process fails with a
// *ProcessLostError naming it.
//
// Errors wrap ErrConfig (a bad cfg, e.g. a coordinator address with port 0), ErrTLS (this
// process and the coordinator do not pass each other's mutual TLS check), ErrCoordinator
// (process 0 cannot serve the coordinator address), ErrInitTimeout (not every process came; the
// message lists the missing ones), ErrDuplicateProcess (a live process already has this id),
// ErrProcessLost, or ctx.Err() when ctx ends first.
//
// Restarting a job with the same JobID is safe: each run has its own random id (held by process
// 0's lease), so nothing of an earlier run is read, even on a shared etcd cluster.
func Join(ctx context.Context, cfg Config) (*Job, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, fmt.Errorf("distributed: %w: nil context", ErrConfig)
	}
	initCtx, cancelInit := context.WithTimeout(ctx, cfg.InitTimeout)
	defer cancelInit()
	j := &Job{cfg: cfg, root: "/xlamesh/" + cfg.JobID + "/", barriers: map[string]int{},
		lostCh: make(chan struct{}), left: make(chan struct{})}
	j.runKey = j.root + "run"
	j.ctx, j.cancel = context.WithCancel(context.Background())
	j.ops, j.stopOps = context.WithCancelCause(j.ctx)
	fail := func(err error) (*Job, error) {
		j.teardown(false)
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			// The caller's context ended first: that, not the store, is why Join gave up.
			return nil, fmt.Errorf("distributed: job %q: process %d joining: %w", cfg.JobID, cfg.ProcessID, ctx.Err())
		}
		return nil, err
	}
	var tlsCfg *tls.Config
	if cfg.tlsOn() {
		if tlsCfg, err = cfg.clientTLS(); err != nil {
			return fail(err)
		}
	}
	endpoints := cfg.Endpoints
	if len(endpoints) == 0 {
		scheme := "http://"
		if tlsCfg != nil {
			scheme = "https://"
		}
		endpoints = []string{scheme + cfg.Coordinator}
		if cfg.ProcessID == 0 {
			if j.srv, err = startServer(initCtx, cfg); err != nil {
				return fail(err)
			}
			cfg.Logger.Debug("distributed: coordinator serving", "job", cfg.JobID, "address", cfg.Coordinator, "mtls", tlsCfg != nil)
		}
		// Refuse a TLS mismatch with the coordinator at once, not after the init timeout.
		if err := probeTLS(initCtx, cfg.JobID, cfg.Coordinator, tlsCfg, true); err != nil {
			return fail(err)
		}
	} else {
		// The same for an existing cluster's endpoints that listen now.
		for _, e := range endpoints {
			u, err := url.Parse(e)
			if err != nil || u.Host == "" {
				continue // the client reports it
			}
			if err := probeTLS(initCtx, cfg.JobID, u.Host, tlsCfg, false); err != nil {
				return fail(err)
			}
		}
	}
	j.cli, err = clientv3.New(clientv3.Config{
		Endpoints:          endpoints,
		TLS:                tlsCfg,
		DialTimeout:        2 * time.Second,
		Logger:             zap.NewNop(),
		MaxCallSendMsgSize: maxValueBytes + 1<<20,
		// Reconnect quickly while process 0's server is coming up (gRPC's default backoff grows
		// to 2 minutes).
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, MaxDelay: time.Second},
			MinConnectTimeout: time.Second,
		})},
	})
	if err != nil {
		return fail(fmt.Errorf("distributed: job %q: %w: %v", cfg.JobID, ErrCoordinator, err))
	}
	lease, err := j.cli.Grant(initCtx, cfg.leaseTTL())
	if err != nil {
		return fail(j.initError(initCtx, fmt.Sprintf("process %d could not reach the store at %s", cfg.ProcessID, strings.Join(endpoints, ", ")), err))
	}
	j.lease = lease.ID
	alive, err := j.cli.KeepAlive(j.ctx, j.lease)
	if err != nil {
		return fail(j.initError(initCtx, "starting the heartbeat", err))
	}
	j.wg.Go(func() { j.heartbeat(alive) })
	rev, err := j.rendezvous(initCtx)
	if err != nil {
		return fail(err)
	}
	j.wg.Go(func() { j.monitor(rev) })
	return j, nil
}

// initError turns a failure during Join into ErrInitTimeout (the time ran out), the loss that
// caused it, or ErrCoordinator.
func (j *Job) initError(ctx context.Context, what string, err error) error {
	if lost := j.Err(); lost != nil {
		return lost
	}
	if ctx.Err() != nil {
		return fmt.Errorf("distributed: job %q: %w: %s within %s", j.cfg.JobID, ErrInitTimeout, what, j.cfg.InitTimeout)
	}
	return fmt.Errorf("distributed: job %q: %w: %s: %v", j.cfg.JobID, ErrCoordinator, what, err)
}

// procInfo is the value of procs/<p>.
type procInfo struct {
	PID  int    `json:"pid"`
	Host string `json:"host"`
}

// rendezvous claims this process's id in the current run and waits until every process has
// claimed its own. It returns the store revision at which all were present.
func (j *Job) rendezvous(ctx context.Context) (int64, error) {
	if j.cfg.ProcessID == 0 {
		if err := j.startRun(ctx); err != nil {
			return 0, err
		}
	}
	host, _ := os.Hostname()
	info, _ := json.Marshal(procInfo{PID: os.Getpid(), Host: host})
	for {
		run, err := j.waitRun(ctx)
		if err != nil {
			return 0, err
		}
		j.prefix = j.root + run + "/"
		me := j.procKey(j.cfg.ProcessID)
		resp, err := j.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(me), "=", 0)).
			Then(clientv3.OpPut(me, string(info), clientv3.WithLease(j.lease))).
			Else(clientv3.OpGet(me)).Commit()
		if err != nil {
			return 0, j.initError(ctx, fmt.Sprintf("process %d joining run %s", j.cfg.ProcessID, run), err)
		}
		if !resp.Succeeded {
			var other procInfo
			if rr := resp.Responses[0].GetResponseRange(); rr != nil && len(rr.Kvs) > 0 {
				_ = json.Unmarshal(rr.Kvs[0].Value, &other)
			}
			return 0, fmt.Errorf("distributed: job %q: %w: process %d is already running (pid %d on %q)",
				j.cfg.JobID, ErrDuplicateProcess, j.cfg.ProcessID, other.PID, other.Host)
		}
		rev, changed, err := j.waitAll(ctx, run)
		if err != nil || !changed {
			return rev, err
		}
		// The run we joined ended (a stale run of an earlier incarnation): join the new one.
		if _, err := j.cli.Delete(ctx, me); err != nil {
			return 0, j.initError(ctx, "leaving a stale run", err)
		}
	}
}

// startRun makes a new run id, held by process 0's lease. A run key of a live earlier process 0
// (on a shared cluster) is waited out until ctx ends.
func (j *Job) startRun(ctx context.Context) error {
	var b [8]byte
	_, _ = rand.Read(b[:])
	run := hex.EncodeToString(b[:])
	for {
		resp, err := j.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(j.runKey), "=", 0)).
			Then(clientv3.OpPut(j.runKey, run, clientv3.WithLease(j.lease))).Commit()
		if err != nil {
			return j.initError(ctx, "process 0 starting the run", err)
		}
		if resp.Succeeded {
			return nil
		}
		// Wait for the other run's key to go.
		wctx, cancel := context.WithCancel(ctx)
		wch := j.cli.Watch(wctx, j.runKey, clientv3.WithRev(resp.Header.Revision+1))
		gone := false
		for !gone {
			select {
			case <-ctx.Done():
				cancel()
				return fmt.Errorf("distributed: job %q: %w: process 0 of another run of the job is still alive after %s",
					j.cfg.JobID, ErrDuplicateProcess, j.cfg.InitTimeout)
			case wr, ok := <-wch:
				if !ok || wr.Err() != nil {
					gone = true // look again
				}
				for _, ev := range wr.Events {
					if ev.Type == clientv3.EventTypeDelete {
						gone = true
					}
				}
			}
		}
		cancel()
	}
}

// waitRun returns the current run id, waiting for process 0 to make one.
func (j *Job) waitRun(ctx context.Context) (string, error) {
	for {
		resp, err := j.cli.Get(ctx, j.runKey)
		if err != nil {
			return "", j.initError(ctx, "waiting for process 0 to start the job", err)
		}
		if len(resp.Kvs) > 0 {
			return string(resp.Kvs[0].Value), nil
		}
		wctx, cancel := context.WithCancel(ctx)
		wch := j.cli.Watch(wctx, j.runKey, clientv3.WithRev(resp.Header.Revision+1))
		select {
		case <-ctx.Done():
			cancel()
			return "", fmt.Errorf("distributed: job %q: %w: process 0 did not start the job at %s within %s",
				j.cfg.JobID, ErrInitTimeout, j.where(), j.cfg.InitTimeout)
		case <-j.lostCh:
			cancel()
			return "", j.Err()
		case <-wch:
		}
		cancel()
	}
}

// waitAll waits until every process has a key under procs/ of run. changed reports that the
// run key changed meanwhile (the run was stale).
func (j *Job) waitAll(ctx context.Context, run string) (rev int64, changed bool, err error) {
	resp, err := j.cli.Txn(ctx).Then(clientv3.OpGet(j.runKey), clientv3.OpGet(j.prefix+procsDir, clientv3.WithPrefix())).Commit()
	if err != nil {
		return 0, false, j.initError(ctx, "waiting for the other processes", err)
	}
	present := map[int]bool{}
	if rr := resp.Responses[0].GetResponseRange(); len(rr.Kvs) == 0 || string(rr.Kvs[0].Value) != run {
		return 0, true, nil
	}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		if p, ok := j.procOf(string(kv.Key)); ok {
			present[p] = true
		}
	}
	rev = resp.Header.Revision
	if len(present) == j.cfg.NumProcesses {
		return rev, false, nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wch := j.cli.Watch(wctx, j.root, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for {
		select {
		case <-ctx.Done():
			var missing []int
			for p := range j.cfg.NumProcesses {
				if !present[p] {
					missing = append(missing, p)
				}
			}
			return 0, false, fmt.Errorf("distributed: job %q: %w: %d of %d processes joined within %s; missing: %s",
				j.cfg.JobID, ErrInitTimeout, len(present), j.cfg.NumProcesses, j.cfg.InitTimeout, intList(missing))
		case <-j.lostCh:
			return 0, false, j.Err()
		case wr, ok := <-wch:
			if !ok || wr.Err() != nil {
				return j.waitAll(ctx, run)
			}
			for _, ev := range wr.Events {
				key := string(ev.Kv.Key)
				if key == j.runKey && (ev.Type == clientv3.EventTypeDelete || string(ev.Kv.Value) != run) {
					return 0, true, nil
				}
				if p, ok := j.procOf(key); ok {
					present[p] = ev.Type == clientv3.EventTypePut
					if !present[p] {
						delete(present, p)
					}
				}
			}
			if len(present) == j.cfg.NumProcesses {
				return wr.Header.Revision, false, nil
			}
		}
	}
}

// Err returns the loss that ended the job — a *ProcessLostError, or an error wrapping
// ErrCoordinator when the store itself went away — or nil while every process is alive.
func (j *Job) Err() error {
	j.lostMu.Lock()
	defer j.lostMu.Unlock()
	return j.lost
}

// Lost returns a channel closed when a process of the job is lost (see Err).
func (j *Job) Lost() <-chan struct{} { return j.lostCh }

// ProcessID returns this process's id.
func (j *Job) ProcessID() int { return j.cfg.ProcessID }

// NumProcesses returns the number of processes of the job.
func (j *Job) NumProcesses() int { return j.cfg.NumProcesses }

// InitTimeout returns the job's initialisation timeout (pjrt.Open's bound for the device exchange).
func (j *Job) InitTimeout() time.Duration { return j.cfg.InitTimeout }

// JobID returns the job's name.
func (j *Job) JobID() string { return j.cfg.JobID }

// String returns e.g. `Job("demo", process 1 of 4)`.
func (j *Job) String() string {
	return fmt.Sprintf("Job(%q, process %d of %d)", j.cfg.JobID, j.cfg.ProcessID, j.cfg.NumProcesses)
}

// where names the store: the coordinator address or the etcd endpoints.
func (j *Job) where() string {
	if len(j.cfg.Endpoints) > 0 {
		return strings.Join(j.cfg.Endpoints, ",")
	}
	return j.cfg.Coordinator
}

func (j *Job) procKey(p int) string { return j.prefix + procsDir + strconv.Itoa(p) }

// procOf returns p for the key procs/<p> of the current run.
func (j *Job) procOf(key string) (int, bool) {
	rest, ok := strings.CutPrefix(key, j.prefix+procsDir)
	if !ok {
		return 0, false
	}
	p, err := strconv.Atoi(rest)
	return p, err == nil && p >= 0 && p < j.cfg.NumProcesses
}

// intList formats ids as "1, 3", or "none".
func intList(ids []int) string {
	if len(ids) == 0 {
		return "none"
	}
	slices.Sort(ids)
	parts := make([]string, len(ids))
	for i, p := range ids {
		parts[i] = strconv.Itoa(p)
	}
	return strings.Join(parts, ", ")
}
