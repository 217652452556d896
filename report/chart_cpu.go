package report

import (
	"fmt"

	"github.com/nicdiag/nicdiag/internal/unit"
	"github.com/nicdiag/nicdiag/irq"
)

// loadChart is the heatmap of irq+softirq time per CPU.
func loadChart(v *view) chart {
	grid, means := v.cpuGrid(irq.CPURate.PacketPct)
	labels, tips := cpuLabels(v.cpus)
	title := "irq+softirq time per CPU"
	what := "the share of each CPU's time spent in hard-IRQ and softirq handlers"
	if !accounted(v.samples) {
		title = "softirq time per CPU (hard-IRQ time not accounted)"
		what = "the share of each CPU's time spent in softirq handlers (this kernel does not account hard-IRQ time, so it hides in whatever was interrupted)"
	}
	h := &heatmap{kind: "heatmap-load", title: title, rows: labels, rowTips: tips, cells: grid, top: 100, pal: loadPalette,
		fmtV: pct, side: means, sideHead: "run mean", legend: "time in irq+softirq", total: v.total,
		tips: len(grid)*len(v.buckets) <= maxTipCells}
	hot := ""
	if len(means) > 0 {
		best := 0
		for i, m := range means {
			if m > means[best] {
				best = i
			}
		}
		hot = fmt.Sprintf(" The busiest is CPU %d at %s over the run.", v.cpus[best], pct(means[best]))
	}
	return chart{ID: "load", Title: title, SVG: h.svg(),
		Caption: "Each row is a CPU, each column an interval; the colour is " + what +
			", from pale (idle) to dark red (100%). One dark row among pale ones is a single core doing all the packet work." + hot + v.bucketNote()}
}

// softirqChart is the heatmap of NET_RX or NET_TX softirqs per CPU.
func softirqChart(v *view, tx bool) chart {
	name, id, f := "NET_RX", "net-rx", func(c irq.CPURate) float64 { return c.NetRXPerS }
	if tx {
		name, id, f = "NET_TX", "net-tx", func(c irq.CPURate) float64 { return c.NetTXPerS }
	}
	grid, means := v.cpuGrid(f)
	labels, tips := cpuLabels(v.cpus)
	top := gridMax(grid)
	caption := fmt.Sprintf("%s softirqs raised per second on each CPU; the darkest cell is %s/s.", name, unit.Count(top))
	if top == 0 {
		caption = fmt.Sprintf("No CPU ran a %s softirq during the run.", name)
		top = 1
	}
	title := name + " softirqs per CPU"
	h := &heatmap{kind: "heatmap-" + id, title: title, rows: labels, rowTips: tips, cells: grid, top: top, pal: ratePalette,
		fmtV: func(x float64) string { return unit.Count(x) + "/s" }, side: means, sideHead: "run mean", legend: name + " per second",
		total: v.total, tips: len(grid)*len(v.buckets) <= maxTipCells}
	return chart{ID: id, Title: title, SVG: h.svg(), Caption: caption + v.bucketNote()}
}

// queueRow is one NIC vector seen in the record.
