package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/unit"
	"github.com/nicdiag/nicdiag/irq"
)

// queueKey names a NIC vector across samples.
type queueKey struct {
	nic string
	irq int
}

type queueRow struct {
	nic       string
	nicOrder  int
	q         irq.QueueRate
	cpuCounts map[int]int
}

// queueName is "txrx-2" for a queue vector, "other IRQ 44" for the rest.
func queueName(q irq.QueueRate) string {
	if q.Index >= 0 && q.Kind != "" {
		return string(q.Kind) + "-" + strconv.Itoa(q.Index)
	}
	kind := string(q.Kind)
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
		if c := strings.Compare(string(a.q.Kind), string(b.q.Kind)); c != 0 {
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
	caption := fmt.Sprintf("Each row is one interrupt vector of a monitored NIC, labelled with the CPU that took most of its interrupts; the darkest cell is %s interrupts/s.", unit.Count(top))
	if top == 0 {
		caption = "The monitored NICs raised no interrupt during the run."
		top = 1
	}
	h := &heatmap{kind: "heatmap-queues", title: title, rows: labels, rowTips: tips, cells: grid, top: top, pal: ratePalette,
		fmtV: func(x float64) string { return unit.Count(x) + "/s" }, side: means, sideHead: "run mean", legend: "interrupts per second",
		total: v.total, tips: len(grid)*len(v.buckets) <= maxTipCells}
	return chart{ID: "queues", Title: title, SVG: h.svg(), Caption: caption + v.bucketNote()}
}
