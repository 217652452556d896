package exporterhttp

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/exporter"
	"github.com/nicdiag/nicdiag/option"
)

const seed = "../../testdata/snapshots/82576-minipcie-x1"

// startServer serves c with a Server on a loopback port and returns the
// address; the server is shut down when the test ends, and must stop
// cleanly.
func startServer(t *testing.T, c *exporter.Collector, opts ...Option) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(c, opts...)
	s.SetErrorLog(log.New(io.Discard, "", 0))
	hs := s.HTTPServer()
	done := make(chan error, 1)
	go func() { done <- hs.Serve(s.Listener(ln)) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil {
			hs.Close()
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// blockingCollector returns a collector whose checks wait for release (or
// for the check's deadline) and that reports on entered each time one
// starts.
func blockingCollector(t *testing.T) (c *exporter.Collector, entered <-chan struct{}, release func()) {
	t.Helper()
	in := make(chan struct{}, 16)
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	c = exporter.New(exporter.WithCheck(func(ctx context.Context) (*nicdiag.Report, error) {
		in <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return nicdiag.Check(ctx, option.Root(seed))
	}))
	return c, in, release
}

// rawConn is a client connection that sends what the test writes.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.c, s); err != nil {
		r.t.Fatalf("send: %v", err)
	}
}

// response reads one response to a request with method, and its body.
func (r *rawConn) response(method string) (*http.Response, string) {
	r.t.Helper()
	resp, err := http.ReadResponse(r.br, &http.Request{Method: method})
	if err != nil {
		r.t.Fatalf("reading the response to %s: %v", method, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		r.t.Fatalf("reading the body: %v", err)
	}
	return resp, string(b)
}

// closed reports whether the server closed the connection: the next read
// ends (EOF or reset) instead of waiting.
func (r *rawConn) closed() bool {
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := r.br.Read(make([]byte, 1))
	return n == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET))
}

// The server carries the defaults; an option that is not positive keeps
// them.
func TestServerDefaults(t *testing.T) {
	c := exporter.New(option.Root(seed))
	s := NewServer(c, WithMaxScrapes(0), WithMaxConns(-1), WithIdleTimeout(0), WithWriteTimeout(-time.Second), WithMetricsPath("x"), nil)
	h := s.HTTPServer()
	if h.ReadHeaderTimeout != DefaultReadHeaderTimeout || h.ReadTimeout != DefaultReadTimeout || h.IdleTimeout != DefaultIdleTimeout ||
		h.WriteTimeout != DefaultScrapeTimeout+DefaultWriteTimeout || h.MaxHeaderBytes != MaxHeaderBytes || h.ConnState == nil {
		t.Errorf("http.Server %+v", h)
	}
	hd := h.Handler.(*handler)
	if cap(hd.slots) != DefaultMaxScrapes || hd.scrapeTimeout != DefaultScrapeTimeout || hd.write != DefaultWriteTimeout ||
		hd.path != DefaultMetricsPath || cap(s.conns.slots) != DefaultMaxConns {
		t.Errorf("handler %+v, %d connection slots", hd, cap(s.conns.slots))
	}
	s = NewServer(c, WithMaxScrapes(7), WithMaxConns(9), WithWriteTimeout(time.Second), WithReadHeaderTimeout(time.Minute), WithMetricsPath("/x"))
	h = s.HTTPServer()
	hd = h.Handler.(*handler)
	if cap(hd.slots) != 7 || cap(s.conns.slots) != 9 || hd.write != time.Second || hd.path != "/x" ||
		h.ReadHeaderTimeout != DefaultReadTimeout { // never past the whole request's
		t.Errorf("handler %+v, %d connection slots, ReadHeaderTimeout %v", hd, cap(s.conns.slots), h.ReadHeaderTimeout)
	}
	if h2 := s.HTTPServer(); h2 == h || h2.Handler != h.Handler {
		t.Error("HTTPServer: want a new http.Server with the same handler")
	}
}

