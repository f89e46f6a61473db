package distributed_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/distributed"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// The multi-process tests run this test binary again as the job's processes: TestMain sees
// envChild and runs child instead of the tests. Every child and every wait is bounded in time;
// everything listens on loopback.
const (
	envChild = "XLAMESH_DISTRIBUTED_TEST_CHILD" // the child's role: "worker" or "victim"
	envOut   = "XLAMESH_DISTRIBUTED_TEST_OUT"   // a file the child appends its report to
)

// Exit codes of a child.
const (
	exitOK   = 0
	exitJoin = 2 // Join or pjrt.Open failed
	exitLost = 3 // a blocking call failed with a *ProcessLostError
	exitElse = 4 // anything else
	exitHang = 9 // a victim that was never killed
)

func TestMain(m *testing.M) {
	if role := os.Getenv(envChild); role != "" {
		os.Exit(child(role))
	}
	os.Exit(m.Run())
}

// report is what a child prints on its "view" line: its client's devices.
type report struct {
	Process      int   `json:"process"`
	ProcessIndex int   `json:"process_index"`
	Devices      []int `json:"devices"`
	Addressable  []int `json:"addressable"`
}

// child is one process of a test job: join, open a two-device CPU client of the job, print
// the device view, pass barrier "ready", then as a worker pass barrier "done" and shut down,
// or as a victim wait to be killed.
func child(role string) int {
	cfg, err := distributed.FromEnv()
	if err != nil {
		fmt.Println("error:", err)
		return exitJoin
	}
	job, err := distributed.Join(context.Background(), cfg)
	if err != nil {
		fmt.Println("error:", err)
		return exitJoin
	}
	defer job.Close()
	client, err := pjrt.Open(pjrt.WithDistributed(job), pjrt.WithCPUDeviceCount(2))
	if err != nil {
		fmt.Println("error:", err)
		return exitJoin
	}
	r := report{Process: job.ProcessID(), ProcessIndex: client.ProcessIndex()}
	for _, d := range client.Devices() {
		r.Devices = append(r.Devices, d.ID())
	}
	for _, d := range client.AddressableDevices() {
		r.Addressable = append(r.Addressable, d.ID())
	}
	client.Close()
	line, _ := json.Marshal(r)
	fmt.Printf("view %s\n", line)
	fail := func(err error) int {
		fmt.Println("error:", err)
		if errors.Is(err, distributed.ErrProcessLost) {
			return exitLost
		}
		return exitElse
	}
	if err := job.Barrier(context.Background(), "ready"); err != nil {
		return fail(err)
	}
	fmt.Println("ready")
	if role == "victim" {
		time.Sleep(time.Minute)
		return exitHang
	}
	if err := job.Barrier(context.Background(), "done"); err != nil {
		return fail(err)
	}
	if err := job.Shutdown(context.Background()); err != nil {
		return fail(err)
	}
	fmt.Println("shutdown")
	return exitOK
}

