package monitor

import (
	"fmt"
	"math"
	"slices"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/stack"
)

// Window is a monitored run reduced as its samples arrive: the summary's
// means and window findings (irq.Summarizer), the loss counts of every
// sample, and the layers' sums over the run's span, from the first to the
// last sample that moved traffic. Add takes one sample at a time and
// keeps none, so its memory does not grow with the run's length; Summary
// and Verdict may be asked at any point. A Run feeds its samples to one,
// ReadRecord a record's, Judge a slice's: the same samples make the same
// verdict. It is not safe for concurrent use.
type Window struct {
	limits  []Limits
	sum     irq.Summarizer
	losses  *lossLayer
	span    span
	samples int
	peak    float64           // the busiest sample's busier direction, frame Mb/s
	most    load              // the busiest sample's load
	stack   *stack.Aggregator // this host's stack (AddStack); nil: not read
}

// NewWindow returns an empty window judged against limits (see Limits;
// nil judges against the CPUs and the command only).
func NewWindow(limits []Limits) *Window {
	return &Window{limits: cleanLimits(limits), losses: new(lossLayer)}
}

// commandRun marks the window as the run of a command (WithCommand): the
// monitor read the counters before the command started and the run ends
// with it, so the load began and ended within the run, and the span's
// edge samples count for the part the traffic filled (span.seconds).
func (w *Window) commandRun() {
	w.span.seen, w.span.bounded = true, true
}

// usableInterval reports whether a sample's interval can weigh in the
// verdict: positive, at most a day (ReadRecord's bound).
func usableInterval(dt float64) bool { return dt > 0 && dt <= maxInterval }

// Add weighs sample x in.
func (w *Window) Add(x irq.Sample) {
	w.samples++
	w.sum.Add(x)
	if !usableInterval(x.IntervalS) {
		return // weighs in no mean, sets no peak
	}
	w.losses.add(&x, x.IntervalS)
	var rx, tx float64
	for _, n := range x.NICs {
		rxP, txP, rxB, txB := nicRates(n)
		rx += frameBits(rxB, rxP) / 1e6
		tx += frameBits(txB, txP) / 1e6
	}
	w.peak = max(w.peak, rx, tx)
	w.most = w.most.max(sampleLoad(&x))
	w.span.add(&x)
}

// Samples is the number of samples added.
func (w *Window) Samples() int { return w.samples }

// Summary is the window's means and window findings over every sample
// added (irq.Summarizer). An irq.hot_core on a core that took the
// interrupts of one queue carrying nearly all of its NIC's traffic (as
// run.one_queue finds it) says so, and gives that finding's fix: one flow
// stays on one queue, however many there are.
func (w *Window) Summary() irq.Summary {
	s := w.sum.Summary()
	if w.span.first == nil {
		return s
	}
	// The queue layer's sums are all it needs: no judgement, no stack
	// summary, no means.
	interior, _ := w.span.sums()
	for _, l := range interior {
		if q, ok := l.(*queueLayer); ok {
			oneFlowHotCores(s.Findings, q)
		}
	}
	return s
}

// Judge returns the verdict on samples against limits: a Window of them.
func Judge(samples []irq.Sample, limits []Limits) Verdict {
	w := NewWindow(limits)
	for i := range samples {
		w.Add(samples[i])
	}
	return w.Verdict()
}

// judgement is the span's sums made means, for the layers to judge by.
func (w *Window) judgement() *judgement {
	interior, all := w.span.sums()
	j := &judgement{limits: w.limits, lim: map[string]Limits{}, layers: interior, losses: w.losses,
		pcieRun: w.sum.Summary().PCIe}
	for _, l := range w.limits {
		j.lim[l.NIC] = l
	}
	j.traffic = all[0].(*trafficLayer)
	j.traffic.means(w.span.seconds())
	j.traffic.soft = map[string]bool{}
	for _, l := range w.limits {
		j.traffic.soft[l.NIC] = l.software()
	}
	if w.stack != nil {
		s := w.stack.Summary()
		j.stack = &s
	}
	for _, l := range interior {
		switch l := l.(type) {
		case *cpuLayer:
			j.cpu = l
		case *commandLayer:
			j.command = l
		case *pcieLayer:
			j.pcie = l
		case *queueLayer:
			j.queues = l
		}
	}
	j.command.means()
	j.cpu.means()
	return j
}

// Verdict returns the judgement on the run so far: what it achieved
// against each ceiling at its own frame size and direction mix, the layer
// that bound it, and its findings (the run.* codes of finding). Rates are
// over the run's span: from the first to the last sample that moved
// traffic, the parts of those two samples before the traffic began and
// after it ended left out; CPU and thread loads over the samples between
// them.
func (w *Window) Verdict() Verdict {
	j := w.judgement()
	v := Verdict{Samples: w.samples, ActiveSamples: w.span.samples(), ActiveSeconds: j.traffic.secs, PeakMbps: w.peak}
	w.losses.offer(j, &v)
	v.BusiestCPU = j.cpu.busiest()
	v.Stack, v.CPUs, v.Watched = j.stack, j.cpuLoads(), j.watched()
	if w.span.first == nil {
		for _, u := range w.losses.nics { // every NIC sampled, at no traffic
			v.Traffic = append(v.Traffic, Traffic{NIC: u.name, Direction: "rx"}, Traffic{NIC: u.name, Direction: "tx"})
		}
		v.Bound = BoundUnknown
		// No finding: an idle host is no news.
		v.Summary = fmt.Sprintf("the sampled NICs moved almost nothing (at most %s, %s frames/s, in %d samples): there is no run to judge",
			mbps(w.most.mbps), num(w.most.pps), w.samples)
		return v
	}
	for _, l := range j.layers {
		l.offer(j, &v)
	}
	j.offerStack(&v)
	// A ceiling whose numbers overflowed (absurd counters against a tiny
	// capacity) says nothing and would make the verdict unencodable.
	v.Ceilings = slices.DeleteFunc(v.Ceilings, func(c Ceiling) bool {
		return !finite(c.Share) || !finite(c.AchievedMbps) || !finite(c.CeilingMbps)
	})
	sortCeilings(v.Ceilings)
	heldFirst(v.Ceilings)
	fillTrafficCeilings(v.Traffic, v.Ceilings)
	v.decide(j)
	v.Findings = append(v.Findings, v.verdictFinding())
	v.Findings = append(v.Findings, j.stackFindings(&v)...)
	v.Findings = append(v.Findings, w.losses.findings(j, &v)...)
	for _, l := range j.layers {
		v.Findings = append(v.Findings, l.findings(j, &v)...)
	}
	finding.Sort(v.Findings)
	return v
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// maxLimitMbps bounds a rate in Limits (1 Pb/s); cleanLimits drops rates
// above it, negative, NaN or infinite, as unknown.
const maxLimitMbps = 1e9

// cleanLimits returns ls with each rate that is not one (see
// maxLimitMbps) set to 0, unknown. ls itself is not changed.
func cleanLimits(ls []Limits) []Limits {
	out := slices.Clone(ls)
	for i := range out {
		l := &out[i]
		for _, p := range []*float64{&l.PortMbps, &l.USBMbps, &l.MovesMbps} {
			if !(*p > 0 && *p <= maxLimitMbps) {
				*p = 0
			}
		}
	}
	return out
}
