package unit

import (
	"math"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Mbps(1435.2), "1435 Mb/s"}, {Mbps(98.24), "98.2 Mb/s"}, {Mbps(2.5), "2.5 Mb/s"}, {Mbps(23_100), "23.1 Gb/s"},
		{Mbps(math.NaN()), "n/a"}, {Mbps(math.Inf(1)), "n/a"},
		{Share(0.961), "96 %"}, {Share(0.0996), "10 %"}, {Share(0.0325), "3.3 %"}, {Share(0.0016), "0.16 %"},
		{Share(0), "0 %"}, {Share(-1), "0 %"}, {Share(math.NaN()), "n/a"},
		{Count(37), "37"}, {Count(0), "0"}, {Count(-950), "-950"}, {Count(4.1e9), "4.1G"}, {Count(math.NaN()), "n/a"}, {Count(3.46), "3.5"}, {Count(190_400), "190k"}, {Count(1_234_000), "1.2M"},
		{MbpsRange(1435, 1390.2, 1470.4), "1435 Mb/s (1390–1470)"}, {MbpsRange(11917, 10210, 12357), "11.9 Gb/s (10.2–12.4)"},
		{MbpsRange(9800, 9100, 10200), "9.8 Gb/s (9.1–10.2)"}, {MbpsRange(1974, 1974.2, 1973.9), "1974 Mb/s"},
		{MbpsRange(2.47, 2.4, 2.5), "2.5 Mb/s (2.4–2.5)"},
		{Bytes(900), "900 B"}, {Bytes(16 << 10), "16 KiB"}, {Bytes(1.5 * (1 << 20)), "1.5 MiB"}, {Bytes(12.4 * (1 << 30)), "12 GiB"},
		{Millis(40.2), "40 ms"}, {Millis(2.46), "2.5 ms"}, {Millis(0.351), "0.35 ms"},
		{Number(1434.6), "1435"}, {Number(2.5), "3"},
		{GBps(126.03), "126 GB/s"}, {GBps(3.938), "3.9 GB/s"}, {GBps(31.5), "31.5 GB/s"}, {GBps(0.25), "0.25 GB/s"},
		{GBps(0.123), "0.12 GB/s"}, {GBps(0), "0 GB/s"}, {GBps(math.NaN()), "n/a"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
