package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestBenchTimeout runs the command on a kernel that never ends: with -timeout 2s it exits
// with status 1 soon after, naming the kernel, instead of hanging.
func TestBenchTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spin.mlir")
	require.NoError(t, os.WriteFile(path, []byte(pjrttest.SpinModule(1)), 0o644))
	start := time.Now()
	stdout, stderr, code := runMain(t, "bench", "-kernel", path, "-iters", "1", "-q", "-timeout", "2s")
	assert.Less(t, time.Since(start), time.Minute)
	assert.Equal(t, 1, code, stderr)
	assert.Empty(t, stdout)
	assert.Equal(t, "\nxlamesh: bench: kernel "+path+": a call timed out: it did not end within -timeout 2s "+
		"(a loop that never ends? raise -timeout, or 0 for no limit)\n", stderr, "-q: the message alone")

	_, stderr, code = runMain(t, "bench", "-kernel", path, "-timeout", "-1s")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-timeout must not be negative, got -1s")
}
