package monitor

import (
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// TestPlacementFindings: the command's busiest thread on a CPU that takes
// the NIC's interrupts, or off the NIC's NUMA node, is named; a thread that
// barely ran, or one on a local CPU without IRQs, is not.
func TestPlacementFindings(t *testing.T) {
	pps := ppsFor(400, 1518)
	nics := []irq.NICRate{nicAt("eth0", pps, 1514, pps/20, 62)}
	withIRQs := func(cpus []irq.CPURate, cpu int, perS float64) []irq.CPURate {
		for i := range cpus {
			if cpus[i].CPU == cpu {
				cpus[i].NICIRQsPerS = perS
			}
		}
		return cpus
	}
	thread := func(busy float64, cpu int) []irq.ThreadRate {
		return []irq.ThreadRate{{PID: 7, TID: 7, Comm: "iperf3", SystemPct: busy, CPU: cpu}}
	}
	numa := []Limits{{NIC: "eth0", PortMbps: 10000, NUMANode: 1, LocalCPUs: "4-7"}}

	// On the IRQ CPU, at 60 % of a CPU: info; the run is outside the host.
	cpus := withIRQs(append(idleCPUs(0, 1, 3, 4, 5, 6, 7), cpuAt(2, 0, 10, 0, 60)), 2, 9000)
	v := Judge(runOf{cpus: cpus, nics: nics, threads: thread(60, 2)}.samples(4), nil)
	f := oneFinding(t, v, finding.RunCommandOnIRQCPU)
	if f.Severity != finding.Info || f.Subject != "CPU 2" || f.Evidence["cpu_nic_irqs_per_s"] != "9000" {
		t.Errorf("finding %+v", f)
	}
	if len(findingsOf(v, finding.RunCommandRemoteNode)) != 0 {
		t.Error("remote node without NUMA limits")
	}
	// Saturating that CPU, the run is the command's: warn.
	cpus = withIRQs(append(idleCPUs(0, 1, 3), cpuAt(2, 0, 30, 0, 70)), 2, 9000)
	v = Judge(runOf{cpus: cpus, nics: nics, threads: thread(70, 2)}.samples(4), nil)
	wantBound(t, v, BoundCommand)
	if f := oneFinding(t, v, finding.RunCommandOnIRQCPU); f.Severity != finding.Warn {
		t.Errorf("severity %s, want warn on a command-bound run", f.Severity)
	}
	// A thread at 10 % costs nothing where it sits.
	cpus = withIRQs(append(idleCPUs(0, 1, 3), cpuAt(2, 0, 10, 0, 10)), 2, 9000)
	v = Judge(runOf{cpus: cpus, nics: nics, threads: thread(10, 2)}.samples(4), numa)
	if n := len(findingsOf(v, finding.RunCommandOnIRQCPU)) + len(findingsOf(v, finding.RunCommandRemoteNode)); n != 0 {
		t.Errorf("%d placement findings for a 10 %% thread", n)
	}
	// Off the NIC's node (CPUs 4-7), no IRQs there: remote node only.
	cpus = withIRQs(append(idleCPUs(0, 1, 3, 4, 5, 6, 7), cpuAt(2, 0, 0, 0, 50)), 5, 9000)
	v = Judge(runOf{cpus: cpus, nics: nics, threads: thread(50, 2)}.samples(4), numa)
	f = oneFinding(t, v, finding.RunCommandRemoteNode)
	if f.Subject != "eth0" || f.Evidence["numa_node"] != "1" || f.Evidence["cpu"] != "2" {
		t.Errorf("finding %+v", f)
	}
	if len(findingsOf(v, finding.RunCommandOnIRQCPU)) != 0 {
		t.Error("IRQ CPU finding for a CPU without NIC interrupts")
	}
	// On the node, no finding.
	v = Judge(runOf{cpus: cpus, nics: nics, threads: thread(50, 6)}.samples(4), numa)
	if len(findingsOf(v, finding.RunCommandRemoteNode)) != 0 {
		t.Error("remote node for a thread on CPU 6, inside 4-7")
	}
}
