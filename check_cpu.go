package nicdiag

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// cpuCheck judges the CPUs that take a NIC's queue interrupts (Host.CPUs):
//
//   - irq.smt_siblings: two or more of the NIC's data queues pinned to
//     hyperthreads of one physical core, so that packet work has fewer
//     cores than it has CPUs. Warn when each of those queues could have a
//     core of its own (no more queue CPUs than physical cores in the pool:
//     the NIC's NUMA node, or the host) on a link of 10 Gb/s or more;
//     info on a slower link, or when the queues outnumber the cores and
//     only fewer queues help.
//   - cpu.powersave: frequency scaling that holds those CPUs slow. Warn
//     for the generic powersave governor (any driver but the active-mode
//     intel_pstate and amd-pstate-epp), which pins the clock at
//     scaling_min_freq; info for an energy-performance preference of
//     "power" or "balance_power" under an active-mode driver, which ramps
//     up late. Powersave under active-mode intel_pstate or amd-pstate-epp
//     is their default and, with any other preference, not slow: nothing.
//
// Without the CPUs' topology or cpufreq files (a VM, an old snapshot)
// there is no answer and no finding.
var cpuCheck = Checker{
	Name:  "cpu",
	Codes: []finding.Code{finding.IRQSMTSiblings, finding.CPUPowersave},
	Run:   func(h *Host) []finding.Finding { return perNIC(h, h.smtSiblings, h.powersave) },
}

// smtMinMbps is the link speed from which hyperthreads sharing a core can
// bound the NIC: below it one core keeps up with line rate.
const smtMinMbps = 10000

// queueCPUs are the CPUs the NIC's data queue IRQs land on (each queue's
// effective CPU, or its allowed list where no effective one was read),
// with the IRQs of each.
func queueCPUs(n *NIC, pinnedOnly bool) ([]int, map[int][]int) {
	irqs := map[int][]int{}
	var cpus []int
	for _, q := range n.Queues.DataQueues() {
		if pinnedOnly && len(q.CPUs) != 1 {
			continue
		}
		for _, c := range q.CPUs {
			if _, ok := irqs[c]; !ok {
				cpus = append(cpus, c)
			}
			irqs[c] = append(irqs[c], q.IRQ)
		}
	}
	slices.Sort(cpus)
	return cpus, irqs
}

// cpuPool is the CPUs the NIC's queues may use: its NUMA node's local CPUs
// when they are some but not all of the online ones, else every online
// CPU.
func (h *Host) cpuPool(n *NIC) []int {
	var online []int
	for _, c := range h.CPUs.CPUs {
		online = append(online, c.ID)
	}
	local, err := irq.ParseCPUList(n.LocalCPUs)
	if err != nil {
		return online
	}
	var pool []int
	for _, c := range local {
		if h.CPUs.Get(c) != nil {
			pool = append(pool, c)
		}
	}
	if len(pool) == 0 || len(pool) == len(online) {
		return online
	}
	return pool
}

func (h *Host) smtSiblings(n *NIC) (finding.Finding, bool) {
	if !n.Netdev() || n.Queues == nil || !h.CPUs.SMTKnown() {
		return finding.Finding{}, false
	}
	cpus, irqs := queueCPUs(n, true)
	if len(cpus) < 2 {
		return finding.Finding{}, false
	}
	byCore := map[int][]int{}
	var cores []int
	for _, c := range cpus {
		cpu := h.CPUs.Get(c)
		if cpu == nil {
			return finding.Finding{}, false // an IRQ on a CPU not online: stale, no answer
		}
		k := cpu.Core()
		if _, ok := byCore[k]; !ok {
			cores = append(cores, k)
		}
		byCore[k] = append(byCore[k], c)
	}
	if len(cores) == len(cpus) {
		return finding.Finding{}, false
	}
	slices.Sort(cores)
	var shared []string
	for _, k := range cores {
		if cs := byCore[k]; len(cs) > 1 {
			var parts []string
			for _, c := range cs {
				parts = append(parts, fmt.Sprintf("CPU %d (IRQ %s)", c, joinInts(irqs[c])))
			}
			shared = append(shared, strings.Join(parts, " + "))
		}
	}
	pool := h.cpuPool(n)
	avail := h.CPUs.Cores(pool)
	first := firstThreads(h.CPUs, pool)
	where := "the host"
	if len(pool) < len(h.CPUs.CPUs) {
		where = fmt.Sprintf("NUMA node %d", n.NUMANode)
	}
	sev := finding.Info
	var fix string
	if len(cpus) <= avail {
		if n.Link.SpeedMbps >= smtMinMbps {
			sev = finding.Warn
		}
		fix = fmt.Sprintf("Give each queue IRQ a core of its own: spread them over one thread per core of %s (CPUs %s) with echo CPU > /proc/irq/N/smp_affinity_list (with irqbalance stopped, or these IRQs banned from it, so that it does not move them back).",
			where, irq.FormatCPUList(first))
	} else {
		fix = fmt.Sprintf("%s has %d queue CPUs but %s has %d physical cores: use as many queues as cores (%s) and one thread per core (CPUs %s, /proc/irq/N/smp_affinity_list).",
			n.Name, len(cpus), where, avail, queueCountCmd(n, avail), irq.FormatCPUList(first))
	}
	return finding.Finding{
		Code:     finding.IRQSMTSiblings,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s's data queue interrupts land on %d CPUs that are hyperthreads of only %d physical cores: siblings share one core's execution units, so packet work has %d cores, not %d",
			n.Name, len(cpus), len(cores), len(cores), len(cpus)),
		Fix: fix,
		Evidence: map[string]string{
			"queue_cpus":      irq.FormatCPUList(cpus),
			"queue_cpu_count": strconv.Itoa(len(cpus)),
			"queue_cores":     strconv.Itoa(len(cores)),
			"shared_cores":    strings.Join(shared, "; "),
			"pool_cpus":       irq.FormatCPUList(pool),
			"pool_cores":      strconv.Itoa(avail),
			"speed_mbps":      strconv.Itoa(n.Link.SpeedMbps),
		},
	}, true
}

