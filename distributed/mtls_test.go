package distributed_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/xlamesh/xlamesh/distributed"
)

// credentials makes a job's CA and certificates for n processes on loopback in a new directory.
func credentials(t *testing.T, n int) []distributed.Credentials {
	t.Helper()
	creds, err := distributed.NewCredentials(t.TempDir(), n, []string{"127.0.0.1", "localhost"}, time.Hour)
	require.NoError(t, err)
	return creds
}

// rawClient is a stranger's etcd client, not this package's: tlsCfg nil for plain HTTP/2.
func rawClient(t *testing.T, addr string, tlsCfg *tls.Config) *clientv3.Client {
	t.Helper()
	scheme := "http://"
	if tlsCfg != nil {
		scheme = "https://"
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{scheme + addr}, TLS: tlsCfg,
		DialTimeout: time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	return cli
}

// tlsConfig loads credentials as a stranger would; withCert false leaves out the client
// certificate (a server-only TLS setup that trusts the job's CA).
func tlsConfig(t *testing.T, c distributed.Credentials, withCert bool) *tls.Config {
	t.Helper()
	ca, err := os.ReadFile(c.CAFile)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	cfg := &tls.Config{RootCAs: pool}
	if withCert {
		pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		require.NoError(t, err)
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

// TestTLSCredentials: NewCredentials writes a CA and one certificate per process, each file
// 0600, certificates for server and client use that name the hosts and chain to the CA.
func TestTLSCredentials(t *testing.T) {
	dir := t.TempDir()
	creds, err := distributed.NewCredentials(dir, 2, []string{"127.0.0.1", "node-a"}, time.Hour)
	require.NoError(t, err)
	require.Len(t, creds, 2)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		info, err := e.Info()
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), e.Name())
	}
	assert.Equal(t, []string{"ca.pem", "process-0-key.pem", "process-0.pem", "process-1-key.pem", "process-1.pem"}, names)
	assert.Equal(t, filepath.Join(dir, "process-1.pem"), creds[1].CertFile)
	pair, err := tls.LoadX509KeyPair(creds[1].CertFile, creds[1].KeyFile)
	require.NoError(t, err)
	leaf := pair.Leaf
	pool := tlsConfig(t, creds[1], false).RootCAs
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "node-a", KeyUsages: []x509.ExtKeyUsage{usage}})
		assert.NoError(t, err, "usage %v", usage)
	}
	assert.Equal(t, "127.0.0.1", leaf.IPAddresses[0].String())
	assert.WithinDuration(t, time.Now().Add(time.Hour), leaf.NotAfter, time.Minute)
	assert.Equal(t, "xlamesh process 1", leaf.Subject.CommonName)

	_, err = distributed.NewCredentials(dir, 0, []string{"127.0.0.1"}, time.Hour)
	assert.ErrorIs(t, err, distributed.ErrConfig)
	_, err = distributed.NewCredentials(dir, 1, []string{"127.0.0.1"}, time.Hour)
	assert.ErrorIs(t, err, distributed.ErrTLS, "files are never overwritten")
}

