package distributed

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

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

// TestServerTLSPeerLoopback: with mutual TLS the embedded server serves clients on https only,
// with client certificates required, and its peer URL is https on loopback (never the
// coordinator's network), with client certificates required too.
func TestServerTLSPeerLoopback(t *testing.T) {
	creds, err := NewCredentials(t.TempDir(), 1, []string{"127.0.0.1"}, time.Hour)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	c, err := creds[0].Apply(Config{JobID: "peer", NumProcesses: 1, Coordinator: addr, DataDir: t.TempDir()}).withDefaults()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := startServer(ctx, c)
	require.NoError(t, err)
	defer s.stop()
	cfg := s.etcd.Config()
	require.Len(t, cfg.ListenClientUrls, 1)
	assert.Equal(t, "https://"+addr, cfg.ListenClientUrls[0].String())
	require.Len(t, cfg.ListenPeerUrls, 1)
	assert.Equal(t, "https", cfg.ListenPeerUrls[0].Scheme)
	assert.Equal(t, "127.0.0.1", cfg.ListenPeerUrls[0].Hostname())
	assert.True(t, cfg.ClientTLSInfo.ClientCertAuth)
	assert.True(t, cfg.PeerTLSInfo.ClientCertAuth)
	assert.Equal(t, creds[0].CAFile, cfg.PeerTLSInfo.TrustedCAFile)
}
