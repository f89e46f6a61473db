package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/distributed"
)

// envLaunchChild makes TestLaunchChild act as a launched process: "ok" passes two barriers and
// shuts down; "fail:<k>" makes process k exit 7 after the first barrier, without leaving the job.
const envLaunchChild = "XLAMESH_LAUNCH_TEST_CHILD"

// TestLaunchChild is the program TestLaunch launches (this test binary, run again); on its own,
// without envLaunchChild, it does nothing.
func TestLaunchChild(t *testing.T) {
	mode := os.Getenv(envLaunchChild)
	if mode == "" {
		return
	}
	os.Exit(launchChild(mode))
}

func launchChild(mode string) int {
	cfg, err := distributed.FromEnv()
	if err != nil {
		fmt.Println("error:", err)
		return 2
	}
	job, err := distributed.Join(context.Background(), cfg)
	if err != nil {
		fmt.Println("error:", err)
		return 2
	}
	fmt.Printf("joined as %d of %d\n", job.ProcessID(), job.NumProcesses())
	if cfg.CertFile != "" {
		for _, f := range []string{cfg.CertFile, cfg.KeyFile, cfg.CAFile, filepath.Dir(cfg.CertFile)} {
			if info, err := os.Stat(f); err == nil {
				fmt.Printf("mtls %s %v\n", filepath.Base(f), info.Mode().Perm())
			}
		}
		if job.ProcessID() == job.NumProcesses()-1 {
			// The same process without its certificate is refused by the coordinator.
			plain := cfg
			plain.CertFile, plain.KeyFile, plain.CAFile, plain.InitTimeout = "", "", "", 5*time.Second
			_, err := distributed.Join(context.Background(), plain)
			fmt.Printf("without a certificate: ErrTLS %v\n", errors.Is(err, distributed.ErrTLS))
		}
	} else {
		fmt.Println("mtls off")
	}
	if err := job.Barrier(context.Background(), "ready"); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 3
	}
	if k, ok := strings.CutPrefix(mode, "fail:"); ok && k == strconv.Itoa(job.ProcessID()) {
		fmt.Fprintln(os.Stderr, "failing on purpose")
		return 7 // no Close: the others learn it from the heartbeat
	}
	if err := job.Barrier(context.Background(), "done"); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		job.Close() // process 0 stops its server and removes its data directory
		if errors.Is(err, distributed.ErrProcessLost) {
			return 3
		}
		return 4
	}
	if err := job.Shutdown(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 4
	}
	job.Close()
	return 0
}

// TestLaunch runs 3 processes of a job through launch: all pass; then one fails, and the others
// exit on their own, naming it, within the heartbeat timeout.
func TestLaunch(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the processes' os.TempDir(): process 0's etcd data
	run := func(mode string) (string, error) {
		t.Setenv(envLaunchChild, mode)
		var out bytes.Buffer
		err := launch(&out, []string{"-n", "3", "-heartbeat-timeout", "5s", "-init-timeout", "60s", "-grace", "20s",
			"-timeout", "2m", "--", os.Args[0], "-test.run=^TestLaunchChild$"})
		return out.String(), err
	}
	out, err := run("ok")
	require.NoError(t, err, out)
	for i := range 3 {
		assert.Contains(t, out, fmt.Sprintf("[%d] joined as %d of 3", i, i))
	}
	assert.Contains(t, out, "[launch] all 3 processes exited 0")

	start := time.Now()
	out, err = run("fail:1")
	require.Error(t, err, out)
	assert.Contains(t, err.Error(), "the first to fail was process 1")
	assert.Contains(t, out, "[1] failing on purpose")
	for _, i := range []int{0, 2} {
		assert.Contains(t, out, fmt.Sprintf("[%d] error: distributed: job ", i))
		assert.Contains(t, out, fmt.Sprintf("[launch] process %d: exit status 3", i), out)
	}
	assert.Contains(t, out, "process 1 lost: no heartbeat for 5s")
	assert.NotContains(t, out, "SIGTERM", "the others exit on their own before the grace period ends")
	assert.Less(t, time.Since(start), 30*time.Second)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "left in TMPDIR")
}

// TestLaunchTLS: `xlamesh launch -n 4` runs its job with mutual TLS by default: every process
// gets its own certificate, key and the job's CA (files 0600 in a 0700 directory), the job
// passes two barriers over TLS, a process without its certificate is refused with ErrTLS, and
// the certificates are gone afterwards. -tls=false launches without.
func TestLaunchTLS(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv(envLaunchChild, "ok")
	var out bytes.Buffer
	err := launch(&out, []string{"-n", "4", "-heartbeat-timeout", "5s", "-init-timeout", "60s", "-timeout", "2m",
		"--", os.Args[0], "-test.run=^TestLaunchChild$"})
	require.NoError(t, err, out.String())
	s := out.String()
	assert.Contains(t, s, "mutual TLS with a CA made for this job")
	for i := range 4 {
		assert.Contains(t, s, fmt.Sprintf("[%d] joined as %d of 4", i, i))
		for _, f := range []string{fmt.Sprintf("process-%d.pem", i), fmt.Sprintf("process-%d-key.pem", i), "ca.pem"} {
			assert.Contains(t, s, fmt.Sprintf("[%d] mtls %s -rw-------", i, f))
		}
		assert.Regexp(t, fmt.Sprintf(`\[%d\] mtls xlamesh-launch-tls-\d+ -rwx------`, i), s)
	}
	assert.Contains(t, s, "[3] without a certificate: ErrTLS true")
	assert.Contains(t, s, "[launch] all 4 processes exited 0")
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "left in TMPDIR (the certificates, or etcd's data)")

	// A launch killed before it could remove its certificates: the next one removes them, and
	// leaves a live launch's alone.
	stale, staleLock, err := credentialsDir()
	require.NoError(t, err)
	staleLock.Close() // as a killed launch's lock is released
	live, liveLock, err := credentialsDir()
	require.NoError(t, err)
	defer liveLock.Close()
	next, nextLock, err := credentialsDir()
	require.NoError(t, err)
	nextLock.Close()
	assert.NoDirExists(t, stale)
	assert.DirExists(t, live)
	assert.DirExists(t, next)
	entries, err := os.ReadDir(next)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, ".lock", entries[0].Name())
	require.NoError(t, os.RemoveAll(live))
	require.NoError(t, os.RemoveAll(next))

	out.Reset()
	err = launch(&out, []string{"-n", "2", "-tls=false", "-timeout", "2m", "--", os.Args[0], "-test.run=^TestLaunchChild$"})
	require.NoError(t, err, out.String())
	assert.Contains(t, out.String(), "mutual TLS off (-tls=false)")
	assert.Contains(t, out.String(), "[1] mtls off")
	assert.Contains(t, out.String(), "[launch] all 2 processes exited 0")
}

func TestLaunchUsage(t *testing.T) {
	var out bytes.Buffer
	err := launch(&out, []string{"-n", "2"})
	var ue *usageErr
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), "no program to launch")
	err = launch(&out, []string{"-n", "0", "--", "true"})
	require.ErrorAs(t, err, &ue)
	err = launch(&out, []string{"-coordinator", "127.0.0.1:0", "--", "true"})
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), `-coordinator "127.0.0.1:0": need host:port`)
}
