package stack

import (
	"strconv"

	"github.com/nicdiag/nicdiag/internal/unit"
)

// The verdict's units, as every nicdiag verdict writes them (internal/unit).
func mbpsText(v float64) string { return unit.Mbps(v) }

func shareText(s float64) string { return unit.Share(s) }

func bytesText(b float64) string { return unit.Bytes(b) }

func msText(ms float64) string { return unit.Millis(ms) }

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
