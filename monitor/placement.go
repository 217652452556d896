package monitor

import (
	"fmt"
	"slices"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

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

// placementFindings says where the command's busiest thread ran: on a CPU
// that takes the sampled NICs' interrupts (the two compete for it), or off
// the NUMA node of the NIC it drives (every packet crosses the
// interconnect). Info, warn when the run was bound by that thread or that
// core.
func placementFindings(w *window, limits []Limits, bound Bound) []finding.Finding {
	var t *threadUse
	for _, x := range w.threads {
		if t == nil || x.busy() > t.busy() {
			t = x
		}
	}
	if t == nil || t.busy() < placementThreadPct || t.cpu() < 0 {
		return nil
	}
	c := t.cpu()
	sev := finding.Info
	if bound == BoundCommand || bound == BoundCore {
		sev = finding.Warn
	}
	who := fmt.Sprintf("the command's thread %d (%s), %.0f %% of a CPU,", t.tid, t.comm, t.busy())
	var out []finding.Finding
	total := 0.0
	for _, u := range w.cpus {
		total += u.nicIRQs
	}
	if u := w.cpu(c); u != nil && total > 0 && u.nicIRQs >= irqCPUMinPerS && u.nicIRQs >= irqCPUShare*total {
		out = append(out, finding.Finding{Code: finding.RunCommandOnIRQCPU, Severity: sev, Subject: cpuName(c),
			Summary: fmt.Sprintf("%s ran on %s, which took %.0f %% of the NICs' interrupts (%s/s): the load generator and the packet work compete for one core",
				who, cpuName(c), u.nicIRQs/total*100, num(u.nicIRQs)),
			Fix: fmt.Sprintf("Run the load generator on CPUs that take no NIC interrupts (taskset -c LIST CMD; iperf3 -A N), or move the IRQs (/proc/irq/N/smp_affinity_list) off %s.", cpuName(c)),
			Evidence: map[string]string{"tid": fmt.Sprint(t.tid), "cpu": fmt.Sprint(c), "thread_busy_pct": fmt.Sprintf("%.1f", t.busy()),
				"cpu_nic_irqs_per_s": fmt.Sprintf("%.0f", u.nicIRQs), "nic_irqs_per_s": fmt.Sprintf("%.0f", total)}})
	}
	for _, l := range limits {
		if l.LocalCPUs == "" || w.nic(l.NIC) == nil {
			continue
		}
		local, err := irq.ParseCPUList(l.LocalCPUs)
		if err != nil || len(local) == 0 || slices.Contains(local, c) {
			continue
		}
		out = append(out, finding.Finding{Code: finding.RunCommandRemoteNode, Severity: sev, Subject: l.NIC,
			Summary: fmt.Sprintf("%s ran on %s, off %s's NUMA node %d (CPUs %s): its packets cross the interconnect both ways",
				who, cpuName(c), l.NIC, l.NUMANode, l.LocalCPUs),
			Fix:      fmt.Sprintf("Run it on the NIC's node: numactl --cpunodebind=%d --membind=%d CMD (or taskset -c %s CMD).", l.NUMANode, l.NUMANode, l.LocalCPUs),
			Evidence: map[string]string{"tid": fmt.Sprint(t.tid), "cpu": fmt.Sprint(c), "numa_node": fmt.Sprint(l.NUMANode), "local_cpus": l.LocalCPUs}})
		break
	}
	return out
}
