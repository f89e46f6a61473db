package distributed

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

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
