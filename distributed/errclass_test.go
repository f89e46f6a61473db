package distributed_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/distributed"
)

// healthy checks that no process of jobs has seen a loss, and that they still exchange values
// and pass a barrier.
func healthy(t *testing.T, jobs []*distributed.Job, round string) {
	t.Helper()
	for p, j := range jobs {
		require.NoError(t, j.Err(), "process %d", p)
	}
	for p, err := range each(jobs, func(p int, j *distributed.Job) error {
		if err := j.Put(fmt.Sprintf("%s/%d", round, p), []byte(round)); err != nil {
			return err
		}
		v, err := j.Get(fmt.Sprintf("%s/%d", round, (p+1)%len(jobs)), 10*time.Second)
		if err != nil {
			return err
		}
		if string(v) != round {
			return fmt.Errorf("got %q, want %q", v, round)
		}
		return j.Barrier(context.Background(), round)
	}) {
		require.NoError(t, err, "process %d after %s", p, round)
	}
}

// TestErrorCancelledContext: a caller's cancelled or expired context fails that call with an
// error wrapping the context's error, not as "process 0 lost"; the job stays healthy for every
// process, and the next calls work.
func TestErrorCancelledContext(t *testing.T) {
	jobs := joinAll(t, testConfig(t, "cancelled", 2))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel2()
	<-expired.Done()
	for _, tc := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		for p, j := range jobs {
			err := j.PutContext(tc.ctx, "k", []byte("v"))
			require.ErrorIs(t, err, tc.want, "process %d put", p)
			assert.NotErrorIs(t, err, distributed.ErrProcessLost)
			assert.NotErrorIs(t, err, distributed.ErrCoordinator)
			assert.Equal(t, fmt.Sprintf(`distributed: job "cancelled": put "k": %v`, tc.want), err.Error())
			_, err = j.GetContext(tc.ctx, "k")
			require.ErrorIs(t, err, tc.want, "process %d get", p)
			assert.NotErrorIs(t, err, distributed.ErrProcessLost)
			err = j.PutContext(tc.ctx, "big", make([]byte, 2*distributed.ChunkBytes))
			require.ErrorIs(t, err, tc.want, "process %d chunked put", p)
			err = j.Barrier(tc.ctx, "never")
			require.ErrorIs(t, err, tc.want, "process %d barrier", p)
			assert.NotErrorIs(t, err, distributed.ErrProcessLost)
		}
	}
	// A get cancelled while it waits.
	ctx, cancel3 := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel3() }()
	_, err := jobs[1].GetContext(ctx, "absent")
	require.ErrorIs(t, err, context.Canceled)
	time.Sleep(200 * time.Millisecond) // what a poisoned job would have reported by now
	healthy(t, jobs, "after-cancel")
}

// TestErrorLargeValue: values over etcd's request limit go through in chunks and come back
// exact; a value over MaxValueBytes or a key over MaxKeyBytes is refused before sending with
// ErrTooLarge; the job stays healthy.
func TestErrorLargeValue(t *testing.T) {
	jobs := joinAll(t, testConfig(t, "large", 2))
	for _, n := range []int{0, 1, distributed.ChunkBytes, distributed.ChunkBytes + 1, 9<<20 + 3} {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte(i*31 + n)
		}
		key := fmt.Sprintf("v%d", n)
		require.NoError(t, jobs[0].Put(key, v), "%d bytes", n)
		got, err := jobs[1].Get(key, 10*time.Second)
		require.NoError(t, err, "%d bytes", n)
		assert.True(t, bytes.Equal(v, got), "%d bytes: got %d back", n, len(got))
		got, err = jobs[1].TryGet(key)
		require.NoError(t, err)
		assert.Equal(t, n, len(got))
	}
	// A get that waits sees a large value put later, whole.
	late := bytes.Repeat([]byte("late"), distributed.ChunkBytes)
	got := make(chan []byte, 1)
	go func() {
		v, _ := jobs[1].Get("late", 10*time.Second)
		got <- v
	}()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, jobs[0].Put("late", late))
	assert.True(t, bytes.Equal(late, <-got))
	// Overwriting a large value with a small one, and back.
	require.NoError(t, jobs[0].Put("late", []byte("small")))
	v, err := jobs[1].TryGet("late")
	require.NoError(t, err)
	assert.Equal(t, "small", string(v))

	start := time.Now()
	err = jobs[0].Put("huge", make([]byte, distributed.MaxValueBytes+1))
	require.ErrorIs(t, err, distributed.ErrTooLarge)
	assert.Equal(t, fmt.Sprintf(`distributed: job "large": put "huge": too large for the store: the value has %d bytes (at most %d)`,
		distributed.MaxValueBytes+1, distributed.MaxValueBytes), err.Error())
	longKey := strings.Repeat("k", distributed.MaxKeyBytes+1)
	err = jobs[1].Put(longKey, []byte("v"))
	require.ErrorIs(t, err, distributed.ErrTooLarge)
	_, err = jobs[1].Get(longKey, time.Second)
	require.ErrorIs(t, err, distributed.ErrTooLarge)
	_, err = jobs[1].TryGet(longKey)
	require.ErrorIs(t, err, distributed.ErrTooLarge)
	err = jobs[0].Barrier(context.Background(), longKey)
	require.ErrorIs(t, err, distributed.ErrTooLarge)
	assert.Less(t, time.Since(start), 2*time.Second, "refused before sending")
	healthy(t, jobs, "after-large")
}