// TestTLSJob: with mutual TLS, two processes join, exchange exact values (one of them large
// enough to go in chunks) and pass a barrier; a client with the job's certificate reads what
// they wrote.
func TestTLSJob(t *testing.T) {
	creds := credentials(t, 2)
	cfg := testConfig(t, "tlsjob", 2)
	jobs := make([]*distributed.Job, 2)
	errs := make([]error, 2)
	done := make(chan struct{})
	for p := range 2 {
		go func() {
			c := creds[p].Apply(cfg)
			c.ProcessID = p
			jobs[p], errs[p] = distributed.Join(context.Background(), c)
			done <- struct{}{}
		}()
	}
	<-done
	<-done
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	t.Cleanup(func() { each(jobs, func(_ int, j *distributed.Job) error { return j.Close() }) })

	big := make([]byte, 3*distributed.ChunkBytes+12345)
	for i := range big {
		big[i] = byte(i * 7)
	}
	require.NoError(t, jobs[0].Put("small", []byte("over TLS")))
	require.NoError(t, jobs[0].Put("big", big))
	v, err := jobs[1].Get("small", 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "over TLS", string(v))
	v, err = jobs[1].Get("big", 10*time.Second)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(big, v), "big value: %d bytes back", len(v))
	for p, err := range each(jobs, func(_ int, j *distributed.Job) error { return j.Barrier(context.Background(), "tls") }) {
		require.NoError(t, err, "process %d", p)
	}

	// A stranger's client with a certificate of the job reads and writes the store.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli := rawClient(t, cfg.Coordinator, tlsConfig(t, creds[1], true))
	resp, err := cli.Get(ctx, "/xlamesh/tlsjob/run")
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1)
	assert.Len(t, resp.Kvs[0].Value, 16, "the run id")
	for p, err := range each(jobs, func(_ int, j *distributed.Job) error { return j.Shutdown(context.Background()) }) {
		require.NoError(t, err, "process %d", p)
	}
}

// TestTLSRefused: process 0 of a job with mutual TLS waits for process 1. Processes without the
// job's certificate (none, one of another CA, plain HTTP/2) cannot join: Join fails at once with
// ErrTLS, not after the init timeout, and not as a lost process. Strangers' etcd clients (plain,
// server-only TLS without a client certificate, a certificate of another CA) can neither read
// nor write. Then the real process 1 joins, and the job has seen nothing of it all.
func TestTLSRefused(t *testing.T) {
	creds := credentials(t, 2)
	other := credentials(t, 2) // another job's CA
	cfg := testConfig(t, "tlsrefused", 2)
	cfg.InitTimeout = time.Minute
	type joined struct {
		job *distributed.Job
		err error
	}
	zero := make(chan joined, 1)
	go func() {
		c := creds[0].Apply(cfg)
		j, err := distributed.Join(context.Background(), c)
		zero <- joined{j, err}
	}()

	for _, tc := range []struct {
		name string
		cfg  distributed.Config
	}{
		{"no certificate", cfg},
		{"certificate of another CA", other[1].Apply(cfg)},
		{"another CA's certificate, the job's CA", distributed.Credentials{CertFile: other[1].CertFile, KeyFile: other[1].KeyFile, CAFile: creds[1].CAFile}.Apply(cfg)},
		{"the job's certificate, another CA", distributed.Credentials{CertFile: creds[1].CertFile, KeyFile: creds[1].KeyFile, CAFile: other[1].CAFile}.Apply(cfg)},
		{"as an etcd endpoint, no certificate", func() distributed.Config {
			c := cfg
			c.Endpoints = []string{"https://" + cfg.Coordinator}
			return c
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			c.ProcessID = 1
			start := time.Now()
			j, err := distributed.Join(context.Background(), c)
			if j != nil {
				j.Close()
			}
			require.ErrorIs(t, err, distributed.ErrTLS)
			assert.NotErrorIs(t, err, distributed.ErrProcessLost)
			assert.NotErrorIs(t, err, distributed.ErrInitTimeout)
			assert.Contains(t, err.Error(), `distributed: job "tlsrefused": mutual TLS refused: the coordinator at `+cfg.Coordinator)
			assert.Less(t, time.Since(start), 10*time.Second)
			t.Log(err)
		})
	}

	for _, tc := range []struct {
		name string
		tls  *tls.Config
	}{
		{"plain client", nil},
		{"server-only TLS, no client certificate", tlsConfig(t, creds[1], false)},
		{"client certificate of another CA", func() *tls.Config {
			c := tlsConfig(t, other[1], true)
			c.RootCAs = tlsConfig(t, creds[1], false).RootCAs // trusts the job's server
			return c
		}()},
	} {
		t.Run("stranger/"+tc.name, func(t *testing.T) {
			cli := rawClient(t, cfg.Coordinator, tc.tls)
			for _, op := range []struct {
				name string
				do   func(context.Context) error
			}{
				{"read", func(ctx context.Context) error {
					_, err := cli.Get(ctx, "/xlamesh/", clientv3.WithPrefix())
					return err
				}},
				{"write", func(ctx context.Context) error { _, err := cli.Put(ctx, "/xlamesh/tlsrefused/evil", "x"); return err }},
				{"join", func(ctx context.Context) error { _, err := cli.Grant(ctx, 10); return err }},
			} {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				err := op.do(ctx)
				cancel()
				assert.Error(t, err, op.name)
			}
		})
	}

	c := creds[1].Apply(cfg)
	c.ProcessID = 1
	one, err := distributed.Join(context.Background(), c)
	require.NoError(t, err)
	defer one.Close()
	z := <-zero
	require.NoError(t, z.err)
	defer z.job.Close()
	assert.NoError(t, z.job.Err())
	assert.NoError(t, one.Err())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli := rawClient(t, cfg.Coordinator, tlsConfig(t, creds[1], true))
	resp, err := cli.Get(ctx, "/xlamesh/tlsrefused/evil")
	require.NoError(t, err)
	assert.Empty(t, resp.Kvs, "a stranger wrote a key")
	require.NoError(t, z.job.Put("k", []byte("v")))
	v, err := one.Get("k", 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "v", string(v))
	for p, err := range each([]*distributed.Job{z.job, one}, func(_ int, j *distributed.Job) error { return j.Shutdown(context.Background()) }) {
		require.NoError(t, err, "process %d", p)
	}
}

