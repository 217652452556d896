package testpki

import (
	"crypto/tls"
	"testing"
)

// A TLS server with the server certificate is trusted by a client with
// the pool, for 127.0.0.1, and requires and verifies the client
// certificate against the authority.
func TestHandshake(t *testing.T) {
	p := New(t)
	cert, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: p.Pool, ClientAuth: tls.RequireAndVerifyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.(*tls.Conn).Handshake()
			c.Write([]byte("x"))
			c.Close()
		}
	}()
	for _, client := range []bool{true, false} {
		c, err := tls.Dial("tcp", ln.Addr().String(), p.TLSConfig(client))
		if err == nil {
			_, err = c.Read(make([]byte, 1)) // TLS 1.3: a refused certificate shows here
			c.Close()
		}
		if (err == nil) != client {
			t.Errorf("client certificate %v: %v", client, err)
		}
	}
	if _, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{}); err == nil {
		t.Error("a client without the pool trusted the server")
	}
}
