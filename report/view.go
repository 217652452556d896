package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

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

// bucketNote says, in a caption, how many samples a column averages.
func (v *view) bucketNote() string {
	if v.per <= 1 {
		return ""
	}
	return fmt.Sprintf(" Each column averages %d consecutive samples.", v.per)
}

// charts returns every chart of the run, in page order.
func charts(v *view) []chart {
	return []chart{loadChart(v), softirqChart(v, false), softirqChart(v, true), queueChart(v), softnetChart(v), throughputChart(v)}
}

// nicNames are the NICs the samples name, in the order they first appear.
func (v *view) nicNames() []string {
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
	return names
}
