package exporter

// The HTTP/1.x edges of Serve's own server, over raw connections: what a
// client sends byte for byte, and what comes back, byte for byte where it
// matters (net/http reads the responses, as a client).

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

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

// response reads one response to a request with method, and its body; it
// checks that Content-Length is there and matches what a GET would carry.
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
	cl := resp.Header.Get("Content-Length")
	switch {
	case resp.StatusCode == 100:
	case cl == "":
		r.t.Errorf("%s answered %d without Content-Length", method, resp.StatusCode)
	case method != "HEAD" && cl != strconv.Itoa(len(b)):
		r.t.Errorf("%s answered Content-Length %s with %d bytes", method, cl, len(b))
	case method == "HEAD" && len(b) != 0:
		r.t.Errorf("HEAD answered with a body of %d bytes", len(b))
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

// Malformed or unsupported requests are answered with the status that
// says why, Connection: close, and the connection is then closed.
func TestMalformedRequests(t *testing.T) {
	addr := startServer(t, New(WithRoot(seed), WithTTL(time.Hour)))
	for _, c := range []struct {
		name, req string
		status    int
	}{
		{"no version", "GET /metrics\r\n\r\n", 400},
		{"two spaces", "GET  /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"bad method", "G(T /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"relative target", "GET metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"control in target", "GET /met\x01rics HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"lower-case version", "GET / http/1.1\r\nHost: x\r\n\r\n", 400},
		{"HTTP/2", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
		{"HTTP/0.9", "GET / HTTP/0.9\r\n\r\n", 505},
		{"header without colon", "GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400},
		{"space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400},
		{"obsolete line folding", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  folded\r\n\r\n", 400},
		{"NUL in a value", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400},
		{"no Host", "GET / HTTP/1.1\r\n\r\n", 400},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
		{"bad Host", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400},
		{"bad escape", "GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"asterisk for GET", "GET * HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"absolute target without host", "GET http:///metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"bad Content-Length", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400},
		{"negative Content-Length", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400},
		{"conflicting Content-Length", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
		{"Content-Length and chunked", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"chunked in HTTP/1.0", "GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"gzip transfer coding", "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
		{"unknown expectation", "GET / HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n", 417},
		{"malformed chunk size", "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
		{"chunk longer than its size", "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := dialRaw(t, addr)
			r.send(c.req)
			resp, body := r.response("GET")
			if resp.StatusCode != c.status || !resp.Close {
				t.Errorf("%q: %d (close %v) %q, want %d and Connection: close", c.req, resp.StatusCode, resp.Close, body, c.status)
			}
			if !strings.HasPrefix(body, strconv.Itoa(c.status)+" ") {
				t.Errorf("body %q does not say why", body)
			}
			if !r.closed() {
				t.Error("connection still open after the refusal")
			}
		})
	}
}

// Request heads over 16 KiB (one long line or many fields) are answered
// 431 and the connection closed; one just under the bound is served.
func TestOversizeHeaders(t *testing.T) {
	addr := startServer(t, New(WithRoot(seed), WithTTL(time.Hour)))
	long := strings.Repeat("a", maxHeaderBytes)
	many := strings.Repeat("X-Filler: "+strings.Repeat("b", 90)+"\r\n", maxHeaderBytes/100+1)
	for name, req := range map[string]string{
		"request line": "GET /" + long + " HTTP/1.1\r\nHost: x\r\n\r\n",
		"one field":    "GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + long + "\r\n\r\n",
		"many fields":  "GET / HTTP/1.1\r\nHost: x\r\n" + many + "\r\n",
		"empty lines":  strings.Repeat("\r\n", maxHeaderBytes/2+1) + "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		r := dialRaw(t, addr)
		r.send(req)
		resp, _ := r.response("GET")
		if resp.StatusCode != 431 || !resp.Close || !r.closed() {
			t.Errorf("%s over the bound: %d (close %v), want 431 and the connection closed", name, resp.StatusCode, resp.Close)
		}
	}
	r := dialRaw(t, addr)
	head := "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Long: \r\n\r\n"
	r.send(strings.Replace(head, "X-Long: ", "X-Long: "+long[:maxHeaderBytes-len(head)], 1))
	if resp, _ := r.response("GET"); resp.StatusCode != 200 {
		t.Errorf("a head of exactly %d bytes: %d, want 200", maxHeaderBytes, resp.StatusCode)
	}
}

// HTTP/1.0: answered in HTTP/1.0 and closed, unless the client asks for
// keep-alive, which it then gets (Connection: keep-alive). HTTP/1.1 with
// Connection: close is closed after the response.
func TestHTTP10AndConnectionClose(t *testing.T) {
	addr := startServer(t, New(WithRoot(seed), WithTTL(time.Hour)))
	r := dialRaw(t, addr)
	r.send("GET /metrics HTTP/1.0\r\n\r\n")
	resp, body := r.response("GET")
	if resp.StatusCode != 200 || resp.Proto != "HTTP/1.0" || !resp.Close || !strings.Contains(body, "nicdiag_up 1") || !r.closed() {
		t.Errorf("HTTP/1.0: %d %s close %v; want 200 in HTTP/1.0, then closed", resp.StatusCode, resp.Proto, resp.Close)
	}

	r = dialRaw(t, addr)
	for i := range 3 {
		r.send("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
		resp, _ := r.response("GET")
		if resp.StatusCode != 200 || resp.Close || resp.Header.Get("Connection") != "keep-alive" {
			t.Fatalf("HTTP/1.0 keep-alive request %d: %d close %v Connection %q", i, resp.StatusCode, resp.Close, resp.Header.Get("Connection"))
		}
	}

	r = dialRaw(t, addr)
	r.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if resp, _ := r.response("GET"); resp.StatusCode != 200 || !resp.Close || !r.closed() {
		t.Errorf("Connection: close: %d close %v; want 200, then closed", resp.StatusCode, resp.Close)
	}
}

// Pipelined requests, sent in one write, are answered in order on the one
// connection; HEAD answers carry the length and no body (else the next
// response would not parse); the last asks to close and is the last.
func TestPipelining(t *testing.T) {
	addr := startServer(t, New(WithRoot(seed), WithTTL(time.Hour)))
	r := dialRaw(t, addr)
	r.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" +
		"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n" +
		"HEAD /nope HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n" +
		"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, plain := r.response("GET")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ContentType || !strings.Contains(plain, "nicdiag_up 1") {
		t.Fatalf("1st: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp, _ := r.response("HEAD"); resp.StatusCode != 200 || resp.ContentLength != int64(len(plain)) {
		t.Errorf("2nd (HEAD): %d, Content-Length %d, want 200 and %d", resp.StatusCode, resp.ContentLength, len(plain))
	}
	if resp, body := r.response("GET"); resp.StatusCode != 404 || body != "404 page not found\n" {
		t.Errorf("3rd: %d %q", resp.StatusCode, body)
	}
	if resp, _ := r.response("HEAD"); resp.StatusCode != 404 || resp.ContentLength != int64(len("404 page not found\n")) {
		t.Errorf("4th (HEAD): %d, Content-Length %d", resp.StatusCode, resp.ContentLength)
	}
	if resp, _ := r.response("GET"); resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("5th: %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	if resp, body := r.response("GET"); resp.StatusCode != 200 || !resp.Close || !strings.Contains(body, `<a href="metrics">`) {
		t.Errorf("6th: %d close %v", resp.StatusCode, resp.Close)
	}
	if !r.closed() {
		t.Error("connection open after Connection: close")
	}
}

// Request bodies: a small one (Content-Length or chunked, with extensions
// and trailers) is read and dropped and the connection kept; one over the
// cap is answered 413 and the connection closed, unread when its length
// says so; a refused method with a small body is answered 405 and kept.
func TestRequestBodies(t *testing.T) {
	addr := startServer(t, New(WithRoot(seed), WithTTL(time.Hour)))
	r := dialRaw(t, addr)
	r.send("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
		"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n3\r\n, w\r\n0\r\nX-Trailer: t\r\n\r\n" +
		"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody" +
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	for i, want := range []int{200, 200, 405, 200} {
		resp, _ := r.response("GET")
		if resp.StatusCode != want || resp.Close {
			t.Fatalf("request %d: %d close %v, want %d kept alive", i, resp.StatusCode, resp.Close, want)
		}
		if want == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("405 with Allow %q", resp.Header.Get("Allow"))
		}
	}

	// Declared too long: refused before the body is read.
	r = dialRaw(t, addr)
	r.send("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(maxDiscardBytes+1) + "\r\n\r\n")
	if resp, _ := r.response("GET"); resp.StatusCode != 413 || !resp.Close || !r.closed() {
		t.Errorf("Content-Length over the cap: %d close %v, want 413 and closed", resp.StatusCode, resp.Close)
	}
	// Chunked and too long: refused once the cap is passed.
	r = dialRaw(t, addr)
	chunk := strings.Repeat("z", 16<<10)
	r.send("GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	go func() {
		for range maxDiscardBytes/len(chunk) + 2 {
			if _, err := io.WriteString(r.c, strconv.FormatInt(int64(len(chunk)), 16)+"\r\n"+chunk+"\r\n"); err != nil {
				return
			}
		}
	}()
	if resp, _ := r.response("GET"); resp.StatusCode != 413 || !resp.Close || !r.closed() {
		t.Errorf("chunked body over the cap: %d close %v, want 413 and closed", resp.StatusCode, resp.Close)
	}
}

// Expect: 100-continue: a request that will be served gets 100 Continue,
// then its body is read and it is answered; a refused one gets its final
// answer at once, and the connection is closed since the body may follow
// or not.
func TestExpectContinue(t *testing.T) {
	addr := startServer(t, New(WithRoot(seed), WithTTL(time.Hour)))
	r := dialRaw(t, addr)
	r.send("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	if resp, _ := r.response("GET"); resp.StatusCode != 100 {
		t.Fatalf("interim answer %d, want 100", resp.StatusCode)
	}
	r.send("hello")
	if resp, body := r.response("GET"); resp.StatusCode != 200 || resp.Close || !strings.Contains(body, "nicdiag_up 1") {
		t.Fatalf("after the body: %d close %v", resp.StatusCode, resp.Close)
	}
	r.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := r.response("GET"); resp.StatusCode != 200 {
		t.Errorf("next request on the connection: %d", resp.StatusCode)
	}

	r = dialRaw(t, addr)
	r.send("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	if resp, _ := r.response("POST"); resp.StatusCode != 405 || !resp.Close || !r.closed() {
		t.Errorf("refused request with Expect: %d close %v, want 405 at once and closed", resp.StatusCode, resp.Close)
	}
	// HTTP/1.0 clients' Expect is ignored (RFC 9110 §10.1.1).
	r = dialRaw(t, addr)
	r.send("GET / HTTP/1.0\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nhi")
	if resp, _ := r.response("GET"); resp.StatusCode != 200 {
		t.Errorf("HTTP/1.0 with Expect: %d, want 200 with no 100 before it", resp.StatusCode)
	}
}

// Methods: a standard one the routes do not serve is 405 with Allow, and
// the connection kept; one that is not standard (methods are
// case-sensitive) is 501; OPTIONS * is 200.
func TestMethods(t *testing.T) {
	addr := startServer(t, New(WithRoot(seed), WithTTL(time.Hour)))
	r := dialRaw(t, addr)
	for _, c := range []struct {
		req    string
		status int
		allow  string
	}{
		{"PUT /metrics", 405, "GET, HEAD"},
		{"DELETE /", 405, "GET, HEAD"},
		{"OPTIONS /metrics", 405, "GET, HEAD"},
		{"OPTIONS *", 200, "GET, HEAD"},
		{"FROB /metrics", 501, ""},
		{"get /metrics", 501, ""},
		{"POST /nope", 404, ""},
		{"CONNECT example.com:443", 404, ""},
	} {
		r.send(c.req + " HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, _ := r.response("GET")
		if resp.StatusCode != c.status || resp.Header.Get("Allow") != c.allow || resp.Close {
			t.Errorf("%s: %d Allow %q close %v, want %d Allow %q kept alive", c.req, resp.StatusCode, resp.Header.Get("Allow"), resp.Close, c.status, c.allow)
		}
	}
}

// Request targets: a query string, the absolute form, percent-escapes,
// and an empty line before the request line are all accepted.
func TestRequestTargets(t *testing.T) {
	addr := startServer(t, New(WithRoot(seed), WithTTL(time.Hour)))
	r := dialRaw(t, addr)
	for target, want := range map[string]string{
		"/metrics?x=1&y":                   "nicdiag_up 1",
		"http://nicdiag:9799/metrics?x=1":  "nicdiag_up 1",
		"HTTPS://nicdiag/metrics":          "nicdiag_up 1",
		"/%6Detrics":                       "nicdiag_up 1",
		"http://nicdiag":                   `<a href="metrics">`,
		"http://nicdiag?q":                 `<a href="metrics">`,
		"/?metrics":                        `<a href="metrics">`,
		"/metrics%3Fx":                     "404 page not found",
		"/metrics#frag":                    "404 page not found",
		"http://nicdiag:9799/metrics/more": "404 page not found",
	} {
		r.send("\r\nGET " + target + " HTTP/1.1\r\nHost: nicdiag\r\n\r\n")
		if resp, body := r.response("GET"); !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, body lacks %q", target, resp.StatusCode, want)
		}
	}
}

// A client (net/http's, as Prometheus' is) reuses one kept-alive
// connection for every scrape.
func TestKeepAliveReuse(t *testing.T) {
	addr := startServer(t, New(WithRoot(seed), WithTTL(time.Hour)))
	dials := 0
	tr := &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		dials++
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for i := range 10 {
		resp, err := client.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || !strings.Contains(string(body), "nicdiag_up 1") {
			t.Fatalf("scrape %d: %d, %d bytes", i, resp.StatusCode, len(body))
		}
	}
	if dials != 1 {
		t.Errorf("10 scrapes took %d connections, want 1", dials)
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
	time.Sleep(200 * time.Millisecond) // the server sees the close
	codes := make(chan int, 1)
	go func() {
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Get("http://" + addr + "/metrics")
		if err != nil {
			t.Error(err)
			codes <- 0
			return
		}
		resp.Body.Close()
		codes <- resp.StatusCode
	}()
	select {
	case code := <-codes:
		t.Fatalf("second scrape answered %d before the check ended: the gone scraper still holds the slot", code)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	if code := <-codes; code != 200 {
		t.Errorf("second scrape: %d, want 200", code)
	}
}

// On shutdown, an idle keep-alive connection is closed at once, a scrape in
// flight that ends within the grace gets its answer (with Connection:
// close), and Serve returns nil once it is written.
func TestShutdownLetsScrapesFinish(t *testing.T) {
	c, entered, release := blockingCollector(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, c, WithShutdownGrace(10*time.Second)) }()
	addr := ln.Addr().String()

	idle := dialRaw(t, addr)
	idle.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	idle.response("GET")
	busy := dialRaw(t, addr)
	busy.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	<-entered
	start := time.Now()
	cancel()
	if !idle.closed() || time.Since(start) > 3*time.Second {
		t.Errorf("idle connection not closed at shutdown (%v)", time.Since(start))
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v with a scrape in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	if resp, _ := busy.response("GET"); resp.StatusCode != 200 || !resp.Close {
		t.Errorf("scrape in flight at shutdown: %d close %v, want 200 and Connection: close", resp.StatusCode, resp.Close)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the last scrape")
	}
}

// Past the grace, Serve drops a scrape still waiting for a check and
// returns.
func TestShutdownGraceEnds(t *testing.T) {
	c, entered, _ := blockingCollector(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, c, WithShutdownGrace(300*time.Millisecond)) }()
	busy := dialRaw(t, ln.Addr().String())
	busy.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	<-entered
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
			t.Errorf("Serve returned %v after cancel, want about the 300ms grace", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the grace")
	}
	if !busy.closed() {
		t.Error("the dropped scrape's connection is still open")
	}
}

// The refusals are typed: errors.Is tells their class, the message says
// the status and why.
func TestRequestErrorsIs(t *testing.T) {
	for req, want := range map[string]error{
		"GET / HTTP/1.1\r\n\r\n":                                    errBadRequest,
		"GET / HTTP/3.0\r\nHost: x\r\n\r\n":                         errVersion,
		"GET / HTTP/1.1\r\nHost: x\r\nExpect: x\r\n\r\n":            errExpectation,
		"GET / HTTP/1.1\r\nTransfer-Encoding: br\r\n\r\n":           errTransferEncoding,
		"GET /" + strings.Repeat("a", maxHeaderBytes) + " HTTP/1.1": errHeaderTooLarge,
		"GET / HTTP/1.1\r\nHost: x\r\n":                             io.ErrUnexpectedEOF,
		"":                                                          io.EOF,
	} {
		_, err := readRequest(bufio.NewReader(strings.NewReader(req)))
		if !errors.Is(err, want) {
			t.Errorf("%.40q: %v, want %v", req, err, want)
		}
		if re := (*requestError)(nil); errors.As(err, &re) && !strings.HasPrefix(err.Error(), "exporter: "+strconv.Itoa(re.status)+" ") {
			t.Errorf("message %q", err)
		}
	}
	if errors.Is(errBadRequest, errHeaderTooLarge) {
		t.Error("two classes match")
	}
}

// A head or a chunked body that never ends is refused after a bounded
// read, holding a bounded amount of memory: a few buffers, not a multiple
// of what was read. Allocation is the least of five tries, since other
// tests' checks still ending in the background can only add to it.
func TestEndlessInputBounded(t *testing.T) {
	for name, c := range map[string]struct {
		head string
		tail string
		want error
	}{
		"head line":       {"GET / HTTP/1.1\r\nX-Endless: ", "a", errHeaderTooLarge},
		"fields":          {"GET / HTTP/1.1\r\n", "X: y\r\n", errHeaderTooLarge},
		"Accept-Encoding": {"GET / HTTP/1.1\r\n", "Accept-Encoding: gzip\r\n", errHeaderTooLarge},
		"chunks":          {"", "4000\r\n" + strings.Repeat("z", 0x4000) + "\r\n", errBodyTooLarge},
		"chunk line":      {"", "0000", errBadRequest},
		"trailers":        {"0\r\n", "X: y\r\n", errBadRequest},
	} {
		alloc := ^uint64(0)
		for range 5 {
			src := &endless{head: c.head, tail: c.tail}
			br := bufio.NewReaderSize(src, readBufferBytes)
			var before, after runtimeMem
			before.read()
			var err error
			if strings.HasPrefix(c.head, "GET") {
				_, err = readRequest(br)
			} else {
				err = discardBody(br, &request{chunked: true, contentLength: -1}, maxDiscardBytes)
			}
			after.read()
			alloc = min(alloc, after.alloc-before.alloc)
			if !errors.Is(err, c.want) {
				t.Fatalf("%s: %v, want %v", name, err, c.want)
			}
			if limit := int64(maxDiscardBytes + maxHeaderBytes + 2*readBufferBytes + 0x4000); src.n > limit {
				t.Fatalf("%s: read %d bytes before refusing, more than %d", name, src.n, limit)
			}
		}
		if alloc > 128<<10 {
			t.Errorf("%s: allocated %d bytes", name, alloc)
		}
	}
}

// endless is head, then tail again and again.
type endless struct {
	head, tail string
	off        int
	n          int64
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if e.head != "" {
			c := copy(p[n:], e.head)
			e.head = e.head[c:]
			n += c
			continue
		}
		c := copy(p[n:], e.tail[e.off:])
		e.off = (e.off + c) % len(e.tail)
		n += c
	}
	e.n += int64(n)
	return n, nil
}

// runtimeMem is the heap allocated so far.
type runtimeMem struct{ alloc uint64 }

func (m *runtimeMem) read() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.alloc = s.TotalAlloc
}

// failingListener fails every Accept: temporary errors first, then err.
type failingListener struct {
	net.Listener
	temporary int // temporary errors still to return
	accepts   int
	err       error
}

type temporaryError struct{}

func (temporaryError) Error() string   { return "accept: too many open files" }
func (temporaryError) Temporary() bool { return true }

func (l *failingListener) Accept() (net.Conn, error) {
	l.accepts++
	if l.temporary > 0 {
		l.temporary--
		return nil, temporaryError{}
	}
	return nil, l.err
}

// An accept error that says it is temporary is retried after a pause;
// another stops Serve, which returns it wrapped, for errors.Is, and closes
// the listener.
func TestServeAcceptErrors(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	permanent := errors.New("listener broken")
	ln := &failingListener{Listener: tcp, temporary: 3, err: permanent}
	start := time.Now()
	err = Serve(context.Background(), ln, New(WithRoot(seed)))
	if !errors.Is(err, permanent) || !strings.HasPrefix(err.Error(), "exporter: accept: ") {
		t.Errorf("Serve: %v, want the listener's error wrapped", err)
	}
	if ln.accepts != 4 || time.Since(start) < 5*time.Millisecond+10*time.Millisecond+20*time.Millisecond {
		t.Errorf("%d accepts in %v, want 3 temporary errors retried after growing pauses, then the fourth", ln.accepts, time.Since(start))
	}
	if c, err := net.DialTimeout("tcp", tcp.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("listener still open after Serve returned")
	}
}
