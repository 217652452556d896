package monitor

import (
	"strings"
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

// TestCoreClockLow: the core that bound the run at 1200 of 3500 MHz is
// named as held back by frequency scaling; at 3000 MHz, or when it did not
// bind the run, nothing is said.
func TestCoreClockLow(t *testing.T) {
	pps := ppsFor(800, 670)
	nics := []irq.NICRate{nicAt("eth0", pps, 666, pps/4, 62)}
	at := func(mhz float64, packet float64) []irq.CPURate {
		hot := cpuAt(0, 60, packet, 0, 1)
		max := 3500.0
		hot.MHz, hot.MaxMHz = &mhz, &max
		return []irq.CPURate{hot, cpuAt(1, 0, 0, 10, 5)}
	}
	v := Judge(runOf{cpus: at(1200, 39), nics: nics}.samples(4), nil)
	wantBound(t, v, BoundCore)
	f := oneFinding(t, v, finding.RunCoreClockLow)
	if f.Severity != finding.Warn || f.Evidence["mhz"] != "1200" || f.Evidence["max_mhz"] != "3500" || !strings.Contains(f.Summary, "34 % of its 3500 MHz maximum") {
		t.Errorf("finding %+v", f)
	}
	if b := v.BusiestCPU; b == nil || b.MHz == nil || *b.MHz != 1200 {
		t.Errorf("busiest CPU %+v: want its clock", b)
	}
	if v := Judge(runOf{cpus: at(3000, 39), nics: nics}.samples(4), nil); len(findingsOf(v, finding.RunCoreClockLow)) != 0 {
		t.Error("a finding at 3000 of 3500 MHz")
	}
	if v := Judge(runOf{cpus: at(1200, 5), nics: nics}.samples(4), nil); v.Bound == BoundCore || len(findingsOf(v, finding.RunCoreClockLow)) != 0 {
		t.Errorf("bound %s: a slow clock on a CPU that did not bind the run is not this finding", v.Bound)
	}
}
