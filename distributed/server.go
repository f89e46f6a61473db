package distributed

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// maxValueBytes is the largest request the embedded server accepts (etcd's default is 1.5 MiB).
// Values stay well below it: plugins store topologies and collective ids, jit's gathers send
// 512 KiB chunks.
const maxValueBytes = 8 << 20

// server is process 0's embedded etcd: one member, serving clients on the coordinator address.
type server struct {
	etcd *embed.Etcd
	dir  string
	lock *os.File // held while the server runs, in a temporary dir only (nil otherwise)
}

// startServer starts a one-member etcd cluster whose client URL is http://<coordinator>, or
// https://<coordinator> with mutual TLS. Its peer URL is a free port on loopback, never on the
// coordinator's network (a one-member cluster never talks to peers, and a peer port answers
// lease and membership requests), and takes the same certificates when TLS is on. It waits
// until the server is ready, at most until ctx ends.
func startServer(ctx context.Context, c Config) (*server, error) {
	// Fail with a clear message when the port is taken, before etcd logs its own.
	if l, err := net.Listen("tcp", c.Coordinator); err != nil {
		return nil, fmt.Errorf("distributed: job %q: %w: process 0 cannot serve the coordinator at %s: %v",
			c.JobID, ErrCoordinator, c.Coordinator, err)
	} else {
		l.Close()
	}
	peer, err := freePort("127.0.0.1")
	if err != nil {
		return nil, fmt.Errorf("distributed: job %q: %w: no free port for the embedded server's peer URL: %v", c.JobID, ErrCoordinator, err)
	}
	s := &server{dir: c.DataDir}
	if s.dir == "" {
		if s.dir, s.lock, err = tempDataDir(os.TempDir(), c.JobID); err != nil {
			return nil, fmt.Errorf("distributed: job %q: %w: %v", c.JobID, ErrCoordinator, err)
		}
	}
	cfg := embed.NewConfig()
	cfg.Name = "xlamesh-" + c.JobID
	cfg.Dir = s.dir
	scheme := "http"
	if c.tlsOn() {
		scheme = "https"
		cfg.ClientTLSInfo, cfg.PeerTLSInfo = c.serverTLS(), c.serverTLS()
	}
	clientURL := url.URL{Scheme: scheme, Host: c.Coordinator}
	peerURL := url.URL{Scheme: scheme, Host: peer}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.InitialClusterToken = "xlamesh-" + c.JobID
	// One member on one machine: elect at once, tick fast (a lease's shortest TTL follows the
	// election timeout: 1.5 × 100 ms, so 1 s), keep nothing across restarts.
	cfg.TickMs, cfg.ElectionMs = 10, 100
	cfg.UnsafeNoFsync = true
	cfg.MaxRequestBytes = maxValueBytes
	cfg.EnableGRPCGateway = false
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		s.removeDir()
		return nil, fmt.Errorf("distributed: job %q: %w: starting the embedded etcd server on %s: %v", c.JobID, ErrCoordinator, c.Coordinator, err)
	}
	s.etcd = e
	select {
	case <-e.Server.ReadyNotify():
		return s, nil
	case err := <-e.Err():
		s.stop()
		return nil, fmt.Errorf("distributed: job %q: %w: the embedded etcd server failed: %v", c.JobID, ErrCoordinator, err)
	case <-ctx.Done():
		s.stop()
		return nil, fmt.Errorf("distributed: job %q: %w: the embedded etcd server on %s was not ready in time: %w", c.JobID, ErrCoordinator, c.Coordinator, ctx.Err())
	}
}

// stop stops the server and removes a temporary data directory. It returns within a few seconds
// even with clients still connected.
func (s *server) stop() {
	done := make(chan struct{})
	go func() {
		s.etcd.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	s.removeDir()
}

func (s *server) removeDir() {
	if s.lock != nil {
		_ = os.RemoveAll(s.dir)
		s.lock.Close()
	}
}

// Temporary data directories are named dataDirPrefix + job + "-" + random, in os.TempDir(), and
// hold dataDirLock, a file the live server keeps an exclusive flock on.
const (
	dataDirPrefix = "xlamesh-etcd-"
	dataDirLock   = "xlamesh.lock"
)

// tempDataDir makes a locked temporary data directory in tmp, after removing the ones whose
// lock nobody holds: a process 0 that was killed could not remove its own, and etcd
// preallocates 128 MB of write-ahead log in each. The lock is released when the file is closed
// or the process dies.
func tempDataDir(tmp, job string) (dir string, lock *os.File, err error) {
	sweepDataDirs(tmp)
	if dir, err = os.MkdirTemp(tmp, dataDirPrefix+job+"-"); err != nil {
		return "", nil, err
	}
	// Locked under a private name first, then renamed: a sweep never finds the lock file
	// free while the directory is being set up.
	f, err := os.CreateTemp(dir, ".lock-")
	if err == nil {
		if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			err = os.Rename(f.Name(), filepath.Join(dir, dataDirLock))
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("locking the data directory %s: %v", dir, err)
	}
	return dir, f, nil
}

// sweepDataDirs removes the temporary data directories in tmp whose lock can be taken: their
// server's process is gone. Directories without a lock file (another program's, or one being
// set up) are left alone.
func sweepDataDirs(tmp string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, dataDirPrefix+"*"))
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(d, dataDirLock))
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			_ = os.RemoveAll(d)
		}
		f.Close()
	}
}

// freePort returns host:port with a port that was free a moment ago.
func freePort(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
