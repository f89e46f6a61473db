package distributed

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
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
	etcd    *embed.Etcd
	dir     string
	tempDir bool
}

// startServer starts a one-member etcd cluster whose client URL is http://<coordinator>. Its
// peer URL is a free loopback port: a one-member cluster never talks to peers. It waits until
// the server is ready, at most until ctx ends.
func startServer(ctx context.Context, c Config) (*server, error) {
	host, _, err := net.SplitHostPort(c.Coordinator)
	if err != nil {
		return nil, fmt.Errorf("distributed: %w: coordinator address %q: %v", ErrConfig, c.Coordinator, err)
	}
	// Fail with a clear message when the port is taken, before etcd logs its own.
	if l, err := net.Listen("tcp", c.Coordinator); err != nil {
		return nil, fmt.Errorf("distributed: job %q: %w: process 0 cannot serve the coordinator at %s: %v",
			c.JobID, ErrCoordinator, c.Coordinator, err)
	} else {
		l.Close()
	}
	peer, err := freePort(host)
	if err != nil {
		return nil, fmt.Errorf("distributed: job %q: %w: no free port for the embedded server's peer URL: %v", c.JobID, ErrCoordinator, err)
	}
	s := &server{dir: c.DataDir}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "xlamesh-etcd-"+c.JobID+"-"); err != nil {
			return nil, fmt.Errorf("distributed: job %q: %w: %v", c.JobID, ErrCoordinator, err)
		}
		s.tempDir = true
	}
	cfg := embed.NewConfig()
	cfg.Name = "xlamesh-" + c.JobID
	cfg.Dir = s.dir
	clientURL := url.URL{Scheme: "http", Host: c.Coordinator}
	peerURL := url.URL{Scheme: "http", Host: peer}
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
	if s.tempDir {
		_ = os.RemoveAll(s.dir)
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
