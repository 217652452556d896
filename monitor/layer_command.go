package monitor

import (
	"fmt"
	"math"
	"slices"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// commandLayer is the command's threads over the span's interior (see
// Run.Watch): its busiest thread with the CPU it ran on is a ceiling, and
// where that thread ran (on a CPU that takes the NICs' interrupts, off the
// NIC's NUMA node) a finding.
type commandLayer struct {
	threads map[int]*threadUse
	// after means: on is the threads' busy time per CPU, top the
	// busiest thread per CPU.
	on  map[int]float64
	top map[int]*threadUse
}

func newCommandLayer() *commandLayer { return &commandLayer{threads: map[int]*threadUse{}} }

// maxThreads bounds the threads a run keeps sums of: a command that
// starts thread after thread must not grow them without end. Past it, a
// new thread replaces the one with the least busy time.
const maxThreads = 4096

// threadUse is one task of the command over the samples it was present
// in: sums of percent × seconds until means.
type threadUse struct {
	pid, tid     int
	comm         string
	user, system float64 // % of a CPU
	secs         float64
	onCPU        map[int]float64 // busy seconds per CPU
}

func (l *commandLayer) add(x *irq.Sample, dt float64) {
	for _, t := range x.Threads {
		u := l.use(t.TID, t.PID)
		u.comm = t.Comm
		u.secs += dt
		user, system := pctOf(t.UserPct), pctOf(t.SystemPct)
		u.user += user * dt
		u.system += system * dt
		u.onCPU[t.CPU] += (user + system) * dt
	}
}

func (l *commandLayer) use(tid, pid int) *threadUse {
	u := l.threads[tid]
	if u == nil {
		if len(l.threads) >= maxThreads {
			l.evict()
		}
		u = &threadUse{pid: pid, tid: tid, onCPU: map[int]float64{}}
		l.threads[tid] = u
	}
	return u
}

// evict drops the thread with the least busy time (the lowest TID of
// equals).
func (l *commandLayer) evict() {
	var least *threadUse
	for _, t := range l.threads {
		if least == nil || t.busy() < least.busy() || t.busy() == least.busy() && t.tid < least.tid {
			least = t
		}
	}
	delete(l.threads, least.tid)
}

func (l *commandLayer) merge(o layer) {
	for _, v := range o.(*commandLayer).threads {
		u := l.use(v.tid, v.pid)
		u.comm = v.comm
		u.user += v.user
		u.system += v.system
		u.secs += v.secs
		for c, b := range v.onCPU {
			u.onCPU[c] += b
		}
	}
}

// means turns the sums into means over each thread's seconds, once, and
// adds up the threads' busy time per CPU.
func (l *commandLayer) means() {
	if l.on != nil {
		return
	}
	l.on, l.top = map[int]float64{}, map[int]*threadUse{}
	for _, t := range l.threads {
		if t.secs > 0 {
			t.user, t.system = t.user/t.secs, t.system/t.secs
		}
		c := t.cpu()
		if c < 0 {
			continue
		}
		l.on[c] += t.busy()
		if o := l.top[c]; o == nil || t.busy() > o.busy() || t.busy() == o.busy() && t.tid < o.tid {
			l.top[c] = t
		}
	}
}

// cpu is where the thread spent most of its busy time.
func (t *threadUse) cpu() int {
	best, bestT := -1, -1.0
	for c, v := range t.onCPU {
		if v > bestT || (v == bestT && c < best) {
			best, bestT = c, v
		}
	}
	return best
}

func (t *threadUse) busy() float64 { return t.user + t.system }

// busy is the threads' busy time in all, % of one CPU.
func (l *commandLayer) busy() float64 {
	b := 0.0
	for _, t := range l.threads {
		b += t.busy()
	}
	return b
}

// owns reports whether the command's threads are the larger part of the
// run's own work on u, and that work at least ownCPUShare of its busy
// time: a CPU judged as the command's, not as a packet core.
func (l *commandLayer) owns(u *cpuUse) bool {
	part := math.Min(l.on[u.cpu], u.busy)
	return part > 0 && part >= u.packet && part+u.packet >= ownCPUShare*u.busy
}

// sortedThreads lists the threads by TID.
func (l *commandLayer) sortedThreads() []*threadUse {
	out := make([]*threadUse, 0, len(l.threads))
	for _, t := range l.threads {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *threadUse) int { return a.tid - b.tid })
	return out
}

// offer adds the command's busiest thread with the CPU it ran on: its
// share is its busy time, or its CPU's busy and steal time where it is
// the busiest thread of a CPU the command owns.
func (l *commandLayer) offer(j *judgement, v *Verdict) {
	var cmd *Ceiling
	for _, t := range l.sortedThreads() {
		c := t.cpu()
		share := t.busy() / 100
		if u := j.cpu.cpu(c); u != nil && l.top[c] == t && l.owns(u) {
			share = math.Max(share, math.Min(u.busy+u.steal, 100)/100)
		}
		share = math.Min(share, 1)
		if cmd == nil || share > cmd.Share {
			cpu := c
			cmd = &Ceiling{Layer: BoundCommand, Subject: fmt.Sprintf("%d (%s) on %s", t.tid, t.comm, cpuName(c)),
				CPU: &cpu, TID: t.tid, Share: share,
				What: fmt.Sprintf("the command's thread %d (%s) on %s", t.tid, t.comm, cpuName(c))}
		}
	}
	if cmd != nil && cmd.Share > 0 {
		names := j.traffic.names()
		cmd.NICs = names
		v.Ceilings = append(v.Ceilings, scaled(*cmd, j.traffic.maxDirMbps(names)))
	}
}

