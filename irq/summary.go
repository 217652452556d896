package irq

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nicdiag/nicdiag/finding"
)

// Thresholds of the window verdicts. They are chosen not to cry wolf: a
// counter that merely moved under load is not a finding (netdata's
// 1min_netdev_budget_ran_outs alarm, which fires on any sustained time
// squeeze, is the standing example of an alarm people learn to ignore).
const (
	// hotCorePct: a core whose irq+softirq time averages at least this over
	// the window is saturated by packet work (error).
	hotCorePct = 90.0
	// hotCoreBusyPct and hotCoreMinPacketPct: a core at least this busy, at
	// least hotCoreMinPacketPct of it in irq+softirq, is bound by packet work
	// plus the thread it feeds (warn).
	hotCoreBusyPct      = 90.0
	hotCoreMinPacketPct = 50.0
	// hotCoreOthersPct: the mean busy time of the other cores must be under
	// this; otherwise the host is simply busy, not single-core bound.
	hotCoreOthersPct = 50.0
	// squeezeMinPerS and squeezeMinRatio: time squeezes (net_rx_action ran
	// out of its budget of netdev_budget packets or netdev_budget_usecs with
	// work left) count only when at least squeezeMinPerS per second and at
	// least squeezeMinRatio of the packets processed: with the default budget
	// of 300 packets, 1 squeeze per 1000 packets means about a third of the
	// polls ran out. A squeeze alone drops nothing.
	squeezeMinPerS  = 10.0
	squeezeMinRatio = 0.001
)

// Summary is the verdict over a window of samples.
type Summary struct {
	Start            time.Time `json:"start"`
	End              time.Time `json:"end"`
	Samples          int       `json:"samples"`
	Seconds          float64   `json:"seconds"`
	IRQTimeAccounted bool      `json:"irq_time_accounted"`
	// CPUs holds each CPU's rates averaged over the window (time-weighted).
	CPUs []CPURate `json:"cpus"`
	// NICs holds each NIC's rates averaged over the window.
	NICs []NICRate `json:"nics"`
	// Threads holds each watched task's rates averaged over the samples it
	// appeared in, busiest first (see Sampler.Watch).
	Threads []ThreadRate `json:"threads,omitempty"`
	// PCIe holds each function of WithPCIe over the window.
	PCIe     []PCIeSummary     `json:"pcie,omitempty"`
	Findings []finding.Finding `json:"findings"`
}

// Summarize averages samples and returns the window verdicts: irq.hot_core
// (a core at 90% or more irq+softirq, or 90% busy with half of it
// irq+softirq, while the others average under 50% busy), softnet.drops and
// softnet.squeeze (at least 10 squeezes/s and one per 1000 packets). A
// condition must hold in at least half of the samples, not only on
// average, to be reported. It is a Summarizer over samples.
func Summarize(samples []Sample) Summary {
	var s Summarizer
	for i := range samples {
		s.Add(samples[i])
	}
	return s.Summary()
}

// landing is a NIC vector whose interrupts were taken by one CPU.
type landing struct {
	nic  string
	q    QueueRate
	irqs float64 // interrupts per second of the window
}

