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

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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

// heartbeat drains the lease's keepalive answers. The client closes the channel when this
// process leaves, or when no answer came for a whole TTL: then heartbeat asks the store how the
// lease is. A lease still alive (the answers were only late) gets a new keepalive; an expired
// one means the others have declared this process lost; no answer means the store is gone.
func (j *Job) heartbeat(alive <-chan *clientv3.LeaseKeepAliveResponse) {
	for {
		for range alive {
		}
		if j.ctx.Err() != nil {
			return
		}
		ctx, cancel := context.WithTimeout(j.ctx, 2*time.Second)
		ttl, err := j.cli.TimeToLive(ctx, j.lease)
		cancel()
		if err == nil && ttl.TTL > 0 {
			if alive, err = j.cli.KeepAlive(j.ctx, j.lease); err == nil {
				continue
			}
		}
		if j.ctx.Err() != nil {
			return
		}
		if err != nil {
			j.lostMu.Lock()
			j.storeGone = true
			j.lostMu.Unlock()
		}
		switch {
		case err == nil:
			j.setLost(&ProcessLostError{JobID: j.cfg.JobID, Process: j.cfg.ProcessID,
				Reason: fmt.Sprintf("this process's own heartbeat lease expired (it was unresponsive for more than %s)", j.cfg.HeartbeatTimeout)})
		case len(j.cfg.Endpoints) == 0 && j.cfg.ProcessID != 0:
			j.setLost(&ProcessLostError{JobID: j.cfg.JobID, Process: 0,
				Reason: fmt.Sprintf("its coordinator at %s stopped answering heartbeats for %s (process 0 died, or the network failed)",
					j.cfg.Coordinator, j.cfg.HeartbeatTimeout)})
		default:
			j.setLost(fmt.Errorf("distributed: job %q: %w: the store at %s stopped answering heartbeats for %s",
				j.cfg.JobID, ErrCoordinator, j.where(), j.cfg.HeartbeatTimeout))
		}
		return
	}
}

