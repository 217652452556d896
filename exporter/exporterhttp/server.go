package exporterhttp

import (
	"log"
	"net"
	"net/http"

	"github.com/nicdiag/nicdiag/exporter"
)

// Server is what serves a Collector with the exporter's limits: its
// Handler, the timeouts of its http.Servers and the connection cap shared
// by its listeners.
type Server struct {
	handler http.Handler
	conns   *connLimit
	cfg     config
	log     *log.Logger
}

// NewServer returns a Server for c.
func NewServer(c *exporter.Collector, opts ...Option) *Server {
	cfg := newConfig(opts)
	return &Server{handler: newHandler(c, cfg), conns: newConnLimit(cfg.maxConns), cfg: cfg}
}

// SetErrorLog sets where the http.Servers that HTTPServer returns from
// now on log what they refuse or fail to write; nil is the log package's
// standard logger, as in net/http.
func (s *Server) SetErrorLog(l *log.Logger) { s.log = l }

// HTTPServer returns a new http.Server for s's listeners (see Listener):
// the Handler, the request headers (and a TLS handshake) within
// WithReadHeaderTimeout, the whole request within WithReadTimeout,
// headers up to MaxHeaderBytes, an idle keep-alive connection closed after
// WithIdleTimeout, and every response written within WithScrapeTimeout
// plus WithWriteTimeout of its request (the exposition within
// WithWriteTimeout of being ready). Its ConnState hook feeds the
// connection cap: keep it. Each call returns another http.Server, all
// sharing the handler and the cap: one per listener where the server is
// handed to exporter-toolkit's web.Serve, which sets its handler and TLS.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: min(s.cfg.readHeader, s.cfg.read),
		ReadTimeout:       s.cfg.read,
		WriteTimeout:      s.cfg.scrapeTimeout + s.cfg.write,
		IdleTimeout:       s.cfg.idle,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnState:         s.conns.connState,
		ErrorLog:          s.log,
	}
}

// Listener returns ln under s's connection cap (WithMaxConns), which all
// of s's listeners share: past it, the next connection waits in the
// kernel's accept queue while room is made for it. The keep-alive
// connection idle the longest is closed for it, and a connection that
// turns idle while one waits is closed. A connection busy with a request,
// or one that has not sent its request yet, is never closed for room: one
// that sends nothing is closed at the read-header timeout
// (WithReadHeaderTimeout), which bounds how long it holds its slot. So idle
// keep-alive connections do not keep a scraper out, clients that connect
// and send nothing do not below the cap, and the process holds at most the
// cap plus one connection per listener.
func (s *Server) Listener(ln net.Listener) net.Listener { return s.conns.listen(ln) }
