package exporter

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// connLimit caps the connections a listener hands to the server and
// tracks their state. A connection past the cap is accepted from the kernel
// and held (one at a time) until a slot frees; meanwhile the connection
// idle the longest is closed, connections that turn idle are closed, and
// responses ask for Connection: close. So idle keep-alive connections
// cannot keep a scraper out, and the process holds at most max+1
// connections.
//
// Closing an idle connection races with a request that is just arriving on
// it; the client sees the connection closed before any response, which
// HTTP clients retry for a GET, as they do for any server's idle timeout.
type connLimit struct {
	slots   chan struct{}
	waiting atomic.Int32 // accepted connections waiting for a slot
	closing atomic.Bool  // set by shutdown

	mu    sync.Mutex
	conns map[net.Conn]connInfo // the open connections
}

// connState is where a connection is in its life.
type connState uint8

const (
	stateNew    connState = iota // accepted, no request begun yet
	stateActive                  // a request is being read or answered
	stateIdle                    // between two requests
)

type connInfo struct {
	state connState
	since time.Time // when it entered state
}

func newConnLimit(max int) *connLimit {
	return &connLimit{slots: make(chan struct{}, max), conns: map[net.Conn]connInfo{}}
}

// track records that c entered state st. It reports false, having closed
// c, when c is to wait for no request: when it turns idle while another
// connection waits for a slot, once shutdown has begun unless a request is
// active on it, and when it was closed to make room or for the shutdown.
func (l *connLimit) track(c net.Conn, st connState) bool {
	l.mu.Lock()
	_, open := l.conns[c]
	gone := st != stateNew && !open // closed to make room or for the shutdown
	waits := st != stateActive && (l.closing.Load() || st == stateIdle && l.waiting.Load() > 0)
	if gone || waits {
		delete(l.conns, c)
		l.mu.Unlock()
		c.Close()
		return false
	}
	l.conns[c] = connInfo{state: st, since: time.Now()}
	l.mu.Unlock()
	return true
}

// forget drops c, which is being closed.
func (l *connLimit) forget(c net.Conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// closeOldestIdle closes the connection idle the longest, if any.
func (l *connLimit) closeOldestIdle() {
	l.mu.Lock()
	var oldest net.Conn
	var since time.Time
	for c, info := range l.conns {
		if info.state == stateIdle && (oldest == nil || info.since.Before(since)) {
			oldest, since = c, info.since
		}
	}
	delete(l.conns, oldest)
	l.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
}

// shutdown closes the connections that wait for a request and makes every
// connection close after its response; with all, it closes every
// connection, active ones too.
func (l *connLimit) shutdown(all bool) {
	l.mu.Lock()
	l.closing.Store(true)
	var closing []net.Conn
	for c, info := range l.conns {
		if all || info.state != stateActive {
			closing = append(closing, c)
			delete(l.conns, c)
		}
	}
	l.mu.Unlock()
	for _, c := range closing {
		c.Close()
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
	c.closeOnce.Do(func() { <-c.slots })
	return err
}
