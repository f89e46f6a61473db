package distributed

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Credentials are one process's mutual TLS files, as Config.CertFile, KeyFile and CAFile take
// them.
type Credentials struct {
	CertFile, KeyFile, CAFile string
}

// Apply returns c with the credentials' files set.
func (cr Credentials) Apply(c Config) Config {
	c.CertFile, c.KeyFile, c.CAFile = cr.CertFile, cr.KeyFile, cr.CAFile
	return c
}

// NewCredentials makes a fresh certificate authority for one job and a certificate for each of
// its processes, and writes them to dir (which must exist and should be private to the user):
// ca.pem, and process-<i>.pem with process-<i>-key.pem, every file mode 0600. Keys are ECDSA
// P-256; the certificates are valid from a minute ago for validity, for both server and client
// authentication, and name hosts (IP addresses or DNS names: the coordinator's host, e.g.
// 127.0.0.1). The CA's private key is never written: once NewCredentials returns, nobody can
// make another certificate of the job. This is what `xlamesh launch` does for local jobs.
// Errors wrap ErrConfig (bad arguments) or ErrTLS.
func NewCredentials(dir string, processes int, hosts []string, validity time.Duration) ([]Credentials, error) {
	if processes < 1 || validity <= 0 || len(hosts) == 0 {
		return nil, fmt.Errorf("distributed: %w: credentials for %d processes, valid %s, for hosts %q (need ≥ 1 process, a positive validity and a host)",
			ErrConfig, processes, validity, hosts)
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("distributed: %w: CA key: %w", ErrTLS, err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "xlamesh job CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("distributed: %w: CA certificate: %w", ErrTLS, err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("distributed: %w: CA certificate: %w", ErrTLS, err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := writePEM(caFile, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	var ips []net.IP
	var names []string
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else {
			names = append(names, h)
		}
	}
	creds := make([]Credentials, processes)
	for i := range creds {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("distributed: %w: key of process %d: %w", ErrTLS, i, err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial(),
			Subject:      pkix.Name{CommonName: "xlamesh process " + strconv.Itoa(i)},
			NotBefore:    now.Add(-time.Minute),
			NotAfter:     now.Add(validity),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			IPAddresses:  ips,
			DNSNames:     names,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, fmt.Errorf("distributed: %w: certificate of process %d: %w", ErrTLS, i, err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, fmt.Errorf("distributed: %w: key of process %d: %w", ErrTLS, i, err)
		}
		cr := Credentials{CAFile: caFile,
			CertFile: filepath.Join(dir, fmt.Sprintf("process-%d.pem", i)),
			KeyFile:  filepath.Join(dir, fmt.Sprintf("process-%d-key.pem", i))}
		if err := writePEM(cr.CertFile, "CERTIFICATE", der); err != nil {
			return nil, err
		}
		if err := writePEM(cr.KeyFile, "PRIVATE KEY", keyDER); err != nil {
			return nil, err
		}
		creds[i] = cr
	}
	return creds, nil
}

// serial returns a random 128-bit certificate serial number.
func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	return n
}

// writePEM writes one PEM block to a new file of mode 0600.
func writePEM(path, kind string, der []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("distributed: %w: %w", ErrTLS, err)
	}
	err = pem.Encode(f, &pem.Block{Type: kind, Bytes: der})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("distributed: %w: writing %s: %w", ErrTLS, path, err)
	}
	return nil
}
