// Package unit formats nicdiag's quantities for people, one function a
// unit: a rate in Mb/s or GB/s, a share, a count, a size, a time.
package unit

import (
	"fmt"
	"math"
	"strconv"
)

// Mbps renders a rate given in Mb/s: "1435 Mb/s" from 100 up, "98.2 Mb/s"
// and "2.5 Mb/s" below (one decimal), "23.1 Gb/s" from 10 Gb/s; "n/a" for
// NaN or infinity.
func Mbps(v float64) string {
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

// MbpsRange renders a rate and the range around it, all in the unit of
// the largest: "1435 Mb/s (1390–1470)", "11.9 Gb/s (10.2–12.4)"; the rate
// alone when the range rounds to one figure.
func MbpsRange(v, lo, hi float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return Mbps(v)
	}
	f := func(x float64) string {
		switch {
		case hi >= 10000:
			return fmt.Sprintf("%.1f", x/1000)
		case hi >= 100:
			return fmt.Sprintf("%.0f", x)
		}
		return fmt.Sprintf("%.1f", x)
	}
	u := " Mb/s"
	if hi >= 10000 {
		u = " Gb/s"
	}
	if f(lo) == f(hi) {
		return f(v) + u
	}
	return fmt.Sprintf("%s%s (%s–%s)", f(v), u, f(lo), f(hi))
}

// Share renders a share of 1 as a percentage: whole from 10 % up ("96 %"),
// to two significant digits below ("3.2 %", "0.16 %"); "0 %" for nothing,
// "n/a" for NaN or infinity.
func Share(s float64) string {
	p := 100 * s
	switch {
	case math.IsNaN(p) || math.IsInf(p, 0):
		return "n/a"
	case p <= 0:
		return "0 %"
	case p >= 9.95:
		return fmt.Sprintf("%.0f %%", p)
	}
	dec := min(max(0, 1-int(math.Floor(math.Log10(p)))), 12)
	scale := math.Pow(10, float64(dec))
	return strconv.FormatFloat(math.Round(p*scale)/scale, 'f', -1, 64) + " %"
}

// GBps renders a rate given in GB/s: "126 GB/s" from 100 up, "3.9 GB/s"
// from 1 (one decimal), "0.25 GB/s" below (two significant digits); "n/a"
// for NaN or infinity.
func GBps(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v >= 100:
		return fmt.Sprintf("%.0f GB/s", v)
	case v >= 1:
		return fmt.Sprintf("%.1f GB/s", v)
	case v <= 0:
		return "0 GB/s"
	}
	return strconv.FormatFloat(v, 'g', 2, 64) + " GB/s"
}

// Count renders a count or a rate of things: "37", "3.5", "190k", "1.2M",
// "4.1G"; "0" for nothing, a minus sign before a negative one, "n/a" for
// NaN or infinity.
func Count(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v < 0:
		return "-" + Count(-v)
	case v == 0:
		return "0"
	case v >= 1e9:
		return fmt.Sprintf("%.1fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// Bytes renders a size in IEC units: "900 B", "16 KiB", "1.5 MiB",
// "2 GiB" (one decimal below 10 where it is not whole).
func Bytes(b float64) string {
	trim := func(v float64, u string) string {
		if v < 10 && math.Abs(v-math.Round(v)) > 0.05 {
			return fmt.Sprintf("%.1f %s", v, u)
		}
		return fmt.Sprintf("%.0f %s", v, u)
	}
	switch {
	case b >= 1<<30:
		return trim(b/(1<<30), "GiB")
	case b >= 1<<20:
		return trim(b/(1<<20), "MiB")
	case b >= 1<<10:
		return trim(b/(1<<10), "KiB")
	}
	return fmt.Sprintf("%.0f B", b)
}

// Millis renders a time given in milliseconds: "40 ms", "2.5 ms",
// "0.35 ms".
func Millis(ms float64) string {
	switch {
	case ms >= 10:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 1:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

// Number renders a figure rounded to a whole number, without a unit: the
// value of a finding's evidence ("1435").
func Number(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }
