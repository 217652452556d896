package exporter

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const seed = "../testdata/snapshots/82576-minipcie-x1"

// startServer runs Serve for c on a loopback port and returns the address;
// the server stops when the test ends, and must stop cleanly.
func startServer(t *testing.T, c *Collector, opts ...ServerOption) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, c, append([]ServerOption{WithShutdownGrace(time.Second)}, opts...)...) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// blockingCollector returns a collector whose checks wait for release (or
// for the test's end) and that reports on entered each time one starts.
func blockingCollector(t *testing.T) (c *Collector, entered <-chan struct{}, release func()) {
	t.Helper()
	c = New(WithRoot(seed))
	in := make(chan struct{}, 16)
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	c.build = func(ctx context.Context, root string) (*snapshotMetrics, error) {
		in <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return build(ctx, root)
	}
	return c, in, release
}

// The server Serve runs carries the defaults; an option that is not
// positive keeps them.
func TestServerDefaults(t *testing.T) {
	s := newServerConfig([]ServerOption{WithMaxScrapes(0), WithMaxConns(-1), WithIdleTimeout(0), WithWriteTimeout(-time.Second), nil})
	srv := newServer(New(WithRoot(seed)), s)
	if c := srv.cfg; c.readHeader != DefaultReadHeaderTimeout || c.read != DefaultReadTimeout || c.idle != DefaultIdleTimeout ||
		c.scrapeTimeout != DefaultScrapeTimeout || c.shutdownGrace != DefaultShutdownGrace || c.errorLog != nil {
		t.Errorf("server settings %+v", c)
	}
	if srv.site.WriteTimeout() != DefaultWriteTimeout || srv.site.timeout != DefaultScrapeTimeout ||
		cap(srv.site.slots) != DefaultMaxScrapes || cap(srv.lim.slots) != DefaultMaxConns {
		t.Errorf("site %+v, %d connection slots", srv.site, cap(srv.lim.slots))
	}
	if s.maxScrapes != DefaultMaxScrapes || s.maxConns != DefaultMaxConns || s.write != DefaultWriteTimeout {
		t.Errorf("config %+v", s)
	}
	s = newServerConfig([]ServerOption{WithMaxScrapes(7), WithMaxConns(9), WithWriteTimeout(time.Second)})
	if s.maxScrapes != 7 || s.maxConns != 9 || s.write != time.Second {
		t.Errorf("config %+v", s)
	}
}

// The landing page links the metrics; /metrics serves them; other paths
// and methods are refused.
func TestServerRoutes(t *testing.T) {
	base := "http://" + startServer(t, New(WithRoot(seed)))
	get := func(method, path string) (int, string, string) {
		req, err := http.NewRequest(method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	if code, ct, body := get("GET", "/"); code != 200 || !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, `<a href="metrics">`) {
		t.Errorf("GET / = %d %q %q", code, ct, body)
	}
	if code, _, body := get("GET", "/metrics"); code != 200 || !strings.Contains(body, `nicdiag_finding{code="pcie.bottleneck"`) {
		t.Errorf("GET /metrics = %d %q", code, body)
	}
	if code, ct, body := get("HEAD", "/metrics"); code != 200 || ct != ContentType || body != "" {
		t.Errorf("HEAD /metrics = %d %q %q", code, ct, body)
	}
	if code, _, _ := get("GET", "/nope"); code != 404 {
		t.Errorf("GET /nope = %d, want 404", code)
	}
	if code, _, _ := get("POST", "/metrics"); code != 405 {
		t.Errorf("POST /metrics = %d, want 405", code)
	}
}

// A client that sends its headers a byte at a time, and never ends them, is
// disconnected by the read-header timeout, not by the (longer) read timeout.
func TestSlowHeadersCutOff(t *testing.T) {
	const timeout = 300 * time.Millisecond
	addr := startServer(t, New(WithRoot(seed)), WithReadHeaderTimeout(timeout), WithReadTimeout(time.Minute))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	closed := make(chan error, 1)
	go func() {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, conn) // returns at EOF or reset
		closed <- err
	}()
	start := time.Now()
	partial := "GET /metrics HTTP/1.1\r\nHost: nicdiag\r\nX-Slow: " + strings.Repeat("a", 200)
	for i := 0; ; i++ {
		if i == len(partial) {
			t.Fatalf("sent %d header bytes over %v and the server still waits", i, time.Since(start))
		}
		select {
		case err := <-closed:
			elapsed := time.Since(start)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the server kept the connection open for %v", elapsed)
			}
			if elapsed < timeout-50*time.Millisecond || elapsed > timeout+3*time.Second {
				t.Errorf("connection closed after %v, want about %v", elapsed, timeout)
			}
			return
		case <-time.After(25 * time.Millisecond):
		}
		if _, err := conn.Write([]byte{partial[i]}); err != nil {
			// Closed by the server between two bytes: the reader sees it next.
			continue
		}
	}
}

