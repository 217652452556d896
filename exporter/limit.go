package exporter

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connLimit caps the connections a listener hands to the HTTP server. A
// connection past the cap is accepted from the kernel and held (one at a
// time) until a slot frees; meanwhile the connection idle the longest is
// closed, connections that turn idle are closed, and responses ask for
// Connection: close. So idle keep-alive connections cannot keep a scraper
// out, and the process holds at most max+1 connections.
//
// Closing an idle connection races with a request that is just arriving on
// it; the client sees the connection closed before any response, which
// HTTP clients retry for a GET, as they do for any server's idle timeout.
type connLimit struct {
	slots   chan struct{}
	waiting atomic.Int32 // accepted connections waiting for a slot

	mu   sync.Mutex
	idle map[net.Conn]time.Time // connections between two requests, since when
}

func newConnLimit(max int) *connLimit {
	return &connLimit{slots: make(chan struct{}, max), idle: map[net.Conn]time.Time{}}
}

// track follows the server's connections (http.Server.ConnState).
func (l *connLimit) track(c net.Conn, st http.ConnState) {
	if st == http.StateIdle && l.waiting.Load() > 0 {
		c.Close()
		return
	}
	l.mu.Lock()
	if st == http.StateIdle {
		l.idle[c] = time.Now()
	} else {
		delete(l.idle, c)
	}
	l.mu.Unlock()
}

// closeOldestIdle closes the connection idle the longest, if any.
func (l *connLimit) closeOldestIdle() {
	l.mu.Lock()
	var oldest net.Conn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	delete(l.idle, oldest)
	l.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
}

// listen wraps ln so that it hands out at most cap(l.slots) connections
// at once.
func (l *connLimit) listen(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, lim: l, done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	lim       *connLimit
	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

// Accept returns the next connection once a slot is free for it.
func (ln *limitListener) Accept() (net.Conn, error) {
	c, err := ln.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l := ln.lim
	select {
	case l.slots <- struct{}{}:
		return &limitConn{Conn: c, slots: l.slots}, nil
	default:
	}
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	l.closeOldestIdle()
	select {
	case l.slots <- struct{}{}:
		return &limitConn{Conn: c, slots: l.slots}, nil
	case <-ln.done:
		c.Close()
		return nil, net.ErrClosed
	}
}

// Close closes the listener and wakes an Accept that waits for a slot.
func (ln *limitListener) Close() error {
	ln.closeOnce.Do(func() { close(ln.done) })
	return ln.Listener.Close()
}

// limitConn gives its slot back when it is closed.
type limitConn struct {
	net.Conn
	slots     chan struct{}
	closeOnce sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() { <-c.slots })
	return err
}