func (sm *Summarizer) hotCores(s Summary) []finding.Finding {
	if len(s.CPUs) < 2 {
		return nil // "one core while the others idle" needs others
	}
	var out []finding.Finding
	for _, c := range s.CPUs {
		others, n := 0.0, 0
		for _, o := range s.CPUs {
			if o.CPU != c.CPU {
				others += o.BusyPct
				n++
			}
		}
		others /= float64(n)
		pkt := c.PacketPct()
		sev := finding.Info
		switch {
		case pkt >= hotCorePct:
			sev = finding.Error
		case c.BusyPct >= hotCoreBusyPct && pkt >= hotCoreMinPacketPct:
			sev = finding.Warn
		default:
			continue
		}
		if others >= hotCoreOthersPct || !sm.most(sm.hot[c.CPU]) {
			continue
		}
		land := sm.landingOn(c.CPU)
		subject := "cpu" + strconv.Itoa(c.CPU)
		nics := map[string]bool{}
		var names []string
		for _, l := range land {
			nics[l.nic] = true
			names = append(names, fmt.Sprintf("%s %s (IRQ %d, %.0f/s)", l.nic, queueLabel(l.q), l.q.IRQ, l.irqs))
		}
		if len(nics) == 1 {
			subject = land[0].nic
		}
		what := "irq+softirq"
		if !s.IRQTimeAccounted {
			what = "softirq (hard-IRQ time is not accounted on this kernel)"
		}
		summary := fmt.Sprintf("CPU %d spent %.0f%% in %s and was %.0f%% busy while the other cores averaged %.0f%%: the traffic was bound by one core",
			c.CPU, pkt, strings.SplitN(what, " ", 2)[0], c.BusyPct, others)
		if len(names) > 0 {
			summary += "; its interrupts come from " + strings.Join(names, ", ")
		}
		ev := map[string]string{
			"cpu":             strconv.Itoa(c.CPU),
			"packet_pct":      fmt.Sprintf("%.1f", pkt),
			"measured":        what,
			"busy_pct":        fmt.Sprintf("%.1f", c.BusyPct),
			"others_busy_pct": fmt.Sprintf("%.1f", others),
			"net_rx_per_s":    fmt.Sprintf("%.0f", c.NetRXPerS),
			"window_s":        fmt.Sprintf("%.1f", s.Seconds),
		}
		if len(names) > 0 {
			ev["queues"] = strings.Join(names, "; ")
		}
		out = append(out, finding.Finding{
			Code: finding.IRQHotCore, Severity: sev, Subject: subject, Summary: summary, Evidence: ev,
			Fix: "spread the work: more queues (ethtool -L), RSS/RPS over more cores, IRQ affinity away from the busy core",
		})
	}
	return out
}

func queueLabel(q QueueRate) string {
	if q.Index >= 0 {
		return fmt.Sprintf("%s-%d", q.Kind, q.Index)
	}
	return q.Action
}

func (sm *Summarizer) softnetFindings(s Summary) []finding.Finding {
	var out []finding.Finding
	for _, c := range s.CPUs {
		cpu := c.CPU
		need := min(2, sm.n)
		seen := sm.drop[cpu]
		if seen >= need && c.SoftnetDroppedPerS > 0 {
			out = append(out, finding.Finding{
				Code: finding.SoftnetDrops, Severity: finding.Warn, Subject: "cpu" + strconv.Itoa(cpu),
				Summary: fmt.Sprintf("CPU %d dropped %.0f packets/s from its backlog (in %d of %d samples): the receive backlog overflowed",
					cpu, c.SoftnetDroppedPerS, seen, sm.n),
				Fix: "spread receive work over more cores (RSS/RPS), or raise net.core.netdev_max_backlog",
				Evidence: map[string]string{
					"dropped_per_s":   fmt.Sprintf("%.1f", c.SoftnetDroppedPerS),
					"processed_per_s": fmt.Sprintf("%.0f", c.SoftnetProcessedPerS),
					"samples":         fmt.Sprintf("%d/%d", seen, sm.n),
				},
			})
		}
		ratio := 0.0
		if c.SoftnetProcessedPerS > 0 {
			ratio = c.SoftnetSqueezedPerS / c.SoftnetProcessedPerS
		}
		if c.SoftnetSqueezedPerS >= squeezeMinPerS && ratio >= squeezeMinRatio && sm.most(sm.squeez[cpu]) {
			out = append(out, finding.Finding{
				Code: finding.SoftnetSqueeze, Severity: finding.Warn, Subject: "cpu" + strconv.Itoa(cpu),
				Summary: fmt.Sprintf("CPU %d ran out of its softirq budget %.0f times/s (%.2f per 1000 packets): receive processing cannot keep up on this core",
					cpu, c.SoftnetSqueezedPerS, ratio*1000),
				Fix: "spread receive work over more cores; raising net.core.netdev_budget only helps when the core has time to spare",
				Evidence: map[string]string{
					"squeezed_per_s":  fmt.Sprintf("%.1f", c.SoftnetSqueezedPerS),
					"processed_per_s": fmt.Sprintf("%.0f", c.SoftnetProcessedPerS),
					"per_1000_pkts":   fmt.Sprintf("%.2f", ratio*1000),
				},
			})
		}
	}
	return out
}