// monitor watches the other processes' keys from rev on: a key that goes without an exit
// marker "shutdown" is a lost process.
func (j *Job) monitor(rev int64) {
	for j.ctx.Err() == nil {
		wch := j.cli.Watch(j.ctx, j.prefix+procsDir, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
		for wr := range wch {
			if wr.Err() != nil {
				break
			}
			rev = wr.Header.Revision
			for _, ev := range wr.Events {
				p, ok := j.procOf(string(ev.Kv.Key))
				if !ok || ev.Type != clientv3.EventTypeDelete || p == j.cfg.ProcessID {
					continue
				}
				j.processGone(p)
			}
		}
		select {
		case <-j.ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// processGone decides, from its exit marker, whether process p left cleanly or was lost.
func (j *Job) processGone(p int) {
	ctx, cancel := context.WithTimeout(j.ctx, 5*time.Second)
	defer cancel()
	how := ""
	if resp, err := j.cli.Get(ctx, fmt.Sprintf("%s%s%d/", j.prefix, exitDir, p), clientv3.WithPrefix(), clientv3.WithKeysOnly()); err == nil && len(resp.Kvs) > 0 {
		key := string(resp.Kvs[0].Key)
		how = key[strings.LastIndexByte(key, '/')+1:]
	}
	switch how {
	case exitShutdown:
		j.cfg.Logger.Debug("distributed: process shut down", "job", j.cfg.JobID, "process", p)
	case exitClosed:
		j.setLost(&ProcessLostError{JobID: j.cfg.JobID, Process: p, Reason: "it closed the job without shutting down (its program failed or stopped early)"})
	default:
		j.setLost(&ProcessLostError{JobID: j.cfg.JobID, Process: p,
			Reason: fmt.Sprintf("no heartbeat for %s (killed, crashed, hung, or cut off)", j.cfg.HeartbeatTimeout)})
	}
}

// setLost records the first loss and stops every blocking call.
func (j *Job) setLost(err error) {
	j.mu.Lock()
	quiet := j.quiet
	j.mu.Unlock()
	j.lostMu.Lock()
	defer j.lostMu.Unlock()
	if j.lost != nil || j.ctx.Err() != nil || quiet {
		return
	}
	j.lost = err
	close(j.lostCh)
	j.stopOps(err)
	j.cfg.Logger.Debug("distributed: job lost", "job", j.cfg.JobID, "err", err)
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

// bind returns ctx cancelled also when the job is lost or left.
func (j *Job) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(j.ops, cancel)
	return ctx, func() { stop(); cancel() }
}

// state returns the job's loss, or ErrClosed once this process left, or nil.
func (j *Job) state() error {
	if lost := j.Err(); lost != nil {
		return lost
	}
	if j.ctx.Err() != nil {
		return fmt.Errorf("distributed: job %q: %w", j.cfg.JobID, ErrClosed)
	}
	return nil
}

// opError classifies why an operation (what, e.g. `put "k"`) failed, and never ends the job:
// the job's loss or ErrClosed; ctx, the caller's context, ending (an error wrapping ctx.Err());
// a request the store refused as too large (ErrTooLarge); or else the store (ErrCoordinator).
// Only the heartbeat decides that the coordinator is gone: a store that stopped answering
// cancels every operation through bind within the heartbeat timeout, and state reports it.
func (j *Job) opError(ctx context.Context, what string, err error) error {
	if e := j.state(); e != nil {
		return e
	}
	if ctx.Err() != nil {
		return fmt.Errorf("distributed: job %q: %s: %w", j.cfg.JobID, what, ctx.Err())
	}
	if errors.Is(err, ErrCorrupt) {
		return err // already classified, by decode
	}
	if errors.Is(err, rpctypes.ErrNoSpace) || errors.Is(err, rpctypes.ErrGRPCNoSpace) {
		// Also ResourceExhausted, but the store is full, not the request too large.
		return fmt.Errorf("distributed: job %q: %s: %w: the store is full: %v", j.cfg.JobID, what, ErrCoordinator, err)
	}
	if errors.Is(err, rpctypes.ErrRequestTooLarge) || errors.Is(err, rpctypes.ErrGRPCRequestTooLarge) ||
		status.Code(err) == codes.ResourceExhausted {
		return fmt.Errorf("distributed: job %q: %s: %w: %v", j.cfg.JobID, what, ErrTooLarge, err)
	}
	return fmt.Errorf("distributed: job %q: %s: %w: %v", j.cfg.JobID, what, ErrCoordinator, err)
}

// ownTimeout turns the end of a context made by Put, TryGet or Get themselves (not the
// caller's) into the store not answering in time.
func (j *Job) ownTimeout(what string, err error, d time.Duration) error {
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || j.state() != nil {
		return err
	}
	return fmt.Errorf("distributed: job %q: %s: %w: the store at %s did not answer within %s", j.cfg.JobID, what, ErrCoordinator, j.where(), d)
}

// opTimeout bounds Put and TryGet, which take no context.
func (j *Job) opTimeout() time.Duration { return j.cfg.HeartbeatTimeout + 5*time.Second }

// Put stores value under key in the job's key-value store (etcd, below the run's prefix).
// Values larger than etcd's request limit are stored in chunks of ChunkBytes, transparently;
// a key over MaxKeyBytes or a value over MaxValueBytes is refused before anything is sent, with
// an error wrapping ErrTooLarge. Otherwise it fails with the job's loss, ErrClosed, or an error
// wrapping ErrCoordinator when the store does not answer within the heartbeat timeout plus a
// margin. No failure of Put ends the job.
func (j *Job) Put(key string, value []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), j.opTimeout())
	defer cancel()
	return j.ownTimeout(fmt.Sprintf("put %q", key), j.PutContext(ctx, key, value), j.opTimeout())
}

// PutContext is Put bounded by ctx; when ctx ends first the error wraps ctx.Err(), and the job
// goes on.
func (j *Job) PutContext(ctx context.Context, key string, value []byte) error {
	if err := j.state(); err != nil {
		return err
	}
	if err := j.checkSize(key, len(value)); err != nil {
		return err
	}
	bctx, cancel := j.bind(ctx)
	defer cancel()
	if err := j.putValue(bctx, key, value); err != nil {
		return j.opError(ctx, fmt.Sprintf("put %q", key), err)
	}
	return nil
}

// TryGet returns the value of key at once, or an error wrapping kv.ErrKeyNotFound.
func (j *Job) TryGet(key string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), j.opTimeout())
	defer cancel()
	v, err := j.tryGet(ctx, key)
	return v, j.ownTimeout(fmt.Sprintf("get %q", key), err, j.opTimeout())
}

