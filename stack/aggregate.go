package stack

import (
	"cmp"
	"slices"
)

// Bounds on what an Aggregator keeps, whatever the run's length.
const (
	maxAggFlows      = 256
	maxAggNamespaces = 64
	maxAggQdiscs     = 1024
	maxAggInterfaces = 256
	maxAggMissing    = 32
	maxTopPerCPU     = 16
	// maxIntervalS bounds an interval Add weighs in: a day.
	maxIntervalS = 86400
)

// Aggregator folds a run's Samples, one at a time, into what the Summary
// needs: sums, maxima and spans, never the samples. Its memory is bounded
// by the flows, namespaces, qdiscs and CPUs it meets (each capped), not by
// the run's length. The zero value is not ready: use NewAggregator. It is
// not safe for concurrent use.
type Aggregator struct {
	samples int
	seconds float64
	runPID  int
	flows   map[flowID]*flowAgg
	ns      map[uint64]*nsAgg
	qdiscs  map[qdiscID]*qdiscAgg
	cpus    map[int]*cpuAgg
	cpuSpan float64 // seconds the process scans covered
	runSpan float64 // seconds a process tree was watched
	ifs     map[ifID]int
	missing map[string]bool
	// dropped counts flows not kept for the cap (and those the samples
	// left out themselves).
	dropped int
}

type flowID struct {
	netns, cookie uint64
}

type qdiscID struct {
	netns                 uint64
	iface, handle, parent string
	class                 bool
}

type ifID struct {
	netns uint64
	name  string
}

// spanAcc is the time from the first to the last interval that was
// active, idle intervals between them included.
type spanAcc struct {
	span, pending float64
	started       bool
}

func (s *spanAcc) add(dt float64, active bool) {
	switch {
	case active:
		if s.started {
			s.span += s.pending
		}
		s.span += dt
		s.pending, s.started = 0, true
	case s.started:
		s.pending += dt
	}
}

// NewAggregator returns an empty Aggregator.
func NewAggregator() *Aggregator {
	return &Aggregator{flows: map[flowID]*flowAgg{}, ns: map[uint64]*nsAgg{}, qdiscs: map[qdiscID]*qdiscAgg{},
		cpus: map[int]*cpuAgg{}, ifs: map[ifID]int{}, missing: map[string]bool{}}
}

// Add folds one sample in. x is not kept.
func (a *Aggregator) Add(x Sample) {
	dt := x.IntervalS
	if !(dt > 0 && dt <= maxIntervalS) {
		return // the first reading's sample, or a broken one
	}
	a.samples++
	a.seconds += dt
	if x.RunPID > 0 {
		a.runPID = x.RunPID
	}
	a.dropped += x.FlowsOmitted
	for i := range x.Flows {
		a.addFlow(&x.Flows[i], dt)
	}
	for i := range x.Namespaces {
		a.addNamespace(&x.Namespaces[i], dt)
	}
	for i := range x.Qdiscs {
		a.addQdisc(&x.Qdiscs[i], dt)
	}
	a.addCPUs(x.CPUs, x.CPUIntervalS)
	if x.RunPID > 0 {
		a.addRun(x.Run, dt)
	}
	for _, f := range x.Interfaces {
		k := ifID{f.Netns, f.Name}
		if _, ok := a.ifs[k]; ok || len(a.ifs) < maxAggInterfaces {
			a.ifs[k] = max(a.ifs[k], f.Flows)
		}
	}
	for _, m := range x.Missing {
		if len(a.missing) < maxAggMissing {
			a.missing[m] = true
		}
	}
}

// nsAgg is one namespace over the run.
type nsAgg struct {
	s NamespaceSummary
}

func (a *Aggregator) addNamespace(n *Namespace, dt float64) {
	g := a.ns[n.ID]
	if g == nil {
		if len(a.ns) >= maxAggNamespaces {
			return
		}
		g = &nsAgg{s: NamespaceSummary{ID: n.ID, Path: n.Path}}
		a.ns[n.ID] = g
	}
	s := &g.s
	if n.Sockets != nil {
		s.Seconds += dt
		s.Sockets.add(n.Sockets)
	}
	if n.Buffers != nil {
		b := *n.Buffers
		s.Buffers = &b
	}
	s.ConntrackAbsent = n.ConntrackAbsent
	if c := n.Conntrack; c != nil {
		s.ConntrackMaxCount = max(s.ConntrackMaxCount, c.Count)
		if s.Conntrack == nil {
			s.Conntrack = &Conntrack{}
		}
		t := s.Conntrack
		t.Count, t.Max = c.Count, c.Max
		t.Found += c.Found
		t.Invalid += c.Invalid
		t.Insert += c.Insert
		t.InsertFailed += c.InsertFailed
		t.Drop += c.Drop
		t.EarlyDrop += c.EarlyDrop
		t.StatsKnown = t.StatsKnown || c.StatsKnown
	}
}