// TestTLSPlainCoordinator: a process with certificates refuses a coordinator that serves plain
// HTTP/2 with ErrTLS at once.
func TestTLSPlainCoordinator(t *testing.T) {
	creds := credentials(t, 2)
	cfg := testConfig(t, "tlsplain", 2)
	zero := make(chan error, 1)
	var j0 *distributed.Job
	go func() {
		var err error
		j0, err = distributed.Join(context.Background(), cfg)
		zero <- err
	}()
	c := creds[1].Apply(cfg)
	c.ProcessID = 1
	start := time.Now()
	_, err := distributed.Join(context.Background(), c)
	require.ErrorIs(t, err, distributed.ErrTLS)
	assert.Less(t, time.Since(start), 10*time.Second)
	t.Log(err)
	c = cfg
	c.ProcessID = 1
	j1, err := distributed.Join(context.Background(), c)
	require.NoError(t, err)
	require.NoError(t, <-zero)
	for p, err := range each([]*distributed.Job{j0, j1}, func(_ int, j *distributed.Job) error { return j.Shutdown(context.Background()) }) {
		require.NoError(t, err, "process %d", p)
	}
}

// TestTLSConfig: the three files go together; FromEnv reads them.
func TestTLSConfig(t *testing.T) {
	_, err := distributed.Join(context.Background(), distributed.Config{NumProcesses: 1, Coordinator: "127.0.0.1:1", CertFile: "c.pem"})
	require.ErrorIs(t, err, distributed.ErrConfig)
	assert.ErrorContains(t, err, `mutual TLS needs a certificate, a key and a CA file; got cert "c.pem", key "", CA ""`)
	_, err = distributed.Join(context.Background(), distributed.Config{NumProcesses: 1, Coordinator: freeAddr(t),
		CertFile: "/nonexistent/c.pem", KeyFile: "/nonexistent/k.pem", CAFile: "/nonexistent/ca.pem"})
	require.ErrorIs(t, err, distributed.ErrTLS)
	assert.ErrorContains(t, err, "/nonexistent/c.pem")

	t.Setenv(distributed.EnvCertFile, "/a/cert.pem")
	t.Setenv(distributed.EnvKeyFile, "/a/key.pem")
	t.Setenv(distributed.EnvCAFile, "/a/ca.pem")
	c, err := distributed.FromEnv()
	require.NoError(t, err)
	assert.Equal(t, distributed.Config{CertFile: "/a/cert.pem", KeyFile: "/a/key.pem", CAFile: "/a/ca.pem"}, c)
}
