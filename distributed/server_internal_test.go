package distributed

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepDataDirs: making a temporary data directory removes those whose lock is free (their
// process is gone) and leaves a live server's, and a directory without a lock file, alone.
func TestSweepDataDirs(t *testing.T) {
	tmp := t.TempDir()
	live, liveLock, err := tempDataDir(tmp, "live")
	require.NoError(t, err)
	defer liveLock.Close()
	stale, staleLock, err := tempDataDir(tmp, "stale")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(stale, "wal"), make([]byte, 1<<20), 0o600))
	staleLock.Close() // as a killed process's lock is released
	foreign := filepath.Join(tmp, dataDirPrefix+"foreign")
	require.NoError(t, os.Mkdir(foreign, 0o700))

	next, nextLock, err := tempDataDir(tmp, "next")
	require.NoError(t, err)
	defer nextLock.Close()
	assert.DirExists(t, live)
	assert.DirExists(t, foreign)
	assert.DirExists(t, next)
	assert.NoDirExists(t, stale)
	assert.FileExists(t, filepath.Join(next, dataDirLock))
	entries, err := os.ReadDir(next)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only the lock file, renamed into place")
}
