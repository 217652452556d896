package monitor

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// queueLayer is each NIC queue's traffic over the span's interior: where
// one queue of several carried nearly all of a hot core's traffic, one
// flow (or a poor hash) put it there, and more queues would not help.
type queueLayer struct {
	nothingJudged
	queues []*queueUse // in the order first seen
	index  map[queueKey]*queueUse
}

// queueUse is one IRQ vector of a NIC: sums of rate × seconds.
type queueUse struct {
	nic        string
	irq, index int
	kind       irq.QueueKind
	// rx and tx are the queue's own packets where the driver counts them
	// (counted false otherwise); irqs its interrupts, and on each CPU.
	rx, tx, irqs float64
	counted      bool
	onCPU        map[int]float64
}

func (l *queueLayer) add(x *irq.Sample, dt float64) {
	for _, n := range x.NICs {
		for _, q := range n.Queues {
			if q.Kind != irq.KindRX && q.Kind != irq.KindTxRx {
				continue
			}
			u := l.use(n.Name, q.IRQ, q.Index, q.Kind)
			if q.RXPacketsPerS != nil || q.TXPacketsPerS != nil {
				u.counted = true
				if p := q.RXPacketsPerS; p != nil {
					u.rx += rate(*p) * dt
				}
				if p := q.TXPacketsPerS; p != nil {
					u.tx += rate(*p) * dt
				}
			}
			u.irqs += rate(q.IRQsPerS) * dt
			if q.CPU >= 0 {
				u.onCPU[q.CPU] += rate(q.IRQsPerS) * dt
			}
		}
	}
}

// maxQueueUses bounds the vectors a run keeps sums of.
const maxQueueUses = 8192

func (l *queueLayer) use(nic string, vec, index int, kind irq.QueueKind) *queueUse {
	k := queueKey{nic, vec}
	if u := l.index[k]; u != nil {
		return u
	}
	u := &queueUse{nic: nic, irq: vec, index: index, kind: kind, onCPU: map[int]float64{}}
	if len(l.queues) < maxQueueUses {
		if l.index == nil {
			l.index = map[queueKey]*queueUse{}
		}
		l.queues = append(l.queues, u)
		l.index[k] = u
	}
	return u
}

func (l *queueLayer) merge(o layer) {
	for _, v := range o.(*queueLayer).queues {
		u := l.use(v.nic, v.irq, v.index, v.kind)
		u.rx += v.rx
		u.tx += v.tx
		u.irqs += v.irqs
		u.counted = u.counted || v.counted
		for c, n := range v.onCPU {
			u.onCPU[c] += n
		}
	}
}

func (l *queueLayer) offer(*judgement, *Verdict) {}

// cpu is the CPU that took most of the queue's interrupts; -1: none.
func (u *queueUse) cpu() int {
	best, most := -1, 0.0
	for c, n := range u.onCPU {
		if n > most || n == most && c < best {
			best, most = c, n
		}
	}
	return best
}

// oneQueueShare: one queue carrying this share of its NIC's traffic, its
// interrupts on the hot core, is one flow (or a poor hash) on one queue.
const oneQueueShare = 0.9

// oneQueue is what one queue of several carried on hot CPU c.
type oneQueue struct {
	nic          string
	index, count int
	share        float64
	byPackets    bool // by the queue's packet counters, else by interrupts
}

// oneQueueOn returns the NIC whose busiest queue, of at least two,
// carried at least oneQueueShare of its traffic in a direction with its
// interrupts on CPU c: by the queues' packet counters where the driver
// has them, by their interrupts otherwise.
func (l *queueLayer) oneQueueOn(c int) *oneQueue {
	var nics []string
	for _, u := range l.queues {
		if !slices.Contains(nics, u.nic) {
			nics = append(nics, u.nic)
		}
	}
	for _, nic := range nics {
		var qs []*queueUse
		counted := true
		for _, u := range l.queues {
			if u.nic == nic {
				qs = append(qs, u)
				counted = counted && u.counted
			}
		}
		if len(qs) < 2 {
			continue
		}
		weights := []func(*queueUse) float64{func(u *queueUse) float64 { return u.irqs }}
		if counted {
			weights = []func(*queueUse) float64{func(u *queueUse) float64 { return u.rx }, func(u *queueUse) float64 { return u.tx }}
		}
		for _, weight := range weights {
			if q := oneOf(qs, weight, c); q != nil {
				q.nic, q.byPackets = nic, counted
				return q
			}
		}
	}
	return nil
}

// oneOf returns the queue of qs that carried oneQueueShare of their
// weight with its interrupts on CPU c, or nil.
func oneOf(qs []*queueUse, weight func(*queueUse) float64, c int) *oneQueue {
	var top *queueUse
	total := 0.0
	for _, u := range qs {
		total += weight(u)
		if top == nil || weight(u) > weight(top) {
			top = u
		}
	}
	if total <= 0 || weight(top) < oneQueueShare*total || top.cpu() != c {
		return nil
	}
	return &oneQueue{index: top.index, count: len(qs), share: weight(top) / total}
}

// words says what one queue carried: "queue 3 of eth0's 8 carried 97 %
// of its packets".
func (q *oneQueue) words() string {
	what := "interrupts"
	if q.byPackets {
		what = "packets"
	}
	return fmt.Sprintf("queue %d of %s's %d carried %s of its %s", q.index, q.nic, q.count, pct(q.share), what)
}

// oneQueueFinding is run.one_queue: the core that bound the run (or, at
// info, the busiest packet core) took one queue that carried nearly all
// of a NIC's traffic.
func oneQueueFinding(q *oneQueue, c int, sev finding.Severity) finding.Finding {
	return finding.Finding{Code: finding.RunOneQueue, Severity: sev, Subject: q.nic,
		Summary: fmt.Sprintf("%s, and %s took its interrupts: one flow, or a receive hash that puts the run's flows together, is on one queue, and one core does its packet work whatever the number of queues",
			q.words(), cpuName(c)),
		Fix: oneQueueFix(q.nic),
		Evidence: map[string]string{"queue": fmt.Sprint(q.index), "queues": fmt.Sprint(q.count), "share": fmt.Sprintf("%.3f", q.share),
			"cpu": fmt.Sprint(c)}}
}

// oneQueueFix spreads flows over queues, not more queues.
func oneQueueFix(nic string) string {
	return fmt.Sprintf("More flows: several streams (iperf3 -P 4, or several iperf3 processes on different ports); where there are several flows, hash on their ports too: ethtool -N %s rx-flow-hash tcp4 sdfn (and udp4). One flow stays on one queue and one core: more queues (ethtool -L) do not spread it, and RPS/RFS move its protocol work to one other core at most.", nic)
}

// oneFlowHotCores gives each irq.hot_core of fs whose core took one queue
// that carried its NIC's traffic (queues.oneQueueOn) the one-flow
// wording and fix of run.one_queue, in place of spreading the work over
// more queues and cores.
func oneFlowHotCores(fs []finding.Finding, queues *queueLayer) {
	for i := range fs {
		f := &fs[i]
		if f.Code != finding.IRQHotCore {
			continue
		}
		c, err := strconv.Atoi(f.Evidence["cpu"])
		if err != nil {
			continue
		}
		q := queues.oneQueueOn(c)
		if q == nil {
			continue
		}
		f.Summary += "; " + q.words() + ": one flow, or a hash that puts the flows together, on one queue"
		f.Fix = oneQueueFix(q.nic)
		f.Evidence["one_queue"] = fmt.Sprintf("%s queue %d of %d, %.3f", q.nic, q.index, q.count, q.share)
	}
}
