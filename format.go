package nicdiag

import (
	"math"
	"strconv"
)

// mbps formats a rate in Mb/s without decimals ("1435").
func mbps(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }

func round1(v float64) float64 { return math.Round(v*10) / 10 }
