package exporterhttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/exporter"
	"github.com/nicdiag/nicdiag/option"
)

// The handler mounts in a mux of the caller's, next to its own routes,
// with its scrape timeout and 503 with Retry-After.
func TestHandlerInMux(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/", Handler(exporter.New(option.Root(seed)), WithScrapeTimeout(time.Nanosecond)))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := &http.Client{Timeout: 20 * time.Second}
	code, h, body := get(t, client, "GET", srv.URL+"/metrics")
	if code != 503 || h.Get("Retry-After") != "1" || !strings.Contains(body, "no check result within 1ns") {
		t.Errorf("scrape past the timeout: %d %v %q", code, h, body)
	}
	if code, _, body := get(t, client, "GET", srv.URL+"/healthz"); code != 200 || body != "ok" {
		t.Errorf("the caller's own route: %d %q", code, body)
	}
}
