package irq

import (
	"slices"
	"time"

	"github.com/nicdiag/nicdiag/finding"
)

// Summarizer folds samples into a Summary one at a time, keeping sums,
// not samples: its memory depends on the CPUs, NICs, queues and watched
// threads seen, not on how many samples were added. Summarize is Add over
// a slice, then Summary. The zero Summarizer is ready; it is not safe for
// concurrent use.
type Summarizer struct {
	n                 int
	start, end        time.Time
	seconds           float64
	accounted         bool
	cpus              map[int]*cpuSum
	nics              []*nicSum // in the order first seen
	losses            lossMeans
	threads           threadSums
	pcie              PCIeFolder
	landing           map[landingKey]*landing
	landingOrder      []landingKey
	hot, drop, squeez map[int]int // samples a CPU met a finding's condition in
}

// cpuSum is one CPU's interval-weighted sums.
type cpuSum struct {
	r    CPURate // rates × seconds until Summary
	irq  float64
	secs float64
}

// nicSum is one NIC's interval-weighted sums.
type nicSum struct {
	r    NICRate
	secs float64
}

// landingKey is a NIC vector whose interrupts a CPU took.
type landingKey struct {
	cpu int
	nic string
	irq int
}

// maxWatched bounds the threads a Summarizer keeps sums of: a command
// that starts thread after thread (a shell loop) must not grow it without
// end. Past it, a new thread replaces the one with the least busy time.
const maxWatched = 4096

// Add folds sample x in.
func (s *Summarizer) Add(x Sample) {
	if s.n == 0 {
		s.start = x.Time.Add(-time.Duration(x.IntervalS * float64(time.Second)))
		s.accounted = true
		s.cpus, s.losses = map[int]*cpuSum{}, lossMeans{}
		s.landing, s.hot, s.drop, s.squeez = map[landingKey]*landing{}, map[int]int{}, map[int]int{}, map[int]int{}
	}
	s.n++
	s.end = x.Time
	s.seconds += x.IntervalS
	s.accounted = s.accounted && x.IRQTimeAccounted
	for i := range x.CPUs {
		s.addCPU(&x.CPUs[i], x.IntervalS)
	}
	for i := range x.NICs {
		s.addNIC(&x.NICs[i], x.IntervalS)
	}
	s.threads.add(x.Threads, x.IntervalS)
	s.pcie.Add(x.PCIe)
}

func (s *Summarizer) addCPU(c *CPURate, w float64) {
	a := s.cpus[c.CPU]
	if a == nil {
		a = &cpuSum{r: CPURate{CPU: c.CPU}}
		s.cpus[c.CPU] = a
	}
	a.secs += w
	if c.IRQPct != nil {
		a.irq += *c.IRQPct * w
	}
	r := &a.r
	r.SoftIRQPct += c.SoftIRQPct * w
	r.BusyPct += c.BusyPct * w
	r.UserPct += c.UserPct * w
	r.SystemPct += c.SystemPct * w
	r.IdlePct += c.IdlePct * w
	r.IOWaitPct += c.IOWaitPct * w
	r.StealPct += c.StealPct * w
	r.NetRXPerS += c.NetRXPerS * w
	r.NetTXPerS += c.NetTXPerS * w
	r.NICIRQsPerS += c.NICIRQsPerS * w
	r.SoftnetProcessedPerS += c.SoftnetProcessedPerS * w
	r.SoftnetDroppedPerS += c.SoftnetDroppedPerS * w
	r.SoftnetSqueezedPerS += c.SoftnetSqueezedPerS * w
	if c.BusyPct >= hotCoreBusyPct && c.PacketPct() >= hotCoreMinPacketPct {
		s.hot[c.CPU]++
	}
	if c.SoftnetDroppedPerS > 0 {
		s.drop[c.CPU]++
	}
	if c.SoftnetSqueezedPerS >= squeezeMinPerS && c.SoftnetProcessedPerS > 0 &&
		c.SoftnetSqueezedPerS/c.SoftnetProcessedPerS >= squeezeMinRatio {
		s.squeez[c.CPU]++
	}
}

