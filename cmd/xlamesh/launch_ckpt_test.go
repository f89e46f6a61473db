package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/checkpoint"
	"github.com/xlamesh/xlamesh/distributed"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// envCkptChild makes TestCkptChild save to and restore from its value, a directory, as one
// process of a job that TestLaunchCheckpoint launches.
const envCkptChild = "XLAMESH_LAUNCH_CKPT_DIR"

// ckptArray is the job's global array: 0, 1, ... 63 as float32, shape [8, 8].
func ckptArray() []float32 {
	out := make([]float32, 64)
	for i := range out {
		out[i] = float32(i)
	}
	return out
}

// TestCkptChild is the program TestLaunchCheckpoint launches; on its own it does nothing.
func TestCkptChild(t *testing.T) {
	dir := os.Getenv(envCkptChild)
	if dir == "" {
		return
	}
	if err := ckptChild(dir); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ckptChild saves the job's array, split by rows over the processes and by columns over each
// process's 2 CPU devices, then restores it split the other way and checks its shards.
func ckptChild(dir string) error {
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
	n, me := job.NumProcesses(), job.ProcessID()
	m, err := mesh.New(jit.Devices(c), []int{n, 2}, "proc", "x")
	if err != nil {
		return err
	}
	rows := 8 / n
	x, err := jit.FromProcessLocalData(c, mesh.MustNamedSharding(m, mesh.P("proc", "x")),
		ckptArray()[8*rows*me:8*rows*(me+1)], []int{rows, 8}, []int{8, 8})
	if err != nil {
		return err
	}
	defer x.Close()
	if err := checkpoint.Save(ctx, dir, map[string]*jit.Array{"x": x}, checkpoint.WithJob(job)); err != nil {
		return err
	}
	restored, err := checkpoint.Restore[map[string]*jit.Array](ctx, dir, c,
		map[string]mesh.NamedSharding{"x": mesh.MustNamedSharding(m, mesh.P("x", "proc"))})
	if err != nil {
		return err
	}
	defer restored["x"].Close()
	all := ckptArray()
	for _, sh := range restored["x"].AddressableShards() {
		v, err := sh.Data.ToHost()
		if err != nil {
			return err
		}
		var want []float32
		for i := sh.Index[0].Start; i < sh.Index[0].Stop; i++ {
			want = append(want, all[8*i+sh.Index[1].Start:8*i+sh.Index[1].Stop]...)
		}
		if !slices.Equal(v.([]float32), want) {
			return fmt.Errorf("shard %v: %v, want %v", sh.Index, v, want)
		}
	}
	fmt.Printf("process %d restored %d shards\n", me, len(restored["x"].AddressableShards()))
	return job.Shutdown(ctx)
}

// TestLaunchCheckpoint: `xlamesh launch -n 2` runs a job whose processes save one global
// array together, each its own shards, and restore it onto another sharding; the checkpoint
// restores in this one process too.
func TestLaunchCheckpoint(t *testing.T) {
	_, err := pjrttest.CacheDir()
	require.NoError(t, err)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(t.TempDir(), "step_1")
	t.Setenv(envCkptChild, dir)
	var out bytes.Buffer
	err = launch(&out, []string{"-n", "2", "-heartbeat-timeout", "5s", "-init-timeout", "60s", "-timeout", "2m",
		"--", os.Args[0], "-test.run=^TestCkptChild$"})
	require.NoError(t, err, out.String())
	for i := range 2 {
		assert.Contains(t, out.String(), fmt.Sprintf("[%d] process %d restored 2 shards", i, i))
	}

	c := pjrttest.ClientWithDevices(t, 8)
	m, err := mesh.New(jit.Devices(c), []int{8}, "d")
	require.NoError(t, err)
	got, err := checkpoint.Restore[map[string]*jit.Array](context.Background(), dir, c,
		map[string]mesh.NamedSharding{"x": mesh.MustNamedSharding(m, mesh.P(nil, "d"))})
	require.NoError(t, err)
	defer got["x"].Close()
	v, err := got["x"].ToHost()
	require.NoError(t, err)
	assert.Equal(t, ckptArray(), v)
}
