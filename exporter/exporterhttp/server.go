package exporterhttp

import (
	"log"
	"net"
	"net/http"

	"github.com/nicdiag/nicdiag/exporter"
)

// Server is an http.Server for a Collector with the exporter's limits, and
// the connection cap its listeners get.
type Server struct {
	// HTTP serves Handler with the timeouts of the options: the request
	// headers (and a TLS handshake) within WithReadHeaderTimeout, the
	// whole request within WithReadTimeout, headers up to MaxHeaderBytes,
	// an idle keep-alive connection closed after WithIdleTimeout, and every
	// response written within WithScrapeTimeout plus WithWriteTimeout of
	// its request (the exposition within WithWriteTimeout of being ready).
	// Its ConnState hook is the connection cap's: keep it if you replace
	// it. Serve it on listeners from Listener, with Serve or ServeTLS, or
	// with exporter-toolkit's web.Serve.
	HTTP  *http.Server
	conns *connLimit
}

// NewServer returns a Server for c. Its errors go to the log package's
// standard logger, as net/http's do, unless HTTP.ErrorLog is set.
func NewServer(c *exporter.Collector, opts ...Option) *Server {
	cfg := newConfig(opts)
	s := &Server{conns: newConnLimit(cfg.maxConns)}
	s.HTTP = &http.Server{
		Handler:           newHandler(c, cfg),
		ReadHeaderTimeout: min(cfg.readHeader, cfg.read),
		ReadTimeout:       cfg.read,
		WriteTimeout:      cfg.scrapeTimeout + cfg.write,
		IdleTimeout:       cfg.idle,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnState:         s.conns.connState,
	}
	return s
}

// SetErrorLog sets where the server logs what it refuses or fails to
// write: nil is the log package's standard logger.
func (s *Server) SetErrorLog(l *log.Logger) { s.HTTP.ErrorLog = l }

// Listener returns ln with the connection cap (WithMaxConns): past it, the
// next connection waits in the kernel's accept queue while room is made
// for it. The connection idle the longest is closed for it, or else the
// oldest one that has not sent a whole request head in 100 ms (a silent
// or slow client), and a connection that turns idle while one waits is
// closed. A connection busy with a request is never closed for room. So
// neither idle keep-alive connections nor clients that connect and send
// nothing keep a scraper out, and the process holds at most the cap plus
// one connection per listener.
func (s *Server) Listener(ln net.Listener) net.Listener { return s.conns.listen(ln) }

// Serve serves s.HTTP on ln, under the connection cap, until s.HTTP is
// shut down or closed (then it returns http.ErrServerClosed).
func (s *Server) Serve(ln net.Listener) error { return s.HTTP.Serve(s.Listener(ln)) }
