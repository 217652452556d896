package monitor

import (
	"fmt"
	"math"
)

// FormatMbps renders a rate as the verdict's sentences do: "1435 Mb/s",
// "98.2 Mb/s", "23.1 Gb/s"; "n/a" for NaN or infinity.
func FormatMbps(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v >= 10000:
		return fmt.Sprintf("%.1f Gb/s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f Mb/s", v)
	}
	return fmt.Sprintf("%.1f Mb/s", v)
}

// FormatShare renders a share of 1 as the verdict's sentences do: "96 %";
// "n/a" for NaN or infinity.
func FormatShare(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f %%", s*100)
}

func mbps(v float64) string { return FormatMbps(v) }

func pct(s float64) string { return FormatShare(s) }

// num renders a count: "190k", "1.2M", "37".
func num(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
