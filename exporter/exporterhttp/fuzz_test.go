package exporterhttp

import (
	"strings"
	"testing"
)

// acceptsGzip reads a header any client sends: it never panics, and it
// says yes only where gzip is named.
func FuzzAcceptsGzip(f *testing.F) {
	for _, s := range []string{"", "gzip", "GZIP", "deflate, gzip", "gzip;q=0", "gzip; q=0.000", "gzip;q=0.1",
		"identity", "x-gzip", "gzip;q=junk", "br;q=1.0,gzip;q=0.8", "gzip;q=1e400", "gzip;q=NaN", ",,;;==", "gzip;q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if acceptsGzip(h) && !strings.Contains(strings.ToLower(h), "gzip") {
			t.Errorf("acceptsGzip(%q) without gzip in it", h)
		}
	})
}
