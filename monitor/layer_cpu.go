package monitor

import (
	"fmt"
	"math"
	"slices"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// cpuLayer is each CPU's load over the span's interior: a core the run's
// packet work saturated, or a host with no core to spare, is a ceiling.
type cpuLayer struct {
	cpus      map[int]*cpuUse
	accounted bool // every sample accounted hard-IRQ time
	sorted    []*cpuUse
}

func newCPULayer() *cpuLayer { return &cpuLayer{cpus: map[int]*cpuUse{}, accounted: true} }

// cpuUse is one CPU's load: sums of percent × seconds until means.
type cpuUse struct {
	cpu                                      int
	busy, packet, steal, user, system, irq   float64
	softirq, netRX, netTX, nicIRQs, softnetP float64
	secs                                     float64
	irqKnown                                 bool
	// mhz is the mean clock over the samples that read it (mhzSecs
	// long); maxMHz the CPU's maximum.
	mhz, mhzSecs, maxMHz float64
}

func (l *cpuLayer) add(x *irq.Sample, dt float64) {
	l.accounted = l.accounted && x.IRQTimeAccounted
	for i := range x.CPUs {
		c := &x.CPUs[i]
		u := l.use(c.CPU)
		u.secs += dt
		u.busy += pctOf(c.BusyPct) * dt
		packet := pctOf(c.SoftIRQPct)
		if c.IRQPct != nil {
			packet = math.Min(packet+pctOf(*c.IRQPct), 100)
			u.irq += pctOf(*c.IRQPct) * dt
		} else {
			u.irqKnown = false
		}
		u.packet += packet * dt
		u.steal += pctOf(c.StealPct) * dt
		u.user += pctOf(c.UserPct) * dt
		u.system += pctOf(c.SystemPct) * dt
		u.softirq += pctOf(c.SoftIRQPct) * dt
		if c.MHz != nil && *c.MHz > 0 && *c.MHz < 1e6 {
			u.mhz += *c.MHz * dt
			u.mhzSecs += dt
			if c.MaxMHz != nil && *c.MaxMHz > 0 && *c.MaxMHz < 1e6 {
				u.maxMHz = *c.MaxMHz
			}
		}
		u.netRX += rate(c.NetRXPerS) * dt
		u.netTX += rate(c.NetTXPerS) * dt
		u.nicIRQs += rate(c.NICIRQsPerS) * dt
		u.softnetP += rate(c.SoftnetProcessedPerS) * dt
	}
}

func (l *cpuLayer) use(id int) *cpuUse {
	u := l.cpus[id]
	if u == nil {
		u = &cpuUse{cpu: id, irqKnown: true}
		l.cpus[id] = u
	}
	return u
}

func (l *cpuLayer) merge(o layer) {
	ol := o.(*cpuLayer)
	l.accounted = l.accounted && ol.accounted
	for id, v := range ol.cpus {
		u := l.use(id)
		for _, p := range [...][2]*float64{{&u.busy, &v.busy}, {&u.packet, &v.packet}, {&u.steal, &v.steal},
			{&u.user, &v.user}, {&u.system, &v.system}, {&u.irq, &v.irq}, {&u.softirq, &v.softirq},
			{&u.netRX, &v.netRX}, {&u.netTX, &v.netTX}, {&u.nicIRQs, &v.nicIRQs}, {&u.softnetP, &v.softnetP},
			{&u.secs, &v.secs}, {&u.mhz, &v.mhz}, {&u.mhzSecs, &v.mhzSecs}} {
			*p[0] += *p[1]
		}
		u.irqKnown = u.irqKnown && v.irqKnown
		if v.maxMHz > 0 {
			u.maxMHz = v.maxMHz
		}
	}
}

// means turns the sums into means over each CPU's seconds, once, and
// lists the CPUs by id.
func (l *cpuLayer) means() {
	if l.sorted != nil {
		return
	}
	l.sorted = []*cpuUse{}
	for _, u := range l.cpus {
		if u.secs <= 0 {
			continue
		}
		for _, p := range []*float64{&u.busy, &u.packet, &u.steal, &u.user, &u.system, &u.softirq, &u.irq,
			&u.netRX, &u.netTX, &u.nicIRQs, &u.softnetP} {
			*p /= u.secs
		}
		if u.mhzSecs > 0 {
			u.mhz /= u.mhzSecs
		}
		l.sorted = append(l.sorted, u)
	}
	slices.SortFunc(l.sorted, func(a, b *cpuUse) int { return a.cpu - b.cpu })
}

// cpu returns the mean load of CPU id, or nil.
func (l *cpuLayer) cpu(id int) *cpuUse {
	if u := l.cpus[id]; u != nil && u.secs > 0 {
		return u
	}
	return nil
}

// offer adds the busiest packet core (a CPU whose own work for the run,
// irq+softirq and the command's threads, is at least ownCPUShare of its
// busy time, and the packet work the larger part), or, when every CPU was
// saturated, the host. Its share is its busy plus steal time. Every NIC
// that moved is covered: scaling the load scales the traffic.
func (l *cpuLayer) offer(j *judgement, v *Verdict) {
	names := j.traffic.names()
	var core *Ceiling
	for _, u := range l.sorted {
		if u.busy <= 0 || j.command.owns(u) {
			continue // judged as the command's
		}
		if u.packet+math.Min(j.command.on[u.cpu], u.busy) < ownCPUShare*u.busy {
			continue // busy with other work
		}
		share := math.Min(u.busy+u.steal, 100) / 100
		if core == nil || share > core.Share {
			cpu := u.cpu
			core = &Ceiling{Layer: BoundCore, Subject: cpuName(cpu), NICs: names, CPU: &cpu,
				What: fmt.Sprintf("%s (%.0f %% irq+softirq)", cpuName(cpu), u.packet), Share: share}
		}
	}
	if core == nil {
		core = l.saturated(j, names)
	}
	if core != nil {
		v.Ceilings = append(v.Ceilings, scaled(*core, j.traffic.maxDirMbps(names)))
	}
}

// scaled is c at the run's achieved got: what it would carry full.
func scaled(c Ceiling, got float64) Ceiling {
	c.AchievedMbps = got
	if c.Share > 0 {
		c.CeilingMbps = got / c.Share
	}
	return c
}

// saturated is the core ceiling of a host whose every CPU was at least
// boundShare busy, whatever with: the packet work had no core to go to.
// nil otherwise, and when the run's own CPU use, its packet work and its
// command's threads, was no real part of it (saturatedOwnPct): a
// rate-limited run on a host busy with other work was not bound by that
// work.
func (l *cpuLayer) saturated(j *judgement, names []string) *Ceiling {
	own := j.command.busy()
	for _, u := range l.sorted {
		own += u.packet
	}
	if own < saturatedOwnPct {
		return nil
	}
	var top *cpuUse
	for _, u := range l.sorted {
		if math.Min(u.busy+u.steal, 100) < boundShare*100 {
			return nil
		}
		if top == nil || u.busy+u.steal > top.busy+top.steal {
			top = u
		}
	}
	if top == nil {
		return nil
	}
	cpu := top.cpu
	return &Ceiling{Layer: BoundCore, Subject: cpuName(cpu), NICs: names, CPU: &cpu,
		What: fmt.Sprintf("%s, with every CPU at least %.0f %% busy (%.0f %% user, %.0f %% system, %.0f %% irq+softirq here): the host had no core to spare",
			cpuName(cpu), boundShare*100, top.user, top.system, top.packet),
		Share: math.Min(top.busy+top.steal, 100) / 100, saturated: true}
}

// busiest is the CPU with the most busy time.
func (l *cpuLayer) busiest() *CPULoad {
	var b *cpuUse
	for _, u := range l.sorted {
		if b == nil || u.busy > b.busy {
			b = u
		}
	}
	if b == nil {
		return nil
	}
	out := loadOf(b)
	return &out
}

// loadOf is u as a CPULoad.
func loadOf(b *cpuUse) CPULoad {
	out := CPULoad{CPU: b.cpu, BusyPct: b.busy, PacketPct: b.packet, SoftIRQPct: b.softirq, UserPct: b.user,
		SystemPct: b.system, StealPct: b.steal}
	if b.irqKnown {
		v := b.irq
		out.IRQPct = &v
	}
	if b.mhzSecs > 0 {
		mhz := b.mhz
		out.MHz = &mhz
		if b.maxMHz > 0 {
			m := b.maxMHz
			out.MaxMHz = &m
		}
	}
	return out
}

// slowClockShare: a CPU that bound the run below this share of its
// maximum clock was held back by frequency scaling.
const slowClockShare = 0.75

// findings reports the clock of the CPU that bound the run (core or
// command) when it ran below slowClockShare of its maximum.
func (l *cpuLayer) findings(_ *judgement, v *Verdict) []finding.Finding {
	limit := v.Limit
	if limit == nil || limit.CPU == nil || (limit.Layer != BoundCore && limit.Layer != BoundCommand) {
		return nil
	}
	u := l.cpu(*limit.CPU)
	if u == nil || u.mhzSecs <= 0 || u.maxMHz <= 0 || u.mhz >= slowClockShare*u.maxMHz {
		return nil
	}
	c := *limit.CPU
	return []finding.Finding{{Code: finding.RunCoreClockLow, Severity: finding.Warn, Subject: cpuName(c),
		Summary: fmt.Sprintf("%s, which bound this run, ran at %.0f MHz on average, %s of its %.0f MHz maximum: frequency scaling held it back",
			cpuName(c), u.mhz, pct(u.mhz/u.maxMHz), u.maxMHz),
		Fix:      fmt.Sprintf("cpupower -c %d frequency-set -g performance, or an energy_performance_preference of performance or balance_performance (cpu.powersave in nicdiag check says which applies)", c),
		Evidence: map[string]string{"cpu": fmt.Sprint(c), "mhz": fmt.Sprintf("%.0f", u.mhz), "max_mhz": fmt.Sprintf("%.0f", u.maxMHz)}}}
}

func cpuName(c int) string { return fmt.Sprintf("CPU %d", c) }
