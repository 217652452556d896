package nicdiag

import (
	"math"

	"github.com/nicdiag/nicdiag/internal/unit"
)

// mbps formats a rate in Mb/s as a whole number without the unit
// ("1435"), for sentences that name it once and evidence (unit.Number).
func mbps(v float64) string { return unit.Number(v) }

func round1(v float64) float64 { return math.Round(v*10) / 10 }
