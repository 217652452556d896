package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/nicdiag/nicdiag/internal/testpki"
)

// webConfig writes an exporter-toolkit web configuration with the server
// certificate, extra lines for tls_server_config, and basic-auth users.
func webConfig(t *testing.T, p *testpki.PKI, tlsExtra string, users map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("tls_server_config:\n  cert_file: " + p.CertFile + "\n  key_file: " + p.KeyFile + "\n" + tlsExtra)
	if len(users) > 0 {
		b.WriteString("basic_auth_users:\n")
		for user, password := range users {
			hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("  " + user + ": " + string(hash) + "\n")
		}
	}
	path := filepath.Join(p.Dir, "web.yml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// httpsClient returns an HTTPS client that trusts p's CA and, with
// client set, presents p's client certificate.
func httpsClient(p *testpki.PKI, client bool) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: p.TLSConfig(client)}, Timeout: 20 * time.Second}
}

func scrape(t *testing.T, client *http.Client, url, user, password string) (int, http.Header, string, error) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, resp.Header, b.String(), nil
}

// TLS with a certificate made here and a bcrypt basic-auth user, as
// exporter-toolkit's web configuration sets them: a scrape that trusts the
// CA and gives the credentials gets the series; one without credentials,
// or with a wrong password, gets 401 and no series; plain HTTP to the TLS
// port gets no series; a client that does not trust the CA gets no answer.
func TestTLSBasicAuth(t *testing.T) {
	p := testpki.New(t)
	cfg := webConfig(t, p, "", map[string]string{"prometheus": "s3cret pass"})
	r := start(t, "--root", seed, "--web.config.file", cfg)
	url := "https://" + r.addrs[0] + "/metrics"
	client := httpsClient(p, false)

	code, _, body, err := scrape(t, client, url, "prometheus", "s3cret pass")
	if err != nil || code != 200 || !strings.Contains(body, "\nnicdiag_up 1\n") || !strings.Contains(body, `nicdiag_finding{code="pcie.bottleneck"`) {
		t.Errorf("scrape with the CA and the credentials: %d, %v\n%s", code, err, body)
	}
	for _, c := range []struct{ user, password string }{{"", ""}, {"prometheus", "wrong"}, {"nobody", "s3cret pass"}} {
		code, h, body, err := scrape(t, client, url, c.user, c.password)
		if err != nil || code != 401 || h.Get("WWW-Authenticate") == "" || strings.Contains(body, "nicdiag_") {
			t.Errorf("user %q password %q: %d, %v, WWW-Authenticate %q\n%s", c.user, c.password, code, err, h.Get("WWW-Authenticate"), body)
		}
	}
	// The landing page is behind the same gate.
	if code, _, _, err := scrape(t, client, "https://"+r.addrs[0]+"/", "", ""); err != nil || code != 401 {
		t.Errorf("landing page without credentials: %d, %v", code, err)
	}

	plain := &http.Client{Timeout: 20 * time.Second}
	code, _, body, err = scrape(t, plain, "http://"+r.addrs[0]+"/metrics", "prometheus", "s3cret pass")
	if err == nil && (code == 200 || strings.Contains(body, "nicdiag_")) {
		t.Errorf("plain HTTP to the TLS port: %d\n%s", code, body)
	}
	t.Logf("plain HTTP to the TLS port: %d %q %v", code, strings.TrimSpace(body), err)

	untrusting := &http.Client{Timeout: 20 * time.Second}
	if _, _, _, err := scrape(t, untrusting, url, "prometheus", "s3cret pass"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the CA: %v, want a certificate error", err)
	}
}

