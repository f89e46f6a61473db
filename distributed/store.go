package distributed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/xlamesh/xlamesh/pjrt/kv"
)

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
