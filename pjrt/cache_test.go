package pjrt_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

func TestSerializeRoundTrip(t *testing.T) {
	c := pjrttest.Client(t)
	exe, s := compileSeed(t, c)
	defer exe.Close()
	data, err := exe.Serialize()
	require.NoError(t, err)
	require.NotEmpty(t, data)
	loaded, err := c.LoadExecutable(data, pjrt.CompileOptions{DeviceAssignment: exe.DeviceAssignment()})
	require.NoError(t, err)
	defer loaded.Close()
	assert.Equal(t, exe.OutputShapes(), loaded.OutputShapes())
	runSeed(t, c, loaded, s)

	_, err = c.LoadExecutable([]byte("not an executable"), pjrt.CompileOptions{DeviceAssignment: exe.DeviceAssignment()})
	assert.ErrorIs(t, err, pjrt.ErrCompile)
	_, err = c.LoadExecutable(nil, pjrt.CompileOptions{})
	assert.ErrorIs(t, err, pjrt.ErrCompile)
}

// TestPersistentCompileCache shows a second client (a new PJRT client: nothing in memory is
// shared) loading the program the first one compiled, without compiling, and a corrupt entry
// being a logged miss. Its clients have as many devices as pjrttest.Client's (8 by default).
func TestPersistentCompileCache(t *testing.T) {
	n := len(pjrttest.Client(t).Devices())
	dir := t.TempDir()
	before := pjrt.LiveExecutables()
	open := func(log *bytes.Buffer) *pjrt.Client {
		platform, err := pjrttest.Options(n)
		require.NoError(t, err)
		c, err := pjrt.Open(append(platform, pjrt.WithCompileCache(dir),
			pjrt.WithLogger(slog.New(slog.NewTextHandler(log, nil))))...)
		require.NoError(t, err)
		return c
	}
	var log1 bytes.Buffer
	c1 := open(&log1)
	exe, s := compileSeed(t, c1)
	runSeed(t, c1, exe, s)
	require.NoError(t, exe.Close())
	assert.Equal(t, pjrt.CompileStats{Compiles: 1, CacheMisses: 1, CacheWrites: 1}, c1.CompileStats())
	require.NoError(t, c1.Close())
	entries, err := filepath.Glob(filepath.Join(dir, "*.xlaexec"))
	require.NoError(t, err)
	require.Len(t, entries, 1)

	var log2 bytes.Buffer
	c2 := open(&log2)
	exe, _ = compileSeed(t, c2)
	runSeed(t, c2, exe, s)
	require.NoError(t, exe.Close())
	assert.Equal(t, pjrt.CompileStats{CacheHits: 1}, c2.CompileStats(), "the second client compiles nothing")
	// Another device assignment is another program.
	perm := s.ids(c2) // reversed: 7, 6, ..., 0 on 8 devices
	slices.Reverse(perm)
	exe, err = c2.Compile(s.module(), pjrt.CompileOptions{DeviceAssignment: perm})
	require.NoError(t, err)
	require.NoError(t, exe.Close())
	if len(perm) > 1 { // reversing one device leaves the assignment, and the program, as it was
		assert.Equal(t, int64(1), c2.CompileStats().Compiles)
	} else {
		assert.Equal(t, pjrt.CompileStats{CacheHits: 2}, c2.CompileStats())
	}
	require.NoError(t, c2.Close())

	// Corrupt every entry: the next client logs a miss, compiles, and rewrites the entry.
	entries, err = filepath.Glob(filepath.Join(dir, "*.xlaexec"))
	require.NoError(t, err)
	for _, e := range entries {
		require.NoError(t, os.WriteFile(e, []byte("corrupt"), 0o644))
	}
	var log3 bytes.Buffer
	c3 := open(&log3)
	exe, _ = compileSeed(t, c3)
	runSeed(t, c3, exe, s)
	require.NoError(t, exe.Close())
	assert.Equal(t, pjrt.CompileStats{Compiles: 1, CacheMisses: 1, CacheWrites: 1, CacheRejects: 1}, c3.CompileStats())
	assert.Contains(t, log3.String(), "compile cache miss: bad entry")
	require.NoError(t, c3.Close())
	assert.Equal(t, before, pjrt.LiveExecutables(), "executables leaked")
}

func TestCompileCacheFromEnv(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "made-by-open")
	t.Setenv(pjrt.EnvCompileCache, dir)
	platform, err := pjrttest.Options(2)
	require.NoError(t, err)
	c, err := pjrt.Open(platform...)
	require.NoError(t, err)
	defer c.Close()
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.True(t, st.IsDir())
	c2, err := pjrt.Open(append(platform, pjrt.WithCompileCache(""))...)
	require.NoError(t, err, "an empty directory turns the cache off")
	defer c2.Close()
}
