package stack

import (
	"fmt"
	"math"
	"strconv"
)

// mbpsText renders a rate in Mb/s as the run verdict's sentences do:
// "197 Mb/s", "22.4 Mb/s", "12.5 Gb/s".
func mbpsText(v float64) string {
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

// shareText renders a share of 1: "71 %".
func shareText(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f %%", s*100)
}

// bytesText renders a size in IEC units: "16 KiB", "1.5 MiB", "900 B".
func bytesText(b float64) string {
	switch {
	case b >= 1<<30:
		return trimUnit(b/(1<<30), "GiB")
	case b >= 1<<20:
		return trimUnit(b/(1<<20), "MiB")
	case b >= 1<<10:
		return trimUnit(b/(1<<10), "KiB")
	}
	return fmt.Sprintf("%.0f B", b)
}

// trimUnit renders v with one decimal under 10, none above.
func trimUnit(v float64, unit string) string {
	if v < 10 && math.Abs(v-math.Round(v)) > 0.05 {
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}

// msText renders milliseconds: "40 ms", "0.35 ms".
func msText(ms float64) string {
	switch {
	case ms >= 10:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

// countText renders a count: "17142".
func countText(n uint64) string { return strconv.FormatUint(n, 10) }

// pow2At returns the smallest power of two at least v (at least 64 KiB).
func pow2At(v float64) int64 {
	p := int64(64 << 10)
	for float64(p) < v && p < 1<<40 {
		p <<= 1
	}
	return p
}
