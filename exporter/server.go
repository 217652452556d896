package exporter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// Server defaults. A scrape is one small GET, so the request side is cut
// short; a scrape may wait for a check that misses the cache (bounded at
// 20 s), and its body, rendered once per check, is then written under its
// own deadline.
const (
	// DefaultReadHeaderTimeout bounds how long a client may take to send
	// the request headers, from the moment its connection is accepted or,
	// on a kept-alive connection, the first byte of its next request
	// arrives.
	DefaultReadHeaderTimeout = 5 * time.Second
	// DefaultReadTimeout bounds reading the whole request, headers and
	// body, from the same moment.
	DefaultReadTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds writing one response once it is ready: a
	// client that stops reading is disconnected after it.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection waits for the
	// next request: longer than a 1-minute scrape interval, so Prometheus
	// reuses its connection.
	DefaultIdleTimeout = 90 * time.Second
	// DefaultScrapeTimeout bounds how long a scrape waits for a check;
	// past it the answer is 503.
	DefaultScrapeTimeout = 25 * time.Second
	// DefaultMaxScrapes is how many scrapes of /metrics wait for or copy
	// a check result at once; more get 503. Concurrent scrapes share one
	// check, so a few cover an HA pair of Prometheus servers and a person
	// with curl.
	DefaultMaxScrapes = 4
	// DefaultMaxConns is how many connections Serve keeps open at once;
	// more wait in the kernel's accept queue.
	DefaultMaxConns = 64
	// DefaultShutdownGrace is how long Serve lets scrapes in flight finish
	// once its context is done.
	DefaultShutdownGrace = 5 * time.Second
)

// ServerOption configures Serve and NewSite. A duration or count that is
// not positive keeps the default.
type ServerOption func(*serverConfig)

type serverConfig struct {
	readHeader, read, write, idle time.Duration
	scrapeTimeout, shutdownGrace  time.Duration
	maxScrapes, maxConns          int
	errorLog                      *log.Logger
}

// WithReadHeaderTimeout sets how long a client may take to send the request
// headers (DefaultReadHeaderTimeout); a slow client is then disconnected.
func WithReadHeaderTimeout(d time.Duration) ServerOption {
	return func(s *serverConfig) { setDuration(&s.readHeader, d) }
}

// WithReadTimeout sets how long reading a whole request may take
// (DefaultReadTimeout).
func WithReadTimeout(d time.Duration) ServerOption {
	return func(s *serverConfig) { setDuration(&s.read, d) }
}

// WithWriteTimeout sets how long writing one response may take once it is
// ready (DefaultWriteTimeout); a client that reads slower is disconnected.
func WithWriteTimeout(d time.Duration) ServerOption {
	return func(s *serverConfig) { setDuration(&s.write, d) }
}

// WithIdleTimeout sets how long an idle keep-alive connection is kept open
// (DefaultIdleTimeout).
func WithIdleTimeout(d time.Duration) ServerOption {
	return func(s *serverConfig) { setDuration(&s.idle, d) }
}

// WithScrapeTimeout sets how long one scrape may wait for a check before it
// is answered 503 (DefaultScrapeTimeout). The check keeps running and fills
// the cache for the next scrape.
func WithScrapeTimeout(d time.Duration) ServerOption {
	return func(s *serverConfig) { setDuration(&s.scrapeTimeout, d) }
}

// WithMaxScrapes sets how many scrapes of /metrics are served at once
// (DefaultMaxScrapes); more are answered 503, with Retry-After: 1, at once.
// A scrape counts only while it waits for a check or copies its result,
// not while its response is written.
func WithMaxScrapes(n int) ServerOption {
	return func(s *serverConfig) {
		if n > 0 {
			s.maxScrapes = n
		}
	}
}

// WithMaxConns sets how many connections Serve keeps open at once
// (DefaultMaxConns). Past it a new connection waits in the kernel's accept
// queue while Serve makes room: it closes the connection idle the longest,
// and, while one waits, ends every response with Connection: close.
func WithMaxConns(n int) ServerOption {
	return func(s *serverConfig) {
		if n > 0 {
			s.maxConns = n
		}
	}
}

// WithShutdownGrace sets how long Serve waits for scrapes in flight once
// its context is done (DefaultShutdownGrace).
func WithShutdownGrace(d time.Duration) ServerOption {
	return func(s *serverConfig) { setDuration(&s.shutdownGrace, d) }
}

