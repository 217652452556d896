package exporterhttp

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// connLimit caps the connections its listeners hand out and closes idle
// keep-alive ones to make room (Server.Listener). It learns each
// connection's state from the http.Server's ConnState hook.
type connLimit struct {
	slots chan struct{}

	mu      sync.Mutex
	waiting int                      // accepted connections waiting for a slot
	idle    map[*limitConn]time.Time // idle keep-alive connections, since when
}

func newConnLimit(max int) *connLimit {
	return &connLimit{slots: make(chan struct{}, max), idle: map[*limitConn]time.Time{}}
}

// connState follows the http.Server's view of each connection: one that
// turns idle while a new one waits for a slot is closed for it.
func (l *connLimit) connState(c net.Conn, st http.ConnState) {
	lc := unwrap(c)
	if lc == nil {
		return
	}
	switch st {
	case http.StateIdle:
		l.mu.Lock()
		wanted := l.waiting > 0
		if !wanted && !lc.closed.Load() {
			l.idle[lc] = time.Now()
		}
		l.mu.Unlock()
		if wanted {
			lc.Close()
		}
	case http.StateActive, http.StateHijacked, http.StateClosed:
		l.forget(lc)
	}
}

// unwrap returns the limitConn under c (a *tls.Conn over one, or one),
// or nil.
func unwrap(c net.Conn) *limitConn {
	for {
		switch v := c.(type) {
		case *limitConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
}

func (l *connLimit) forget(c *limitConn) {
	l.mu.Lock()
	delete(l.idle, c)
	l.mu.Unlock()
}

// victim returns the connection idle the longest, or nil; l.mu is held.
func (l *connLimit) victim() *limitConn {
	var oldest *limitConn
	var since time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	return oldest
}

// acquire takes a slot for a new connection, closing the connection idle
// the longest for it; failing that it waits for a connection to end (a
// silent one ends at the read-header timeout, an idle one at the idle
// timeout or when it turns idle). It returns false when done is closed
// first.
func (l *connLimit) acquire(done <-chan struct{}) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	// Counted and choosing under one lock: a connection turning idle is
	// either seen here or closed by connState.
	l.mu.Lock()
	l.waiting++
	c := l.victim()
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
	}()
	if c != nil {
		c.Close()
	}
	select {
	case l.slots <- struct{}{}:
		return true
	case <-done:
		return false
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
	if !ln.lim.acquire(ln.done) {
		c.Close()
		return nil, net.ErrClosed
	}
	return &limitConn{Conn: c, lim: ln.lim}, nil
}

// Close closes the listener and wakes an Accept that waits for a slot.
func (ln *limitListener) Close() error {
	ln.closeOnce.Do(func() { close(ln.done) })
	return ln.Listener.Close()
}

// limitConn gives its slot back when it is closed.
type limitConn struct {
	net.Conn
	lim    *connLimit
	closed atomic.Bool
}

// CloseWrite shuts down the writing side of the connection, where it has
// one (a TCP or Unix connection).
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	if !c.closed.Swap(true) {
		c.lim.forget(c)
		<-c.lim.slots
	}
	return err
}