func (s *Summarizer) addNIC(n *NICRate, w float64) {
	i := slices.IndexFunc(s.nics, func(a *nicSum) bool { return a.r.Name == n.Name })
	if i < 0 {
		i = len(s.nics)
		s.nics = append(s.nics, &nicSum{r: NICRate{Name: n.Name}})
	}
	a := s.nics[i]
	a.secs += w
	r := &a.r
	r.RXPacketsPerS += n.RXPacketsPerS * w
	r.TXPacketsPerS += n.TXPacketsPerS * w
	r.RXBytesPerS += n.RXBytesPerS * w
	r.TXBytesPerS += n.TXBytesPerS * w
	r.RXDroppedPerS += n.RXDroppedPerS * w
	r.IRQsPerS += n.IRQsPerS * w
	s.losses.add(n.Name, n.Losses, w)
	if n.StatsError != "" {
		r.StatsError = n.StatsError
	}
	if n.QueueStatsError != "" {
		r.QueueStatsError = n.QueueStatsError
	}
	for j := range n.Queues {
		q := &n.Queues[j]
		if q.IRQsPerS <= 0 {
			continue
		}
		k := landingKey{q.CPU, n.Name, q.IRQ}
		l := s.landing[k]
		if l == nil {
			l = &landing{nic: n.Name, q: QueueRate{IRQ: q.IRQ, Action: q.Action, Kind: q.Kind, Index: q.Index, CPU: q.CPU}}
			s.landing[k] = l
			s.landingOrder = append(s.landingOrder, k)
		}
		l.irqs += q.IRQsPerS * w // a sum until landingOn
	}
}

// Summary returns the summary of the samples added so far: the means and
// the window verdicts of Summarize.
func (s *Summarizer) Summary() Summary {
	var out Summary
	if s.n == 0 {
		return out
	}
	out.Samples, out.Start, out.End, out.Seconds, out.IRQTimeAccounted = s.n, s.start, s.end, s.seconds, s.accounted
	out.CPUs = s.meanCPUs()
	out.NICs = s.meanNICs()
	out.Threads = s.threads.means()
	out.PCIe = s.pcie.Summary()
	out.Findings = append(out.Findings, s.hotCores(out)...)
	out.Findings = append(out.Findings, s.softnetFindings(out)...)
	finding.Sort(out.Findings)
	return out
}

func (s *Summarizer) meanCPUs() []CPURate {
	out := make([]CPURate, 0, len(s.cpus))
	for _, a := range s.cpus {
		if a.secs <= 0 {
			continue
		}
		r := a.r
		for _, p := range []*float64{&r.SoftIRQPct, &r.BusyPct, &r.UserPct, &r.SystemPct, &r.IdlePct, &r.IOWaitPct, &r.StealPct,
			&r.NetRXPerS, &r.NetTXPerS, &r.NICIRQsPerS,
			&r.SoftnetProcessedPerS, &r.SoftnetDroppedPerS, &r.SoftnetSqueezedPerS} {
			*p /= a.secs
		}
		if s.accounted {
			v := a.irq / a.secs
			r.IRQPct = &v
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b CPURate) int { return a.CPU - b.CPU })
	return out
}

func (s *Summarizer) meanNICs() []NICRate {
	out := make([]NICRate, 0, len(s.nics))
	for _, a := range s.nics {
		r := a.r
		if a.secs > 0 {
			for _, p := range []*float64{&r.RXPacketsPerS, &r.TXPacketsPerS, &r.RXBytesPerS, &r.TXBytesPerS, &r.RXDroppedPerS, &r.IRQsPerS} {
				*p /= a.secs
			}
		}
		r.Losses = s.losses.mean(r.Name)
		out = append(out, r)
	}
	return out
}

// landingOn returns the vectors whose interrupts landed on cpu, as
// interrupts per second of the window, busiest first.
func (s *Summarizer) landingOn(cpu int) []landing {
	var out []landing
	for _, k := range s.landingOrder {
		if k.cpu == cpu {
			l := *s.landing[k]
			l.irqs /= s.seconds
			out = append(out, l)
		}
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

// most reports whether a condition counted in count held in at least
// half of the samples.
func (s *Summarizer) most(count int) bool { return 2*count >= s.n }