// WithErrorLog sets where Serve logs errors: refused requests, responses
// it could not write (a client that stopped reading), accept errors it
// retries. Without it it logs nothing: the library never prints.
func WithErrorLog(l *log.Logger) ServerOption { return func(s *serverConfig) { s.errorLog = l } }

func setDuration(dst *time.Duration, d time.Duration) {
	if d > 0 {
		*dst = d
	}
}

func newServerConfig(opts []ServerOption) serverConfig {
	s := serverConfig{
		readHeader: DefaultReadHeaderTimeout, read: DefaultReadTimeout, write: DefaultWriteTimeout,
		idle: DefaultIdleTimeout, scrapeTimeout: DefaultScrapeTimeout, shutdownGrace: DefaultShutdownGrace,
		maxScrapes: DefaultMaxScrapes, maxConns: DefaultMaxConns,
	}
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	return s
}

// Connection handling constants.
const (
	// readBufferBytes is the read buffer of a connection; longer request
	// lines are gathered, within maxHeaderBytes.
	readBufferBytes = 4 << 10
	// inlineBodyBytes is how much body goes out in one write with the
	// response head.
	inlineBodyBytes = 4 << 10
	// lingerTimeout and lingerBytes bound what is read and dropped after a
	// refusal, before the connection is closed: closing with unread input
	// would reset the connection and could destroy the response before the
	// client read it.
	lingerTimeout = 500 * time.Millisecond
	lingerBytes   = 256 << 10
)

// aLongTimeAgo is a deadline in the past, to wake a blocked read.
var aLongTimeAgo = time.Unix(1, 0)

// Serve serves c's Site (NewSite) on ln over HTTP/1.1 and HTTP/1.0, until
// ctx is done; then it stops accepting, closes the connections that wait
// for a request and lets the requests in flight finish for
// WithShutdownGrace, then closes what is left. Requests are read within
// WithReadHeaderTimeout (the head, at most 16 KiB: past it, 431) and
// WithReadTimeout (with a body, which is read and dropped up to 64 KiB:
// past it, 413); responses, which always carry Content-Length, are written
// within WithWriteTimeout of being ready; a kept-alive connection waits
// WithIdleTimeout for the next request, and pipelined requests are answered
// in order. At most WithMaxConns connections are open at once. A malformed
// request is answered 400 and its connection closed.
//
// Serve returns nil after a shutdown that ctx asked for, or the error that
// stopped it accepting (it shuts down the same way first). ln is closed
// when Serve returns.
func Serve(ctx context.Context, ln net.Listener, c *Collector, opts ...ServerOption) error {
	s := newServer(c, newServerConfig(opts))
	lln := s.lim.listen(ln)
	errc := make(chan error, 1)
	go func() { errc <- s.accept(lln) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		close(s.stop)
		lln.Close()
		err = <-errc
	}
	lln.Close()
	s.shutdown()
	return err
}

// server is one Serve: the site, the connections and their limits.
type server struct {
	site  *Site
	cfg   serverConfig
	lim   *connLimit
	ctx   context.Context    // ends when Serve drops the connections left after the grace
	drop  context.CancelFunc // ends ctx
	stop  chan struct{}      // closed when Serve stops accepting for ctx
	conns sync.WaitGroup     // the connections' goroutines
}

func newServer(c *Collector, cfg serverConfig) *server {
	ctx, drop := context.WithCancel(context.Background())
	return &server{site: newSite(c, cfg), cfg: cfg, lim: newConnLimit(cfg.maxConns), ctx: ctx, drop: drop, stop: make(chan struct{})}
}

func (s *server) logf(format string, args ...any) {
	if s.cfg.errorLog != nil {
		s.cfg.errorLog.Printf(format, args...)
	}
}

// accept serves each connection of ln in a goroutine of its own until ln
// fails or s.stop is closed. An error that says it is temporary (too many
// open files) is retried after a pause, as net/http does.
func (s *server) accept(ln net.Listener) error {
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			select {
			case <-s.stop:
				return nil
			default:
			}
			if te, ok := err.(interface{ Temporary() bool }); ok && te.Temporary() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.logf("exporter: accept: %v; retrying in %v", err, delay)
				select {
				case <-time.After(delay):
				case <-s.stop:
					return nil
				}
				continue
			}
			return fmt.Errorf("exporter: accept: %w", err)
		}
		delay = 0
		s.conns.Add(1)
		go s.serveConn(nc)
	}
}

