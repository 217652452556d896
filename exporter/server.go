package exporter

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Server defaults. A scrape is one small GET, so the request side is cut
// short; a scrape may wait for a check that misses the cache (bounded at
// 20 s), and its body, rendered once per check, is then written under its
// own deadline.
const (
	// DefaultReadHeaderTimeout bounds how long a client may take to send
	// the request headers, from the moment its connection is accepted or
	// its previous response ended.
	DefaultReadHeaderTimeout = 5 * time.Second
	// DefaultReadTimeout bounds reading the whole request.
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
	// maxHeaderBytes bounds the request headers; a scrape sends a few
	// hundred bytes.
	maxHeaderBytes = 16 << 10
	// retryAfter is the Retry-After of a 503, in seconds.
	retryAfter = "1"
)

// ServerOption configures Handler and Serve. A duration or count that is
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

// WithErrorLog sets where the HTTP server logs errors (broken connections,
// bad requests). Without it it logs nothing: the library never prints.
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

// landing is the page on /: where the metrics are.
const landing = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>nicdiag exporter</title></head>
<body>
<h1>nicdiag exporter</h1>
<p>NIC, PCIe and IRQ verdicts of <code>nicdiag check</code> for Prometheus: <a href="metrics">/metrics</a>.</p>
</body>
</html>
`

// Handler serves c on /metrics, with at most WithMaxScrapes scrapes at once
// and WithScrapeTimeout each, gzipped when the client accepts it, the body
// written under WithWriteTimeout; and a landing page on /. Other paths are
// 404, methods other than GET and HEAD 405. The connection cap and the
// server's timeouts are Serve's.
func Handler(c *Collector, opts ...ServerOption) http.Handler {
	return handler(c, newServerConfig(opts), nil)
}

// handler is Handler; with lim, it asks for the connection to be closed
// after the response while a new one waits for a slot.
func handler(c *Collector, s serverConfig, lim *connLimit) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", &metricsHandler{c: c, slots: make(chan struct{}, s.maxScrapes), timeout: s.scrapeTimeout, write: s.write})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, landing)
	})
	if lim == nil {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lim.waiting.Load() > 0 {
			w.Header().Set("Connection", "close")
		}
		mux.ServeHTTP(w, r)
	})
}

// metricsHandler serves /metrics. A scrape holds one of slots while it
// waits for the check result, and none while it writes it.
type metricsHandler struct {
	c       *Collector
	slots   chan struct{}
	timeout time.Duration // waiting for a check
	write   time.Duration // writing the body
}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case h.slots <- struct{}{}:
	default:
		unavailable(w, "too many scrapes at once ("+strconv.Itoa(cap(h.slots))+"); try again later")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.timeout)
	p, err := h.c.current(ctx)
	gz := acceptsGzip(r.Header.Get("Accept-Encoding"))
	var body []byte
	if err == nil {
		body = p.text
		if gz {
			body = p.gzipped()
		}
	}
	cancel()
	<-h.slots
	if err != nil {
		unavailable(w, "no check result within "+h.timeout.String()+"; the check goes on, try again later")
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", ContentType)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	hdr.Add("Vary", "Accept-Encoding")
	if gz {
		hdr.Set("Content-Encoding", "gzip")
	}
	// The body is written under its own deadline, so a client that stops
	// reading is cut; the deadline is lifted after the last byte, so it
	// does not outlive this response on a kept-alive connection.
	rc := http.NewResponseController(w)
	if rc.SetWriteDeadline(time.Now().Add(h.write)) == nil {
		defer rc.SetWriteDeadline(time.Time{})
	}
	if r.Method == http.MethodHead {
		return
	}
	if _, err := w.Write(body); err == nil {
		rc.Flush()
	}
}

// unavailable answers 503 with a one-line reason.
func unavailable(w http.ResponseWriter, why string) {
	w.Header().Set("Retry-After", retryAfter)
	http.Error(w, why, http.StatusServiceUnavailable)
}

// acceptsGzip reports whether an Accept-Encoding header value lists gzip
// with a weight above 0.
func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(p, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || q <= 0 {
					return false
				}
			}
		}
		return true
	}
	return false
}

// newServer returns the HTTP server Serve runs: the read-header, read and
// idle timeouts, an overall write timeout (a scrape's wait plus its
// write), bounded headers, and the connection tracking of lim.
func newServer(c *Collector, s serverConfig, lim *connLimit) *http.Server {
	errorLog := s.errorLog
	if errorLog == nil {
		errorLog = log.New(io.Discard, "", 0)
	}
	return &http.Server{
		Handler:           handler(c, s, lim),
		ReadHeaderTimeout: s.readHeader,
		ReadTimeout:       s.read,
		WriteTimeout:      s.scrapeTimeout + s.write,
		IdleTimeout:       s.idle,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          errorLog,
		ConnState:         lim.track,
	}
}

// Serve serves c on ln as Handler does, with the read-header, read, write
// and idle timeouts, bounded request headers and at most WithMaxConns
// connections, until ctx is done; then it shuts down, letting scrapes in
// flight finish for WithShutdownGrace. It returns nil after a shutdown that
// ctx asked for, or the error that stopped the server. ln is closed when
// Serve returns.
func Serve(ctx context.Context, ln net.Listener, c *Collector, opts ...ServerOption) error {
	s := newServerConfig(opts)
	lim := newConnLimit(s.maxConns)
	srv := newServer(c, s, lim)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lim.listen(ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), s.shutdownGrace)
	defer cancel()
	err := srv.Shutdown(shut)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close() // past the grace: drop what is left
	}
	if serr := <-errc; err == nil && !errors.Is(serr, http.ErrServerClosed) {
		err = serr
	}
	return err
}