// TestErrorCoordinatorGone: when process 0 leaves without shutting down, the others' calls fail
// with a *ProcessLostError naming process 0 — the third class, apart from a caller's context and
// a value too large.
func TestErrorCoordinatorGone(t *testing.T) {
	cfg := testConfig(t, "coordgone", 2)
	cfg.HeartbeatTimeout = 2 * time.Second
	jobs := joinAll(t, cfg)
	waiting := make(chan error, 1)
	go func() { _, err := jobs[1].Get("never", time.Minute); waiting <- err }()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	require.NoError(t, jobs[0].Close())
	err := <-waiting
	var lost *distributed.ProcessLostError
	require.ErrorAs(t, err, &lost)
	assert.Equal(t, 0, lost.Process)
	assert.Less(t, time.Since(start), 15*time.Second)
	err = jobs[1].Put("after", []byte("x"))
	require.ErrorAs(t, err, &lost)
	assert.Equal(t, 0, lost.Process)
}

// TestErrorCoordinatorPortZero: port 0 as the coordinator's port is refused at once, naming the
// address.
func TestErrorCoordinatorPortZero(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "127.0.0.1", "127.0.0.1:70000", "127.0.0.1:x"} {
		start := time.Now()
		_, err := distributed.Join(context.Background(), distributed.Config{NumProcesses: 2, ProcessID: 1, Coordinator: addr})
		require.ErrorIs(t, err, distributed.ErrConfig, addr)
		assert.Contains(t, err.Error(), fmt.Sprintf("coordinator address %q", addr))
		assert.Less(t, time.Since(start), time.Second)
	}
}

// TestErrorJoinCancelled: Join with a cancelled context says so, and names no timeout.
func TestErrorJoinCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := testConfig(t, "joincancel", 2)
	cfg.ProcessID = 1
	_, err := distributed.Join(ctx, cfg)
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, distributed.ErrInitTimeout)
}

// TestConcurrentBarriers: goroutines of each process pass barriers of their own names at the
// same time, several rounds each (run it with -race: the barrier counts are shared).
func TestConcurrentBarriers(t *testing.T) {
	jobs := joinAll(t, testConfig(t, "concbarriers", 2))
	const goroutines, rounds = 6, 3
	for p, err := range each(jobs, func(_ int, j *distributed.Job) error {
		var wg sync.WaitGroup
		errs := make([]error, goroutines)
		for g := range goroutines {
			wg.Go(func() {
				for r := range rounds {
					if err := j.Barrier(context.Background(), fmt.Sprintf("b%d", g)); err != nil {
						errs[g] = fmt.Errorf("barrier b%d round %d: %w", g, r, err)
						return
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}) {
		require.NoError(t, err, "process %d", p)
	}
	healthy(t, jobs, "after-barriers")
}