// shutdown closes the idle connections, waits for the others to finish
// their request for the grace, then closes them and ends the scrapes'
// waits.
func (s *server) shutdown() {
	s.lim.shutdown(false)
	done := make(chan struct{})
	go func() {
		s.conns.Wait()
		close(done)
	}()
	grace := time.NewTimer(s.cfg.shutdownGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		s.lim.shutdown(true)
		s.drop()
		<-done
	}
	s.drop()
}

// conn is one connection and its buffers.
type conn struct {
	srv *server
	nc  net.Conn
	rd  connReader
	br  *bufio.Reader // reads rd
	out []byte        // the response head, reused
}

// connReader reads the connection, first handing over the byte a watch
// read while a response was prepared.
type connReader struct {
	nc  net.Conn
	b   [1]byte
	has bool // b holds a byte not yet read
}

func (r *connReader) Read(p []byte) (int, error) {
	if r.has && len(p) > 0 {
		p[0], r.has = r.b[0], false
		return 1, nil
	}
	return r.nc.Read(p)
}

// serveConn serves the requests of nc, then closes it.
func (s *server) serveConn(nc net.Conn) {
	defer s.conns.Done()
	defer func() {
		if p := recover(); p != nil {
			s.logf("exporter: panic serving %v: %v\n%s", nc.RemoteAddr(), p, debug.Stack())
		}
		s.lim.forget(nc)
		nc.Close()
	}()
	c := &conn{srv: s, nc: nc, rd: connReader{nc: nc}}
	c.br = bufio.NewReaderSize(&c.rd, readBufferBytes)
	c.serve()
}

// serve reads and answers requests until the connection is to close.
func (c *conn) serve() {
	s := c.srv
	if !s.lim.track(c.nc, stateNew) {
		return
	}
	headerTimeout := min(s.cfg.readHeader, s.cfg.read)
	t0 := time.Now() // when the request began, for the read timeouts
	c.nc.SetReadDeadline(t0.Add(headerTimeout))
	for first := true; ; first = false {
		if !first {
			if !s.lim.track(c.nc, stateIdle) {
				return
			}
			c.nc.SetReadDeadline(time.Now().Add(s.cfg.idle))
		}
		// The first byte makes the connection active: from then on it is
		// not closed to make room.
		if _, err := c.br.Peek(1); err != nil || !s.lim.track(c.nc, stateActive) {
			return
		}
		if !first {
			t0 = time.Now()
			c.nc.SetReadDeadline(t0.Add(headerTimeout))
		}
		req, err := readRequest(c.br)
		if err != nil {
			// A read error or the end of input gets no answer: the
			// client is gone or too slow.
			var re *requestError
			if errors.As(err, &re) {
				c.refuse(re, 1)
			}
			return
		}
		if !c.handle(req, t0) {
			return
		}
	}
}

// errBodyUnread is a request body left unread: the request is refused and
// the client, told to wait for 100 Continue, may not send it.
var errBodyUnread = errors.New("exporter: request body not read")

// handle answers req and reports whether the connection stays open for
// the next request.
func (c *conn) handle(req *request, t0 time.Time) bool {
	s := c.srv
	keep, lingering := req.keepsAlive(), false
	if req.hasBody() {
		err := c.dropBody(req, t0)
		var re *requestError
		switch {
		case err == nil:
		case serves(req.method, req.path) && errors.Is(err, errBodyTooLarge):
			c.refuse(errBodyTooLarge, req.minor)
			return false
		case errors.Is(err, errBodyTooLarge) || err == errBodyUnread:
			// Refused anyway: answer that, then close.
			keep, lingering = false, true
		case errors.As(err, &re):
			c.refuse(re, req.minor)
			return false
		default:
			return false // the client went or was too slow
		}
	}
	c.nc.SetReadDeadline(time.Time{})
	ctx, stop := s.ctx, func() bool { return false }
	if req.path == "/metrics" && serves(req.method, req.path) && c.br.Buffered() == 0 {
		ctx, stop = c.watch(ctx) // a scrape may wait for a check
	}
	resp := s.site.Respond(ctx, req.method, req.path, req.acceptEncoding)
	if stop() || s.lim.waiting.Load() > 0 || s.lim.closing.Load() {
		keep = false
	}
	if !c.write(resp, req.minor, req.method == "HEAD", keep) {
		return false
	}
	if lingering {
		c.linger()
	}
	return keep
}