// thread returns the thread tid, or nil.
func (l *commandLayer) thread(tid int) *threadUse { return l.threads[tid] }

// Thresholds of the placement findings.
const (
	// placementThreadPct: only a command thread that used at least this
	// much of a CPU is placed: a mostly idle load generator costs nothing
	// where it sits.
	placementThreadPct = 25.0
	// irqCPUShare: a CPU takes the NICs' interrupts when it took at least
	// this share of them (and irqCPUMinPerS a second).
	irqCPUShare   = 0.10
	irqCPUMinPerS = 100.0
)

// findings says where the command's busiest thread ran: on a CPU that
// takes the sampled NICs' interrupts (the two compete for it), or off the
// NUMA node of the NIC it drives (every packet crosses the
// interconnect). Info, warn when the run was bound by that thread or that
// core.
func (l *commandLayer) findings(j *judgement, v *Verdict) []finding.Finding {
	var t *threadUse
	for _, x := range l.sortedThreads() {
		if t == nil || x.busy() > t.busy() {
			t = x
		}
	}
	if t == nil || t.busy() < placementThreadPct || t.cpu() < 0 {
		return nil
	}
	sev := finding.Info
	if v.Bound == BoundCommand || v.Bound == BoundCore {
		sev = finding.Warn
	}
	var out []finding.Finding
	if f, ok := irqCPUFinding(j, t, sev); ok {
		out = append(out, f)
	}
	if f, ok := remoteNodeFinding(j, t, sev); ok {
		out = append(out, f)
	}
	return out
}

// who names the thread in a finding's sentence.
func (t *threadUse) who() string {
	return fmt.Sprintf("the command's thread %d (%s), %.0f %% of a CPU,", t.tid, t.comm, t.busy())
}

// irqCPUFinding is run.command_on_irq_cpu: t ran on a CPU that took the
// NICs' interrupts.
func irqCPUFinding(j *judgement, t *threadUse, sev finding.Severity) (finding.Finding, bool) {
	c := t.cpu()
	total := 0.0
	for _, u := range j.cpu.sorted {
		total += u.nicIRQs
	}
	u := j.cpu.cpu(c)
	if u == nil || total <= 0 || u.nicIRQs < irqCPUMinPerS || u.nicIRQs < irqCPUShare*total {
		return finding.Finding{}, false
	}
	return finding.Finding{Code: finding.RunCommandOnIRQCPU, Severity: sev, Subject: cpuName(c),
		Summary: fmt.Sprintf("%s ran on %s, which took %.0f %% of the NICs' interrupts (%s/s): the load generator and the packet work compete for one core",
			t.who(), cpuName(c), u.nicIRQs/total*100, num(u.nicIRQs)),
		Fix: fmt.Sprintf("Run the load generator on CPUs that take no NIC interrupts (taskset -c LIST CMD; iperf3 -A N), or move the IRQs (/proc/irq/N/smp_affinity_list) off %s.", cpuName(c)),
		Evidence: map[string]string{"tid": fmt.Sprint(t.tid), "cpu": fmt.Sprint(c), "thread_busy_pct": fmt.Sprintf("%.1f", t.busy()),
			"cpu_nic_irqs_per_s": fmt.Sprintf("%.0f", u.nicIRQs), "nic_irqs_per_s": fmt.Sprintf("%.0f", total)}}, true
}

// remoteNodeFinding is run.command_remote_node: t ran off the NUMA node
// of a NIC that moved.
func remoteNodeFinding(j *judgement, t *threadUse, sev finding.Severity) (finding.Finding, bool) {
	c := t.cpu()
	for _, l := range j.limits {
		if l.LocalCPUs == "" || j.traffic.nic(l.NIC) == nil {
			continue
		}
		local, err := irq.ParseCPUList(l.LocalCPUs)
		if err != nil || len(local) == 0 || slices.Contains(local, c) {
			continue
		}
		return finding.Finding{Code: finding.RunCommandRemoteNode, Severity: sev, Subject: l.NIC,
			Summary: fmt.Sprintf("%s ran on %s, off %s's NUMA node %d (CPUs %s): its packets cross the interconnect both ways",
				t.who(), cpuName(c), l.NIC, l.NUMANode, l.LocalCPUs),
			Fix:      fmt.Sprintf("Run it on the NIC's node: numactl --cpunodebind=%d --membind=%d CMD (or taskset -c %s CMD).", l.NUMANode, l.NUMANode, l.LocalCPUs),
			Evidence: map[string]string{"tid": fmt.Sprint(t.tid), "cpu": fmt.Sprint(c), "numa_node": fmt.Sprint(l.NUMANode), "local_cpus": l.LocalCPUs}}, true
	}
	return finding.Finding{}, false
}