// add adds o's counts to c.
func (c *SocketCounters) add(o *SocketCounters) {
	c.UDPInDatagrams += o.UDPInDatagrams
	c.UDPOutDatagrams += o.UDPOutDatagrams
	c.UDPNoPorts += o.UDPNoPorts
	c.UDPInErrors += o.UDPInErrors
	c.UDPRcvbufErrors += o.UDPRcvbufErrors
	c.UDPSndbufErrors += o.UDPSndbufErrors
	c.UDPMemErrors += o.UDPMemErrors
	c.TCPInSegs += o.TCPInSegs
	c.TCPOutSegs += o.TCPOutSegs
	c.TCPRetransSegs += o.TCPRetransSegs
	c.TCPPassiveOpens += o.TCPPassiveOpens
	c.TCPRcvQDrop += o.TCPRcvQDrop
	c.TCPBacklogDrop += o.TCPBacklogDrop
	c.TCPZeroWindowDrop += o.TCPZeroWindowDrop
	c.TCPOFODrop += o.TCPOFODrop
	c.PruneCalled += o.PruneCalled
	c.RcvPruned += o.RcvPruned
	c.ListenOverflows += o.ListenOverflows
	c.ListenDrops += o.ListenDrops
	c.TCPMemoryPressures += o.TCPMemoryPressures
}

// qdiscAgg is one qdisc or class over the run.
type qdiscAgg struct {
	s    QdiscSummary
	span spanAcc
}

func (a *Aggregator) addQdisc(q *Qdisc, dt float64) {
	k := qdiscID{q.Netns, q.Iface, q.Handle, q.Parent, q.Class}
	g := a.qdiscs[k]
	if g == nil {
		if len(a.qdiscs) >= maxAggQdiscs {
			return
		}
		g = &qdiscAgg{s: QdiscSummary{Netns: q.Netns, Iface: q.Iface, Handle: q.Handle, Parent: q.Parent, Class: q.Class}}
		a.qdiscs[k] = g
	}
	s := &g.s
	s.Kind, s.Rate, s.Ceil = q.Kind, q.Rate, q.Ceil
	s.Bytes += q.Bytes
	s.Packets += q.Packets
	s.Drops += q.Drops
	s.Overlimits += q.Overlimits
	s.Requeues += q.Requeues
	s.BacklogMax = max(s.BacklogMax, q.Backlog)
	g.span.add(dt, q.Bytes > 0)
}

// summary returns the qdisc over its span.
func (g *qdiscAgg) summary() QdiscSummary {
	s := g.s
	s.Seconds = g.span.span
	if s.Seconds > 0 {
		s.Mbps = float64(s.Bytes) * 8 / 1e6 / s.Seconds
	}
	return s
}

// cpuAgg is one CPU's work over the run's scans, in percent × seconds.
type cpuAgg struct {
	run, wait, packet, other float64
	top                      map[int]*procAgg
}

type procAgg struct {
	comm   string
	kernel bool
	pctS   float64
}

func (a *Aggregator) addCPUs(cs []CPUWork, dt float64) {
	if !(dt > 0 && dt <= maxIntervalS) || len(cs) == 0 {
		return
	}
	a.cpuSpan += dt
	for _, c := range cs {
		if g := a.cpu(c.CPU); g != nil {
			g.packet += c.PacketPct * dt
			g.other += c.OtherPct * dt
			for _, p := range c.Top {
				g.addProc(p, dt)
			}
		}
	}
}

// addRun adds the run's work on each CPU over dt seconds.
func (a *Aggregator) addRun(rs []RunCPU, dt float64) {
	a.runSpan += dt
	for _, r := range rs {
		if g := a.cpu(r.CPU); g != nil {
			g.run += r.Pct * dt
			g.wait += r.WaitPct * dt
		}
	}
}

// cpu returns CPU id's aggregate, made on first use; nil for an id out of
// range.
func (a *Aggregator) cpu(id int) *cpuAgg {
	if id < 0 || id > maxCPUID {
		return nil
	}
	g := a.cpus[id]
	if g == nil {
		g = &cpuAgg{top: map[int]*procAgg{}}
		a.cpus[id] = g
	}
	return g
}

// addProc adds a process's time, keeping at most maxTopPerCPU: a new one
// replaces the least when it has more.
func (g *cpuAgg) addProc(p ProcWork, dt float64) {
	if t := g.top[p.PID]; t != nil {
		t.pctS += p.Pct * dt
		return
	}
	if len(g.top) >= maxTopPerCPU {
		least, lv := 0, -1.0
		for pid, t := range g.top {
			if lv < 0 || t.pctS < lv || (t.pctS == lv && pid > least) {
				least, lv = pid, t.pctS
			}
		}
		if p.Pct*dt <= lv {
			return
		}
		delete(g.top, least)
	}
	g.top[p.PID] = &procAgg{comm: p.Comm, kernel: p.Kernel, pctS: p.Pct * dt}
}

// cpuSummaries returns the mean work per CPU, by CPU.
func (a *Aggregator) cpuSummaries() []CPUSummary {
	per := func(v, span float64) float64 {
		if span <= 0 {
			return 0
		}
		return v / span
	}
	out := make([]CPUSummary, 0, len(a.cpus))
	for id, g := range a.cpus {
		c := CPUSummary{CPU: id, RunPct: per(g.run, a.runSpan), RunWaitPct: per(g.wait, a.runSpan),
			PacketPct: per(g.packet, a.cpuSpan), OtherPct: per(g.other, a.cpuSpan)}
		for pid, t := range g.top {
			c.Top = append(c.Top, ProcWork{PID: pid, Comm: t.comm, Kernel: t.kernel, Pct: per(t.pctS, a.cpuSpan)})
		}
		slices.SortFunc(c.Top, func(x, y ProcWork) int {
			if r := cmp.Compare(y.Pct, x.Pct); r != 0 {
				return r
			}
			return x.PID - y.PID
		})
		c.Top = c.Top[:min(len(c.Top), TopProcs)]
		out = append(out, c)
	}
	slices.SortFunc(out, func(x, y CPUSummary) int { return x.CPU - y.CPU })
	return out
}