func (j *Job) tryGet(ctx context.Context, key string) ([]byte, error) {
	if err := j.state(); err != nil {
		return nil, err
	}
	if err := j.checkSize(key, 0); err != nil {
		return nil, err
	}
	bctx, stop := j.bind(ctx)
	defer stop()
	var resp *clientv3.GetResponse
	err := j.retry(bctx, func(ctx context.Context) (err error) {
		resp, err = j.cli.Get(ctx, j.prefix+kvDir+key)
		return err
	})
	if err != nil {
		return nil, j.opError(ctx, fmt.Sprintf("get %q", key), err)
	}
	if len(resp.Kvs) == 0 {
		return nil, fmt.Errorf("distributed: job %q: key %q: %w", j.cfg.JobID, key, kv.ErrKeyNotFound)
	}
	v, err := j.decode(bctx, key, resp.Kvs[0].Value)
	if err != nil {
		return nil, j.opError(ctx, fmt.Sprintf("get %q", key), err)
	}
	return v, nil
}

// Get returns the value of key, waiting up to timeout for a process to put it (a get, then a
// watch from the get's revision). When the time runs out the error wraps kv.ErrKeyNotFound;
// a lost process ends the wait at once with its *ProcessLostError.
func (j *Job) Get(key string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	v, err := j.GetContext(ctx, key)
	if errors.Is(err, context.DeadlineExceeded) && j.state() == nil {
		return nil, fmt.Errorf("distributed: job %q: key %q: %w after waiting %s", j.cfg.JobID, key, kv.ErrKeyNotFound, timeout)
	}
	return v, err
}

