package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBenchTraceCPUOnly: the CPU plugin has no profiler extension, so -trace fails before
// anything is timed, with an error that says so, and writes no file.
func TestBenchTraceCPUOnly(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.json")
	stdout, stderr, code := runMain(t, "bench", "-n", "8", "-iters", "1", "-devices", "2", "-q", "-trace", out)
	assert.Equal(t, 1, code, stderr)
	assert.Empty(t, stdout)
	assert.Regexp(t, `^xlamesh: -trace .*/out\.json: pjrt: plugin /\S+\.so \(PJRT C API 0\.\d+\): plugin has no profiler extension: it cannot record a trace\n$`, stderr)
	_, err := os.Stat(out)
	require.ErrorIs(t, err, os.ErrNotExist)
}
