package budget

import "testing"

// Words gives what a sharer can take in GB/s to two significant digits
// below 1: a 2.5 GT/s x1 device (2 Gb/s after 8b/10b) is 0.25 GB/s, not
// 0.2.
func TestSharerWords(t *testing.T) {
	for _, c := range []struct {
		s    Sharer
		want string
	}{
		{Sharer{Kind: "network controller", Address: "0000:03:00.0", GTs: 2.5, Width: 1, Gbps: 2}, "network controller 0000:03:00.0 (2.5 GT/s x1: up to 0.25 GB/s)"},
		{Sharer{Kind: "NVMe", Address: "0000:05:00.0", GTs: 8, Width: 4, Gbps: 31.5}, "NVMe 0000:05:00.0 (8 GT/s x4: up to 3.9 GB/s)"},
		{Sharer{Kind: "GPU", Address: "0000:01:00.0"}, "GPU 0000:01:00.0 (its link unknown)"},
	} {
		if got := c.s.Words(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
