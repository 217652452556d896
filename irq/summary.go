package irq

import (
	"fmt"
	"slices"
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
// average, to be reported.
func Summarize(samples []Sample) Summary {
	var s Summary
	if len(samples) == 0 {
		return s
	}
	s.Samples = len(samples)
	s.Start = samples[0].Time.Add(-time.Duration(samples[0].IntervalS * float64(time.Second)))
	s.End = samples[len(samples)-1].Time
	s.IRQTimeAccounted = true
	for _, x := range samples {
		s.Seconds += x.IntervalS
		s.IRQTimeAccounted = s.IRQTimeAccounted && x.IRQTimeAccounted
	}
	s.CPUs = meanCPUs(samples, s.IRQTimeAccounted)
	s.NICs = meanNICs(samples)
	s.Threads = meanThreads(samples)
	s.PCIe = SummarizePCIe(samples)
	s.Findings = append(s.Findings, hotCores(samples, s)...)
	s.Findings = append(s.Findings, softnetFindings(samples, s)...)
	finding.Sort(s.Findings)
	return s
}

func meanCPUs(samples []Sample, accounted bool) []CPURate {
	type acc struct {
		r    CPURate
		irq  float64
		secs float64
	}
	m := map[int]*acc{}
	for _, x := range samples {
		w := x.IntervalS
		for _, c := range x.CPUs {
			a := m[c.CPU]
			if a == nil {
				a = &acc{r: CPURate{CPU: c.CPU}}
				m[c.CPU] = a
			}
			a.secs += w
			if c.IRQPct != nil {
				a.irq += *c.IRQPct * w
			}
			a.r.SoftIRQPct += c.SoftIRQPct * w
			a.r.BusyPct += c.BusyPct * w
			a.r.UserPct += c.UserPct * w
			a.r.SystemPct += c.SystemPct * w
			a.r.IdlePct += c.IdlePct * w
			a.r.IOWaitPct += c.IOWaitPct * w
			a.r.StealPct += c.StealPct * w
			a.r.NetRXPerS += c.NetRXPerS * w
			a.r.NetTXPerS += c.NetTXPerS * w
			a.r.NICIRQsPerS += c.NICIRQsPerS * w
			a.r.SoftnetProcessedPerS += c.SoftnetProcessedPerS * w
			a.r.SoftnetDroppedPerS += c.SoftnetDroppedPerS * w
			a.r.SoftnetSqueezedPerS += c.SoftnetSqueezedPerS * w
		}
	}
	out := make([]CPURate, 0, len(m))
	for _, a := range m {
		if a.secs <= 0 {
			continue
		}
		r := a.r
		for _, p := range []*float64{&r.SoftIRQPct, &r.BusyPct, &r.UserPct, &r.SystemPct, &r.IdlePct, &r.IOWaitPct, &r.StealPct,
			&r.NetRXPerS, &r.NetTXPerS, &r.NICIRQsPerS,
			&r.SoftnetProcessedPerS, &r.SoftnetDroppedPerS, &r.SoftnetSqueezedPerS} {
			*p /= a.secs
		}
		if accounted {
			v := a.irq / a.secs
			r.IRQPct = &v
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b CPURate) int { return a.CPU - b.CPU })
	return out
}

func meanNICs(samples []Sample) []NICRate {
	var names []string
	m := map[string]*NICRate{}
	secs := map[string]float64{}
	losses := lossMeans{}
	for _, x := range samples {
		w := x.IntervalS
		for _, n := range x.NICs {
			a := m[n.Name]
			if a == nil {
				a = &NICRate{Name: n.Name}
				m[n.Name] = a
				names = append(names, n.Name)
			}
			secs[n.Name] += w
			a.RXPacketsPerS += n.RXPacketsPerS * w
			a.TXPacketsPerS += n.TXPacketsPerS * w
			a.RXBytesPerS += n.RXBytesPerS * w
			a.TXBytesPerS += n.TXBytesPerS * w
			a.RXDroppedPerS += n.RXDroppedPerS * w
			a.IRQsPerS += n.IRQsPerS * w
			losses.add(n.Name, n.Losses, w)
			if n.StatsError != "" {
				a.StatsError = n.StatsError
			}
			if n.QueueStatsError != "" {
				a.QueueStatsError = n.QueueStatsError
			}
		}
	}
	out := make([]NICRate, 0, len(names))
	for _, name := range names {
		a, w := m[name], secs[name]
		if w > 0 {
			for _, p := range []*float64{&a.RXPacketsPerS, &a.TXPacketsPerS, &a.RXBytesPerS, &a.TXBytesPerS, &a.RXDroppedPerS, &a.IRQsPerS} {
				*p /= w
			}
		}
		a.Losses = losses.mean(name)
		out = append(out, *a)
	}
	return out
}

// landing is a NIC vector whose interrupts were taken by one CPU.
type landing struct {
	nic  string
	q    QueueRate
	irqs float64 // interrupts per second of the window
}

// landingOn returns the vectors whose interrupts mostly landed on cpu,
// busiest first.
func landingOn(samples []Sample, cpu int, secs float64) []landing {
	m := map[string]*landing{}
	var keys []string
	for _, x := range samples {
		for i := range x.NICs {
			n := &x.NICs[i]
			for j := range n.Queues {
				q := &n.Queues[j]
				if q.CPU != cpu || q.IRQsPerS <= 0 {
					continue
				}
				k := n.Name + "/" + strconv.Itoa(q.IRQ)
				if m[k] == nil {
					m[k] = &landing{nic: n.Name, q: *q}
					keys = append(keys, k)
				}
				m[k].irqs += q.IRQsPerS * x.IntervalS / secs
			}
		}
	}
	out := make([]landing, 0, len(keys))
	for _, k := range keys {
		out = append(out, *m[k])
	}
	slices.SortStableFunc(out, func(a, b landing) int {
		switch {
		case a.irqs > b.irqs:
			return -1
		case a.irqs < b.irqs:
			return 1
		}
		return 0
	})
	return out
}

func hotCores(samples []Sample, s Summary) []finding.Finding {
	if len(s.CPUs) < 2 {
		return nil // "one core while the others idle" needs others
	}
	var out []finding.Finding
	for i, c := range s.CPUs {
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
		if others >= hotCoreOthersPct || !mostSamples(samples, func(x Sample) bool {
			r, ok := cpuAt(x, c.CPU, i)
			return ok && r.BusyPct >= hotCoreBusyPct && r.PacketPct() >= hotCoreMinPacketPct
		}) {
			continue
		}
		land := landingOn(samples, c.CPU, s.Seconds)
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

// cpuAt returns the rates of cpu in sample x. A sampler's samples list the
// same CPUs in the same order as the window's s.CPUs, so the one at hint
// (cpu's index there) is tried first.
func cpuAt(x Sample, cpu, hint int) (CPURate, bool) {
	if hint < len(x.CPUs) && x.CPUs[hint].CPU == cpu {
		return x.CPUs[hint], true
	}
	for _, r := range x.CPUs {
		if r.CPU == cpu {
			return r, true
		}
	}
	return CPURate{}, false
}

// mostSamples reports whether ok holds in at least half of the samples.
func mostSamples(samples []Sample, ok func(Sample) bool) bool {
	n := 0
	for _, x := range samples {
		if ok(x) {
			n++
		}
	}
	return 2*n >= len(samples)
}

func softnetFindings(samples []Sample, s Summary) []finding.Finding {
	var out []finding.Finding
	for i, c := range s.CPUs {
		cpu := c.CPU
		at := func(x Sample) (CPURate, bool) { return cpuAt(x, cpu, i) }
		need := min(2, len(samples))
		seen := 0
		if c.SoftnetDroppedPerS > 0 {
			for _, x := range samples {
				if r, ok := at(x); ok && r.SoftnetDroppedPerS > 0 {
					seen++
				}
			}
		}
		if seen >= need && c.SoftnetDroppedPerS > 0 {
			out = append(out, finding.Finding{
				Code: finding.SoftnetDrops, Severity: finding.Warn, Subject: "cpu" + strconv.Itoa(cpu),
				Summary: fmt.Sprintf("CPU %d dropped %.0f packets/s from its backlog (in %d of %d samples): the receive backlog overflowed",
					cpu, c.SoftnetDroppedPerS, seen, len(samples)),
				Fix: "spread receive work over more cores (RSS/RPS), or raise net.core.netdev_max_backlog",
				Evidence: map[string]string{
					"dropped_per_s":   fmt.Sprintf("%.1f", c.SoftnetDroppedPerS),
					"processed_per_s": fmt.Sprintf("%.0f", c.SoftnetProcessedPerS),
					"samples":         fmt.Sprintf("%d/%d", seen, len(samples)),
				},
			})
		}
		ratio := 0.0
		if c.SoftnetProcessedPerS > 0 {
			ratio = c.SoftnetSqueezedPerS / c.SoftnetProcessedPerS
		}
		squeezed := func(x Sample) bool {
			r, ok := at(x)
			return ok && r.SoftnetSqueezedPerS >= squeezeMinPerS &&
				r.SoftnetProcessedPerS > 0 && r.SoftnetSqueezedPerS/r.SoftnetProcessedPerS >= squeezeMinRatio
		}
		if c.SoftnetSqueezedPerS >= squeezeMinPerS && ratio >= squeezeMinRatio && mostSamples(samples, squeezed) {
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
