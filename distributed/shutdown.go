package distributed

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

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
