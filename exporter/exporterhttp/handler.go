// Package exporterhttp serves an exporter.Collector over net/http: Handler
// answers scrapes (the exposition, gzipped when the client accepts it, at
// most a few at once, each waiting a bounded time for a check), and
// NewServer puts it in an http.Server with timeouts on every phase of a
// request and a cap on connections that idle or silent clients cannot
// exhaust. The nicdiag_exporter command serves it through
// prometheus/exporter-toolkit (TLS, basic auth, socket activation).
package exporterhttp

import (
	"context"
	"errors"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nicdiag/nicdiag/exporter"
)

// Handler serves c: the exposition on the metrics path (WithMetricsPath),
// a landing page on /, 404 elsewhere and 405 with Allow: GET, HEAD for
// another method. A scrape waits at most WithScrapeTimeout for a check and
// at most WithMaxScrapes run at once; past either the answer is 503 with
// Retry-After: 1. A request body on those routes is read and dropped up
// to MaxBodyBytes (past it, 413). Responses carry Content-Length; the
// exposition is written within WithWriteTimeout of being ready. Connection
// limits and read timeouts are the http.Server's (NewServer sets them).
func Handler(c *exporter.Collector, opts ...Option) http.Handler {
	return newHandler(c, newConfig(opts))
}

type handler struct {
	c             *exporter.Collector
	path          string
	landing       http.Handler
	slots         chan struct{}
	scrapeTimeout time.Duration
	write         time.Duration
	busy, late    string // the reasons of the two 503s
}

func newHandler(c *exporter.Collector, cfg config) *handler {
	h := &handler{
		c: c, path: cfg.path, landing: cfg.landing, slots: make(chan struct{}, cfg.maxScrapes),
		scrapeTimeout: cfg.scrapeTimeout, write: cfg.write,
		busy: "too many scrapes at once (" + strconv.Itoa(cfg.maxScrapes) + "); try again later",
		late: "no check result within " + cfg.scrapeTimeout.String() + "; the check goes on, try again later",
	}
	if h.landing == nil {
		h.landing = landingPage(cfg.path)
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case p != h.path && p != "/":
		http.NotFound(w, r)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
	case !dropBody(w, r): // refused, or the client went
	case p == h.path:
		h.metrics(w, r)
	default:
		h.landing.ServeHTTP(w, r)
	}
}

// dropBody reads and drops r's body, if any, and reports whether the
// request is to be answered: past MaxBodyBytes it answers 413 itself, and
// http.MaxBytesReader has the connection closed after it.
func dropBody(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength == 0 {
		return true
	}
	tooLarge := r.ContentLength > MaxBodyBytes
	if !tooLarge {
		_, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			tooLarge = true
		case err != nil: // the client went, or was too slow
			return false
		}
	}
	if tooLarge {
		w.Header().Set("Connection", "close")
		http.Error(w, "413 request body over "+strconv.Itoa(MaxBodyBytes>>10)+" KiB", http.StatusRequestEntityTooLarge)
		return false
	}
	return true
}

// metrics answers a scrape. It holds one of the slots while it waits for
// the check result, and none while the response is written.
func (h *handler) metrics(w http.ResponseWriter, r *http.Request) {
	select {
	case h.slots <- struct{}{}:
	default:
		unavailable(w, h.busy)
		return
	}
	gz := acceptsGzip(strings.Join(r.Header.Values("Accept-Encoding"), ", "))
	ctx, cancel := context.WithTimeout(r.Context(), h.scrapeTimeout)
	body, err := h.c.Exposition(ctx, gz)
	cancel()
	<-h.slots
	if err != nil {
		unavailable(w, h.late)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", exporter.ContentType)
	hdr.Set("Vary", "Accept-Encoding")
	if gz {
		hdr.Set("Content-Encoding", "gzip")
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	// The body is written under its own deadline, so a client that stops
	// reading is cut; the http.Server sets the next request's.
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(h.write))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := w.Write(body); err == nil {
		rc.Flush()
	}
}

// unavailable answers 503 with Retry-After: 1 and a one-line reason.
func unavailable(w http.ResponseWriter, why string) {
	w.Header().Set("Retry-After", "1")
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
				if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || !(q > 0) {
					return false
				}
			}
		}
		return true
	}
	return false
}

// landingTemplate is the page on /: where the metrics are.
var landingTemplate = template.Must(template.New("landing").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>nicdiag exporter</title></head>
<body>
<h1>nicdiag exporter</h1>
<p>NIC, PCIe and IRQ verdicts of <code>nicdiag check</code> for Prometheus: <a href="{{.}}">{{.}}</a>.</p>
</body>
</html>
`))

// landingPage returns the default page on /, linking path.
func landingPage(path string) http.Handler {
	var b strings.Builder
	landingTemplate.Execute(&b, path)
	page := []byte(b.String())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		if r.Method != http.MethodHead {
			w.Write(page)
		}
	})
}
