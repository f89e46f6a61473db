package distributed

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// clientTLS loads the job's credentials into the TLS configuration of every process's etcd
// client: its own certificate for the server to check, and the CA that the server's
// certificate must chain to. The errors wrap ErrTLS and name the file.
func (c Config) clientTLS() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("distributed: job %q: %w: certificate %s with key %s: %w", c.JobID, ErrTLS, c.CertFile, c.KeyFile, err)
	}
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("distributed: job %q: %w: CA file: %w", c.JobID, ErrTLS, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("distributed: job %q: %w: CA file %s holds no PEM certificate", c.JobID, ErrTLS, c.CAFile)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// serverTLS is the embedded server's side: serve with this process's certificate, and take
// only clients (and peers) whose certificate chains to the job's CA.
func (c Config) serverTLS() transport.TLSInfo {
	return transport.TLSInfo{CertFile: c.CertFile, KeyFile: c.KeyFile, TrustedCAFile: c.CAFile,
		ClientCertAuth: true, MinVersion: tls.VersionTLS12}
}

// http2Preface is what an HTTP/2 client sends first: the connection preface and an empty
// SETTINGS frame. A gRPC server answers it with its own SETTINGS frame.
var http2Preface = []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")

// probeTLS checks, before the etcd client is made, that this process and the store at addr agree
// on TLS, so that a mismatch is an error wrapping ErrTLS at once rather than a client that
// retries until the initialisation timeout. With cfg (mutual TLS on) it makes a TLS handshake
// and sends the HTTP/2 preface: a server that refuses this process's certificate says so by an
// alert. Without cfg it sends the preface in the clear: a TLS server closes the connection,
// and a bare handshake then shows that it wants TLS. It waits for the server to listen until
// ctx ends (with wait; without, a server that does not listen is left to the client); anything
// else it cannot tell (a timeout, the server going away) is left to the client too, and it
// returns nil.
func probeTLS(ctx context.Context, job, addr string, cfg *tls.Config, wait bool) error {
	for {
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err != nil {
			if !wait {
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(50 * time.Millisecond):
				continue
			}
		}
		defer conn.Close()
		deadline := time.Now().Add(3 * time.Second)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		_ = conn.SetDeadline(deadline)
		if cfg != nil {
			host, _, _ := net.SplitHostPort(addr)
			c := cfg.Clone()
			c.ServerName, c.NextProtos = host, []string{"h2"}
			tc := tls.Client(conn, c)
			err := tc.HandshakeContext(ctx)
			if err == nil {
				err = answered(tc)
			}
			if err != nil && tlsRefusal(err) {
				return fmt.Errorf("distributed: job %q: %w: the coordinator at %s refused this process, or this process refused it: %w", job, ErrTLS, addr, err)
			}
			if err == nil || !errors.Is(err, io.EOF) && !isReset(err) {
				return nil
			}
			// The server hung up on a TLS client: does it speak plain HTTP/2?
			plain, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil
			}
			defer plain.Close()
			_ = plain.SetDeadline(deadline)
			if answered(plain) == nil {
				return fmt.Errorf("distributed: job %q: %w: the coordinator at %s serves plain HTTP/2 without TLS, and this process has certificates (give process 0 the job's certificates too)",
					job, ErrTLS, addr)
			}
			return nil
		}
		if err := answered(conn); err == nil || !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isReset(err) {
			return nil
		}
		// The server hung up on a plain HTTP/2 client: does it speak TLS?
		raw, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil
		}
		defer raw.Close()
		_ = raw.SetDeadline(deadline)
		// Only to learn whether a TLS server answers; nothing is sent over this connection.
		tc := tls.Client(raw, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // probe only
		if err := tc.HandshakeContext(ctx); err == nil || tlsRefusal(err) {
			return fmt.Errorf("distributed: job %q: %w: the coordinator at %s requires mutual TLS, and this process has no certificate (set Config.CertFile, KeyFile and CAFile, or %s, %s and %s)",
				job, ErrTLS, addr, EnvCertFile, EnvKeyFile, EnvCAFile)
		}
		return nil
	}
}

// answered sends the HTTP/2 preface on conn and reads the first bytes of the answer. A reply
// that is a TLS record (a plain client talking to a TLS server) is a *tls.RecordHeaderError.
func answered(conn net.Conn) error {
	if _, err := conn.Write(http2Preface); err != nil {
		return err
	}
	var b [5]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return err
	}
	if b[0] == 0x15 || b[0] == 0x16 { // alert or handshake record
		return tls.RecordHeaderError{Msg: "the server answered with TLS", RecordHeader: b}
	}
	return nil
}

// tlsRefusal says whether err is a verdict of TLS: a certificate refused by either side, a
// missing certificate, a server that does not speak TLS, or protocols that do not match.
func tlsRefusal(err error) bool {
	var (
		rec     tls.RecordHeaderError
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		invalid x509.CertificateInvalidError
		host    x509.HostnameError
		alert   tls.AlertError
		op      *net.OpError
	)
	switch {
	case errors.As(err, &rec), errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &invalid),
		errors.As(err, &host), errors.As(err, &alert):
		return true
	case errors.As(err, &op) && op.Op == "remote error": // an alert from the other side
		return true
	}
	return false
}

// isReset says whether err is a connection reset or broken pipe.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
