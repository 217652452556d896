// Package exporterhttp puts the exporter behind net/http, for a program
// that serves it from an http.Server or a mux of its own.
//
// nicdiag serve does not use it: exporter.Serve runs its own HTTP/1.1
// server, so that net/http, and crypto/tls with it, stays out of the
// nicdiag binary and every command's start-up. Importing this package
// links them.
package exporterhttp

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nicdiag/nicdiag/exporter"
)

// Handler serves c as exporter.Serve does (exporter.NewSite): the landing
// page on /, the exposition on /metrics, gzipped when the client accepts
// it, with the scrape cap and timeout of opts (503 with Retry-After: 1 past
// them), 404 for another path, 405 with Allow for another method; each
// response carries Content-Length and is written within
// exporter.WithWriteTimeout. Connection caps and read, idle and header
// limits are the http.Server's to set. The path is r.URL.Path: mount it
// on / or on both / and /metrics.
func Handler(c *exporter.Collector, opts ...exporter.ServerOption) http.Handler {
	return &handler{site: exporter.NewSite(c, opts...)}
}

type handler struct {
	site *exporter.Site
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp := h.site.Respond(r.Context(), r.Method, r.URL.Path, strings.Join(r.Header.Values("Accept-Encoding"), ", "))
	hdr := w.Header()
	for _, f := range resp.Header {
		hdr.Add(f.Name, f.Value)
	}
	hdr.Set("Content-Length", strconv.Itoa(len(resp.Body)))
	// The body is written under its own deadline, so a client that stops
	// reading is cut; the deadline is lifted after the last byte, so it
	// does not outlive this response on a kept-alive connection.
	rc := http.NewResponseController(w)
	if rc.SetWriteDeadline(time.Now().Add(h.site.WriteTimeout())) == nil {
		defer rc.SetWriteDeadline(time.Time{})
	}
	w.WriteHeader(resp.Status)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := w.Write(resp.Body); err == nil {
		rc.Flush()
	}
}
