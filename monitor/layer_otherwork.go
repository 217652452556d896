package monitor

import (
	"fmt"
	"math"
	"strings"

	"github.com/nicdiag/nicdiag/stack"
)

// Other work on the run's CPUs: a CPU the run used that was busy with
// work that is not the run's, other processes or the hypervisor's (steal),
// bound the run by that work, never by its packet work.

// Thresholds of other work.
const (
	// otherWorkPct: work not the run's that took at least this much of a
	// CPU the run used, and at least as much as the run's own work there,
	// bound the run where that CPU was full (boundShare).
	otherWorkPct = 25.0
	// runUsedPct: the run used a CPU where its packet work, its command's
	// threads or its process tree took at least this much of it.
	runUsedPct = 10.0
)

// foreignWork is the work on one CPU that is not the run's.
type foreignWork struct {
	cpu   int
	other float64 // processes outside the run, % of the CPU
	steal float64
	top   []stack.ProcWork
	// scanned: other is the stack's process scans'; else the user and
	// system time the command's threads do not account for.
	scanned bool
}

func (f foreignWork) pct() float64 { return f.other + f.steal }

// foreign is the work on u that is not the run's.
func (j *judgement) foreign(u *cpuUse) foreignWork {
	f := foreignWork{cpu: u.cpu, steal: u.steal}
	if s := j.stackCPU(u.cpu); s != nil || j.scanned() {
		f.scanned = true
		if s != nil {
			f.other, f.top = math.Min(s.OtherPct, u.user+u.system), s.Top
		}
		return f
	}
	f.other = math.Max(0, u.user+u.system-math.Min(j.command.on[u.cpu], u.user+u.system))
	return f
}

// own is the run's own work on u: its packet work and its command's
// threads.
func (j *judgement) own(u *cpuUse) float64 {
	return u.packet + math.Min(j.command.on[u.cpu], u.busy)
}

// runUsed reports whether the run used u.
func (j *judgement) runUsed(u *cpuUse) bool {
	if u.packet >= runUsedPct || j.command.on[u.cpu] >= runUsedPct {
		return true
	}
	s := j.stackCPU(u.cpu)
	return s != nil && s.RunPct >= runUsedPct
}

// otherWork returns the other work that bound the run: on the CPU of
// ceiling c (a core ceiling, or a command ceiling whose share is its
// CPU's busy time, not the thread's own; any CPU the run used when c is
// the ceiling of a host whose every CPU was full), or, with c nil, the
// stack's own judgement of other work, else any CPU the run used that was
// full with work not the run's at least as large as the run's own. The
// work not the run's must be at least otherWorkPct and at least the part
// of the ceiling's own kind (packet work for a core, the command's
// threads for the command). nil when none bound it.
func (j *judgement) otherWork(c *Ceiling) *stack.Judgement {
	if c == nil && j.stack != nil {
		for _, g := range j.stack.Bound() {
			if g.Layer == stack.LayerOtherWork {
				return j.withSteal(&g)
			}
		}
	}
	if c == nil && !j.hungry() {
		return nil
	}
	var cands []*cpuUse
	part := func(u *cpuUse) float64 { return j.own(u) }
	switch {
	case c == nil || c.saturated:
		for _, u := range j.cpu.sorted {
			if j.runUsed(u) {
				cands = append(cands, u)
			}
		}
		if c != nil {
			part = func(u *cpuUse) float64 { return u.packet }
		}
	case c.CPU == nil:
	case c.Layer == BoundCore:
		cands, part = []*cpuUse{j.cpu.cpu(*c.CPU)}, func(u *cpuUse) float64 { return u.packet }
	case c.Layer == BoundCommand:
		if t := j.command.thread(c.TID); t == nil || t.busy() >= boundShare*100 {
			return nil // the thread saturated itself
		}
		cands = []*cpuUse{j.cpu.cpu(*c.CPU)}
	}
	var best *cpuUse
	var bestF foreignWork
	for _, u := range cands {
		if u == nil {
			continue
		}
		f := j.foreign(u)
		if math.Min(u.busy+u.steal, 100) < boundShare*100 || f.pct() < otherWorkPct || f.pct() < part(u) {
			continue
		}
		if best == nil || f.pct() > bestF.pct() {
			best, bestF = u, f
		}
	}
	if best == nil {
		return nil
	}
	return j.otherWorkJudgement(best, bestF)
}