// firstThreads is the lowest thread of each physical core among cpus.
func firstThreads(x *irq.CPUs, cpus []int) []int {
	seen := map[int]bool{}
	var out []int
	for _, c := range cpus {
		if cpu := x.Get(c); cpu != nil && !seen[cpu.Core()] {
			seen[cpu.Core()] = true
			out = append(out, c)
		}
	}
	return out
}

// queueCountCmd is the ethtool -L command that sets n's queue count to k:
// combined channels for combined vectors, rx and tx otherwise.
func queueCountCmd(n *NIC, k int) string {
	for _, q := range n.Queues.DataQueues() {
		if q.Kind == irq.KindTxRx {
			return fmt.Sprintf("ethtool -L %s combined %d", n.Name, k)
		}
	}
	return fmt.Sprintf("ethtool -L %s rx %d tx %d", n.Name, k, k)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// activeScaling reports whether a cpufreq driver chooses P-states itself
// (intel_pstate in active mode, amd-pstate in active mode): its
// "powersave" is a policy guided by the energy-performance preference,
// not the generic governor that pins the minimum frequency.
func activeScaling(driver string) bool {
	return driver == "intel_pstate" || driver == "amd-pstate-epp"
}

// slowClock says how CPU c's frequency scaling holds it slow: warn for the
// generic powersave governor, info for a power-leaning EPP under an
// active-mode driver, -1 when it does not.
func slowClock(c *irq.CPU) finding.Severity {
	switch {
	case c.Governor == "powersave" && c.Driver != "" && !activeScaling(c.Driver):
		return finding.Warn
	case activeScaling(c.Driver) && (c.EPP == "power" || c.EPP == "balance_power"):
		return finding.Info
	}
	return -1
}

func (h *Host) powersave(n *NIC) (finding.Finding, bool) {
	if !n.Netdev() || n.Queues == nil || h.CPUs == nil {
		return finding.Finding{}, false
	}
	cpus, _ := queueCPUs(n, false)
	sev := finding.Severity(-1)
	type setting struct{ driver, governor, epp string }
	groups := map[setting][]int{}
	var order []setting
	var slow, pinned []int // every slow CPU; those with the warn-level governor
	var minKHz, maxKHz int64
	for _, id := range cpus {
		c := h.CPUs.Get(id)
		if c == nil {
			continue
		}
		s := slowClock(c)
		if s < 0 {
			continue
		}
		sev = max(sev, s)
		slow = append(slow, id)
		k := setting{c.Driver, c.Governor, c.EPP}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], id)
		if s == finding.Warn {
			pinned = append(pinned, id)
			if minKHz == 0 {
				minKHz, maxKHz = c.MinKHz, c.MaxKHz // the clock the governor holds
			}
		}
	}
	if sev < 0 {
		return finding.Finding{}, false
	}
	var settings []string
	for _, k := range order {
		s := k.driver + "/" + k.governor
		if k.epp != "" {
			s += " epp " + k.epp
		}
		settings = append(settings, fmt.Sprintf("%s on CPU %s", s, irq.FormatCPUList(groups[k])))
	}
	list := irq.FormatCPUList(slow)
	ev := map[string]string{
		"queue_cpus": irq.FormatCPUList(cpus),
		"slow_cpus":  list,
		"settings":   strings.Join(settings, "; "),
	}
	if minKHz > 0 {
		ev["scaling_min_khz"] = strconv.FormatInt(minKHz, 10)
	}
	if maxKHz > 0 {
		ev["scaling_max_khz"] = strconv.FormatInt(maxKHz, 10)
	}
	summary, fix := powersaveText(n.Name, len(cpus), sev, slow, pinned, minKHz, maxKHz)
	return finding.Finding{
		Code:     finding.CPUPowersave,
		Severity: sev,
		Subject:  n.Name,
		Summary:  summary,
		Fix:      fix,
		Evidence: ev,
	}, true
}

// powersaveText is cpu.powersave's summary and fix for the slow CPUs among
// the queueCPUs that take name's queue interrupts: pinned are those under
// the powersave governor (sev Warn), held at minKHz of maxKHz.
func powersaveText(name string, queueCPUs int, sev finding.Severity, slow, pinned []int, minKHz, maxKHz int64) (summary, fix string) {
	if sev == finding.Warn {
		clock := ""
		if minKHz > 0 && maxKHz > 0 {
			clock = fmt.Sprintf(" (%d of %d MHz)", minKHz/1000, maxKHz/1000)
		}
		summary = fmt.Sprintf("%d of the %d CPUs that take %s's queue interrupts run the powersave governor, which holds them at their lowest frequency%s whatever the load: every packet on them is handled at that clock",
			len(pinned), queueCPUs, name, clock)
		fix = fmt.Sprintf("Let them clock up: cpupower -c %s frequency-set -g performance (or -g schedutil), or tuned-adm profile network-throughput.", irq.FormatCPUList(pinned))
	} else {
		summary = fmt.Sprintf("%d of the %d CPUs that take %s's queue interrupts have an energy-performance preference that favours power: the clock ramps up late under a packet burst, which costs latency more than sustained throughput",
			len(slow), queueCPUs, name)
		fix = fmt.Sprintf("echo balance_performance | tee /sys/devices/system/cpu/cpu%s/cpufreq/energy_performance_preference (performance for the lowest latency), or tuned-adm profile network-latency.",
			cpuGlob(slow))
	}
	return summary, fix
}
