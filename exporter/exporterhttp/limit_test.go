package exporterhttp

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/exporter"
)

// idleConn opens a connection, has one request answered on it, and leaves
// it idle.
func idleConn(t *testing.T, addr string) *rawConn {
	t.Helper()
	r := dialRaw(t, addr)
	r.send("GET / HTTP/1.1\r\nHost: nicdiag\r\n\r\n")
	if resp, _ := r.response("GET"); resp.StatusCode != 200 {
		t.Fatalf("GET /: %d", resp.StatusCode)
	}
	return r
}

// At the connection cap, a new client is served at once: the connection
// idle the longest is closed for it, well before the idle timeout.
func TestConnCapClosesOldestIdle(t *testing.T) {
	addr := startServer(t, exporter.New(exporter.WithRoot(seed)), WithMaxConns(2), WithIdleTimeout(time.Minute))
	first := idleConn(t, addr)
	time.Sleep(20 * time.Millisecond) // the first is idle the longest
	second := idleConn(t, addr)
	code, _, _ := get(t, &http.Client{Timeout: 20 * time.Second}, "GET", "http://"+addr+"/metrics")
	if code != 200 {
		t.Errorf("third client at the cap of 2 with 2 idle connections: %d", code)
	}
	if !first.closed() {
		t.Error("the oldest idle connection is still open")
	}
	second.send("GET / HTTP/1.1\r\nHost: nicdiag\r\n\r\n")
	if resp, _ := second.response("GET"); resp.StatusCode != 200 {
		t.Errorf("the younger idle connection: %d", resp.StatusCode)
	}
}

// At the cap, connections that never sent a request are closed for a new
// client once they have been silent for silentAfter, oldest first.
func TestConnCapClosesSilent(t *testing.T) {
	addr := startServer(t, exporter.New(exporter.WithRoot(seed)), WithMaxConns(2), WithReadHeaderTimeout(time.Minute))
	first := dialRaw(t, addr)
	time.Sleep(20 * time.Millisecond)
	second := dialRaw(t, addr)
	time.Sleep(silentAfter)
	start := time.Now()
	code, _, _ := get(t, &http.Client{Timeout: 20 * time.Second}, "GET", "http://"+addr+"/metrics")
	if code != 200 {
		t.Errorf("third client at the cap of 2 with 2 silent connections: %d", code)
	}
	t.Logf("answered in %v", time.Since(start))
	if !first.closed() {
		t.Error("the oldest silent connection is still open")
	}
	second.send("GET / HTTP/1.1\r\nHost: nicdiag\r\n\r\n")
	if resp, _ := second.response("GET"); resp.StatusCode != 200 {
		t.Errorf("the younger silent connection, now speaking: %d", resp.StatusCode)
	}
}

// A connection busy with a request is never closed for room, over TLS as
// well (the server sees a *tls.Conn over the capped connection): with a
// cap of 1 and a scrape waiting for a check, a second client waits, and
// both are answered once the check ends.
func TestConnCapKeepsActiveTLS(t *testing.T) {
	c, entered, release := blockingCollector(t)
	s := NewServer(c, WithMaxConns(1), WithScrapeTimeout(time.Minute))
	s.SetErrorLog(log.New(io.Discard, "", 0))
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = s.HTTPServer()
	ts.Listener = s.Listener(ts.Listener)
	ts.StartTLS()
	defer ts.Close()
	codes := make(chan int, 2)
	scrape := func() { scrapeInto(t, ts.Client(), ts.URL+"/metrics", codes) }
	go scrape()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first scrape never started its check")
	}
	go scrape()
	select {
	case code := <-codes:
		t.Fatalf("a scrape ended (%d) while the only slot was busy", code)
	case <-time.After(3 * silentAfter):
	}
	release()
	for range 2 {
		select {
		case code := <-codes:
			if code != 200 {
				t.Errorf("scrape: %d, want 200", code)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the scrapes did not finish after the check")
		}
	}
}

// Closing the listener wakes an Accept that waits for a slot.
func TestCapListenerClose(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newConnLimit(1)
	ln := l.listen(inner)
	for range 2 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	l.connState(first, http.StateActive) // busy: not to be closed for room
	done := make(chan error, 1)
	go func() {
		_, err := ln.Accept()
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("second Accept returned (%v) with the only slot busy", err)
	case <-time.After(3 * silentAfter):
	}
	ln.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Accept after Close: no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not wake Accept")
	}
	if n := len(l.slots); n != 1 {
		t.Errorf("%d slots taken, want 1 (the busy connection's)", n)
	}
	first.Close()
	first.Close()
	if n := len(l.slots); n != 0 {
		t.Errorf("%d slots taken after Close, want 0", n)
	}
}

// victim's choice: the connection idle the longest first; a silent one
// only once it has been silent for silentAfter and no connection has
// ended by itself for as long (else how long to wait), oldest first, and
// never one with a request waiting unread in its socket.
func TestVictim(t *testing.T) {
	l := newConnLimit(4)
	now := time.Now()
	pipe := func() *limitConn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return &limitConn{Conn: a, lim: l}
	}
	old, young := pipe(), pipe()
	l.idle[old] = connInfo{since: now.Add(-2 * silentAfter)}
	l.idle[young] = connInfo{since: now.Add(-silentAfter / 2)}

	l.ended.Store(now.Add(-silentAfter / 4).UnixNano())
	if c, wait := l.victim(now); c != nil || wait < silentAfter/2 || wait > silentAfter {
		t.Errorf("a connection ended %v ago: victim %v, wait %v; want none for %v", silentAfter/4, c, wait, 3*silentAfter/4)
	}
	l.ended.Store(0)
	if c, _ := l.victim(now); c != old || !old.silent.Load() {
		t.Errorf("victim %v, want the oldest silent connection, marked silent", c)
	}
	delete(l.idle, old)
	if c, wait := l.victim(now); c != nil || wait != silentAfter/2 {
		t.Errorf("only a young silent connection: victim %v, wait %v; want none for %v", c, wait, silentAfter/2)
	}
	idle := pipe()
	l.idle[idle] = connInfo{idle: true, since: now}
	if c, _ := l.victim(now); c != idle || idle.silent.Load() {
		t.Errorf("victim %v, want the idle connection first, not marked silent", c)
	}

	// A TCP connection whose request waits unread is not silent.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	l2 := newConnLimit(1)
	tc := &limitConn{Conn: server, lim: l2}
	l2.idle[tc] = connInfo{since: now.Add(-2 * silentAfter)}
	if c, _ := l2.victim(now); c != tc {
		t.Fatalf("a silent TCP connection: victim %v", c)
	}
	tc.silent.Store(false)
	client.Write([]byte("GET / HTTP/1.1\r\n"))
	for deadline := time.Now().Add(5 * time.Second); !unread(server) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if c, wait := l2.victim(now); c != nil || wait != 0 {
		t.Errorf("a TCP connection with a request unread: victim %v, wait %v; want none", c, wait)
	}
}
