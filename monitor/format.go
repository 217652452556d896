package monitor

import "github.com/nicdiag/nicdiag/internal/unit"

// FormatMbps renders a rate as the verdict's sentences do: "1435 Mb/s",
// "98.2 Mb/s", "23.1 Gb/s"; "n/a" for NaN or infinity.
func FormatMbps(v float64) string { return unit.Mbps(v) }

// FormatShare renders a share of 1 as the verdict's sentences do: "96 %",
// "3.2 %"; "n/a" for NaN or infinity.
func FormatShare(s float64) string { return unit.Share(s) }

func mbps(v float64) string { return unit.Mbps(v) }

func pct(s float64) string { return unit.Share(s) }

func num(v float64) string { return unit.Count(v) }
