package exporter

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server defaults. A scrape is one small GET, so the request side is cut
// short; the response side leaves room for a check that misses the cache
// (the Collector bounds one check at 20 s).
const (
	// DefaultReadHeaderTimeout bounds how long a client may take to send
	// the request headers.
	DefaultReadHeaderTimeout = 5 * time.Second
	// DefaultReadTimeout bounds reading the whole request.
	DefaultReadTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds writing the response, from the end of the
	// request headers. It exceeds DefaultScrapeTimeout so that the 503 of
	// a scrape that timed out still reaches the client.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection waits for the
	// next request: longer than a 1-minute scrape interval, so Prometheus
	// reuses its connection.
	DefaultIdleTimeout = 90 * time.Second
	// DefaultScrapeTimeout bounds one scrape; past it the answer is 503.
	DefaultScrapeTimeout = 25 * time.Second
	// DefaultMaxScrapes is how many scrapes are served at once; more get
	// 503. Concurrent scrapes share one check, so a few cover an HA pair of
	// Prometheus servers and a person with curl.
	DefaultMaxScrapes = 4
	// DefaultShutdownGrace is how long Serve lets scrapes in flight finish
	// once its context is done.
	DefaultShutdownGrace = 5 * time.Second
	// maxHeaderBytes bounds the request headers; a scrape sends a few
	// hundred bytes.
	maxHeaderBytes = 16 << 10
)

// ServerOption configures NewServer, Handler and Serve.
type ServerOption func(*serverConfig)

type serverConfig struct {
	readHeader, read, write, idle time.Duration
	scrapeTimeout, shutdownGrace  time.Duration
	maxScrapes                    int
	errorLog                      *log.Logger
}

// WithReadHeaderTimeout sets how long a client may take to send the request
// headers (DefaultReadHeaderTimeout); a slow client is then disconnected.
func WithReadHeaderTimeout(d time.Duration) ServerOption {
	return func(s *serverConfig) { s.readHeader = d }
}

// WithReadTimeout sets how long reading a whole request may take
// (DefaultReadTimeout).
func WithReadTimeout(d time.Duration) ServerOption { return func(s *serverConfig) { s.read = d } }

// WithWriteTimeout sets how long writing a response may take
// (DefaultWriteTimeout). Keep it above the scrape timeout.
func WithWriteTimeout(d time.Duration) ServerOption { return func(s *serverConfig) { s.write = d } }

// WithIdleTimeout sets how long an idle keep-alive connection is kept open
// (DefaultIdleTimeout).
func WithIdleTimeout(d time.Duration) ServerOption { return func(s *serverConfig) { s.idle = d } }

// WithScrapeTimeout sets how long one scrape may take before it is answered
// 503 (DefaultScrapeTimeout). The check it waits for keeps running and
// fills the cache for the next scrape.
func WithScrapeTimeout(d time.Duration) ServerOption {
	return func(s *serverConfig) { s.scrapeTimeout = d }
}

// WithMaxScrapes sets how many scrapes of /metrics are served at once
// (DefaultMaxScrapes); more are answered 503 at once.
func WithMaxScrapes(n int) ServerOption { return func(s *serverConfig) { s.maxScrapes = n } }

// WithShutdownGrace sets how long Serve waits for scrapes in flight once
// its context is done (DefaultShutdownGrace).
func WithShutdownGrace(d time.Duration) ServerOption {
	return func(s *serverConfig) { s.shutdownGrace = d }
}

// WithErrorLog sets where the HTTP server and the metrics handler log
// errors (failed gathers, broken connections). Without it they log
// nothing: the library never prints.
func WithErrorLog(l *log.Logger) ServerOption { return func(s *serverConfig) { s.errorLog = l } }

func newServerConfig(opts []ServerOption) serverConfig {
	s := serverConfig{
		readHeader: DefaultReadHeaderTimeout, read: DefaultReadTimeout, write: DefaultWriteTimeout,
		idle: DefaultIdleTimeout, scrapeTimeout: DefaultScrapeTimeout, shutdownGrace: DefaultShutdownGrace,
		maxScrapes: DefaultMaxScrapes,
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

// Handler serves c on /metrics, in its own registry, with at most
// WithMaxScrapes scrapes at once and WithScrapeTimeout each, and a landing
// page on /. Other paths are 404, methods other than GET and HEAD 405.
func Handler(c *Collector, opts ...ServerOption) http.Handler {
	return handler(c, newServerConfig(opts))
}

func handler(c *Collector, s serverConfig) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	ho := promhttp.HandlerOpts{
		// A collector error costs its series, not the whole scrape:
		// nicdiag_up says the check failed.
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: s.maxScrapes,
		Timeout:             s.scrapeTimeout,
	}
	if s.errorLog != nil {
		ho.ErrorLog = s.errorLog
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, ho))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, landing)
	})
	return mux
}

// NewServer returns an HTTP server for addr that serves c as Handler does,
// with read-header, read, write and idle timeouts and bounded headers. The
// caller starts it (ListenAndServe, or Serve on its own listener) and stops
// it (Shutdown); Serve does both.
func NewServer(addr string, c *Collector, opts ...ServerOption) *http.Server {
	return newServer(addr, c, newServerConfig(opts))
}

func newServer(addr string, c *Collector, s serverConfig) *http.Server {
	errorLog := s.errorLog
	if errorLog == nil {
		errorLog = log.New(io.Discard, "", 0)
	}
	return &http.Server{
		Addr:              addr,
		Handler:           handler(c, s),
		ReadHeaderTimeout: s.readHeader,
		ReadTimeout:       s.read,
		WriteTimeout:      s.write,
		IdleTimeout:       s.idle,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          errorLog,
	}
}

// Serve serves c on ln (as NewServer) until ctx is done, then shuts down,
// letting scrapes in flight finish for WithShutdownGrace. It returns nil
// after a shutdown that ctx asked for, or the error that stopped the
// server. ln is closed when Serve returns.
func Serve(ctx context.Context, ln net.Listener, c *Collector, opts ...ServerOption) error {
	s := newServerConfig(opts)
	srv := newServer(ln.Addr().String(), c, s)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
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