// get sends one request and returns the status, the header and the body.
func get(t *testing.T, client *http.Client, method, url string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// The landing page links the metrics; the metrics path serves them; other
// paths and methods are refused, the methods with Allow.
func TestServerRoutes(t *testing.T) {
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 20 * time.Second}
	base := "http://" + startServer(t, exporter.New(option.Root(seed)))
	if code, h, body := get(t, client, "GET", base+"/"); code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, `<a href="/metrics">`) {
		t.Errorf("GET / = %d %v %q", code, h, body)
	}
	code, h, body := get(t, client, "GET", base+"/metrics?x=1")
	if code != 200 || h.Get("Content-Type") != exporter.ContentType || h.Get("Content-Length") != strconv.Itoa(len(body)) ||
		!strings.Contains(body, `nicdiag_finding{code="pcie.bottleneck"`) {
		t.Errorf("GET /metrics = %d %v %q", code, h, body)
	}
	if code, h, body := get(t, client, "HEAD", base+"/metrics"); code != 200 || h.Get("Content-Type") != exporter.ContentType || body != "" || h.Get("Content-Length") == "" {
		t.Errorf("HEAD /metrics = %d %v %q", code, h, body)
	}
	for _, p := range []string{"/nope", "/metrics/", "/metricsx"} {
		if code, _, _ := get(t, client, "GET", base+p); code != 404 {
			t.Errorf("GET %s = %d, want 404", p, code)
		}
	}
	for _, m := range []string{"POST", "DELETE", "FROB"} {
		if code, h, _ := get(t, client, m, base+"/metrics"); code != 405 || h.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s /metrics = %d, Allow %q; want 405 with GET, HEAD", m, code, h.Get("Allow"))
		}
	}

	// Another metrics path, another landing page.
	landing := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "mine") })
	base = "http://" + startServer(t, exporter.New(option.Root(seed)), WithMetricsPath("/nic"), WithLandingPage(landing))
	if code, _, body := get(t, client, "GET", base+"/nic"); code != 200 || !strings.Contains(body, "\nnicdiag_up 1\n") {
		t.Errorf("GET /nic = %d %q", code, body)
	}
	if code, _, body := get(t, client, "GET", base+"/"); code != 200 || body != "mine" {
		t.Errorf("GET / = %d %q, want the given landing page", code, body)
	}
	if code, _, _ := get(t, client, "GET", base+"/metrics"); code != 404 {
		t.Errorf("GET /metrics with --web.telemetry-path /nic = %d, want 404", code)
	}
}

// A client that accepts gzip gets the same exposition gzipped; one that
// does not, or refuses it with q=0, gets it plain.
func TestScrapeGzip(t *testing.T) {
	url := "http://" + startServer(t, exporter.New(option.Root(seed), exporter.WithTTL(time.Hour))) + "/metrics"
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 20 * time.Second}
	fetch := func(ae string) (string, []byte) {
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
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Length") != strconv.Itoa(len(b)) || resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("Accept-Encoding %q: %d, %d bytes, header %v, %v", ae, resp.StatusCode, len(b), resp.Header, err)
		}
		return resp.Header.Get("Content-Encoding"), b
	}
	_, plain := fetch("")
	enc, zipped := fetch("deflate, gzip;q=0.5")
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
	if enc, b := fetch("gzip;q=0, identity"); enc != "" || !bytes.Equal(b, plain) {
		t.Errorf("gzip;q=0 answered with Content-Encoding %q", enc)
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "deflate, gzip": true, "gzip;q=0": false, "gzip; q=0.000": false,
		"gzip;q=0.1": true, "identity": false, "x-gzip": false, "gzip;q=junk": false, "br;q=1.0,gzip;q=0.8": true, "gzip;q=NaN": false,
	} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v", h, got)
		}
	}
}