// client_auth_type RequireAndVerifyClientCert with the CA as client_ca_file:
// a scraper without a client certificate gets no answer, one with a
// certificate the CA signed gets the series.
func TestTLSClientCertificate(t *testing.T) {
	p := testpki.New(t)
	cfg := webConfig(t, p, "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: "+p.CAFile+"\n", nil)
	r := start(t, "--root", seed, "--web.config.file", cfg)
	url := "https://" + r.addrs[0] + "/metrics"
	if code, _, body, err := scrape(t, httpsClient(p, false), url, "", ""); err == nil {
		t.Errorf("no client certificate: %d, want a TLS error\n%s", code, body)
	}
	code, _, body, err := scrape(t, httpsClient(p, true), url, "", "")
	if err != nil || code != 200 || !strings.Contains(body, "\nnicdiag_up 1\n") {
		t.Errorf("with the client certificate: %d, %v", code, err)
	}
}

// Over TLS, 200 connections that never start a handshake leave a scraper
// room under the default connection cap: it is answered at once.
func TestTLSSilentConnections(t *testing.T) {
	p := testpki.New(t)
	cfg := webConfig(t, p, "", nil)
	r := start(t, "--root", seed, "--web.config.file", cfg)
	for range 200 {
		c, err := net.Dial("tcp", r.addrs[0])
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	start := time.Now()
	code, _, _, err := scrape(t, httpsClient(p, false), "https://"+r.addrs[0]+"/metrics", "", "")
	if err != nil || code != 200 {
		t.Errorf("scrape with 200 silent connections: %d, %v", code, err)
	}
	t.Logf("answered in %v", time.Since(start))
}

// HTTP/2: exporter-toolkit serves it over TLS unless the web
// configuration says `http_server_config: {http2: false}`, as the example
// in deploy/web-config.yml does. Without that line a scraper that offers
// h2 gets it, and the limits that are the handler's or the http.Server's
// per request hold there too: the series, a header block over 16 KiB
// refused, 413 for a body over 64 KiB. With it, the same scraper gets
// HTTP/1.1.
func TestTLSHTTP2(t *testing.T) {
	p := testpki.New(t)
	cfg := webConfig(t, p, "", nil)
	r := start(t, "--root", seed, "--web.config.file", cfg)
	client := httpsClient(p, false)
	client.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	url := "https://" + r.addrs[0] + "/metrics"
	do := func(req *http.Request) (*http.Response, string) {
		t.Helper()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	get, _ := http.NewRequest("GET", url, nil)
	if resp, body := do(get); resp.Proto != "HTTP/2.0" || resp.StatusCode != 200 || !strings.Contains(body, "\nnicdiag_up 1\n") {
		t.Errorf("h2 scrape: %s %d", resp.Proto, resp.StatusCode)
	}
	// The server advertises its header limit (SETTINGS_MAX_HEADER_LIST_SIZE,
	// from MaxHeaderBytes) and Go's client keeps to it.
	big, _ := http.NewRequest("GET", url, nil)
	big.Header.Set("X-Pad", strings.Repeat("x", 20<<10))
	if resp, err := client.Do(big); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("h2 with a 20 KiB header: %s %d, want 431", resp.Proto, resp.StatusCode)
		}
	} else if !strings.Contains(err.Error(), "larger than peer's advertised limit") {
		t.Errorf("h2 with a 20 KiB header: %v, want 431 or the client refusing the advertised limit", err)
	}
	post, _ := http.NewRequest("GET", url, strings.NewReader(strings.Repeat("x", 100<<10)))
	if resp, _ := do(post); resp.Proto != "HTTP/2.0" || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("h2 with a 100 KiB body: %s %d, want 413", resp.Proto, resp.StatusCode)
	}

	example, err := os.ReadFile("../../deploy/web-config.yml")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(example), "http_server_config:")
	if i < 0 {
		t.Fatal("deploy/web-config.yml has no http_server_config")
	}
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(b, example[i:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	r = start(t, "--root", seed, "--web.config.file", cfg)
	client = httpsClient(p, false)
	client.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	get, _ = http.NewRequest("GET", "https://"+r.addrs[0]+"/metrics", nil)
	if resp, _ := do(get); resp.Proto != "HTTP/1.1" || resp.StatusCode != 200 {
		t.Errorf("with the example's http_server_config: %s %d, want HTTP/1.1 200", resp.Proto, resp.StatusCode)
	}
}