// proc is a running child.
type proc struct {
	id    int
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	ready chan struct{} // closed when the child printed "ready"
	done  chan struct{} // closed when it exited
	code  int
	took  time.Duration
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// startJob starts n children of one job; victim (or -1) names the one that waits to be killed.
func startJob(t *testing.T, ctx context.Context, job, coordinator string, n, victim int) []*proc {
	t.Helper()
	if _, err := pjrttest.CacheDir(); err != nil { // children find the plugins through XLAMESH_CACHE_DIR
		t.Fatal(err)
	}
	procs := make([]*proc, n)
	for i := range n {
		role := "worker"
		if i == victim {
			role = "victim"
		}
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			envChild+"="+role,
			distributed.EnvJobID+"="+job,
			distributed.EnvCoordinator+"="+coordinator,
			distributed.EnvProcessID+"="+strconv.Itoa(i),
			distributed.EnvNumProcesses+"="+strconv.Itoa(n),
			distributed.EnvInitTimeout+"=60s",
			distributed.EnvHeartbeatTimeout+"=6s",
			distributed.EnvBarrierTimeout+"=60s",
			distributed.EnvShutdownTimeout+"=30s",
			"TF_CPP_MIN_LOG_LEVEL=2")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		p := &proc{id: i, cmd: cmd, ready: make(chan struct{}), done: make(chan struct{})}
		start := time.Now()
		require.NoError(t, cmd.Start())
		go func() {
			sc := bufio.NewScanner(out)
			readyOnce := sync.OnceFunc(func() { close(p.ready) })
			for sc.Scan() {
				p.mu.Lock()
				p.lines = append(p.lines, sc.Text())
				p.mu.Unlock()
				if sc.Text() == "ready" {
					readyOnce()
				}
			}
			_, _ = io.Copy(io.Discard, out)
			err := cmd.Wait()
			p.took = time.Since(start)
			p.code = cmd.ProcessState.ExitCode()
			if err != nil && p.code == 0 {
				p.code = -1
			}
			if s := strings.TrimSpace(stderr.String()); s != "" {
				p.mu.Lock()
				p.lines = append(p.lines, "stderr: "+s)
				p.mu.Unlock()
			}
			close(p.done)
		}()
		procs[i] = p
	}
	t.Cleanup(func() {
		for _, p := range procs {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return procs
}

// views returns the device views the children printed.
func views(t *testing.T, procs []*proc) []report {
	t.Helper()
	out := make([]report, len(procs))
	for i, p := range procs {
		found := false
		for _, l := range strings.Split(p.output(), "\n") {
			if rest, ok := strings.CutPrefix(l, "view "); ok {
				require.NoError(t, json.Unmarshal([]byte(rest), &out[i]))
				found = true
			}
		}
		require.True(t, found, "process %d printed no view:\n%s", i, p.output())
	}
	return out
}

// TestProcesses: 2 and 4 real OS processes rendezvous through process 0's embedded etcd on
// loopback, open one CPU client each of the job and agree on the global device list (two
// devices per process, ids numbered by the plugin per process), pass two barriers and shut down.
func TestProcesses(t *testing.T) {
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("%d processes", n), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			procs := startJob(t, ctx, fmt.Sprintf("procs%d", n), freeAddr(t), n, -1)
			for _, p := range procs {
				<-p.done
			}
			for _, p := range procs {
				require.Equal(t, exitOK, p.code, "process %d:\n%s", p.id, p.output())
				assert.Contains(t, p.output(), "shutdown")
			}
			vs := views(t, procs)
			for i, v := range vs {
				assert.Equal(t, i, v.ProcessIndex)
				assert.Len(t, v.Devices, 2*n)
				assert.Equal(t, vs[0].Devices, v.Devices, "process %d disagrees about the global devices", i)
				assert.Equal(t, v.Devices[2*i:2*i+2], v.Addressable)
			}
		})
	}
}

// TestProcessKilled: with 4 processes past a barrier, one is killed (SIGKILL); the others,
// waiting at the next barrier, exit with the typed error naming it within the heartbeat timeout
// (6 s) plus a margin. Killing process 0, the coordinator, too. Then the same job id starts
// again on the same port, and runs to the end; its process 0 removes the data directory the
// killed one left in TMPDIR.
func TestProcessKilled(t *testing.T) {
	for _, victim := range []int{2, 0} {
		t.Run(fmt.Sprintf("kill process %d", victim), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // the children's os.TempDir()
			dataDirs := func() []string {
				m, err := filepath.Glob(filepath.Join(tmp, "xlamesh-etcd-*"))
				require.NoError(t, err)
				return m
			}
			addr := freeAddr(t)
			job := fmt.Sprintf("killed%d", victim)
			procs := startJob(t, ctx, job, addr, 4, victim)
			for _, p := range procs {
				select {
				case <-p.ready:
				case <-p.done:
					t.Fatalf("process %d exited early with %d:\n%s", p.id, p.code, p.output())
				}
			}
			killed := time.Now()
			require.NoError(t, procs[victim].cmd.Process.Signal(syscall.SIGKILL))
			for _, p := range procs {
				<-p.done
				if p.id == victim {
					continue
				}
				took := time.Since(killed)
				assert.Equal(t, exitLost, p.code, "process %d:\n%s", p.id, p.output())
				assert.Contains(t, p.output(), fmt.Sprintf(`job %q: process %d lost`, job, victim), "process %d", p.id)
				assert.Less(t, took, 30*time.Second, "process %d noticed the loss after %s", p.id, took)
			}
			t.Logf("all survivors exited %s after the kill", time.Since(killed).Round(10*time.Millisecond))
			if victim == 0 {
				assert.Len(t, dataDirs(), 1, "the killed process 0 could not remove its data directory")
			}

			// The same job id on the same coordinator port runs again.
			again := startJob(t, ctx, job, addr, 4, -1)
			for _, p := range again {
				<-p.done
			}
			for _, p := range again {
				assert.Equal(t, exitOK, p.code, "restarted process %d:\n%s", p.id, p.output())
			}
			assert.Empty(t, dataDirs(), "data directories left in TMPDIR")
		})
	}
}