// scrapeInto scrapes url and sends the status to codes: 0 for a failed
// request (reported), and 1000 more for an answer with Retry-After: 1.
func scrapeInto(t *testing.T, client *http.Client, url string, codes chan<- int) {
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

// More concurrent scrapes than the cap: the extra ones get 503 with
// Retry-After: 1 at once, the ones within it are answered when the check
// completes.
func TestConcurrentScrapesBeyondLimit(t *testing.T) {
	const limit, extra = 2, 3
	c, entered, release := blockingCollector(t)
	url := "http://" + startServer(t, c, WithMaxScrapes(limit), WithScrapeTimeout(time.Minute)) + "/metrics"
	client := &http.Client{Timeout: 20 * time.Second}
	codes := make(chan int, limit+extra)
	scrape := func() { scrapeInto(t, client, url, codes) }
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
		case <-time.After(20 * time.Second):
			t.Fatal("scrapes within the limit did not finish after the check")
		}
	}
}

// A scrape that outlasts the scrape timeout is answered 503 instead of
// hanging until Prometheus gives up.
func TestScrapeTimeout(t *testing.T) {
	c, _, _ := blockingCollector(t)
	url := "http://" + startServer(t, c, WithScrapeTimeout(200*time.Millisecond)) + "/metrics"
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(b), "no check result within 200ms") {
		t.Errorf("slow scrape answered %d (Retry-After %q) %q, want 503", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
}

// A scraper that disconnects while it waits for a check gives its scrape
// slot back at once, so the next scraper waits for the check instead of
// being refused.
func TestDisconnectFreesScrapeSlot(t *testing.T) {
	c, entered, release := blockingCollector(t)
	addr := startServer(t, c, WithMaxScrapes(1), WithScrapeTimeout(time.Minute))
	r := dialRaw(t, addr)
	r.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first scrape never started its check")
	}
	r.c.Close()
	// Scrape until one is not refused: the server may not have seen the
	// close yet (503, at once); once it has, a scrape waits for the check
	// instead, and is answered only when the check ends.
	scrape := func() <-chan int {
		codes := make(chan int, 1)
		go func() {
			resp, err := (&http.Client{Timeout: 60 * time.Second}).Get("http://" + addr + "/metrics")
			if err != nil {
				t.Error(err)
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
		return codes
	}
	var waiting <-chan int
	for deadline := time.Now().Add(20 * time.Second); waiting == nil; {
		codes := scrape()
		select {
		case code := <-codes:
			if code != http.StatusServiceUnavailable {
				t.Fatalf("a scrape answered %d before the check ended", code)
			}
			if time.Now().After(deadline) {
				t.Fatal("scrapes still refused 20 s after the waiting scraper went: it still holds the slot")
			}
			time.Sleep(10 * time.Millisecond)
		case <-time.After(time.Second): // not refused: it waits for the check
			waiting = codes
		}
	}
	release()
	if code := <-waiting; code != 200 {
		t.Errorf("the scrape that waited: %d, want 200", code)
	}
}

// Request heads over the bound (one long line or many fields) are answered
// 431 and the connection closed; one within it is served.
func TestOversizeHeaders(t *testing.T) {
	addr := startServer(t, exporter.New(option.Root(seed), exporter.WithTTL(time.Hour)))
	// net/http allows 4 KiB over MaxHeaderBytes.
	long := strings.Repeat("a", MaxHeaderBytes+4<<10)
	many := strings.Repeat("X-Filler: "+strings.Repeat("b", 90)+"\r\n", len(long)/100+1)
	for name, req := range map[string]string{
		"request line": "GET /" + long + " HTTP/1.1\r\nHost: x\r\n\r\n",
		"one field":    "GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + long + "\r\n\r\n",
		"many fields":  "GET / HTTP/1.1\r\nHost: x\r\n" + many + "\r\n",
	} {
		r := dialRaw(t, addr)
		r.send(req)
		resp, _ := r.response("GET")
		if resp.StatusCode != 431 || !r.closed() {
			t.Errorf("%s over the bound: %d, want 431 and the connection closed", name, resp.StatusCode)
		}
	}
	r := dialRaw(t, addr)
	r.send("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Long: " + long[:MaxHeaderBytes-100] + "\r\n\r\n")
	if resp, _ := r.response("GET"); resp.StatusCode != 200 {
		t.Errorf("a head just under %d bytes: %d, want 200", MaxHeaderBytes, resp.StatusCode)
	}
}

// Request bodies: a small one (Content-Length or chunked) is read and
// dropped and the connection kept; one over the cap is answered 413 and
// the connection closed: at once when its length is over what net/http
// drains (256 KiB), else once the body is in or the read timeout ends.
func TestRequestBodies(t *testing.T) {
	const readTimeout = time.Second
	addr := startServer(t, exporter.New(option.Root(seed), exporter.WithTTL(time.Hour)), WithReadTimeout(readTimeout))
	r := dialRaw(t, addr)
	r.send("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
		"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\n, w\r\n0\r\n\r\n" +
		"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody" +
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	for i, want := range []int{200, 200, 405, 200} {
		resp, _ := r.response("GET")
		if resp.StatusCode != want || resp.Close {
			t.Fatalf("request %d: %d close %v, want %d kept alive", i, resp.StatusCode, resp.Close, want)
		}
	}

	for _, length := range []int{MaxBodyBytes + 1, 100 << 20} {
		r = dialRaw(t, addr)
		r.send("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(length) + "\r\n\r\n")
		if resp, _ := r.response("GET"); resp.StatusCode != 413 || !resp.Close || !r.closed() {
			t.Errorf("Content-Length %d, no body: %d close %v, want 413 and closed", length, resp.StatusCode, resp.Close)
		}
	}
	// Chunked and endless: refused once the cap is passed, and cut off.
	r = dialRaw(t, addr)
	r.send("GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	sent := make(chan int64, 1)
	go func() {
		chunk := strconv.FormatInt(16<<10, 16) + "\r\n" + strings.Repeat("z", 16<<10) + "\r\n"
		var n int64
		for n < 1<<30 {
			if _, err := io.WriteString(r.c, chunk); err != nil {
				break
			}
			n += int64(len(chunk))
		}
		sent <- n
	}()
	if resp, _ := r.response("GET"); resp.StatusCode != 413 || !resp.Close || !r.closed() {
		t.Errorf("endless chunked body: %d close %v, want 413 and closed", resp.StatusCode, resp.Close)
	}
	if n := <-sent; n >= 1<<30 {
		t.Errorf("the server took %d bytes of an endless body", n)
	} else {
		t.Logf("the client got %d bytes of an endless body out before it was cut", n)
	}
}

// A client that sends its headers a byte at a time, and never ends them, is
// disconnected by the read-header timeout, not by the (longer) read timeout.
func TestSlowHeadersCutOff(t *testing.T) {
	const timeout = 300 * time.Millisecond
	addr := startServer(t, exporter.New(option.Root(seed)), WithReadHeaderTimeout(timeout), WithReadTimeout(time.Minute))
	start := time.Now() // before the server can start its clock
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	closed := make(chan error, 1)
	go func() {
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, err := io.Copy(io.Discard, conn) // returns at EOF or reset
		closed <- err
	}()
	partial := "GET /metrics HTTP/1.1\r\nHost: nicdiag\r\nX-Slow: " + strings.Repeat("a", 400)
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
			if elapsed < timeout {
				t.Errorf("connection closed after %v, before the %v timeout", elapsed, timeout)
			}
			t.Logf("closed after %v", elapsed)
			return
		case <-time.After(25 * time.Millisecond):
		}
		if _, err := conn.Write([]byte{partial[i]}); err != nil {
			continue // closed by the server between two bytes: the reader sees it next
		}
	}
}

// A keep-alive connection left idle is closed by the idle timeout.
func TestIdleConnectionClosed(t *testing.T) {
	const idle = 300 * time.Millisecond
	r := dialRaw(t, startServer(t, exporter.New(option.Root(seed)), WithIdleTimeout(idle)))
	start := time.Now() // the idle clock starts after the response
	r.send("GET / HTTP/1.1\r\nHost: nicdiag\r\n\r\n")
	if resp, _ := r.response("GET"); resp.StatusCode != 200 || resp.Close {
		t.Fatalf("first response %d, close %v: want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	if !r.closed() {
		t.Fatalf("idle connection still open after %v", time.Since(start))
	}
	if elapsed := time.Since(start); elapsed < idle {
		t.Errorf("idle connection closed after %v, before the %v timeout", elapsed, idle)
	}
}
