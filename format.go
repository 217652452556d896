package nicdiag

import (
	"math"
	"strconv"
)

// mbps formats a rate in Mb/s without decimals ("1435").
func mbps(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 0, 64) }

// gts formats a speed in GT/s as lspci does ("2.5", "8").
func gts(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func round1(v float64) float64 { return math.Round(v*10) / 10 }
