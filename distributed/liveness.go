package distributed

import (
	"context"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

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
