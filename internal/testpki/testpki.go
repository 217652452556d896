// Package testpki makes, for one test, a certificate authority with a
// server certificate for 127.0.0.1 and a client certificate, all signed
// by it, and writes them as PEM files: what a TLS test of the exporter
// trusts, serves and presents.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a certificate authority and the certificates it signed.
type PKI struct {
	// Dir holds the PEM files.
	Dir string
	// Pool trusts the authority.
	Pool *x509.CertPool
	// CAFile is the authority's certificate; CertFile and KeyFile the
	// server's certificate (for IP 127.0.0.1) and its key (PKCS #8).
	CAFile, CertFile, KeyFile string
	// Client is a client certificate the authority signed.
	Client tls.Certificate
}

// New makes a PKI in a directory of t's, valid for an hour either side of
// now.
func New(t testing.TB) *PKI {
	t.Helper()
	p := &PKI{Dir: t.TempDir(), Pool: x509.NewCertPool()}
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nicdiag test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p.Pool.AddCert(ca)
	p.CAFile = p.write(t, "ca.crt", "CERTIFICATE", caDER)

	leaf := func(serial int64, usage x509.ExtKeyUsage, ips ...net.IP) ([]byte, *ecdsa.PrivateKey) {
		key := newKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "nicdiag test"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	der, key := leaf(2, x509.ExtKeyUsageServerAuth, net.ParseIP("127.0.0.1"))
	p.CertFile = p.write(t, "server.crt", "CERTIFICATE", der)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p.KeyFile = p.write(t, "server.key", "PRIVATE KEY", keyDER)
	der, key = leaf(3, x509.ExtKeyUsageClientAuth)
	p.Client = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return p
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (p *PKI) write(t testing.TB, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.Dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TLSConfig returns a client configuration that trusts the authority and,
// with client set, presents the client certificate.
func (p *PKI) TLSConfig(client bool) *tls.Config {
	cfg := &tls.Config{RootCAs: p.Pool}
	if client {
		cfg.Certificates = []tls.Certificate{p.Client}
	}
	return cfg
}
