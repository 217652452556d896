package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/nicdiag/nicdiag/internal/unit"
	"github.com/nicdiag/nicdiag/irq"
)

// softnetChart is the line chart of softnet drops and time squeezes, summed
// over the CPUs.
func softnetChart(v *view) chart {
	const title = "softnet drops and time squeezes per second (all CPUs)"
	sum := func(f func(irq.CPURate) float64) func(*irq.Sample) (float64, bool) {
		return func(s *irq.Sample) (float64, bool) {
			t := 0.0
			for _, c := range s.CPUs {
				t += f(c)
			}
			return t, len(s.CPUs) > 0
		}
	}
	c := &lineChart{kind: "lines-softnet", title: title, total: v.total,
		empty: "no softnet drop or time squeeze during the run",
		series: []series{
			{name: "dropped/s", color: seriesColors[1], pts: v.line(sum(func(c irq.CPURate) float64 { return c.SoftnetDroppedPerS }))},
			{name: "squeezed/s", color: seriesColors[0], dashed: true, pts: v.line(sum(func(c irq.CPURate) float64 { return c.SoftnetSqueezedPerS }))},
		}}
	_, drops := v.cpuGrid(func(c irq.CPURate) float64 { return c.SoftnetDroppedPerS })
	_, sq := v.cpuGrid(func(c irq.CPURate) float64 { return c.SoftnetSqueezedPerS })
	var parts []string
	for i, cpu := range v.cpus {
		if drops[i] > 0 || sq[i] > 0 {
			parts = append(parts, fmt.Sprintf("CPU %d: %s dropped/s, %s squeezed/s", cpu, unit.Count(drops[i]), unit.Count(sq[i])))
		}
	}
	caption := "Drops: packets the per-CPU backlog had no room for. Time squeezes: net_rx_action ran out of its budget with work left (not a loss by itself)."
	if len(parts) > 0 {
		caption += " Run means: " + strings.Join(parts, "; ") + "."
	}
	return chart{ID: "softnet", Title: title, SVG: c.svg(), Caption: caption + v.bucketNote()}
}

// throughputChart is the line chart of each NIC's receive and transmit rate.
func throughputChart(v *view) chart {
	const title = "NIC throughput, Mbit/s"
	names := v.nicNames()
	if len(names) == 0 {
		msg := "The record names no NIC: only CPU load was sampled."
		return chart{ID: "throughput", Title: title, SVG: message("lines-throughput", title, msg), Caption: msg}
	}
	c := &lineChart{kind: "lines-throughput", title: title, total: v.total, empty: "no traffic"}
	var parts []string
	for i, name := range names {
		col := seriesColors[i%len(seriesColors)]
		rate := func(tx bool) func(*irq.Sample) (float64, bool) {
			return func(s *irq.Sample) (float64, bool) {
				for _, n := range s.NICs {
					if n.Name == name && n.StatsError == "" {
						if tx {
							return n.TXBytesPerS * 8 / 1e6, true
						}
						return n.RXBytesPerS * 8 / 1e6, true
					}
				}
				return 0, false
			}
		}
		rx, tx := v.line(rate(false)), v.line(rate(true))
		c.series = append(c.series, series{name: name + " rx", color: col, pts: rx}, series{name: name + " tx", color: col, dashed: true, pts: tx})
		parts = append(parts, fmt.Sprintf("%s rx %s, tx %s Mbit/s", name, unit.Count(meanOf(rx)), unit.Count(meanOf(tx))))
	}
	caption := "Bytes the kernel counted on each monitored interface, as megabits per second (solid: received, dashed: sent). Run means: " +
		strings.Join(parts, "; ") + "." + v.bucketNote()
	return chart{ID: "throughput", Title: title, SVG: c.svg(), Caption: caption}
}

// meanOf is the time-weighted mean of a line's defined points.
func meanOf(pts []cell) float64 {
	s, w := 0.0, 0.0
	for _, p := range pts {
		if !math.IsNaN(p.v) {
			s += p.v * (p.x1 - p.x0)
			w += p.x1 - p.x0
		}
	}
	if w == 0 {
		return math.NaN()
	}
	return s / w
}
