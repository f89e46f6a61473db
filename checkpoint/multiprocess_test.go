package checkpoint_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/checkpoint"
	"github.com/xlamesh/xlamesh/distributed"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// The environment of a child process of TestTwoProcesses: the directory to save to, and the
// process that kills itself (SIGKILL) as soon as its save has started, if any.
const (
	envChildDir  = "XLAMESH_CHECKPOINT_TEST_DIR"
	envChildKill = "XLAMESH_CHECKPOINT_TEST_KILL"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(envChildDir); dir != "" {
		if err := child(dir); err != nil {
			fmt.Fprintln(os.Stderr, "checkpoint child:", err)
			if errors.Is(err, distributed.ErrProcessLost) {
				os.Exit(3)
			}
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// jobArray is the global array of the job: x[i][j] = 4i + j, shape [8, 4].
func jobArray() []float32 {
	out := make([]float32, 32)
	for i := range out {
		out[i] = float32(i)
	}
	return out
}

// child is one process of a 2-process job with 2 CPU devices each: it saves x, split over the
// processes by rows and over its devices by columns, and restores it replicated on every
// device of the job.
func child(dir string) error {
	ctx := context.Background()
	cfg, err := distributed.FromEnv()
	if err != nil {
		return err
	}
	job, err := distributed.Join(ctx, cfg)
	if err != nil {
		return err
	}
	defer job.Close()
	c, err := pjrt.Open(pjrt.WithDistributed(job), pjrt.WithCPUDeviceCount(2))
	if err != nil {
		return err
	}
	defer c.Close()
	me := job.ProcessID()
	m, err := mesh.New(jit.Devices(c), []int{2, 2}, "proc", "x")
	if err != nil {
		return err
	}
	x, err := jit.FromProcessLocalData(c, mesh.MustNamedSharding(m, mesh.P("proc", "x")), jobArray()[16*me:16*me+16], []int{4, 4}, []int{8, 4})
	if err != nil {
		return err
	}
	defer x.Close()
	p, err := checkpoint.SaveAsync(ctx, dir, map[string]*jit.Array{"x": x}, checkpoint.WithJob(job))
	if err != nil {
		return err
	}
	if k, err := strconv.Atoi(os.Getenv(envChildKill)); err == nil && k == me {
		return syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	if err := p.Wait(); err != nil {
		return err
	}
	got, err := checkpoint.Restore[map[string]*jit.Array](ctx, dir, c, map[string]mesh.NamedSharding{"x": mesh.MustNamedSharding(m, mesh.P())})
	if err != nil {
		return err
	}
	defer got["x"].Close()
	for _, sh := range got["x"].AddressableShards() {
		v, err := sh.Data.ToHost()
		if err != nil {
			return err
		}
		if !slices.Equal(v.([]float32), jobArray()) {
			return fmt.Errorf("restored on %s: %v", sh.Device, v)
		}
	}
	fmt.Println("saved and restored")
	return job.Shutdown(ctx)
}

// runJob runs the 2 processes of a job saving to dir, the process kill (if >= 0) killing
// itself mid-save, and returns each process's exit code and output.
func runJob(t *testing.T, dir string, kill int) ([]int, []string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmds, outs := make([]*exec.Cmd, 2), make([]*bytes.Buffer, 2)
	for i := range cmds {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		// The children open the CPU plugin that can be one process of a job (pjrt.Open's default
		// in a job), whichever plugin the test itself runs on.
		env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, pjrt.EnvPlugin+"=") })
		cmd.Env = append(env, envChildDir+"="+dir, envChildKill+"="+strconv.Itoa(kill), "TF_CPP_MIN_LOG_LEVEL=2",
			distributed.EnvCoordinator+"="+addr, distributed.EnvJobID+"=checkpoint",
			distributed.EnvProcessID+"="+strconv.Itoa(i), distributed.EnvNumProcesses+"=2",
			distributed.EnvInitTimeout+"=60s", distributed.EnvHeartbeatTimeout+"=3s")
		outs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
	}
	codes, texts := make([]int, 2), make([]string, 2)
	for i, cmd := range cmds {
		_ = cmd.Wait()
		codes[i], texts[i] = cmd.ProcessState.ExitCode(), outs[i].String()
	}
	return codes, texts
}

// TestTwoProcesses: a job of two processes saves a global array, each process its own shards,
// and restores it; a process killed mid-save leaves the previous checkpoint restorable and
// the new one absent or refused as incomplete.
func TestTwoProcesses(t *testing.T) {
	_, err := pjrttest.CacheDir()
	require.NoError(t, err)
	c := pjrttest.ClientWithDevices(t, 8)
	root := t.TempDir()
	step1 := filepath.Join(root, "step_1")
	codes, outs := runJob(t, step1, -1)
	for i := range codes {
		require.Equal(t, 0, codes[i], "process %d:\n%s", i, outs[i])
		assert.Contains(t, outs[i], "saved and restored")
	}
	assert.Equal(t, []string{"x/.zarray", "x/0.0", "x/0.1", "x/1.0", "x/1.1"}, files(t, step1))
	restoreStep1 := func() {
		s := sharding(t, c, []int{8}, []string{"d"}, mesh.P("d"))
		got, err := checkpoint.Restore[map[string]*jit.Array](context.Background(), step1, c, map[string]mesh.NamedSharding{"x": s})
		require.NoError(t, err)
		assert.Equal(t, jobArray(), host(t, got["x"]))
		require.NoError(t, got["x"].Close())
	}
	restoreStep1()

	for kill := range 2 {
		t.Run(fmt.Sprintf("process %d killed", kill), func(t *testing.T) {
			step2 := filepath.Join(root, fmt.Sprintf("step_2_%d", kill))
			codes, outs := runJob(t, step2, kill)
			assert.Equal(t, -1, codes[kill], "the killed process:\n%s", outs[kill])
			other := 1 - kill
			assert.Equal(t, 3, codes[other], "the other process ends with ErrProcessLost:\n%s", outs[other])
			_, err := os.Stat(step2)
			assert.True(t, errors.Is(err, os.ErrNotExist), "no checkpoint at %s: %v", step2, err)
			tmp := step2 + ".orbax-checkpoint-tmp-job"
			if _, err := os.Stat(tmp); err == nil {
				assert.Equal(t, 0, kill, "only a lost process 0 leaves the temporary directory")
				_, err := checkpoint.Restore[map[string]*jit.Array](context.Background(), tmp, c,
					map[string]mesh.NamedSharding{"x": sharding(t, c, []int{1}, []string{"d"}, mesh.P())})
				assert.ErrorIs(t, err, checkpoint.ErrIncomplete)
			}
			restoreStep1()
		})
	}
}
