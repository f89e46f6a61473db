package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xlamesh/xlamesh/distributed"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// envChild makes this test binary run the example as one process of a job.
const envChild = "XLAMESH_EXAMPLE_MULTIPROCESS_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		if err := run(2, 1, 0); err != nil {
			os.Stderr.WriteString("multiprocess: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTwoProcesses runs the example as a job of two real processes on loopback: both print the
// global and addressable device views and the same barrier-synchronised result.
func TestTwoProcesses(t *testing.T) {
	if _, err := pjrttest.CacheDir(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	outs := make([]*bytes.Buffer, 2)
	cmds := make([]*exec.Cmd, 2)
	for i := range cmds {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=1", "TF_CPP_MIN_LOG_LEVEL=2",
			distributed.EnvCoordinator+"="+addr, distributed.EnvJobID+"=example",
			distributed.EnvProcessID+"="+strconv.Itoa(i), distributed.EnvNumProcesses+"=2",
			distributed.EnvInitTimeout+"=60s", distributed.EnvHeartbeatTimeout+"=5s")
		outs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	var results []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
		out := outs[i].String()
		for _, want := range []string{"global devices (id@process): 4 [0@p0 1@p0 2048@p1 2049@p1]", "addressable devices: 2", "shut down"} {
			if !strings.Contains(out, want) {
				t.Errorf("process %d: output lacks %q:\n%s", i, want, out)
			}
		}
		for _, line := range strings.Split(out, "\n") {
			if _, r, ok := strings.Cut(line, "result after barrier"); ok {
				results = append(results, r)
			}
		}
	}
	if len(results) != 2 || results[0] != results[1] || !strings.Contains(results[0], "sum of x² = 1240") {
		t.Errorf("results %q: want the same sum of x² = 1240 on both processes", results)
	}
}
