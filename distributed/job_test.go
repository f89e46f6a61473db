package distributed_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/distributed"
	"github.com/xlamesh/xlamesh/pjrt/kv"
)

// freeAddr returns a loopback host:port that was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// testConfig is a job of n processes on a fresh loopback port with short timeouts.
func testConfig(t testing.TB, job string, n int) distributed.Config {
	return distributed.Config{JobID: job, NumProcesses: n, Coordinator: freeAddr(t),
		InitTimeout: 20 * time.Second, HeartbeatTimeout: 5 * time.Second,
		BarrierTimeout: 20 * time.Second, ShutdownTimeout: 20 * time.Second}
}

// joinAll joins n processes of cfg's job from goroutines of this test and returns them by id.
func joinAll(t *testing.T, cfg distributed.Config) []*distributed.Job {
	t.Helper()
	jobs := make([]*distributed.Job, cfg.NumProcesses)
	errs := make([]error, cfg.NumProcesses)
	var wg sync.WaitGroup
	for p := range cfg.NumProcesses {
		wg.Go(func() {
			c := cfg
			c.ProcessID = p
			jobs[p], errs[p] = distributed.Join(context.Background(), c)
		})
	}
	wg.Wait()
	for p, err := range errs {
		require.NoError(t, err, "process %d", p)
	}
	t.Cleanup(func() { each(jobs, func(_ int, j *distributed.Job) error { return j.Close() }) })
	return jobs
}

// each runs f for every job concurrently and returns the errors by process id.
func each(jobs []*distributed.Job, f func(p int, j *distributed.Job) error) []error {
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for p, j := range jobs {
		wg.Go(func() { errs[p] = f(p, j) })
	}
	wg.Wait()
	return errs
}

// TestJobLifecycle: three processes (goroutines here) join, exchange values, pass the same
// barrier twice and shut down; afterwards every call fails with ErrClosed.
func TestJobLifecycle(t *testing.T) {
	jobs := joinAll(t, testConfig(t, "lifecycle", 3))
	for p, err := range each(jobs, func(p int, j *distributed.Job) error {
		if err := j.Put(fmt.Sprintf("hello/%d", p), []byte(fmt.Sprintf("from %d", p))); err != nil {
			return err
		}
		next := (p + 1) % 3
		v, err := j.Get(fmt.Sprintf("hello/%d", next), 10*time.Second)
		if err != nil {
			return err
		}
		if want := fmt.Sprintf("from %d", next); string(v) != want {
			return fmt.Errorf("got %q, want %q", v, want)
		}
		for range 2 {
			if err := j.Barrier(context.Background(), "step"); err != nil {
				return err
			}
		}
		return j.Shutdown(context.Background())
	}) {
		require.NoError(t, err, "process %d", p)
	}
	for _, j := range jobs {
		assert.NoError(t, j.Err())
		_, err := j.TryGet("hello/0")
		assert.ErrorIs(t, err, distributed.ErrClosed)
		assert.ErrorIs(t, j.Barrier(context.Background(), "late"), distributed.ErrClosed)
		assert.NoError(t, j.Shutdown(context.Background()), "Shutdown is idempotent")
	}
}

// TestKeyValueStore: the kv.Store contract — a try-get miss and a get timeout are
// kv.ErrKeyNotFound, a get waits for a later put.
func TestKeyValueStore(t *testing.T) {
	jobs := joinAll(t, testConfig(t, "kv", 2))
	_, err := jobs[0].TryGet("absent")
	assert.ErrorIs(t, err, kv.ErrKeyNotFound)
	start := time.Now()
	_, err = jobs[0].Get("absent", 100*time.Millisecond)
	assert.ErrorIs(t, err, kv.ErrKeyNotFound)
	assert.Less(t, time.Since(start), 5*time.Second)

	got := make(chan string, 1)
	go func() {
		v, err := jobs[1].Get("later", 10*time.Second)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(v)
	}()
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, jobs[0].Put("later", []byte("value")))
	assert.Equal(t, "value", <-got)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = jobs[0].GetContext(ctx, "absent")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestInitTimeout: a process whose peers never come fails after the initialisation timeout,
// naming them.
func TestInitTimeout(t *testing.T) {
	cfg := testConfig(t, "lonely", 3)
	cfg.InitTimeout = 500 * time.Millisecond
	start := time.Now()
	_, err := distributed.Join(context.Background(), cfg)
	require.ErrorIs(t, err, distributed.ErrInitTimeout)
	assert.ErrorContains(t, err, "1 of 3 processes joined within 500ms; missing: 1, 2")
	assert.Less(t, time.Since(start), 5*time.Second)

	// A non-zero process without its coordinator.
	cfg.ProcessID = 1
	_, err = distributed.Join(context.Background(), cfg)
	require.ErrorIs(t, err, distributed.ErrInitTimeout)
}