// dropBody reads req's body, from t0 within the read timeout, and drops
// it. It does not read a body declared longer than maxDiscardBytes
// (errBodyTooLarge), nor one the client waits for 100 Continue to send
// when the request is refused anyway (errBodyUnread); it sends 100
// Continue for one it reads.
func (c *conn) dropBody(req *request, t0 time.Time) error {
	switch {
	case req.expectContinue && !serves(req.method, req.path):
		return errBodyUnread
	case !req.chunked && req.contentLength > maxDiscardBytes:
		return errBodyTooLarge
	}
	if req.expectContinue {
		c.nc.SetWriteDeadline(time.Now().Add(c.srv.site.write))
		_, err := io.WriteString(c.nc, "HTTP/1.1 100 Continue\r\n\r\n")
		c.nc.SetWriteDeadline(time.Time{})
		if err != nil {
			return err
		}
	}
	c.nc.SetReadDeadline(t0.Add(c.srv.cfg.read))
	return discardBody(c.br, req, maxDiscardBytes)
}

// watch returns a context that ends if the client closes the connection
// while the response is prepared, so a scraper that gave up frees its
// scrape slot, and stop, which ends the watch and reports whether the
// client has gone. A byte the client sends meanwhile (the next, pipelined
// request) is kept for the next read.
func (c *conn) watch(parent context.Context) (ctx context.Context, stop func() bool) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	gone := false
	go func() {
		defer close(done)
		n, err := c.nc.Read(c.rd.b[:])
		var ne net.Error
		switch {
		case n > 0:
			c.rd.has = true
		case errors.As(err, &ne) && ne.Timeout(): // stopped
		default:
			gone = true
			cancel()
		}
	}()
	return ctx, func() bool {
		c.nc.SetReadDeadline(aLongTimeAgo)
		<-done
		c.nc.SetReadDeadline(time.Time{})
		cancel()
		return gone
	}
}

// refuse answers a refused request (HTTP/1.minor) with its status and
// reason, then closes the connection's writing side and lingers.
func (c *conn) refuse(e *requestError, minor int) {
	c.srv.logf("exporter: refused a request from %v: %v", c.nc.RemoteAddr(), e)
	body := []byte(strconv.Itoa(e.status) + " " + statusText(e.status) + ": " + e.reason + "\n")
	if c.write(Response{Status: e.status, Header: textHeader, Body: body}, minor, false, false) {
		c.linger()
	}
}

// write writes resp as the answer to an HTTP/1.minor request, without the
// body for HEAD, within the write timeout; with keep false it asks the
// client to close. It reports whether the response was written.
func (c *conn) write(resp Response, minor int, head, keep bool) bool {
	b := c.out[:0]
	if minor == 0 {
		b = append(b, "HTTP/1.0 "...)
	} else {
		b = append(b, "HTTP/1.1 "...)
	}
	b = strconv.AppendInt(b, int64(resp.Status), 10)
	b = append(b, ' ')
	b = append(b, statusText(resp.Status)...)
	b = append(b, "\r\n"...)
	for _, f := range resp.Header {
		b = append(b, f.Name...)
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(resp.Body)), 10)
	b = append(b, "\r\nDate: "...)
	b = time.Now().UTC().AppendFormat(b, "Mon, 02 Jan 2006 15:04:05 GMT")
	switch {
	case !keep:
		b = append(b, "\r\nConnection: close"...)
	case minor == 0:
		b = append(b, "\r\nConnection: keep-alive"...)
	}
	b = append(b, "\r\n\r\n"...)
	body := resp.Body
	if head {
		body = nil
	}
	if len(body) <= inlineBodyBytes {
		b, body = append(b, body...), nil
	}
	if cap(b) <= 2*inlineBodyBytes {
		c.out = b
	}
	// The response is written under its own deadline, so a client that
	// stops reading is cut; the deadline is lifted after the last byte, so
	// it does not outlive this response on a kept-alive connection.
	c.nc.SetWriteDeadline(time.Now().Add(c.srv.site.write))
	_, err := c.nc.Write(b)
	if err == nil && len(body) > 0 {
		_, err = c.nc.Write(body)
	}
	c.nc.SetWriteDeadline(time.Time{})
	if err != nil {
		c.srv.logf("exporter: writing the response to %v: %v", c.nc.RemoteAddr(), err)
		return false
	}
	return true
}

// linger closes the writing side of the connection and drops what the
// client still sends, for lingerTimeout or lingerBytes at most, so that
// closing with unread input does not reset the connection under the
// response (RFC 9112 §9.6).
func (c *conn) linger() {
	if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	c.nc.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.CopyN(io.Discard, c.nc, lingerBytes)
}
