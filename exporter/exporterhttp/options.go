package exporterhttp

import (
	"net/http"
	"time"
)

// Defaults. A scrape is one small GET, so the request side is cut short; a
// scrape may wait for a check that misses the cache (bounded at 20 s), and
// its body, rendered once per check, is then written under its own
// deadline.
const (
	// DefaultReadHeaderTimeout bounds how long a client may take to send
	// the request headers (and, over TLS, to finish the handshake).
	DefaultReadHeaderTimeout = 5 * time.Second
	// DefaultReadTimeout bounds reading the whole request, headers and
	// body.
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
	// DefaultMaxScrapes is how many scrapes wait for or copy a check
	// result at once; more get 503. Concurrent scrapes share one check,
	// so a few cover an HA pair of Prometheus servers and a person with
	// curl.
	DefaultMaxScrapes = 4
	// DefaultMaxConns is how many connections a Server keeps open at once:
	// enough that clients which connect and send nothing (each closed at
	// the read-header timeout) leave room for the scrapers, in about
	// 20 KiB of memory each.
	DefaultMaxConns = 1024
	// DefaultMetricsPath is where the exposition is served.
	DefaultMetricsPath = "/metrics"
	// MaxHeaderBytes bounds the request line and header fields, as
	// http.Server.MaxHeaderBytes (net/http allows 4 KiB over it); past it
	// the answer is 431.
	MaxHeaderBytes = 16 << 10
	// MaxBodyBytes bounds a request body that is read and dropped so the
	// connection can be kept; past it the answer is 413 and the connection
	// is closed.
	MaxBodyBytes = 64 << 10
)

// Option configures Handler and NewServer. A duration or count that is not
// positive keeps the default.
type Option func(*config)

type config struct {
	readHeader, read, write, idle, scrapeTimeout time.Duration
	maxScrapes, maxConns                         int
	path                                         string
	landing                                      http.Handler
}

func newConfig(opts []Option) config {
	c := config{
		readHeader: DefaultReadHeaderTimeout, read: DefaultReadTimeout, write: DefaultWriteTimeout,
		idle: DefaultIdleTimeout, scrapeTimeout: DefaultScrapeTimeout,
		maxScrapes: DefaultMaxScrapes, maxConns: DefaultMaxConns, path: DefaultMetricsPath,
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

func setDuration(dst *time.Duration, d time.Duration) {
	if d > 0 {
		*dst = d
	}
}

func setCount(dst *int, n int) {
	if n > 0 {
		*dst = n
	}
}

// WithReadHeaderTimeout sets how long a client may take to send the request
// headers (DefaultReadHeaderTimeout); a slow client is then disconnected.
func WithReadHeaderTimeout(d time.Duration) Option {
	return func(c *config) { setDuration(&c.readHeader, d) }
}

// WithReadTimeout sets how long reading a whole request may take
// (DefaultReadTimeout).
func WithReadTimeout(d time.Duration) Option {
	return func(c *config) { setDuration(&c.read, d) }
}

// WithWriteTimeout sets how long writing one response may take once it is
// ready (DefaultWriteTimeout); a client that reads slower is disconnected.
func WithWriteTimeout(d time.Duration) Option {
	return func(c *config) { setDuration(&c.write, d) }
}

// WithIdleTimeout sets how long an idle keep-alive connection is kept open
// (DefaultIdleTimeout).
func WithIdleTimeout(d time.Duration) Option {
	return func(c *config) { setDuration(&c.idle, d) }
}

// WithScrapeTimeout sets how long one scrape may wait for a check before it
// is answered 503 (DefaultScrapeTimeout). The check keeps running and fills
// the cache for the next scrape.
func WithScrapeTimeout(d time.Duration) Option {
	return func(c *config) { setDuration(&c.scrapeTimeout, d) }
}

// WithMaxScrapes sets how many scrapes are served at once
// (DefaultMaxScrapes); more are answered 503, with Retry-After: 1, at once.
// A scrape counts only while it waits for a check or copies its result,
// not while its response is written.
func WithMaxScrapes(n int) Option { return func(c *config) { setCount(&c.maxScrapes, n) } }

// WithMaxConns sets how many connections a Server keeps open at once
// (DefaultMaxConns); see Server.Listener for what happens past it.
func WithMaxConns(n int) Option { return func(c *config) { setCount(&c.maxConns, n) } }

// WithMetricsPath sets the path of the exposition (DefaultMetricsPath). An
// empty path, or one not starting with "/", keeps the default.
func WithMetricsPath(p string) Option {
	return func(c *config) {
		if len(p) > 0 && p[0] == '/' {
			c.path = p
		}
	}
}

// WithLandingPage sets what answers GET and HEAD of / (a page that links
// the exposition, by default). It is not used when the metrics path is /.
func WithLandingPage(h http.Handler) Option { return func(c *config) { c.landing = h } }