// TestDuplicateProcess: a second process 1 of a running job is refused.
func TestDuplicateProcess(t *testing.T) {
	cfg := testConfig(t, "dup", 2)
	jobs := joinAll(t, cfg)
	cfg.ProcessID = 1
	cfg.InitTimeout = 2 * time.Second
	_, err := distributed.Join(context.Background(), cfg)
	require.ErrorIs(t, err, distributed.ErrDuplicateProcess)
	assert.ErrorContains(t, err, "process 1 is already running")
	assert.NoError(t, jobs[0].Err(), "the refused process does not disturb the job")
}

// TestBarrierTimeout: a barrier that one process never reaches times out, naming it.
func TestBarrierTimeout(t *testing.T) {
	cfg := testConfig(t, "slow", 2)
	cfg.BarrierTimeout = 300 * time.Millisecond
	jobs := joinAll(t, cfg)
	err := jobs[0].Barrier(context.Background(), "alone")
	require.ErrorIs(t, err, distributed.ErrBarrierTimeout)
	assert.ErrorContains(t, err, `barrier "alone": 1 of 2 processes arrived within 300ms; missing: 1`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, jobs[1].Barrier(ctx, "cancelled"), context.Canceled)
}

// TestLostProcess: a process that closes without Shutdown is lost; the others' blocking calls
// end at once with a *ProcessLostError naming it.
func TestLostProcess(t *testing.T) {
	jobs := joinAll(t, testConfig(t, "lost", 3))
	waiting := make(chan error, 2)
	for _, p := range []int{0, 2} {
		go func() { waiting <- jobs[p].Barrier(context.Background(), "never") }()
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	require.NoError(t, jobs[1].Close())
	for range 2 {
		err := <-waiting
		var lost *distributed.ProcessLostError
		require.ErrorAs(t, err, &lost)
		assert.Equal(t, 1, lost.Process)
		assert.Equal(t, "lost", lost.JobID)
		assert.ErrorIs(t, err, distributed.ErrProcessLost)
		assert.Contains(t, err.Error(), `job "lost": process 1 lost: it`)
	}
	assert.Less(t, time.Since(start), 5*time.Second)
	<-jobs[0].Lost()
	assert.ErrorIs(t, jobs[2].Err(), distributed.ErrProcessLost)
	_, err := jobs[2].Get("anything", time.Minute)
	assert.ErrorIs(t, err, distributed.ErrProcessLost)
}

// TestConfig: what Join refuses, and what FromEnv reads.
func TestConfig(t *testing.T) {
	for _, c := range []distributed.Config{
		{NumProcesses: 0, Coordinator: "127.0.0.1:1"},
		{ProcessID: 2, NumProcesses: 2, Coordinator: "127.0.0.1:1"},
		{ProcessID: 0, NumProcesses: 1},
		{JobID: "a/b", NumProcesses: 1, Coordinator: "127.0.0.1:1"},
		{NumProcesses: 1, Coordinator: "127.0.0.1:1", HeartbeatTimeout: -time.Second},
	} {
		_, err := distributed.Join(context.Background(), c)
		assert.ErrorIs(t, err, distributed.ErrConfig, "%+v", c)
	}

	t.Setenv(distributed.EnvCoordinator, "127.0.0.1:7700")
	t.Setenv(distributed.EnvProcessID, "3")
	t.Setenv(distributed.EnvNumProcesses, "4")
	t.Setenv(distributed.EnvJobID, "env")
	t.Setenv(distributed.EnvEndpoints, "http://a:2379, http://b:2379")
	t.Setenv(distributed.EnvHeartbeatTimeout, "3s")
	c, err := distributed.FromEnv()
	require.NoError(t, err)
	assert.Equal(t, distributed.Config{JobID: "env", ProcessID: 3, NumProcesses: 4, Coordinator: "127.0.0.1:7700",
		Endpoints: []string{"http://a:2379", "http://b:2379"}, HeartbeatTimeout: 3 * time.Second}, c)
	t.Setenv(distributed.EnvInitTimeout, "soon")
	_, err = distributed.FromEnv()
	assert.ErrorIs(t, err, distributed.ErrConfig)
	assert.ErrorContains(t, err, distributed.EnvInitTimeout)
}

// TestCoordinatorPortTaken: process 0 cannot serve a port that is in use.
func TestCoordinatorPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	_, err = distributed.Join(context.Background(), distributed.Config{NumProcesses: 1, Coordinator: l.Addr().String()})
	require.ErrorIs(t, err, distributed.ErrCoordinator)
	assert.ErrorContains(t, err, "process 0 cannot serve the coordinator at "+l.Addr().String())
	assert.False(t, errors.Is(err, distributed.ErrProcessLost))
}