// demandMin: where the stack followed the run's process tree, other work
// on a CPU that reached no ceiling binds a run that wanted at least this
// much of a CPU (its threads' time and their wait for a CPU, over every
// CPU; stack's own threshold): a rate-limited run got what it asked for.
const demandMin = 50.0

// hungry reports whether the run wanted demandMin of a CPU, or, where the
// stack did not follow its tree, whether that is not known.
func (j *judgement) hungry() bool {
	if j.stack == nil || !j.scanned() {
		return true
	}
	tree := false
	for _, l := range j.stack.Layers {
		tree = tree || l.Layer == stack.LayerOtherWork && l.State != stack.StateUnknown
	}
	if !tree {
		return true
	}
	demand := 0.0
	for _, c := range j.stack.CPUs {
		demand += c.RunPct + c.RunWaitPct
	}
	return demand >= demandMin
}

// withSteal adds the steal time of the judgement's CPU to the stack's
// own sentence.
func (j *judgement) withSteal(g *stack.Judgement) *stack.Judgement {
	var id int
	if _, err := fmt.Sscanf(g.Subject, "CPU %d", &id); err == nil {
		if u := j.cpu.cpu(id); u != nil && u.steal >= 1 {
			g.Summary += fmt.Sprintf("; the hypervisor took another %.0f %% (steal)", u.steal)
		}
	}
	return g
}

// otherWorkJudgement words the other work f on a full CPU u.
func (j *judgement) otherWorkJudgement(u *cpuUse, f foreignWork) *stack.Judgement {
	g := &stack.Judgement{Layer: stack.LayerOtherWork, Kind: "other_work", Subject: cpuName(u.cpu), Bound: true,
		Share: math.Min(f.pct(), 100) / 100}
	var parts []string
	if f.other >= 1 {
		what := fmt.Sprintf("%.0f %% other processes", f.other)
		if !f.scanned {
			what = fmt.Sprintf("%.0f %% user and system time that is not the command's", f.other)
		}
		var names []string
		for _, p := range f.top {
			names = append(names, fmt.Sprintf("%s (PID %d) %.0f %%", p.Comm, p.PID, math.Min(p.Pct, 100)))
		}
		if len(names) > 0 {
			what += ": " + strings.Join(names, ", ")
		}
		parts = append(parts, what)
	}
	if f.steal >= 1 {
		parts = append(parts, fmt.Sprintf("%.0f %% steal (the hypervisor ran something else)", f.steal))
	}
	g.Summary = fmt.Sprintf("%s was %.0f %% busy, %s, against %.0f %% of the run's own work (irq+softirq and the command's threads)",
		cpuName(u.cpu), math.Min(u.busy+u.steal, 100), strings.Join(parts, "; "), j.own(u))
	if j.command.busy() == 0 {
		g.Summary += " (no command was watched: a load generator started apart counts as other work; run it as nicdiag monitor -- CMD)"
	}
	g.Fix = fmt.Sprintf("Give the run CPUs of its own: move the other work away (taskset -pc LIST PID) or pin the run elsewhere (taskset -c LIST CMD, iperf3 -A N); %s is shared", cpuName(u.cpu))
	if f.steal >= otherWorkPct {
		g.Kind = "steal"
		g.Fix = "The hypervisor gives this VM's CPUs to others: ask for dedicated CPUs (no overcommit), a larger instance, or run on a quieter host; " + g.Fix
	}
	g.Evidence = []string{fmt.Sprintf("%s: busy %.0f %%, steal %.0f %%, irq+softirq %.0f %%, user %.0f %%, system %.0f %%",
		cpuName(u.cpu), u.busy, u.steal, u.packet, u.user, u.system)}
	return g
}