// GetContext is Get bounded by ctx; when ctx ends first the error wraps ctx.Err(), and the job
// goes on.
func (j *Job) GetContext(ctx context.Context, key string) ([]byte, error) {
	if err := j.state(); err != nil {
		return nil, err
	}
	if err := j.checkSize(key, 0); err != nil {
		return nil, err
	}
	full := j.prefix + kvDir + key
	var stored []byte
	err := j.watch(ctx, full, false, func(k string, v []byte, deleted bool) bool {
		if k == full && !deleted {
			stored = v
			return true
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	bctx, stop := j.bind(ctx)
	defer stop()
	v, err := j.decode(bctx, key, stored)
	if err != nil {
		return nil, j.opError(ctx, fmt.Sprintf("get %q", key), err)
	}
	return v, nil
}

// watch reads key (or every key under it, with prefix) and then follows its changes, calling
// update with each key and value until update returns true. It ends early with the job's loss,
// ErrClosed or ctx's error.
func (j *Job) watch(ctx context.Context, key string, prefix bool, update func(key string, value []byte, deleted bool) bool) error {
	bctx, cancel := j.bind(ctx)
	defer cancel()
	opts := []clientv3.OpOption{}
	if prefix {
		opts = append(opts, clientv3.WithPrefix())
	}
	for {
		var resp *clientv3.GetResponse
		err := j.retry(bctx, func(ctx context.Context) (err error) {
			resp, err = j.cli.Get(ctx, key, opts...)
			return err
		})
		if err != nil {
			return j.ctxError(ctx, err)
		}
		for _, kv := range resp.Kvs {
			if update(string(kv.Key), kv.Value, false) {
				return nil
			}
		}
		wctx, stop := context.WithCancel(bctx)
		wch := j.cli.Watch(wctx, key, append(opts, clientv3.WithRev(resp.Header.Revision+1))...)
		restart := false
		for !restart {
			select {
			case <-bctx.Done():
				stop()
				return j.ctxError(ctx, bctx.Err())
			case wr, ok := <-wch:
				if !ok || wr.Err() != nil {
					restart = true // read again and watch from there (e.g. after a compaction)
					break
				}
				for _, ev := range wr.Events {
					if update(string(ev.Kv.Key), ev.Kv.Value, ev.Type == clientv3.EventTypeDelete) {
						stop()
						return nil
					}
				}
			}
		}
		stop()
		select {
		case <-bctx.Done():
			return j.ctxError(ctx, bctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// retry runs op until it succeeds, fails otherwise than with the store unreachable, ctx ends,
// or the job is lost. A coordinator that went away is named by the heartbeat (within the
// heartbeat timeout, which then cancels ctx through bind), not by the first request that failed.
func (j *Job) retry(ctx context.Context, op func(context.Context) error) error {
	for {
		err := op(ctx)
		if err == nil || status.Code(err) != codes.Unavailable {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ctxError explains a failed wait: the loss, the job left, the caller's context, or the store.
func (j *Job) ctxError(ctx context.Context, err error) error {
	return j.opError(ctx, "waiting", err)
}

// Barrier waits until every process of the job has called Barrier with the same name as often
// as this one (JAX's wait_at_barrier), at most cfg.BarrierTimeout or until ctx ends. A process
// that is lost, or shuts down without reaching the barrier, ends the wait at once with a
// *ProcessLostError; running out of time gives an error wrapping ErrBarrierTimeout that lists
// the processes that did not arrive.
func (j *Job) Barrier(ctx context.Context, name string) error {
	j.mu.Lock()
	gen := j.barriers[name]
	j.barriers[name]++
	j.mu.Unlock()
	return j.barrier(ctx, name, gen, j.cfg.BarrierTimeout)
}

func (j *Job) barrier(ctx context.Context, name string, gen int, timeout time.Duration) error {
	if err := j.state(); err != nil {
		return err
	}
	if len(name) > MaxKeyBytes {
		return fmt.Errorf("distributed: job %q: barrier %.40q...: %w: the name has %d bytes (at most %d)", j.cfg.JobID, name, ErrTooLarge, len(name), MaxKeyBytes)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir := fmt.Sprintf("%s%s%s/%d/", j.prefix, barrierDir, url.PathEscape(name), gen)
	bctx, stop := j.bind(ctx)
	err := j.retry(bctx, func(ctx context.Context) error {
		_, err := j.cli.Put(ctx, dir+strconv.Itoa(j.cfg.ProcessID), "")
		return err
	})
	stop()
	if err != nil {
		return j.ctxError(ctx, err)
	}
	arrived := map[int]bool{}
	var gone error
	err = j.watch(ctx, j.prefix+statusDir, true, func(key string, _ []byte, deleted bool) bool {
		switch {
		case deleted:
		case strings.HasPrefix(key, dir):
			if p, err := strconv.Atoi(key[len(dir):]); err == nil {
				arrived[p] = true
			}
		case strings.HasPrefix(key, j.prefix+exitDir):
			rest := strings.Split(key[len(j.prefix+exitDir):], "/")
			if p, err := strconv.Atoi(rest[0]); err == nil && !arrived[p] && p != j.cfg.ProcessID {
				how := rest[len(rest)-1]
				if how == exitClosed {
					j.processGone(p) // the monitor will say so too; the first word stands
					gone = j.Err()
				}
				if gone == nil {
					gone = &ProcessLostError{JobID: j.cfg.JobID, Process: p, Reason: fmt.Sprintf("it shut down before reaching barrier %q", name)}
				}
				return true
			}
		}
		return len(arrived) == j.cfg.NumProcesses
	})
	if gone != nil {
		return gone
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) && j.state() == nil {
		var missing []int
		for p := range j.cfg.NumProcesses {
			if !arrived[p] {
				missing = append(missing, p)
			}
		}
		return fmt.Errorf("distributed: job %q: %w: barrier %q: %d of %d processes arrived within %s; missing: %s",
			j.cfg.JobID, ErrBarrierTimeout, name, len(arrived), j.cfg.NumProcesses, timeout, intList(missing))
	}
	return err
}

// Shutdown leaves the job cleanly, as jax.distributed.shutdown does: it waits until every
// process has called Shutdown (a barrier, bounded by cfg.ShutdownTimeout and ctx), marks this
// process as shut down, and gives up its heartbeat lease. Process 0 then waits (same bound) for
// the others to leave before stopping the embedded server. Shutdown returns the barrier's error
// (a *ProcessLostError, ErrBarrierTimeout) but leaves in any case; it is idempotent, and
// after it every method fails with ErrClosed.
func (j *Job) Shutdown(ctx context.Context) error {
	if !j.startLeaving() {
		<-j.left
		return j.leaveErr
	}
	ctx, cancel := context.WithTimeout(ctx, j.cfg.ShutdownTimeout)
	defer cancel()
	err := j.barrier(ctx, shutdownBarrier, 0, j.cfg.ShutdownTimeout)
	how := exitShutdown
	if err != nil {
		how = exitClosed
	}
	j.leave(ctx, how)
	j.leaveErr = err
	close(j.left)
	return err
}

// Close leaves the job at once, without waiting for the others: the others see this process as
// lost ("it closed the job without shutting down") unless it already shut down. Process 0 keeps
// its embedded server up until the others have left, at most a heartbeat timeout, so that they
// learn why the job ended. It is idempotent and returns nil (or Shutdown's error).
func (j *Job) Close() error {
	if !j.startLeaving() {
		<-j.left
		return j.leaveErr
	}
	ctx, cancel := context.WithTimeout(context.Background(), j.cfg.HeartbeatTimeout+time.Second)
	defer cancel()
	j.leave(ctx, exitClosed)
	close(j.left)
	return nil
}

func (j *Job) startLeaving() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.leaving {
		return false
	}
	j.leaving = true
	return true
}

// leave marks how this process leaves, gives up its lease and, on process 0, waits (until ctx
// ends) for the others to go before the server stops.
func (j *Job) leave(ctx context.Context, how string) {
	j.mu.Lock()
	j.quiet = true
	j.mu.Unlock()
	j.lostMu.Lock()
	gone := j.storeGone
	j.lostMu.Unlock()
	if gone {
		j.teardown(true)
		return
	}
	short := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(j.ctx, 2*time.Second)
	}
	c, cancel := short()
	_, _ = j.cli.Put(c, fmt.Sprintf("%s%s%d/%s", j.prefix, exitDir, j.cfg.ProcessID, how), "")
	cancel()
	c, cancel = short()
	_, _ = j.cli.Revoke(c, j.lease)
	cancel()
	if j.cfg.ProcessID == 0 {
		// Wait for the others' keys to go (they revoke their leases, or the leases expire).
		_ = j.watchEmpty(ctx)
		if len(j.cfg.Endpoints) > 0 {
			c, cancel = short()
			_, _ = j.cli.Delete(c, j.prefix, clientv3.WithPrefix())
			cancel()
		}
	}
	j.teardown(true)
}

// watchEmpty waits until no process key is left under procs/, or ctx ends.
func (j *Job) watchEmpty(ctx context.Context) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(j.ctx, cancel)
	defer stop()
	live := map[string]bool{}
	resp, err := j.cli.Get(wctx, j.prefix+procsDir, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return err
	}
	for _, kv := range resp.Kvs {
		live[string(kv.Key)] = true
	}
	if len(live) == 0 {
		return nil
	}
	for wr := range j.cli.Watch(wctx, j.prefix+procsDir, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1)) {
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypeDelete {
				delete(live, string(ev.Kv.Key))
			} else {
				live[string(ev.Kv.Key)] = true
			}
		}
		if len(live) == 0 {
			return nil
		}
	}
	return wctx.Err()
}

// teardown stops the goroutines, the client and the server. graceful says the lease was
// already given up.
func (j *Job) teardown(graceful bool) {
	if !graceful && j.cli != nil && j.lease != 0 {
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		_, _ = j.cli.Revoke(c, j.lease)
		cancel()
	}
	j.stopOps(fmt.Errorf("distributed: job %q: %w", j.cfg.JobID, ErrClosed))
	j.cancel()
	j.wg.Wait()
	if j.cli != nil {
		_ = j.cli.Close()
	}
	if j.srv != nil {
		j.srv.stop()
	}
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
