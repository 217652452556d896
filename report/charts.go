package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/irq"
)

// maxColumns is the most time columns a chart draws; longer runs are
// averaged into buckets of consecutive samples.
const maxColumns = 600

// maxTipCells is the most heatmap cells that get their own tooltip.
const maxTipCells = 20000

// view is a Record laid out on the time axis.
type view struct {
	samples []irq.Sample
	start   []float64 // seconds from the start of the run to each sample's start
	total   float64   // seconds the run covers
	buckets [][2]int  // sample index ranges [from, to), one per column
	cpus    []int     // distinct CPU ids, ascending
	cpuRow  map[int]int
	per     int // samples per column
}

func newView(samples []irq.Sample) *view {
	v := &view{samples: samples, cpuRow: map[int]int{}}
	t := 0.0
	for _, s := range samples {
		v.start = append(v.start, t)
		t += s.IntervalS
		for _, c := range s.CPUs {
			if _, ok := v.cpuRow[c.CPU]; !ok {
				v.cpuRow[c.CPU] = 0
				v.cpus = append(v.cpus, c.CPU)
			}
		}
	}
	v.total = t
	if !(v.total > 0) {
		v.total = 1
	}
	slices.Sort(v.cpus)
	for i, c := range v.cpus {
		v.cpuRow[c] = i
	}
	v.per = (len(samples) + maxColumns - 1) / maxColumns
	v.per = max(1, v.per)
	for i := 0; i < len(samples); i += v.per {
		v.buckets = append(v.buckets, [2]int{i, min(i+v.per, len(samples))})
	}
	return v
}

// span returns the seconds a bucket covers.
func (v *view) span(b [2]int) (x0, x1 float64) {
	last := b[1] - 1
	return v.start[b[0]], v.start[last] + v.samples[last].IntervalS
}

// acc accumulates time-weighted means per row and column.
type acc struct {
	sum, w       [][]float64
	rowSum, rowW []float64
}

func newAcc(rows, cols int) *acc {
	a := &acc{sum: make([][]float64, rows), w: make([][]float64, rows), rowSum: make([]float64, rows), rowW: make([]float64, rows)}
	for r := range rows {
		a.sum[r] = make([]float64, cols)
		a.w[r] = make([]float64, cols)
	}
	return a
}

func (a *acc) add(r, col int, val, w float64) {
	a.sum[r][col] += val * w
	a.w[r][col] += w
	a.rowSum[r] += val * w
	a.rowW[r] += w
}

// cells returns the means, NaN where a row had no data in a column, and
// each row's mean over the run.
func (a *acc) cells(v *view) ([][]cell, []float64) {
	out := make([][]cell, len(a.sum))
	means := make([]float64, len(a.sum))
	for r := range a.sum {
		out[r] = make([]cell, len(v.buckets))
		for col, b := range v.buckets {
			x0, x1 := v.span(b)
			val := math.NaN()
			if a.w[r][col] > 0 {
				val = a.sum[r][col] / a.w[r][col]
			}
			out[r][col] = cell{x0, x1, val}
		}
		means[r] = math.NaN()
		if a.rowW[r] > 0 {
			means[r] = a.rowSum[r] / a.rowW[r]
		}
	}
	return out, means
}

// cpuGrid is metric per CPU (rows) per column.
func (v *view) cpuGrid(metric func(irq.CPURate) float64) ([][]cell, []float64) {
	a := newAcc(len(v.cpus), len(v.buckets))
	for col, b := range v.buckets {
		for i := b[0]; i < b[1]; i++ {
			s := &v.samples[i]
			for _, c := range s.CPUs {
				a.add(v.cpuRow[c.CPU], col, metric(c), s.IntervalS)
			}
		}
	}
	return a.cells(v)
}

// line is metric per column, NaN where ok is false in every sample.
func (v *view) line(metric func(*irq.Sample) (float64, bool)) []cell {
	a := newAcc(1, len(v.buckets))
	for col, b := range v.buckets {
		for i := b[0]; i < b[1]; i++ {
			s := &v.samples[i]
			if val, ok := metric(s); ok {
				a.add(0, col, val, s.IntervalS)
			}
		}
	}
	c, _ := a.cells(v)
	return c[0]
}

// gridMax is the largest finite value of a grid, or 0.
func gridMax(g [][]cell) float64 {
	hi := 0.0
	for _, row := range g {
		for _, c := range row {
			if !math.IsNaN(c.v) && !math.IsInf(c.v, 0) {
				hi = max(hi, c.v)
			}
		}
	}
	return hi
}

func cpuLabels(cpus []int) (labels, tips []string) {
	for _, c := range cpus {
		labels = append(labels, "CPU "+strconv.Itoa(c))
		tips = append(tips, "CPU "+strconv.Itoa(c))
	}
	return labels, tips
}

// chart is one picture on the page.
type chart struct {
	ID      string // anchor on the page and class of the <svg>
	Title   string
	Caption string // how to read it, in plain text
	SVG     string // a standalone <svg> element
}

func accounted(samples []irq.Sample) bool {
	for _, s := range samples {
		if !s.IRQTimeAccounted {
			return false
		}
	}
	return true
}

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

func (v *view) bucketNote() string {
	if v.per <= 1 {
		return ""
	}
	return fmt.Sprintf(" Each column averages %d consecutive samples.", v.per)
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
	caption := fmt.Sprintf("%s softirqs raised per second on each CPU; the darkest cell is %s/s.", name, si(top))
	if top == 0 {
		caption = fmt.Sprintf("No CPU ran a %s softirq during the run.", name)
		top = 1
	}
	title := name + " softirqs per CPU"
	h := &heatmap{kind: "heatmap-" + id, title: title, rows: labels, rowTips: tips, cells: grid, top: top, pal: ratePalette,
		fmtV: func(x float64) string { return si(x) + "/s" }, side: means, sideHead: "run mean", legend: name + " per second",
		total: v.total, tips: len(grid)*len(v.buckets) <= maxTipCells}
	return chart{ID: id, Title: title, SVG: h.svg(), Caption: caption + v.bucketNote()}
}