// More concurrent scrapes than the limit: the extra ones get 503 at once,
// the ones within the limit are answered when the check completes.
func TestConcurrentScrapesBeyondLimit(t *testing.T) {
	const limit, extra = 2, 3
	c, entered, release := blockingCollector(t)
	url := "http://" + startServer(t, c, WithMaxScrapes(limit), WithScrapeTimeout(time.Minute)) + "/metrics"
	client := &http.Client{Timeout: 20 * time.Second}
	codes := make(chan int, limit+extra)
	scrape := func() {
		resp, err := client.Get(url)
		if err != nil {
			t.Error(err)
			codes <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		code := resp.StatusCode
		if resp.Header.Get("Retry-After") == "1" {
			code += 1000
		}
		codes <- code
	}
	go scrape()
	select {
	case <-entered: // the first scrape holds a slot, blocked in its check
	case <-time.After(10 * time.Second):
		t.Fatal("the first scrape never started its check")
	}
	for i := 1; i < limit+extra; i++ {
		go scrape()
	}
	// Nothing completes before release, so exactly limit scrapes are in
	// flight and the others are refused while they wait.
	for i := 0; i < extra; i++ {
		select {
		case code := <-codes:
			if code != http.StatusServiceUnavailable+1000 {
				t.Fatalf("scrape beyond the limit answered %d, want 503 with Retry-After: 1", code%1000)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d scrapes beyond the limit were refused", i, extra)
		}
	}
	release()
	for i := 0; i < limit; i++ {
		select {
		case code := <-codes:
			if code != http.StatusOK {
				t.Errorf("scrape within the limit answered %d, want 200", code)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("scrapes within the limit did not finish after the check")
		}
	}
}

// A scrape that outlasts the scrape timeout is answered 503 instead of
// hanging until Prometheus gives up.
func TestScrapeTimeout(t *testing.T) {
	c, _, _ := blockingCollector(t)
	url := "http://" + startServer(t, c, WithScrapeTimeout(200*time.Millisecond)) + "/metrics"
	client := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || time.Since(start) > 5*time.Second {
		t.Errorf("slow scrape answered %d (Retry-After %q) after %v, want 503 after about 200ms", resp.StatusCode, resp.Header.Get("Retry-After"), time.Since(start))
	}
}

// A client that accepts gzip gets the same exposition gzipped; one that
// does not, or refuses it with q=0, gets it plain.
func TestScrapeGzip(t *testing.T) {
	url := "http://" + startServer(t, New(WithRoot(seed), WithTTL(time.Hour))) + "/metrics"
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 10 * time.Second}
	get := func(ae string) (string, []byte) {
		req, _ := http.NewRequest("GET", url, nil)
		if ae != "" {
			req.Header.Set("Accept-Encoding", ae)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Length") != strconv.Itoa(len(b)) {
			t.Fatalf("Accept-Encoding %q: %d, %d bytes (Content-Length %s), %v", ae, resp.StatusCode, len(b), resp.Header.Get("Content-Length"), err)
		}
		return resp.Header.Get("Content-Encoding"), b
	}
	_, plain := get("")
	enc, zipped := get("deflate, gzip;q=0.5")
	if enc != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", enc)
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, plain) {
		t.Errorf("gunzipped body differs from the plain one (%v)", err)
	}
	if enc, b := get("gzip;q=0, identity"); enc != "" || !bytes.Equal(b, plain) {
		t.Errorf("gzip;q=0 answered with Content-Encoding %q", enc)
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "deflate, gzip": true, "gzip;q=0": false, "gzip; q=0.000": false,
		"gzip;q=0.1": true, "identity": false, "x-gzip": false, "gzip;q=junk": false, "br;q=1.0,gzip;q=0.8": true,
	} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v", h, got)
		}
	}
}

// A keep-alive connection left idle is closed by the idle timeout.
func TestIdleConnectionClosed(t *testing.T) {
	const idle = 300 * time.Millisecond
	addr := startServer(t, New(WithRoot(seed)), WithIdleTimeout(idle))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: nicdiag\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("first response %d, close %v: want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	start := time.Now()
	n, err := br.Read(make([]byte, 1))
	elapsed := time.Since(start)
	if n != 0 || !errors.Is(err, io.EOF) {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("idle connection still open after %v", elapsed)
		}
		t.Fatalf("read on the idle connection: %d bytes, %v; want EOF", n, err)
	}
	if elapsed < idle-50*time.Millisecond || elapsed > idle+3*time.Second {
		t.Errorf("idle connection closed after %v, want about %v", elapsed, idle)
	}
}

// Serve answers until its context is done, then returns nil and frees the
// port.
func TestServeStopsOnCancel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, New(WithRoot(seed)), WithShutdownGrace(time.Second)) }()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("scrape = %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("still listening after Serve returned")
	}
}

// WriteMetrics gives up when its context ends before the check does, with
// an error that says why; the check goes on and serves the next call.
func TestWriteMetricsContextEnds(t *testing.T) {
	c, entered, release := blockingCollector(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var b bytes.Buffer
	err := c.WriteMetrics(ctx, &b)
	if !errors.Is(err, context.DeadlineExceeded) || b.Len() != 0 {
		t.Fatalf("WriteMetrics past its deadline: %v, %d bytes", err, b.Len())
	}
	<-entered
	release()
	if err := c.WriteMetrics(context.Background(), &b); err != nil || !strings.Contains(b.String(), "\nnicdiag_up 1\n") {
		t.Errorf("WriteMetrics after the check: %v\n%s", err, b.String())
	}
	if n := strings.Count(b.String(), "nicdiag_checks_total 1\n"); n != 1 {
		t.Errorf("the second call ran another check:\n%s", b.String())
	}
}
