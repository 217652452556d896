package exporterhttp

import (
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// silentAfter is how long an accepted connection may go without a whole
// request head before it may be closed to make room: a scraper sends its
// request at once, and over TLS the handshake comes first.
const silentAfter = 250 * time.Millisecond

// connLimit caps the connections its listeners hand out and closes idle
// or silent ones to make room (Server.Listener). It learns each
// connection's state from the http.Server's ConnState hook.
type connLimit struct {
	slots   chan struct{}
	waiting atomic.Int32 // accepted connections waiting for a slot
	ended   atomic.Int64 // when a connection last ended by itself (not closed as silent), in Unix ns

	mu   sync.Mutex
	idle map[*limitConn]connInfo // the connections that may be closed for room
}

// connInfo is the state of a connection that may be closed for room.
type connInfo struct {
	idle  bool      // between two requests; else no request head read yet
	since time.Time // when it entered that state
}

func newConnLimit(max int) *connLimit {
	return &connLimit{slots: make(chan struct{}, max), idle: map[*limitConn]connInfo{}}
}

// connState follows the http.Server's view of each connection.
func (l *connLimit) connState(c net.Conn, st http.ConnState) {
	lc := unwrap(c)
	if lc == nil {
		return
	}
	switch st {
	case http.StateIdle:
		if l.waiting.Load() > 0 {
			lc.Close()
			return
		}
		l.set(lc, connInfo{idle: true, since: time.Now()})
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

func (l *connLimit) set(c *limitConn, info connInfo) {
	l.mu.Lock()
	if !c.closed.Load() {
		l.idle[c] = info
	}
	l.mu.Unlock()
}

func (l *connLimit) forget(c *limitConn) {
	l.mu.Lock()
	delete(l.idle, c)
	l.mu.Unlock()
}

// victim returns the connection to close for room: the one idle the
// longest, or else the oldest one silent for silentAfter with nothing
// unread in its socket. Silent ones are closed only once no connection
// has ended by itself for silentAfter: while scrapes end, the one waiting
// gets a slot that way, and a client slowed by a loaded machine is not
// taken for a silent one. With no victim, it returns how long until a
// silent one may be, or 0 when there is none to wait for.
func (l *connLimit) victim(now time.Time) (*limitConn, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var idle *limitConn
	var idleSince time.Time
	var silent []*limitConn
	for c, info := range l.idle {
		switch {
		case !info.idle:
			silent = append(silent, c)
		case idle == nil || info.since.Before(idleSince):
			idle, idleSince = c, info.since
		}
	}
	if idle != nil {
		return idle, 0
	}
	slices.SortFunc(silent, func(a, b *limitConn) int { return l.idle[a].since.Compare(l.idle[b].since) })
	stalled := time.Unix(0, l.ended.Load()).Add(silentAfter).Sub(now)
	for _, c := range silent {
		if wait := max(stalled, l.idle[c].since.Add(silentAfter).Sub(now)); wait > 0 {
			return nil, wait
		}
		if !unread(c.Conn) {
			c.silent.Store(true)
			return c, 0
		}
	}
	return nil, 0
}

// unread reports whether bytes wait in c's socket that the server has not
// read yet: a request on its way in, that the scheduler has not got to.
func unread(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
	return n > 0
}

// acquire takes a slot for a new connection, closing connections for
// room while it waits. It returns false when done is closed first.
func (l *connLimit) acquire(done <-chan struct{}) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	for {
		c, wait := l.victim(time.Now())
		if c != nil {
			c.Close()
		}
		var later <-chan time.Time
		var t *time.Timer
		if wait > 0 {
			t = time.NewTimer(wait)
			later = t.C
		}
		got, stop := false, false
		select {
		case l.slots <- struct{}{}:
			got = true
		case <-later:
		case <-done:
			stop = true
		}
		if t != nil {
			t.Stop()
		}
		if got || stop {
			return got
		}
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
	lc := &limitConn{Conn: c, lim: ln.lim}
	ln.lim.set(lc, connInfo{since: time.Now()})
	return lc, nil
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
	silent atomic.Bool // closed for room as silent
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
		if !c.silent.Load() {
			c.lim.ended.Store(time.Now().UnixNano())
		}
		c.lim.forget(c)
		<-c.lim.slots
	}
	return err
}