// queueRow is one NIC vector seen in the record.
type queueRow struct {
	nic       string
	nicOrder  int
	q         irq.QueueRate
	cpuCounts map[int]int
}

// queueName is "txrx-2" for a queue vector, "other IRQ 44" for the rest.
func queueName(q irq.QueueRate) string {
	if q.Index >= 0 && q.Kind != "" {
		return q.Kind + "-" + strconv.Itoa(q.Index)
	}
	kind := q.Kind
	if kind == "" {
		kind = "vector"
	}
	return kind + " IRQ " + strconv.Itoa(q.IRQ)
}

// mostCPU is the CPU that took a vector's interrupts in most samples, -1
// when none did; ties go to the lower CPU.
func (r *queueRow) mostCPU() int {
	best, n := -1, 0
	for c, k := range r.cpuCounts {
		if k > n || k == n && c < best {
			best, n = c, k
		}
	}
	return best
}

// queueChart is the heatmap of interrupts per second per NIC vector.
func queueChart(v *view) chart {
	const title = "interrupts per second per NIC queue"
	idx := map[queueKey]int{}
	var rows []*queueRow
	nicOrder := map[string]int{}
	for _, s := range v.samples {
		for _, n := range s.NICs {
			if _, ok := nicOrder[n.Name]; !ok {
				nicOrder[n.Name] = len(nicOrder)
			}
			for _, q := range n.Queues {
				k := queueKey{n.Name, q.IRQ}
				if _, ok := idx[k]; !ok {
					idx[k] = len(rows)
					rows = append(rows, &queueRow{nic: n.Name, nicOrder: nicOrder[n.Name], q: q, cpuCounts: map[int]int{}})
				}
				if q.CPU >= 0 && q.IRQsPerS > 0 {
					rows[idx[k]].cpuCounts[q.CPU]++
				}
			}
		}
	}
	if len(rows) == 0 {
		msg := "The record names no NIC queue: no NIC was monitored, or its IRQs could not be mapped."
		return chart{ID: "queues", Title: title, SVG: message("heatmap-queues", title, msg), Caption: msg}
	}
	order := slices.Clone(rows)
	slices.SortStableFunc(order, func(a, b *queueRow) int {
		if a.nicOrder != b.nicOrder {
			return a.nicOrder - b.nicOrder
		}
		if c := strings.Compare(a.q.Kind, b.q.Kind); c != 0 {
			return c
		}
		if a.q.Index != b.q.Index {
			return a.q.Index - b.q.Index
		}
		return a.q.IRQ - b.q.IRQ
	})
	row := map[*queueRow]int{}
	var labels, tips []string
	for i, r := range order {
		row[r] = i
		where := "no interrupts"
		label := r.nic + " " + queueName(r.q)
		if c := r.mostCPU(); c >= 0 {
			where = "mostly on CPU " + strconv.Itoa(c)
			label += " → CPU " + strconv.Itoa(c)
		}
		tips = append(tips, fmt.Sprintf("%s %s (IRQ %d, %s), %s", r.nic, queueName(r.q), r.q.IRQ, r.q.Action, where))
		if len([]rune(label)) > 30 {
			label = string([]rune(label)[:29]) + "…"
		}
		labels = append(labels, label)
	}
	a := newAcc(len(order), len(v.buckets))
	for col, b := range v.buckets {
		for i := b[0]; i < b[1]; i++ {
			s := &v.samples[i]
			for _, n := range s.NICs {
				for _, q := range n.Queues {
					a.add(row[rows[idx[queueKey{n.Name, q.IRQ}]]], col, q.IRQsPerS, s.IntervalS)
				}
			}
		}
	}
	grid, means := a.cells(v)
	top := gridMax(grid)
	caption := fmt.Sprintf("Each row is one interrupt vector of a monitored NIC, labelled with the CPU that took most of its interrupts; the darkest cell is %s interrupts/s.", si(top))
	if top == 0 {
		caption = "The monitored NICs raised no interrupt during the run."
		top = 1
	}
	h := &heatmap{kind: "heatmap-queues", title: title, rows: labels, rowTips: tips, cells: grid, top: top, pal: ratePalette,
		fmtV: func(x float64) string { return si(x) + "/s" }, side: means, sideHead: "run mean", legend: "interrupts per second",
		total: v.total, tips: len(grid)*len(v.buckets) <= maxTipCells}
	return chart{ID: "queues", Title: title, SVG: h.svg(), Caption: caption + v.bucketNote()}
}

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
			parts = append(parts, fmt.Sprintf("CPU %d: %s dropped/s, %s squeezed/s", cpu, si(drops[i]), si(sq[i])))
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
	var names []string
	seen := map[string]bool{}
	for _, s := range v.samples {
		for _, n := range s.NICs {
			if !seen[n.Name] {
				seen[n.Name] = true
				names = append(names, n.Name)
			}
		}
	}
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
		parts = append(parts, fmt.Sprintf("%s rx %s, tx %s Mbit/s", name, si(meanOf(rx)), si(meanOf(tx))))
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

// charts returns every chart of the run, in page order.
func charts(v *view) []chart {
	return []chart{loadChart(v), softirqChart(v, false), softirqChart(v, true), queueChart(v), softnetChart(v), throughputChart(v)}
}
