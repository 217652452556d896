package exporterhttp

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/exporter"
)

const seed = "../../testdata/snapshots/82576-minipcie-x1"

// answer is what a client sees of a response, Date left out.
type answer struct {
	status                                         int
	contentType, encoding, length, allow, vary, ra string
	body                                           string
}

func do(t *testing.T, client *http.Client, method, url, acceptEncoding string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	h := resp.Header
	return answer{resp.StatusCode, h.Get("Content-Type"), h.Get("Content-Encoding"), h.Get("Content-Length"),
		h.Get("Allow"), h.Get("Vary"), h.Get("Retry-After"), string(b)}
}

// The handler answers every route as exporter.Serve does, byte for byte
// but the Date: same statuses, header fields and bodies.
func TestHandlerMatchesServe(t *testing.T) {
	c := exporter.New(exporter.WithRoot(seed), exporter.WithTTL(time.Hour))
	viaHTTP := httptest.NewServer(Handler(c))
	defer viaHTTP.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- exporter.Serve(ctx, ln, c) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	viaServe := "http://" + ln.Addr().String()

	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 10 * time.Second}
	for _, r := range []struct{ method, path, ae string }{
		{"GET", "/", ""}, {"HEAD", "/", ""}, {"GET", "/metrics", ""}, {"GET", "/metrics?x=1", ""},
		{"HEAD", "/metrics", ""}, {"GET", "/metrics", "gzip"}, {"HEAD", "/metrics", "br, gzip;q=0.5"},
		{"GET", "/metrics", "gzip;q=0"}, {"GET", "/nope", ""}, {"GET", "/metrics/", ""},
		{"POST", "/metrics", ""}, {"DELETE", "/", ""}, {"PUT", "/nope", ""}, {"FROB", "/metrics", ""},
	} {
		want := do(t, client, r.method, viaServe+r.path, r.ae)
		got := do(t, client, r.method, viaHTTP.URL+r.path, r.ae)
		if got != want {
			t.Errorf("%s %s (Accept-Encoding %q):\n Handler %+v\n Serve   %+v", r.method, r.path, r.ae, trim(got), trim(want))
		}
		if r.path == "/metrics" && r.method == "GET" && r.ae == "" && (want.status != 200 || !strings.Contains(want.body, "\nnicdiag_up 1\n")) {
			t.Errorf("GET /metrics: %d %q", want.status, want.body)
		}
	}
}

func trim(a answer) answer {
	if len(a.body) > 80 {
		a.body = a.body[:80] + "…"
	}
	return a
}

// The scrape timeout and the 503 with Retry-After hold behind net/http,
// and the handler mounts in a mux of the caller's.
func TestHandlerScrapeTimeout(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/", Handler(exporter.New(exporter.WithRoot(seed)), exporter.WithScrapeTimeout(time.Nanosecond)))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := &http.Client{Timeout: 10 * time.Second}
	if a := do(t, client, "GET", srv.URL+"/metrics", ""); a.status != 503 || a.ra != "1" || !strings.Contains(a.body, "no check result within 1ns") {
		t.Errorf("scrape past the timeout: %+v", a)
	}
	if a := do(t, client, "GET", srv.URL+"/healthz", ""); a.status != 200 || a.body != "ok" {
		t.Errorf("the caller's own route: %+v", a)
	}
}
