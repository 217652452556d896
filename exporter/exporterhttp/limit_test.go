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
	"github.com/nicdiag/nicdiag/option"
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
	addr := startServer(t, exporter.New(option.Root(seed)), WithMaxConns(2), WithIdleTimeout(time.Minute))
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

// At the cap, connections that never sent a request are not closed for
// room (one may be a request on its way in): they hold their slots until
// the read-header timeout closes them, and then a waiting client is
// answered.
func TestConnCapSilentUntilReadHeaderTimeout(t *testing.T) {
	addr := startServer(t, exporter.New(option.Root(seed)), WithMaxConns(2), WithReadHeaderTimeout(time.Second))
	first, second := dialRaw(t, addr), dialRaw(t, addr)
	code, _, _ := get(t, &http.Client{Timeout: 20 * time.Second}, "GET", "http://"+addr+"/metrics")
	if code != 200 {
		t.Errorf("third client at the cap of 2 with 2 silent connections: %d", code)
	}
	if !first.closed() || !second.closed() {
		t.Error("a silent connection outlived the read-header timeout")
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
	case <-time.After(holdOn):
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
	case <-time.After(holdOn):
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

// victim's choice: the connection idle the longest; none when none is
// idle.
func TestVictim(t *testing.T) {
	l := newConnLimit(4)
	if c := l.victim(); c != nil {
		t.Errorf("no idle connection: victim %v", c)
	}
	pipe := func() *limitConn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return &limitConn{Conn: a, lim: l}
	}
	now := time.Now()
	old, young := pipe(), pipe()
	l.idle[old] = now.Add(-time.Minute)
	l.idle[young] = now
	if c := l.victim(); c != old {
		t.Errorf("victim %v, want the one idle the longest", c)
	}
}

// holdOn is how long a test watches for something that must not happen.
const holdOn = 750 * time.Millisecond
