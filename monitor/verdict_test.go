package monitor

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// The verdict tests build runs by hand: CPUs by their time split, NICs by
// packets per second and bytes per packet as a Linux driver counts them
// (no FCS: a 1518-byte frame is 1514 bytes), and the Limits of the NICs.

const (
	fullFrame = 1518.0          // a full-size frame, FCS included
	fullBytes = fullFrame - 4.0 // as the driver counts it
	rootPort  = "0000:00:1c.0"
)

// cpuAt is a CPU whose busy time is irq+softirq+user+system.
func cpuAt(id int, irqPct, softirq, user, system float64) irq.CPURate {
	i := irqPct
	busy := irqPct + softirq + user + system
	return irq.CPURate{CPU: id, IRQPct: &i, SoftIRQPct: softirq, UserPct: user, SystemPct: system,
		BusyPct: busy, IdlePct: math.Max(0, 100-busy)}
}

// idleCPUs are CPUs at 2 % system time and no packet work.
func idleCPUs(ids ...int) []irq.CPURate {
	var out []irq.CPURate
	for _, id := range ids {
		out = append(out, cpuAt(id, 0, 0, 0, 2))
	}
	return out
}

// nicAt is a NIC's counters: packets per second and bytes per packet.
func nicAt(name string, rxPPS, rxBytes, txPPS, txBytes float64, losses ...irq.LossRate) irq.NICRate {
	return irq.NICRate{Name: name, RXPacketsPerS: rxPPS, RXBytesPerS: rxPPS * rxBytes,
		TXPacketsPerS: txPPS, TXBytesPerS: txPPS * txBytes, Losses: losses}
}

// ppsFor is the frames per second that carry mbps of frame bits at frame
// bytes (FCS included) a frame.
func ppsFor(mbps, frame float64) float64 { return mbps * 1e6 / (frame * 8) }

// runOf is a run of identical one-second samples.
type runOf struct {
	cpus    []irq.CPURate
	nics    []irq.NICRate
	threads []irq.ThreadRate
	pcie    []irq.PCIeState
}

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func (r runOf) samples(n int) []irq.Sample {
	var out []irq.Sample
	for i := range n {
		out = append(out, irq.Sample{Time: t0.Add(time.Duration(i+1) * time.Second), IntervalS: 1, IRQTimeAccounted: true,
			CPUs: r.cpus, NICs: r.nics, Threads: r.threads, PCIe: r.pcie})
	}
	return out
}

// concat renumbers the samples' times one second apart.
func concat(parts ...[]irq.Sample) []irq.Sample {
	var out []irq.Sample
	for _, p := range parts {
		out = append(out, p...)
	}
	for i := range out {
		out[i].Time = t0.Add(time.Duration(i+1) * time.Second)
	}
	return out
}

func prof82576() *budget.Profile {
	p, _ := budget.ProfileFor("igb", 0x8086, 0x10c9)
	return &p
}

// pcieLimits is a 1 GbE 82576 port behind a hop at addr.
func pcieLimits(nic, fn, addr string, gts float64, width, shared int) Limits {
	return Limits{NIC: nic, Address: fn, PortMbps: 1000, Profile: prof82576(), Path: []string{fn, addr},
		Links: []budget.LinkParams{{Addr: addr, GTs: gts, Width: width, MaxGTs: gts, MaxWidth: width, MPS: 128, MRRS: 512, RCB: 64, Shared: shared}}}
}

// pairLimits are the two ports of one 82576 card on a 2.5 GT/s x1 link, as
// in field report 001.
func pairLimits() []Limits {
	return []Limits{pcieLimits("enp1s0f0", "0000:01:00.0", rootPort, 2.5, 1, 2), pcieLimits("enp1s0f1", "0000:01:00.1", rootPort, 2.5, 1, 2)}
}

// pairNICs are both ports forwarding full-size frames both ways, scale
// times field report 001's 56,740 frames/s per port and direction.
func pairNICs(scale float64, losses ...irq.LossRate) []irq.NICRate {
	pps := 56_740 * scale
	return []irq.NICRate{nicAt("enp1s0f0", pps, fullBytes, pps, fullBytes, losses...), nicAt("enp1s0f1", pps, fullBytes, pps, fullBytes)}
}

// pairCPUs: field report 001's reconstructed load, the busiest core 31 %.
func pairCPUs() []irq.CPURate {
	return []irq.CPURate{cpuAt(0, 4, 25, 0, 2), cpuAt(1, 3, 22, 0, 2), cpuAt(2, 0, 0, 0, 3), cpuAt(3, 0, 0, 0, 2)}
}

// ceilingOf returns the first ceiling of layer (nearest first), or nil.
func ceilingOf(v Verdict, layer Bound) *Ceiling {
	for i := range v.Ceilings {
		if v.Ceilings[i].Layer == layer {
			return &v.Ceilings[i]
		}
	}
	return nil
}

func ceilingsOf(v Verdict, layer Bound) []Ceiling {
	var out []Ceiling
	for _, c := range v.Ceilings {
		if c.Layer == layer {
			out = append(out, c)
		}
	}
	return out
}

// findingsOf returns the verdict's findings of code.
func findingsOf(v Verdict, code finding.Code) []finding.Finding {
	var out []finding.Finding
	for _, f := range v.Findings {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

// oneFinding fails unless v has exactly one finding of code, and returns it.
func oneFinding(t *testing.T, v Verdict, code finding.Code) finding.Finding {
	t.Helper()
	fs := findingsOf(v, code)
	if len(fs) != 1 {
		t.Fatalf("%d %s findings, want 1: %v", len(fs), code, v.Findings)
	}
	return fs[0]
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// wantBound fails unless v's bound is want; it logs the ceilings.
func wantBound(t *testing.T, v Verdict, want Bound) {
	t.Helper()
	if v.Bound != want {
		t.Fatalf("bound %s, want %s: %s\nceilings %+v", v.Bound, want, v.Summary, v.Ceilings)
	}
	if verdictFindingOf(v) == nil && want != BoundUnknown {
		t.Fatalf("no verdict finding for %s among %v", want, v.Findings)
	}
}

// verdictFindingOf returns the finding of the verdict's own code.
func verdictFindingOf(v Verdict) *finding.Finding {
	code := verdictCodes[v.Bound].code
	if v.Cause != nil {
		code = causeCode(v.Cause)
	}
	for i := range v.Findings {
		if v.Findings[i].Code == code {
			return &v.Findings[i]
		}
	}
	return nil
}

// scaleFor returns the factor that puts the layer's ceiling at share,
// from a verdict at scale 1: the ceilings scale with the traffic at the
// same mix.
func scaleFor(t *testing.T, v Verdict, layer Bound, share float64) float64 {
	t.Helper()
	c := ceilingOf(v, layer)
	if c == nil || !(c.Share > 0) {
		t.Fatalf("no %s ceiling to scale: %+v", layer, v.Ceilings)
	}
	return share / c.Share
}

// TestJudgeDoesNotCryWolf: a run well short of every ceiling, with idle
// cores, is judged outside the host, whatever its absolute number.
func TestJudgeDoesNotCryWolf(t *testing.T) {
	base := judgeRoom(runOf{cpus: idleCPUs(0, 1, 2, 3), nics: pairNICs(1)}.samples(10), pairLimits())
	wantBound(t, base, BoundPCIe)
	scale := scaleFor(t, base, BoundPCIe, 0.60)
	v := judgeRoom(runOf{cpus: idleCPUs(0, 1, 2, 3), nics: pairNICs(scale)}.samples(10), pairLimits())
	wantBound(t, v, BoundOutside)
	if v.Limit != nil {
		t.Errorf("an outside_host verdict with a Limit: %+v", v.Limit)
	}
	if v.Next == nil || v.Next.Layer != BoundPCIe || !near(v.Next.Share, 0.60, 1e-9) {
		t.Errorf("next %+v, want the pcie hop at 60 %%", v.Next)
	}
	if v.Share == nil || !near(*v.Share, 0.60, 1e-9) || v.CeilingMbps == nil || !near(*v.CeilingMbps, *base.CeilingMbps, 1e-6) {
		t.Errorf("share %v ceiling %v, want 0.60 of %v", v.Share, v.CeilingMbps, *base.CeilingMbps)
	}
	f := oneFinding(t, v, finding.RunOutsideHost)
	if f.Severity != finding.Info {
		t.Errorf("outside_host severity %s, want info", f.Severity)
	}
	if len(findingsOf(v, finding.RunPCIeBound)) != 0 {
		t.Errorf("a pcie finding at 60 %%: %v", v.Findings)
	}
	for _, s := range []string{"nothing in this host was near its limit", "the 2.5 GT/s x1 link at 0000:00:1c.0, at 60 %", "the peer, the network between"} {
		if !strings.Contains(v.Summary, s) {
			t.Errorf("summary lacks %q:\n%s", s, v.Summary)
		}
	}

	// A fast link at 60 % is as far from its limit as a slow one.
	fast := Limits{NIC: "eth0", PortMbps: 100_000}
	pps := ppsFor(0.60*100_000*fullFrame/(fullFrame+20), fullFrame)
	v = judgeRoom(runOf{cpus: idleCPUs(0, 1), nics: []irq.NICRate{nicAt("eth0", pps, fullBytes, 0, 0)}}.samples(5), []Limits{fast})
	wantBound(t, v, BoundOutside)
	if v.Next == nil || v.Next.Layer != BoundEthernet || !near(v.Next.Share, 0.60, 1e-9) {
		t.Errorf("100 GbE at 60 %%: next %+v", v.Next)
	}
}

// TestJudgeRunThatEnded: a run judged over its span, from the first to
// the last sample that moved traffic: the idle samples before and after
// are left out, and of the first and the last sample the part the load
// filled (here a load generator that started half-way through one sample
// and ended 0.3 s into another). Its rates, and the CPU load of the
// samples between, are those of the load alone.
func TestJudgeRunThatEnded(t *testing.T) {
	busy := runOf{cpus: pairCPUs(), nics: pairNICs(1)}
	idle := runOf{cpus: idleCPUs(0, 1, 2, 3), nics: pairNICs(0)}
	only := judgeRoom(busy.samples(8), pairLimits())
	wantBound(t, only, BoundPCIe)
	edge := func(fill float64) []irq.Sample {
		return runOf{cpus: idleCPUs(0, 1, 2, 3), nics: pairNICs(fill)}.samples(1)
	}

	v := judgeRoom(concat(idle.samples(3), edge(0.5), busy.samples(8), edge(0.3), idle.samples(6)), pairLimits())
	wantBound(t, v, BoundPCIe)
	if v.Samples != 19 || v.ActiveSamples != 10 || !near(v.ActiveSeconds, 8.8, 1e-9) {
		t.Errorf("samples %d active %d (%v s), want 19, 10 (8.8 s)", v.Samples, v.ActiveSamples, v.ActiveSeconds)
	}
	if !near(v.AchievedMbps, only.AchievedMbps, 1e-9) || !near(*v.Share, *only.Share, 1e-12) {
		t.Errorf("achieved %v at %v, want the load's %v at %v", v.AchievedMbps, *v.Share, only.AchievedMbps, *only.Share)
	}
	if !near(v.AchievedMbps, 2*56_740*fullFrame*8/1e6, 1e-6) || !near(v.PeakMbps, v.AchievedMbps, 1e-6) {
		t.Errorf("achieved %v Mb/s, peak %v; want both ports' 56,740 frames/s of 1518 bytes", v.AchievedMbps, v.PeakMbps)
	}
	if v.BusiestCPU == nil || v.BusiestCPU.CPU != 0 || !near(v.BusiestCPU.BusyPct, 31, 1e-9) {
		t.Errorf("busiest %+v, want CPU 0 at 31 %% (the load's samples)", v.BusiestCPU)
	}
	for _, tr := range v.Traffic {
		if !near(tr.FramesPerS, 56_740, 1e-6) {
			t.Errorf("%s %s at %v frames/s, want 56,740", tr.NIC, tr.Direction, tr.FramesPerS)
		}
	}
	if !strings.Contains(oneFinding(t, v, finding.RunPCIeBound).Evidence["active_samples"], "10 of 19 (8.8 s)") {
		t.Errorf("evidence %v", v.Findings)
	}
	// Diluted over every sample, the run would have read as 46 % of the
	// hop: outside_host.
	if all := v.AchievedMbps * 8.8 / 19; all/(*v.CeilingMbps) > 0.5 {
		t.Fatalf("the test does not dilute: %v", all)
	}
}

// TestJudgeSpan: what belongs to the run's span. A lull inside the run
// counts (the load generator's report counts it too); what trails off
// under a tenth of the busiest sample after the last traffic does not; a
// sample ten times busier than anything before begins the span anew
// (background traffic before the load).
func TestJudgeSpan(t *testing.T) {
	at := func(scale float64, n int) []irq.Sample {
		return runOf{cpus: pairCPUs(), nics: pairNICs(scale)}.samples(n)
	}
	for _, c := range []struct {
		name        string
		samples     []irq.Sample
		active      int
		busySeconds float64 // the load's bytes, in seconds at full rate
		spanSeconds float64
	}{
		{"a lull inside", concat(at(1, 3), at(0, 2), at(1, 3)), 8, 6, 8},
		{"a trickle after", concat(at(1, 5), at(0.05, 4)), 5, 5, 5},
		{"background before", concat(at(0.05, 4), at(1, 5)), 5, 5, 5},
		{"uneven", concat(at(0.2, 2), at(1, 2), at(0.5, 3), at(0.9, 1)), 8, 0.4 + 2 + 1.5 + 0.9, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := judgeRoom(c.samples, pairLimits())
			want := 2 * 56_740 * fullFrame * 8 / 1e6 * c.busySeconds / c.spanSeconds
			if v.ActiveSamples != c.active || !near(v.ActiveSeconds, c.spanSeconds, 1e-9) || !near(v.AchievedMbps, want, 1e-6) {
				t.Errorf("%d samples over %v s at %v Mb/s; want %d over %v s at %v", v.ActiveSamples, v.ActiveSeconds, v.AchievedMbps,
					c.active, c.spanSeconds, want)
			}
		})
	}
}

// TestJudgeEthernetEdge: a port at 91 % of its line rate at the run's
// frame size bound the run; at 89 % it did not.
func TestJudgeEthernetEdge(t *testing.T) {
	for _, c := range []struct {
		name   string
		frame  float64
		share  float64
		want   Bound
		wantLn float64
	}{
		{"full frames 91%", fullFrame, 0.91, BoundEthernet, 1000 * fullFrame / (fullFrame + 20)},
		{"full frames 89%", fullFrame, 0.89, BoundOutside, 1000 * fullFrame / (fullFrame + 20)},
		{"64-byte frames 91%", 64, 0.91, BoundEthernet, 1000 * 64.0 / 84},
		{"64-byte frames 89%", 64, 0.89, BoundOutside, 1000 * 64.0 / 84},
	} {
		t.Run(c.name, func(t *testing.T) {
			pps := ppsFor(c.share*c.wantLn, c.frame)
			v := judgeRoom(runOf{cpus: idleCPUs(0, 1), nics: []irq.NICRate{nicAt("eth0", pps, c.frame-4, pps/20, 62)}}.samples(5), []Limits{{NIC: "eth0", PortMbps: 1000}})
			wantBound(t, v, c.want)
			e := ceilingOf(v, BoundEthernet)
			if e == nil || e.Direction != "rx" || !near(e.Share, c.share, 1e-9) || !near(e.CeilingMbps, c.wantLn, 1e-9) {
				t.Fatalf("ethernet ceiling %+v, want rx at %v of %v", e, c.share, c.wantLn)
			}
			if c.want == BoundEthernet {
				f := oneFinding(t, v, finding.RunEthernetBound)
				if f.Severity != finding.Info || f.Subject != "eth0" || f.Direction != "rx" || f.CapacityMbps == nil || !near(*f.CapacityMbps, c.wantLn, 1e-9) {
					t.Errorf("finding %+v", f)
				}
				if !strings.Contains(v.Summary, "the Ethernet link bound this run") {
					t.Errorf("summary %s", v.Summary)
				}
			} else if v.Limit != nil || v.Next == nil || v.Next.Layer != BoundEthernet {
				t.Errorf("limit %+v next %+v", v.Limit, v.Next)
			}
		})
	}
}

// TestJudgeCoreEdge: a CPU 91 % busy, all of it packet work, bound the
// run; at 89 % it did not.
func TestJudgeCoreEdge(t *testing.T) {
	pps := ppsFor(300, fullFrame)
	for _, c := range []struct {
		busy float64
		want Bound
	}{{91, BoundCore}, {89, BoundOutside}} {
		t.Run(fmt.Sprint(c.busy), func(t *testing.T) {
			cpus := append([]irq.CPURate{cpuAt(0, 9, c.busy-9, 0, 0)}, idleCPUs(1, 2, 3)...)
			v := judgeRoom(runOf{cpus: cpus, nics: []irq.NICRate{nicAt("eth0", pps, fullBytes, 0, 0)}}.samples(5), nil)
			wantBound(t, v, c.want)
			core := ceilingOf(v, BoundCore)
			if core == nil || core.CPU == nil || *core.CPU != 0 || !near(core.Share, c.busy/100, 1e-9) {
				t.Fatalf("core ceiling %+v, want CPU 0 at %v", core, c.busy/100)
			}
			if !near(core.CeilingMbps, 300/(c.busy/100), 1e-6) {
				t.Errorf("core ceiling %v Mb/s, want %v", core.CeilingMbps, 300/(c.busy/100))
			}
			if c.want == BoundCore {
				if v.Limit == nil || v.Limit.CPU == nil || *v.Limit.CPU != 0 {
					t.Errorf("limit %+v", v.Limit)
				}
				for _, s := range []string{"CPU 0 was 91 % busy, 91 % in irq+softirq,", "that core bound this run"} {
					if !strings.Contains(v.Summary, s) {
						t.Errorf("summary lacks %q: %s", s, v.Summary)
					}
				}
				if f := oneFinding(t, v, finding.RunCoreBound); f.Severity != finding.Warn || f.Subject != "CPU 0" {
					t.Errorf("finding %+v", f)
				}
			}
		})
	}
}

// TestJudgePhysicalFirst: a full link stops any core doing more, so a
// link at 99 % is named before a core at 100 %; at 97 % the core is.
func TestJudgePhysicalFirst(t *testing.T) {
	line := 1000 * fullFrame / (fullFrame + 20)
	cpus := append([]irq.CPURate{cpuAt(0, 20, 80, 0, 0)}, idleCPUs(1, 2, 3)...)
	for _, c := range []struct {
		eth        float64
		want, next Bound
	}{{0.99, BoundEthernet, BoundCore}, {0.981, BoundEthernet, BoundCore}, {0.97, BoundCore, BoundEthernet}} {
		t.Run(fmt.Sprint(c.eth), func(t *testing.T) {
			pps := ppsFor(c.eth*line, fullFrame)
			v := judgeRoom(runOf{cpus: cpus, nics: []irq.NICRate{nicAt("eth0", pps, fullBytes, 0, 0)}}.samples(5), []Limits{{NIC: "eth0", PortMbps: 1000}})
			wantBound(t, v, c.want)
			if v.Next == nil || v.Next.Layer != c.next {
				t.Errorf("next %+v, want %s", v.Next, c.next)
			}
			if e := ceilingOf(v, BoundEthernet); e == nil || !near(e.Share, c.eth, 1e-9) {
				t.Errorf("ethernet %+v", e)
			}
			if k := ceilingOf(v, BoundCore); k == nil || k.Share != 1 {
				t.Errorf("core %+v", k)
			}
		})
	}
}

// TestJudgeCommandOrCore: a saturated CPU is the command's when one of its
// threads has half of it or more, else a core's when packet work has half
// of it; other work is neither.
func TestJudgeCommandOrCore(t *testing.T) {
	pps := ppsFor(500, fullFrame)
	nics := []irq.NICRate{nicAt("eth0", pps, fullBytes, pps/20, 62)}
	judgeCommandThread(t, nics)
	judgePacketCore(t, nics)
	judgeUserWork(t, nics)
}

// judgeCommandThread: a CPU the command's thread has half of or more is
// the command's, packet work on it or not.
func judgeCommandThread(t *testing.T, nics []irq.NICRate) {
	t.Helper()
	t.Run("command thread owns the CPU", func(t *testing.T) {
		cpus := append(idleCPUs(0, 1), cpuAt(2, 0, 30, 60, 10), cpuAt(3, 0, 0, 0, 2))
		threads := []irq.ThreadRate{{PID: 900, TID: 901, Comm: "iperf3", UserPct: 55, SystemPct: 10, CPU: 2}}
		v := judgeRoom(runOf{cpus: cpus, nics: nics, threads: threads}.samples(5), nil)
		wantBound(t, v, BoundCommand)
		l := v.Limit
		if l.TID != 901 || l.CPU == nil || *l.CPU != 2 || l.Share != 1 || l.Subject != "901 (iperf3) on CPU 2" {
			t.Fatalf("limit %+v", l)
		}
		if !strings.Contains(v.Summary, "the command bound this run, not the network path") ||
			l.What != "the command's thread 901 (iperf3) on CPU 2" ||
			!strings.Contains(v.Summary, "used 65 % of a CPU (55 % user, 10 % system) with CPU 2 100 % busy") {
			t.Errorf("summary %s / %s", v.Summary, l.What)
		}
		if f := oneFinding(t, v, finding.RunCommandBound); f.Severity != finding.Warn || !strings.Contains(f.Fix, "more streams") {
			t.Errorf("finding %+v", f)
		}
	})
	t.Run("packet CPU the thread owns is the command's, not a core", func(t *testing.T) {
		// Half packet work and half the thread: owned by the thread.
		cpus := append(idleCPUs(0, 1), cpuAt(2, 5, 45, 45, 5))
		threads := []irq.ThreadRate{{PID: 900, TID: 901, Comm: "iperf3", UserPct: 45, SystemPct: 5, CPU: 2}}
		v := judgeRoom(runOf{cpus: cpus, nics: nics, threads: threads}.samples(5), nil)
		wantBound(t, v, BoundCommand)
		for _, c := range ceilingsOf(v, BoundCore) {
			if *c.CPU == 2 {
				t.Errorf("CPU 2 judged twice, also as a core: %+v", c)
			}
		}
	})
}

// judgePacketCore: a CPU packet work has half of is a core's, with the
// command's thread elsewhere or under half of it.
func judgePacketCore(t *testing.T, nics []irq.NICRate) {
	t.Helper()
	t.Run("packet core, thread elsewhere", func(t *testing.T) {
		cpus := append([]irq.CPURate{cpuAt(0, 40, 55, 0, 5)}, idleCPUs(1)...)
		cpus = append(cpus, cpuAt(2, 0, 0, 35, 5), cpuAt(3, 0, 0, 0, 2))
		threads := []irq.ThreadRate{{PID: 900, TID: 901, Comm: "iperf3", UserPct: 35, SystemPct: 5, CPU: 2}}
		v := judgeRoom(runOf{cpus: cpus, nics: nics, threads: threads}.samples(5), nil)
		wantBound(t, v, BoundCore)
		if v.Limit.CPU == nil || *v.Limit.CPU != 0 || v.Limit.TID != 0 || v.Limit.Share != 1 {
			t.Fatalf("limit %+v", v.Limit)
		}
		if v.Next == nil || v.Next.Layer != BoundCommand || v.Next.TID != 901 || !near(v.Next.Share, 0.40, 1e-9) {
			t.Errorf("next %+v, want the command's thread at 40 %%", v.Next)
		}
	})
	t.Run("a thread with under half of a packet core leaves it a core", func(t *testing.T) {
		cpus := append([]irq.CPURate{cpuAt(0, 30, 30, 40, 0)}, idleCPUs(1, 2, 3)...)
		threads := []irq.ThreadRate{{PID: 900, TID: 901, Comm: "iperf3", UserPct: 40, CPU: 0}}
		v := judgeRoom(runOf{cpus: cpus, nics: nics, threads: threads}.samples(5), nil)
		wantBound(t, v, BoundCore)
		if *v.Limit.CPU != 0 || v.Limit.Share != 1 {
			t.Fatalf("limit %+v", v.Limit)
		}
		if c := ceilingOf(v, BoundCommand); c == nil || c.TID != 901 || !near(c.Share, 0.40, 1e-9) {
			t.Errorf("command ceiling %+v, want the thread's own 40 %%", c)
		}
	})
}

// judgeUserWork: the command's thread at 100 % user is the command's, judged
// where it ran most; other user work is no ceiling.
func judgeUserWork(t *testing.T, nics []irq.NICRate) {
	t.Helper()
	t.Run("one thread at 100 % user on a 4-core host", func(t *testing.T) {
		cpus := []irq.CPURate{cpuAt(0, 1, 6, 0, 1), cpuAt(1, 0, 0, 100, 0), cpuAt(2, 0, 1, 0, 1), cpuAt(3, 0, 0, 0, 1)}
		threads := []irq.ThreadRate{{PID: 700, TID: 700, Comm: "iperf3", UserPct: 100, CPU: 1}, {PID: 700, TID: 702, Comm: "iperf3", UserPct: 0.5, CPU: 3}}
		v := judgeRoom(runOf{cpus: cpus, nics: nics, threads: threads}.samples(5), nil)
		wantBound(t, v, BoundCommand)
		if v.Limit.TID != 700 || *v.Limit.CPU != 1 || v.Limit.Share != 1 {
			t.Fatalf("limit %+v", v.Limit)
		}
		if v.BusiestCPU == nil || v.BusiestCPU.CPU != 1 || v.BusiestCPU.UserPct != 100 {
			t.Errorf("busiest %+v", v.BusiestCPU)
		}
		if !near(v.Limit.CeilingMbps, v.AchievedMbps, 1e-9) {
			t.Errorf("a saturated command's ceiling %v, want what it moved, %v", v.Limit.CeilingMbps, v.AchievedMbps)
		}
	})
	t.Run("unrelated user work is no core ceiling", func(t *testing.T) {
		cpus := []irq.CPURate{cpuAt(0, 2, 18, 0, 0), cpuAt(1, 0, 0, 0, 2), cpuAt(2, 0, 0, 0, 2), cpuAt(3, 0, 0, 97, 3)}
		v := judgeRoom(runOf{cpus: cpus, nics: nics}.samples(5), nil)
		wantBound(t, v, BoundOutside)
		for _, c := range v.Ceilings {
			if c.CPU != nil && *c.CPU == 3 {
				t.Errorf("CPU 3's unrelated work judged as a ceiling: %+v", c)
			}
		}
		if k := ceilingOf(v, BoundCore); k == nil || *k.CPU != 0 || !near(k.Share, 0.20, 1e-9) {
			t.Errorf("core %+v, want CPU 0 at 20 %%", k)
		}
		if v.BusiestCPU == nil || v.BusiestCPU.CPU != 3 {
			t.Errorf("busiest %+v, want CPU 3", v.BusiestCPU)
		}
	})
	t.Run("a thread that moves between CPUs is judged where it ran most", func(t *testing.T) {
		cpus := append(idleCPUs(0, 1), cpuAt(2, 0, 5, 90, 5), cpuAt(3, 0, 5, 90, 5))
		a := runOf{cpus: cpus, nics: nics, threads: []irq.ThreadRate{{PID: 9, TID: 9, Comm: "nc", UserPct: 90, SystemPct: 5, CPU: 2}}}
		b := runOf{cpus: cpus, nics: nics, threads: []irq.ThreadRate{{PID: 9, TID: 9, Comm: "nc", UserPct: 90, SystemPct: 5, CPU: 3}}}
		v := judgeRoom(concat(a.samples(2), b.samples(3)), nil)
		wantBound(t, v, BoundCommand)
		if *v.Limit.CPU != 3 {
			t.Errorf("limit on CPU %d, want 3 (3 of 5 s)", *v.Limit.CPU)
		}
	})
}

// TestJudgeSteal: a virtual CPU's steal time is time it could not work: it
// counts toward the core's share, and where it is as large as the packet
// work, the core was full of the hypervisor's other work, not the run's.
func TestJudgeSteal(t *testing.T) {
	pps := ppsFor(400, fullFrame)
	for _, c := range []struct {
		steal     float64
		want      Bound
		wantShare float64
	}{{35, BoundCore, 0.95}, {0, BoundOutside, 0.60}, {60, BoundOtherWork, 1}} {
		t.Run(fmt.Sprint(c.steal), func(t *testing.T) {
			hot := cpuAt(0, 10, 50, 0, 0)
			hot.StealPct, hot.IdlePct = c.steal, math.Max(0, 40-c.steal)
			v := judgeRoom(runOf{cpus: append([]irq.CPURate{hot}, idleCPUs(1)...), nics: []irq.NICRate{nicAt("eth0", pps, fullBytes, 0, 0)}}.samples(5), nil)
			wantBound(t, v, c.want)
			if k := ceilingOf(v, BoundCore); k == nil || !near(k.Share, c.wantShare, 1e-9) {
				t.Errorf("core %+v, want share %v", k, c.wantShare)
			}
			if v.BusiestCPU.StealPct != c.steal || v.BusiestCPU.BusyPct != 60 {
				t.Errorf("busiest %+v", v.BusiestCPU)
			}
		})
	}
}

// TestJudgeLosses: NIC drops, pause frames and allowance excesses, as the
// verdict or beside it.
func TestJudgeLosses(t *testing.T) {
	r := lossRun{rx: 100_000.0, tenG: []Limits{{NIC: "eth0", PortMbps: 10_000}}, cpus: idleCPUs(0, 1, 2, 3)}
	judgeDrops(t, r)
	judgePause(t, r)
	judgeAllowance(t, r)
}

// lossRun: TestJudgeLosses's run, eth0 on a 10 Gb/s port receiving rx
// full-size frames a second on four idle CPUs.
type lossRun struct {
	rx   float64
	tenG []Limits
	cpus []irq.CPURate
}

// nicRun: 10 samples of the run with eth0's losses.
func (r lossRun) nicRun(losses ...irq.LossRate) []irq.Sample {
	return runOf{cpus: r.cpus, nics: []irq.NICRate{nicAt("eth0", r.rx, fullBytes, r.rx/10, 62, losses...)}}.samples(10)
}

// dropsFor: the drops a second that are share of the offered packets.
func (r lossRun) dropsFor(share float64) float64 { return share * r.rx / (1 - share) }

// judgeDrops: NIC drops at 1 % of the offered packets are the verdict, or
// beside a bound; at 0.01 % or under 10/s they do not count; one loss from
// two sources counts once.
func judgeDrops(t *testing.T, r lossRun) {
	t.Helper()
	tenG, cpus, nicRun, dropsFor := r.tenG, r.cpus, r.nicRun, r.dropsFor
	t.Run("drops at 1 % with no ceiling", func(t *testing.T) {
		v := judgeRoom(nicRun(irq.LossRate{Name: "sysfs:rx_missed_errors", Class: irq.LossNIC, PerS: dropsFor(0.01)}), tenG)
		wantBound(t, v, BoundNICDrops)
		if v.Limit != nil || v.Next == nil || v.Next.Layer != BoundEthernet {
			t.Errorf("limit %+v next %+v", v.Limit, v.Next)
		}
		if len(v.Losses) != 1 {
			t.Fatalf("losses %+v", v.Losses)
		}
		l := v.Losses[0]
		if l.NIC != "eth0" || l.Class != irq.LossNIC || l.OfferedShare == nil || !near(*l.OfferedShare, 0.01, 1e-12) ||
			!near(l.PerS, dropsFor(0.01), 1e-9) || !near(l.Count, 10*dropsFor(0.01), 1e-6) {
			t.Errorf("loss %+v (offered share %v)", l, l.OfferedShare)
		}
		if f := oneFinding(t, v, finding.RunNICDrops); f.Severity != finding.Warn || f.Subject != "eth0" {
			t.Errorf("finding %+v", f)
		}
		if !strings.Contains(v.Summary, "eth0 dropped 1 % of the packets it was offered (1010/s, sysfs:rx_missed_errors)") {
			t.Errorf("summary %s", v.Summary)
		}
	})
	t.Run("drops at 0.01 % do not count", func(t *testing.T) {
		v := judgeRoom(nicRun(irq.LossRate{Name: "sysfs:rx_missed_errors", Class: irq.LossNIC, PerS: dropsFor(0.0001)}), tenG)
		wantBound(t, v, BoundOutside)
		if len(v.Losses) != 1 || !near(*v.Losses[0].OfferedShare, 0.0001, 1e-12) {
			t.Errorf("losses %+v: the counter is still reported", v.Losses)
		}
		if fs := findingsOf(v, finding.RunNICDrops); len(fs) != 0 {
			t.Errorf("drops at 0.01 %% reported: %v", fs)
		}
	})
	t.Run("drops under 10/s do not count", func(t *testing.T) {
		pps := 200.0 // 2.4 Mb/s: a run, barely; 5 drops/s are 2.4 %
		v := judgeRoom(runOf{cpus: cpus, nics: []irq.NICRate{nicAt("eth0", pps, fullBytes, 0, 0,
			irq.LossRate{Name: "sysfs:rx_missed_errors", Class: irq.LossNIC, PerS: 5})}}.samples(10), tenG)
		wantBound(t, v, BoundOutside)
		if *v.Losses[0].OfferedShare < 0.02 {
			t.Errorf("offered share %v", *v.Losses[0].OfferedShare)
		}
	})
	t.Run("drops at 1 % while pcie-bound", func(t *testing.T) {
		drop := irq.LossRate{Name: "ethtool:rx_no_buffer_count", Class: irq.LossNIC, PerS: 0.01 * 56_740 / 0.99}
		v := judgeRoom(runOf{cpus: pairCPUs(), nics: pairNICs(1, drop)}.samples(10), pairLimits())
		wantBound(t, v, BoundPCIe)
		f := oneFinding(t, v, finding.RunNICDrops)
		if f.Severity != finding.Warn || f.Subject != "enp1s0f0" || !strings.Contains(f.Summary, "enp1s0f0 dropped 1 % of the packets it was offered") {
			t.Errorf("drops finding %+v", f)
		}
		if strings.Contains(v.Summary, "dropped") {
			t.Errorf("the pcie verdict's summary speaks of the drops: %s", v.Summary)
		}
	})
	t.Run("one loss from two sources counts once", func(t *testing.T) {
		per := dropsFor(0.01)
		v := judgeRoom(nicRun(irq.LossRate{Name: "sysfs:rx_missed_errors", Class: irq.LossNIC, PerS: per},
			irq.LossRate{Name: "ethtool:rx_missed_errors", Class: irq.LossNIC, PerS: per}), tenG)
		wantBound(t, v, BoundNICDrops)
		if len(v.Losses) != 1 {
			t.Fatalf("losses %+v", v.Losses)
		}
		l := v.Losses[0]
		if !near(l.Count, 10*per, 1e-6) || !near(l.PerS, per, 1e-9) || !near(*l.OfferedShare, 0.01, 1e-12) {
			t.Errorf("loss %+v (share %v): counted twice?", l, *l.OfferedShare)
		}
		if strings.Join(l.Counters, ",") != "sysfs:rx_missed_errors,ethtool:rx_missed_errors" {
			t.Errorf("counters %v", l.Counters)
		}
	})
}

// judgePause: pause frames over 10/s, received or sent, are the verdict
// (drops come first), or beside a bound; xon and xoff add up within a
// source.
func judgePause(t *testing.T, r lossRun) {
	t.Helper()
	tenG, cpus, nicRun, dropsFor := r.tenG, r.cpus, r.nicRun, r.dropsFor
	t.Run("pause received", func(t *testing.T) {
		v := judgeRoom(nicRun(irq.LossRate{Name: "ethtool:rx_flow_control_xoff", Class: irq.LossPauseRX, PerS: 500}), tenG)
		wantBound(t, v, BoundPause)
		if v.Limit != nil {
			t.Errorf("limit %+v", v.Limit)
		}
		for _, s := range []string{"eth0 counted 500 pause frames/s (ethtool:rx_flow_control_xoff)", "the peer throttled this host"} {
			if !strings.Contains(v.Summary, s) {
				t.Errorf("summary lacks %q: %s", s, v.Summary)
			}
		}
		if f := oneFinding(t, v, finding.RunPause); f.Severity != finding.Warn {
			t.Errorf("finding %+v", f)
		}
	})
	t.Run("pause sent", func(t *testing.T) {
		v := judgeRoom(nicRun(irq.LossRate{Name: "ethtool:tx_flow_control_xoff", Class: irq.LossPauseTX, PerS: 500}), tenG)
		wantBound(t, v, BoundPause)
		if !strings.Contains(v.Summary, "this host throttled the peer") || strings.Contains(v.Summary, "the peer throttled this host") {
			t.Errorf("summary %s", v.Summary)
		}
	})
	t.Run("pause under 10/s", func(t *testing.T) {
		v := judgeRoom(nicRun(irq.LossRate{Name: "ethtool:rx_flow_control_xoff", Class: irq.LossPauseRX, PerS: 5}), tenG)
		wantBound(t, v, BoundOutside)
		if len(findingsOf(v, finding.RunPause)) != 0 {
			t.Errorf("findings %v", v.Findings)
		}
	})
	t.Run("pause beside a bound", func(t *testing.T) {
		line := 1000 * fullFrame / (fullFrame + 20)
		pps := ppsFor(0.97*line, fullFrame)
		v := judgeRoom(runOf{cpus: cpus, nics: []irq.NICRate{nicAt("eth0", pps, fullBytes, 0, 0,
			irq.LossRate{Name: "ethtool:tx_pause", Class: irq.LossPauseTX, PerS: 50})}}.samples(5), []Limits{{NIC: "eth0", PortMbps: 1000}})
		wantBound(t, v, BoundEthernet)
		if f := oneFinding(t, v, finding.RunPause); !strings.Contains(f.Summary, "50 pause frames/s (pause_tx, ethtool:tx_pause)") {
			t.Errorf("finding %+v", f)
		}
	})
	t.Run("drops before pause", func(t *testing.T) {
		v := judgeRoom(nicRun(irq.LossRate{Name: "sysfs:rx_missed_errors", Class: irq.LossNIC, PerS: dropsFor(0.01)},
			irq.LossRate{Name: "ethtool:rx_flow_control_xoff", Class: irq.LossPauseRX, PerS: 500}), tenG)
		wantBound(t, v, BoundNICDrops)
		oneFinding(t, v, finding.RunPause)
		oneFinding(t, v, finding.RunNICDrops)
	})
	t.Run("pause xon and xoff add up within a source", func(t *testing.T) {
		// 6 xon + 6 xoff a second from the driver: 12/s, over the 10/s bar;
		// the netlink counter of the same frames (12/s) is not added.
		v := judgeRoom(nicRun(
			irq.LossRate{Name: "ethtool:rx_flow_control_xon", Class: irq.LossPauseRX, PerS: 6},
			irq.LossRate{Name: "ethtool:rx_flow_control_xoff", Class: irq.LossPauseRX, PerS: 6},
			irq.LossRate{Name: "ethtool-nl:rx_pause_frames", Class: irq.LossPauseRX, PerS: 12}), tenG)
		wantBound(t, v, BoundPause)
		for _, l := range v.Losses {
			if l.Class == irq.LossPauseRX && (l.Count != 120 || len(l.Counters) != 3) {
				t.Errorf("pause loss %+v: want 120 frames over 10 s from 3 counters", l)
			}
		}
	})
}

// judgeAllowance: allowance excesses put the bound outside the host, or
// sit beside one; losses count over every sample.
func judgeAllowance(t *testing.T, r lossRun) {
	t.Helper()
	rx, tenG, cpus, nicRun := r.rx, r.tenG, r.cpus, r.nicRun
	t.Run("allowance", func(t *testing.T) {
		v := judgeRoom(nicRun(irq.LossRate{Name: "ethtool:bw_in_allowance_exceeded", Class: irq.LossAllowance, PerS: 3}), tenG)
		wantBound(t, v, BoundOutside)
		for _, s := range []string{"eth0 exceeded its cloud allowance 30 times (ethtool:bw_in_allowance_exceeded)", "the platform, outside this host, shaped the run"} {
			if !strings.Contains(v.Summary, s) {
				t.Errorf("summary lacks %q: %s", s, v.Summary)
			}
		}
		// The verdict (info) says it; the excess itself is a warning, as the
		// README's row says.
		if f := oneFinding(t, v, finding.RunAllowance); f.Severity != finding.Warn {
			t.Errorf("allowance finding %+v, want warn", f)
		}
		if f := oneFinding(t, v, finding.RunOutsideHost); !strings.Contains(f.Summary, "allowance") {
			t.Errorf("finding %+v", f)
		}
	})
	t.Run("allowance beside a bound", func(t *testing.T) {
		line := 1000 * fullFrame / (fullFrame + 20)
		pps := ppsFor(0.95*line, fullFrame)
		v := judgeRoom(runOf{cpus: cpus, nics: []irq.NICRate{nicAt("eth0", pps, fullBytes, 0, 0,
			irq.LossRate{Name: "ethtool:pps_allowance_exceeded", Class: irq.LossAllowance, PerS: 1})}}.samples(5), []Limits{{NIC: "eth0", PortMbps: 1000}})
		wantBound(t, v, BoundEthernet)
		if f := oneFinding(t, v, finding.RunAllowance); f.Severity != finding.Warn || !strings.Contains(f.Summary, "exceeded its cloud allowance 5.0 times") {
			t.Errorf("finding %+v", f)
		}
	})
	t.Run("losses count over every sample", func(t *testing.T) {
		// Drops that go on after the load ended still count.
		drop := irq.LossRate{Name: "sysfs:rx_missed_errors", Class: irq.LossNIC, PerS: 100}
		active := runOf{cpus: cpus, nics: []irq.NICRate{nicAt("eth0", rx, fullBytes, 0, 0, drop)}}
		idle := runOf{cpus: cpus, nics: []irq.NICRate{nicAt("eth0", 0, 0, 0, 0, drop)}}
		v := judgeRoom(concat(active.samples(4), idle.samples(6)), tenG)
		if len(v.Losses) != 1 || !near(v.Losses[0].Count, 1000, 1e-9) || !near(v.Losses[0].PerS, 100, 1e-9) {
			t.Errorf("losses %+v", v.Losses)
		}
	})
}

// TestJudgeLinkChanged: a hop that ran at another speed than it read at
// rest is reported and solved at the speed it ran.
func TestJudgeLinkChanged(t *testing.T) {
	nics := []irq.NICRate{nicAt("eth0", 60_000, fullBytes, 60_000, fullBytes)}
	lim := []Limits{pcieLimits("eth0", "0000:01:00.0", rootPort, 2.5, 1, 1)}
	at := func(gts float64) []irq.PCIeState {
		return []irq.PCIeState{{Address: "0000:01:00.0", GTs: gts, Width: 1}, {Address: rootPort, GTs: gts, Width: 1}}
	}
	rest := judgeRoom(runOf{cpus: idleCPUs(0, 1), nics: nics}.samples(5), lim)
	same := judgeRoom(runOf{cpus: idleCPUs(0, 1), nics: nics, pcie: at(2.5)}.samples(5), lim)
	ran := judgeRoom(runOf{cpus: idleCPUs(0, 1), nics: nics, pcie: at(5)}.samples(5), lim)
	p25, p5 := ceilingOf(rest, BoundPCIe), ceilingOf(ran, BoundPCIe)
	if p25 == nil || p5 == nil {
		t.Fatalf("pcie ceilings %+v / %+v", rest.Ceilings, ran.Ceilings)
	}
	if !(p5.CeilingMbps > 1.5*p25.CeilingMbps) || !strings.Contains(p5.What, "the 5 GT/s x1 link at "+rootPort) {
		t.Errorf("at 5 GT/s the hop carries %v Mb/s (%s), at 2.5 %v: want the faster link's ceiling", p5.CeilingMbps, p5.What, p25.CeilingMbps)
	}
	if s := ceilingOf(same, BoundPCIe); s == nil || s.CeilingMbps != p25.CeilingMbps {
		t.Errorf("the same speed live changes the ceiling: %+v", s)
	}
	if len(findingsOf(rest, finding.RunLinkChanged))+len(findingsOf(same, finding.RunLinkChanged)) != 0 {
		t.Errorf("link_changed without a change: %v %v", rest.Findings, same.Findings)
	}
	fs := findingsOf(ran, finding.RunLinkChanged)
	if len(fs) != 1 || fs[0].Subject != rootPort || fs[0].Severity != finding.Info ||
		!strings.Contains(fs[0].Summary, "was 2.5 GT/s x1 before the run and ran between 5 GT/s x1 and 5 GT/s x1") {
		t.Errorf("link_changed %+v (the device function, not in Limits.Links, reads unchanged)", fs)
	}

	// Downtrained at rest, retrained only under load: the verdict uses the
	// speed of the active samples.
	idle := runOf{cpus: idleCPUs(0, 1), pcie: at(2.5)}
	mixed := judgeRoom(concat(idle.samples(3), runOf{cpus: idleCPUs(0, 1), nics: nics, pcie: at(5)}.samples(5), idle.samples(2)), lim)
	if c := ceilingOf(mixed, BoundPCIe); c == nil || c.CeilingMbps != p5.CeilingMbps {
		t.Errorf("mixed run's pcie ceiling %+v, want %v", c, p5.CeilingMbps)
	}
	// Both ends of the link changed: the upstream port speaks for the
	// link, once.
	fs = findingsOf(mixed, finding.RunLinkChanged)
	if len(fs) != 1 || fs[0].Subject != rootPort {
		t.Fatalf("link_changed %+v", fs)
	}
	for _, f := range fs {
		if !strings.Contains(f.Summary, "was 2.5 GT/s x1 before the run and ran between 2.5 GT/s x1 and 5 GT/s x1") {
			t.Errorf("link_changed %+v", f)
		}
	}
}

// TestJudgeAER: AER errors logged on the path during the run.
func TestJudgeAER(t *testing.T) {
	nics := []irq.NICRate{nicAt("eth0", 40_000, fullBytes, 0, 0)}
	lim := []Limits{pcieLimits("eth0", "0000:01:00.0", rootPort, 2.5, 1, 1)}
	u := func(v uint64) *uint64 { return &v }
	for _, c := range []struct {
		name            string
		corr, nonfatal  uint64
		want            int
		sev             finding.Severity
		text            string
		withoutCounters bool
	}{
		{name: "correctable", corr: 3, want: 1, sev: finding.Info, text: "15 correctable, 0 non-fatal, 0 fatal"},
		{name: "nonfatal", nonfatal: 1, want: 1, sev: finding.Warn, text: "0 correctable, 5 non-fatal, 0 fatal"},
		{name: "none", want: 0},
		{name: "no counters", withoutCounters: true, want: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := irq.PCIeState{Address: "0000:01:00.0", GTs: 2.5, Width: 1}
			if !c.withoutCounters {
				st.AERCorrectable, st.AERNonFatal, st.AERFatal = u(c.corr), u(c.nonfatal), u(0)
			}
			v := judgeRoom(runOf{cpus: idleCPUs(0), nics: nics, pcie: []irq.PCIeState{st}}.samples(5), lim)
			fs := findingsOf(v, finding.RunAERErrors)
			if len(fs) != c.want {
				t.Fatalf("aer findings %v", fs)
			}
			if c.want == 1 && (fs[0].Severity != c.sev || fs[0].Subject != "0000:01:00.0" || !strings.Contains(fs[0].Summary, c.text)) {
				t.Errorf("finding %+v", fs[0])
			}
		})
	}
}

// TestJudgeSharedHop: NICs behind one hop add up on it; NICs behind
// different hops do not.
func TestJudgeSharedHop(t *testing.T) {
	pps := 56_740.0
	nics := []irq.NICRate{nicAt("a", pps, fullBytes, pps, fullBytes), nicAt("b", pps, fullBytes, pps, fullBytes)}
	one := judgeRoom(runOf{nics: nics[:1]}.samples(5), []Limits{pcieLimits("a", "0000:01:00.0", rootPort, 2.5, 1, 2)})
	alone := ceilingOf(one, BoundPCIe)
	if alone == nil {
		t.Fatalf("ceilings %+v", one.Ceilings)
	}

	shared := judgeRoom(runOf{nics: nics}.samples(5), []Limits{
		pcieLimits("a", "0000:01:00.0", rootPort, 2.5, 1, 2), pcieLimits("b", "0000:01:00.1", rootPort, 2.5, 1, 2)})
	hops := ceilingsOf(shared, BoundPCIe)
	if len(hops) != 1 || strings.Join(hops[0].NICs, ",") != "a,b" || hops[0].Subject != rootPort {
		t.Fatalf("shared hop ceilings %+v", hops)
	}
	if !near(hops[0].Share, 2*alone.Share, 1e-12) || !near(hops[0].AchievedMbps, 2*alone.AchievedMbps, 1e-9) ||
		!near(hops[0].CeilingMbps, alone.CeilingMbps, 1e-6) {
		t.Errorf("shared hop %+v, want twice the load of one NIC (%+v) against the same ceiling", hops[0], *alone)
	}

	apart := judgeRoom(runOf{cpus: idleCPUs(0, 1), nics: nics}.samples(5), []Limits{
		pcieLimits("a", "0000:01:00.0", rootPort, 2.5, 1, 1), pcieLimits("b", "0000:02:00.0", "0000:00:1c.1", 2.5, 1, 1)})
	hops = ceilingsOf(apart, BoundPCIe)
	if len(hops) != 2 {
		t.Fatalf("hops %+v", hops)
	}
	for _, h := range hops {
		if len(h.NICs) != 1 || !near(h.Share, alone.Share, 1e-12) {
			t.Errorf("hop %+v, want one NIC's load, %v", h, alone.Share)
		}
	}
	// The shared hop bound the run (both NICs at 2 × 48 %); apart, nothing did.
	if alone.Share < 0.46 || alone.Share > 0.5 {
		t.Fatalf("one NIC at %v of the hop: the case needs 46-50 %%", alone.Share)
	}
	wantBound(t, shared, BoundPCIe)
	wantBound(t, apart, BoundOutside)

	// A hop without an address is the NIC's own: two such never add up.
	anon := func(nic string) Limits {
		l := pcieLimits(nic, "", "", 2.5, 1, 1)
		l.Path = nil
		return l
	}
	v := judgeRoom(runOf{nics: nics}.samples(5), []Limits{anon("a"), anon("b")})
	if hops := ceilingsOf(v, BoundPCIe); len(hops) != 2 || hops[0].Subject == hops[1].Subject {
		t.Errorf("anonymous hops %+v", hops)
	}
}

// TestJudgeUSB: a USB 2.0 bus is half duplex, both directions share it.
func TestJudgeUSB(t *testing.T) {
	half := ppsFor(200, fullFrame)
	for _, c := range []struct {
		name      string
		usb       float64
		rx, tx    float64
		want      Bound
		wantShare float64
	}{
		{"USB 2.0, 200 + 200 Mb/s", 480, half, half, BoundUSB, 400 / 425.984},
		{"USB 2.0, 200 Mb/s rx only", 480, half, 0, BoundOutside, 200 / 425.984},
		{"USB 3.0, 200 + 200 Mb/s", 5000, half, half, BoundOutside, 200 / 4000.0},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := judgeRoom(runOf{cpus: idleCPUs(0, 1), nics: []irq.NICRate{nicAt("usb0", c.rx, fullBytes, c.tx, fullBytes)}}.samples(5),
				[]Limits{{NIC: "usb0", PortMbps: 1000, USBMbps: c.usb}})
			wantBound(t, v, c.want)
			u := ceilingOf(v, BoundUSB)
			if u == nil || !near(u.Share, c.wantShare, 1e-9) || u.Subject != "usb0" {
				t.Fatalf("usb ceiling %+v, want share %v", u, c.wantShare)
			}
			if c.want == BoundUSB {
				if !near(u.CeilingMbps, 200/c.wantShare, 1e-6) || !strings.Contains(v.Summary, "the USB bus bound this run") {
					t.Errorf("ceiling %v: %s", u.CeilingMbps, v.Summary)
				}
				if f := oneFinding(t, v, finding.RunUSBBound); f.Severity != finding.Warn {
					t.Errorf("finding %+v", f)
				}
			}
		})
	}
}

// TestJudgeTunnel: a NIC behind a Thunderbolt tunnel is bound by the
// tunnel's data rate.
func TestJudgeTunnel(t *testing.T) {
	prof, _ := budget.ProfileFor("ixgbe", 0x8086, 0x10fb)
	lim := Limits{NIC: "eth0", Address: "0000:06:00.0", PortMbps: 25_000, Profile: &prof, Links: []budget.LinkParams{
		{Addr: "0000:05:01.0", GTs: 8, Width: 4, MPS: 256, MRRS: 512},
		{Addr: "0000:00:07.0", GTs: 8, Width: 4, MPS: 256, TunnelGbps: 22},
	}}
	for _, c := range []struct {
		gbps float64
		want Bound
	}{{21, BoundTunnel}, {18, BoundOutside}} {
		t.Run(fmt.Sprint(c.gbps), func(t *testing.T) {
			pps := ppsFor(c.gbps*1000, fullFrame)
			v := judgeRoom(runOf{cpus: idleCPUs(0, 1, 2, 3), nics: []irq.NICRate{nicAt("eth0", pps, fullBytes, pps/20, 62)}}.samples(5), []Limits{lim})
			wantBound(t, v, c.want)
			tc := ceilingOf(v, BoundTunnel)
			rxBits, txBits := pps*fullFrame*8, pps/20*66*8
			if tc == nil || tc.Subject != "0000:00:07.0" || tc.Direction != "up" || !near(tc.Share, math.Max(rxBits, txBits)/22e9, 1e-9) ||
				!strings.Contains(tc.What, "the 22 Gb/s PCIe tunnel at 0000:00:07.0") {
				t.Fatalf("tunnel ceiling %+v", tc)
			}
			if ceilingOf(v, BoundPCIe) == nil {
				t.Errorf("the hop in front of the tunnel is still a pcie ceiling: %+v", v.Ceilings)
			}
			if c.want == BoundTunnel {
				if f := oneFinding(t, v, finding.RunTunnelBound); f.Severity != finding.Warn || f.Subject != "0000:00:07.0" {
					t.Errorf("finding %+v", f)
				}
			}
		})
	}
}

// TestJudgeUnknown: nothing to judge, or nothing to judge it by.
func TestJudgeUnknown(t *testing.T) {
	t.Run("no samples", func(t *testing.T) {
		v := judgeRoom(nil, pairLimits())
		if v.Bound != BoundUnknown || v.Samples != 0 || v.ActiveSamples != 0 || len(v.Findings) != 0 || v.Limit != nil || v.Share != nil {
			t.Errorf("%+v", v)
		}
	})
	t.Run("all-zero traffic", func(t *testing.T) {
		v := judgeRoom(runOf{cpus: idleCPUs(0, 1), nics: pairNICs(0)}.samples(10), pairLimits())
		if v.Bound != BoundUnknown || v.Samples != 10 || len(v.Findings) != 0 || len(v.Ceilings) != 0 {
			t.Errorf("%+v", v)
		}
		if !strings.Contains(v.Summary, "moved almost nothing") {
			t.Errorf("summary %s", v.Summary)
		}
		// Every NIC sampled is listed, at no traffic, as the JSON always had it.
		if len(v.Traffic) != 4 || v.Traffic[0].NIC != "enp1s0f0" || v.Traffic[3].Direction != "tx" || v.Traffic[1].AchievedMbps != 0 {
			t.Errorf("traffic %+v", v.Traffic)
		}
	})
	t.Run("a trickle", func(t *testing.T) {
		// Under 1 Mb/s and 1000 frames/s at its busiest: no run.
		v := judgeRoom(runOf{nics: []irq.NICRate{nicAt("eth0", 50, 1000, 50, 66)}}.samples(10), []Limits{{NIC: "eth0", PortMbps: 1}})
		if v.Bound != BoundUnknown {
			t.Errorf("%s: %s", v.Bound, v.Summary)
		}
	})
	t.Run("small packets at a low bit rate are a run", func(t *testing.T) {
		v := judgeRoom(runOf{nics: []irq.NICRate{nicAt("eth0", 1500, 60, 0, 0)}}.samples(10), []Limits{{NIC: "eth0", PortMbps: 1}})
		wantBound(t, v, BoundEthernet) // 0.77 Mb/s of 64-byte frames fill a 1 Mb/s port
	})
	t.Run("traffic, no limits, no CPU data", func(t *testing.T) {
		v := judgeRoom(runOf{nics: []irq.NICRate{nicAt("eth0", 80_000, fullBytes, 4_000, 62)}}.samples(10), nil)
		wantBound(t, v, BoundUnknown)
		if len(v.Ceilings) != 0 || v.Next != nil || v.Share != nil || !near(v.AchievedMbps, 80_000*fullFrame*8/1e6, 1e-6) {
			t.Errorf("%+v", v)
		}
		if f := oneFinding(t, v, finding.RunUnknown); f.Severity != finding.Info || f.Subject != "eth0" ||
			!strings.Contains(f.Summary, "nothing is known to judge it against") {
			t.Errorf("finding %+v", f)
		}
	})
	t.Run("limits of other NICs only", func(t *testing.T) {
		v := judgeRoom(runOf{nics: []irq.NICRate{nicAt("eth1", 80_000, fullBytes, 0, 0)}}.samples(10), pairLimits())
		wantBound(t, v, BoundUnknown)
	})
}

// TestJudgeCard: a router on a PCIe card is judged against what it moves,
// never bound by it (the card is outside the host), and its port rate is
// not an Ethernet ceiling.
func TestJudgeCard(t *testing.T) {
	lim := []Limits{{NIC: "enp1s0f0", PortMbps: 10_000, RealDevice: "a MikroTik CCR2004 emulating it", BoundBy: "the card's CPU", MovesMbps: 3000}}
	pps := ppsFor(2900, fullFrame)
	v := judgeRoom(runOf{cpus: idleCPUs(0, 1), nics: []irq.NICRate{nicAt("enp1s0f0", pps, fullBytes, pps/2, 62)}}.samples(5), lim)
	wantBound(t, v, BoundOutside)
	c := ceilingOf(v, LayerCard)
	if c == nil || !near(c.Share, 2900/3000.0, 1e-9) || c.CeilingMbps != 3000 {
		t.Fatalf("card ceiling %+v", c)
	}
	if ceilingOf(v, BoundEthernet) != nil {
		t.Errorf("a misidentified card's port judged as a line: %+v", v.Ceilings)
	}
	for _, s := range []string{"enp1s0f0 is probably a MikroTik CCR2004, not the chip", "bound by the card's CPU", "this run moved 97 % of it"} {
		if !strings.Contains(v.Summary, s) {
			t.Errorf("summary lacks %q: %s", s, v.Summary)
		}
	}
}

// TestJudgeTrafficCeilings: each NIC direction carries its nearest
// ceiling that covers it: a port's line only in the direction it was
// judged in, a PCIe hop in both.
func TestJudgeTrafficCeilings(t *testing.T) {
	line := 1000 * fullFrame / (fullFrame + 20)
	rx, tx := ppsFor(0.5*line, fullFrame), ppsFor(0.25*line, fullFrame)
	v := judgeRoom(runOf{nics: []irq.NICRate{nicAt("eth0", rx, fullBytes, tx, fullBytes)}}.samples(5), []Limits{pcieLimits("eth0", "0000:01:00.0", rootPort, 2.5, 1, 1)})
	e, p := ceilingOf(v, BoundEthernet), ceilingOf(v, BoundPCIe)
	if len(v.Traffic) != 2 || e == nil || p == nil || e.Direction != "rx" || !(e.Share > p.Share) {
		t.Fatalf("traffic %+v ceilings %+v: the case needs the rx line nearer than the hop", v.Traffic, v.Ceilings)
	}
	for _, tr := range v.Traffic {
		want, layer := line, BoundEthernet
		if tr.Direction == "tx" {
			want, layer = tr.AchievedMbps/p.Share, BoundPCIe
		}
		if tr.CeilingMbps == nil || tr.CeilingLayer != layer || !near(*tr.CeilingMbps, want, 1e-6) || !near(tr.MeanFrameBytes, fullFrame, 1e-9) {
			t.Errorf("%s: %+v, want %s's %v", tr.Direction, tr, layer, want)
		}
	}
}

// TestJudgeJSON: a verdict marshals, with its stable field names.
func TestJudgeJSON(t *testing.T) {
	v := judgeRoom(runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), pairLimits())
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"bound":"pcie"`, `"limit":{"layer":"pcie"`, `"achieved_mbps":`, `"ceiling_mbps":`, `"active_samples":5`, `"busiest_cpu":{"cpu":0`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON lacks %s: %s", k, b)
		}
	}
}

// knownBounds are the verdicts Judge may return.
var knownBounds = map[Bound]bool{BoundEthernet: true, BoundPCIe: true, BoundTunnel: true, BoundUSB: true, BoundCore: true,
	BoundCommand: true, BoundNICDrops: true, BoundPause: true, BoundOutside: true, BoundUnknown: true,
	BoundQdisc: true, BoundTransport: true, BoundSocket: true, BoundConntrack: true, BoundOtherWork: true}

// checkVerdict fails unless every number of v is finite and not negative,
// its bound is known, its text holds no NaN or Inf, and it marshals.
func checkVerdict(t testing.TB, v Verdict) {
	t.Helper()
	if !knownBounds[v.Bound] {
		t.Fatalf("bound %q", v.Bound)
	}
	var walk func(path string, x reflect.Value)
	walk = func(path string, x reflect.Value) {
		switch x.Kind() {
		case reflect.Float64:
			if f := x.Float(); math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
				t.Errorf("%s = %v", path, f)
			}
		case reflect.String:
			if s := x.String(); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
				t.Errorf("%s = %q", path, s)
			}
		case reflect.Pointer:
			if !x.IsNil() {
				walk(path, x.Elem())
			}
		case reflect.Struct:
			for i := range x.NumField() {
				if f := x.Type().Field(i); f.IsExported() {
					walk(path+"."+f.Name, x.Field(i))
				}
			}
		case reflect.Slice:
			for i := range x.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), x.Index(i))
			}
		case reflect.Map:
			for it := x.MapRange(); it.Next(); {
				walk(fmt.Sprintf("%s[%v]", path, it.Key()), it.Value())
			}
		}
	}
	walk("verdict", reflect.ValueOf(v))
	if b := v.BusiestCPU; b != nil {
		// Percentages of one CPU's time.
		for _, p := range []float64{b.BusyPct, b.PacketPct, b.SoftIRQPct, b.UserPct, b.SystemPct, b.StealPct} {
			if p > 100 {
				t.Errorf("busiest CPU %+v: over 100 %%", *b)
			}
		}
		if b.IRQPct != nil && *b.IRQPct > 100 {
			t.Errorf("busiest CPU irq %v %%", *b.IRQPct)
		}
	}
	for _, c := range v.Ceilings {
		if (c.Layer == BoundCore || c.Layer == BoundCommand) && c.Share > 1 {
			t.Errorf("%s ceiling over 100 %%: %+v", c.Layer, c)
		}
	}
	if _, err := json.Marshal(v); err != nil {
		t.Errorf("marshal: %v", err)
	}
	if v.Bound != BoundUnknown && v.Summary == "" {
		t.Errorf("bound %s without a summary", v.Bound)
	}
	if v.ActiveSamples > v.Samples {
		t.Errorf("%d active of %d samples", v.ActiveSamples, v.Samples)
	}
}

// TestJudgeRobust: Judge never panics and its numbers stay finite on
// whatever a sampler or a record gives it.
func TestJudgeRobust(t *testing.T) {
	cases := append(append(robustSampleCases(), robustLimitCases()...), robustRunCases()...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := judgeRoom(c.samples, c.limits)
			checkVerdict(t, v)
			if c.want != "" && v.Bound != c.want {
				t.Errorf("bound %s, want %s: %s", v.Bound, c.want, v.Summary)
			}
		})
	}
}

// robustCase: samples and limits Judge must take without a panic or a
// number that is not finite.
type robustCase struct {
	name    string
	samples []irq.Sample
	limits  []Limits
	// want, when set, is the bound the good samples hold to: one bad
	// sample does not change the run's verdict.
	want Bound
}

// robustSampleCases: odd samples, one among good ones or a run of them, and
// NICs and limits that do not match.
func robustSampleCases() []robustCase {
	nan, inf := math.NaN(), math.Inf(1)
	good := runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(8)
	with := func(f func(*irq.Sample)) []irq.Sample {
		out := concat(good[:4], runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(1), good[4:])
		// The odd sample gets its own copies to change.
		s := &out[4]
		s.CPUs = append([]irq.CPURate(nil), s.CPUs...)
		s.NICs = append([]irq.NICRate(nil), s.NICs...)
		f(s)
		return out
	}
	return []robustCase{
		{"NaN rates", with(func(s *irq.Sample) { s.NICs[0].RXBytesPerS, s.NICs[1].TXPacketsPerS = nan, nan }), pairLimits(), BoundPCIe},
		{"+Inf rates", with(func(s *irq.Sample) { s.NICs[0].RXBytesPerS, s.NICs[0].RXPacketsPerS = inf, inf }), pairLimits(), ""},
		{"-Inf rates", with(func(s *irq.Sample) { s.NICs[0].TXBytesPerS = -inf }), pairLimits(), BoundPCIe},
		{"negative rates", with(func(s *irq.Sample) { s.NICs[0].RXBytesPerS, s.NICs[1].RXPacketsPerS = -1e9, -5 }), pairLimits(), BoundPCIe},
		{"huge rates", with(func(s *irq.Sample) { s.NICs[0].RXBytesPerS, s.NICs[0].RXPacketsPerS = 1e308, 1e308 }), pairLimits(), ""},
		{"huge bytes, tiny packets", with(func(s *irq.Sample) { s.NICs[0].RXBytesPerS, s.NICs[0].RXPacketsPerS = 1e300, 1e-300 }), pairLimits(), ""},
		{"most bytes, fewest packets", with(func(s *irq.Sample) { s.NICs[0].RXBytesPerS, s.NICs[0].RXPacketsPerS = 1e15, 5e-324 }), pairLimits(), ""},
		{"a CPU all but stolen", runOf{cpus: []irq.CPURate{{CPU: 0, BusyPct: 5e-324, SoftIRQPct: 5e-324, StealPct: 100}},
			nics: []irq.NICRate{nicAt("eth0", 80_000, fullBytes, 0, 0)}}.samples(3), nil, BoundOtherWork},
		{"bytes without packets", with(func(s *irq.Sample) { s.NICs[0].RXBytesPerS, s.NICs[0].RXPacketsPerS = 1e9, 0 }), pairLimits(), ""},
		{"packets without bytes", with(func(s *irq.Sample) { s.NICs[0].RXBytesPerS = 0 }), pairLimits(), ""},
		{"interval 0", with(func(s *irq.Sample) { s.IntervalS = 0 }), pairLimits(), BoundPCIe},
		{"interval negative", with(func(s *irq.Sample) { s.IntervalS = -1 }), pairLimits(), BoundPCIe},
		{"interval NaN", with(func(s *irq.Sample) { s.IntervalS = nan }), pairLimits(), BoundPCIe},
		{"interval +Inf", with(func(s *irq.Sample) { s.IntervalS = inf }), pairLimits(), ""},
		{"interval huge", with(func(s *irq.Sample) { s.IntervalS = 1e308 }), pairLimits(), ""},
		{"all intervals 0", func() []irq.Sample {
			s := runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(3)
			for i := range s {
				s[i].IntervalS = 0
			}
			return s
		}(), pairLimits(), BoundUnknown},
		{"CPU percentages NaN", with(func(s *irq.Sample) {
			s.CPUs[0].BusyPct, s.CPUs[0].SoftIRQPct, s.CPUs[1].StealPct = nan, nan, nan
			s.CPUs[2].IRQPct = &nan
		}), pairLimits(), BoundPCIe},
		{"CPU percentages Inf", with(func(s *irq.Sample) { s.CPUs[0].BusyPct, s.CPUs[0].SoftIRQPct, s.CPUs[1].StealPct = inf, inf, -inf }), pairLimits(), ""},
		{"CPU percentages negative", with(func(s *irq.Sample) { s.CPUs[0].BusyPct, s.CPUs[0].SoftIRQPct, s.CPUs[1].UserPct = -50, -50, -1e300 }), pairLimits(), BoundPCIe},
		{"CPU percentages huge", with(func(s *irq.Sample) {
			s.CPUs[0].BusyPct, s.CPUs[0].SoftIRQPct, s.CPUs[0].StealPct = 1e308, 1e308, 1e308
			huge := 1e308
			s.CPUs[0].IRQPct = &huge
		}), pairLimits(), ""},
		{"irq+softirq over 100 %", runOf{cpus: []irq.CPURate{cpuAt(0, 60, 60, 0, 0)}, nics: pairNICs(1)}.samples(3), nil, BoundCore},
		{"negative and huge CPU ids", with(func(s *irq.Sample) { s.CPUs[0].CPU, s.CPUs[1].CPU = -1, math.MaxInt }), pairLimits(), ""},
		{"loss rates NaN, Inf, negative", with(func(s *irq.Sample) {
			s.NICs[0].Losses = []irq.LossRate{{Name: "a", Class: irq.LossNIC, PerS: nan}, {Name: "b", Class: irq.LossPauseRX, PerS: inf},
				{Name: "c", Class: irq.LossAllowance, PerS: -inf}, {Name: "d", Class: irq.LossTX, PerS: -3}, {Name: "e", Class: "odd", PerS: 1e308}}
		}), pairLimits(), ""},
		{"losses on a NIC that received nothing", runOf{nics: []irq.NICRate{nicAt("eth0", 0, 0, 80_000, fullBytes,
			irq.LossRate{Name: "sysfs:rx_missed_errors", Class: irq.LossNIC, PerS: 500})}}.samples(4), nil, BoundNICDrops},
		{"NICs absent from limits", runOf{cpus: pairCPUs(), nics: append(pairNICs(1), nicAt("wlan0", 900, 1000, 20, 60))}.samples(5), pairLimits(), BoundPCIe},
		{"limits absent from samples", runOf{cpus: pairCPUs(), nics: pairNICs(1)[:1]}.samples(5), append(pairLimits(), pcieLimits("eth9", "0000:09:00.0", "0000:00:09.0", 8, 4, 1)), ""},
	}
}

// robustLimitCases: good samples against odd limits or live PCIe state.
func robustLimitCases() []robustCase {
	nan, inf := math.NaN(), math.Inf(1)
	badLinks := func(f func(*budget.LinkParams)) []Limits {
		ls := pairLimits()
		for i := range ls {
			ls[i].Links = append([]budget.LinkParams(nil), ls[i].Links...)
			f(&ls[i].Links[0])
		}
		return ls
	}
	badLimits := func(f func(*Limits)) []Limits {
		ls := pairLimits()
		for i := range ls {
			f(&ls[i])
		}
		return ls
	}
	return []robustCase{
		{"GT/s 3.7", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLinks(func(l *budget.LinkParams) { l.GTs = 3.7 }), ""},
		{"width 0", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLinks(func(l *budget.LinkParams) { l.Width = 0 }), ""},
		{"width negative, GT/s NaN", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLinks(func(l *budget.LinkParams) { l.Width, l.GTs = -4, nan }), ""},
		{"tunnel NaN", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLinks(func(l *budget.LinkParams) { l.TunnelGbps = nan }), ""},
		{"tunnel smallest", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLinks(func(l *budget.LinkParams) { l.TunnelGbps = 5e-324 }), ""},
		{"port rate smallest", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLimits(func(l *Limits) { l.PortMbps = 5e-324 }), ""},
		{"tunnel tiny", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLinks(func(l *budget.LinkParams) { l.TunnelGbps = 1e-300 }), ""},
		{"MPS odd", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLinks(func(l *budget.LinkParams) { l.MPS, l.MRRS, l.RCB, l.Shared = 3, -1, 7, -2 }), ""},
		{"nil profile", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLimits(func(l *Limits) { l.Profile = nil }), BoundOutside},
		{"empty profile", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLimits(func(l *Limits) { l.Profile = &budget.Profile{} }), ""},
		{"no links", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLimits(func(l *Limits) { l.Links = nil }), BoundOutside},
		{"port rate NaN", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLimits(func(l *Limits) { l.PortMbps = nan }), ""},
		{"port rate Inf", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLimits(func(l *Limits) { l.PortMbps = inf }), ""},
		{"port rate huge", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLimits(func(l *Limits) { l.PortMbps = 1e308 }), ""},
		{"port rate tiny", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), badLimits(func(l *Limits) { l.PortMbps = 1e-300 }), ""},
		{"USB NaN, Inf and tiny", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), []Limits{{NIC: "enp1s0f0", USBMbps: nan}, {NIC: "enp1s0f1", USBMbps: 1e-300}}, ""},
		{"USB Inf", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), []Limits{{NIC: "enp1s0f0", USBMbps: inf}}, ""},
		{"card moves NaN, Inf, tiny", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), []Limits{
			{NIC: "enp1s0f0", RealDevice: "x", MovesMbps: nan}, {NIC: "enp1s0f1", RealDevice: "y", MovesMbps: 1e-300}}, ""},
		{"card moves Inf", runOf{cpus: pairCPUs(), nics: pairNICs(1)}.samples(5), []Limits{{NIC: "enp1s0f0", RealDevice: "x", MovesMbps: inf}}, ""},
		{"live PCIe state odd", runOf{cpus: pairCPUs(), nics: pairNICs(1), pcie: []irq.PCIeState{{Address: rootPort, GTs: 3.7, Width: 1},
			{Address: "0000:01:00.0", GTs: nan, Width: -1}, {Address: "0000:01:00.1", GTs: inf, Width: 1 << 30}, {Address: "", Error: "gone"}}}.samples(5), pairLimits(), ""},
	}
}

// robustRunCases: odd threads, duplicates and names.
func robustRunCases() []robustCase {
	nan, inf := math.NaN(), math.Inf(1)
	var manyThreads []irq.ThreadRate
	for i := range 5000 {
		manyThreads = append(manyThreads, irq.ThreadRate{PID: 1, TID: 1 + i, Comm: "worker", UserPct: float64(i%100) / 10, SystemPct: 0.1, CPU: i % 4})
	}
	return []robustCase{
		{"thousands of threads", runOf{cpus: pairCPUs(), nics: pairNICs(1), threads: manyThreads}.samples(5), pairLimits(), BoundPCIe},
		{"threads with odd numbers", runOf{cpus: pairCPUs(), nics: pairNICs(1), threads: []irq.ThreadRate{
			{TID: 1, UserPct: nan, CPU: 0}, {TID: 2, SystemPct: inf, CPU: 1}, {TID: 3, UserPct: -1e300, CPU: -5}, {TID: 4, UserPct: 1e308, SystemPct: 1e308, CPU: 2}}}.samples(5), pairLimits(), ""},
		{"same thread on every CPU", runOf{cpus: pairCPUs(), nics: pairNICs(1), threads: []irq.ThreadRate{{TID: 1, UserPct: 50, CPU: 0}, {TID: 1, UserPct: 50, CPU: 1}}}.samples(5), pairLimits(), ""},
		{"duplicate NICs in a sample", runOf{cpus: pairCPUs(), nics: append(pairNICs(1), pairNICs(1)...)}.samples(5), pairLimits(), ""},
		{"duplicate CPUs in a sample", runOf{cpus: append(pairCPUs(), pairCPUs()...), nics: pairNICs(1)}.samples(5), pairLimits(), ""},
		{"unnamed NIC", runOf{nics: []irq.NICRate{nicAt("", 80_000, fullBytes, 0, 0)}}.samples(5), []Limits{{NIC: "", PortMbps: 1000}}, ""},
	}
}

// BenchmarkJudge: a 10-minute run at one sample a second on a 128-CPU
// host, 8 ports of 4 dual-port cards on 4 root ports, 50 watched threads.
func BenchmarkJudge(b *testing.B) {
	prof, _ := budget.ProfileFor("ixgbe", 0x8086, 0x10fb)
	var limits []Limits
	var nics []irq.NICRate
	for card := range 4 {
		for port := range 2 {
			name := fmt.Sprintf("ens%df%d", card+1, port)
			fn := fmt.Sprintf("0000:%02x:00.%d", card+1, port)
			limits = append(limits, Limits{NIC: name, Address: fn, PortMbps: 10_000, Profile: &prof,
				Path:  []string{fn, fmt.Sprintf("0000:00:%02x.0", card+1)},
				Links: []budget.LinkParams{{Addr: fmt.Sprintf("0000:00:%02x.0", card+1), GTs: 5, Width: 4, MPS: 256, MRRS: 512, Shared: 2}}})
			pps := 500_000.0 + float64(card*2+port)*10_000
			nics = append(nics, nicAt(name, pps, fullBytes, pps/2, 62,
				irq.LossRate{Name: "sysfs:rx_missed_errors", Class: irq.LossNIC, PerS: 3},
				irq.LossRate{Name: "ethtool:rx_no_buffer_count", Class: irq.LossNIC, PerS: 3}))
		}
	}
	var cpus []irq.CPURate
	for c := range 128 {
		cpus = append(cpus, cpuAt(c, float64(c%7), float64(c%50), float64(c%30), 2))
	}
	var threads []irq.ThreadRate
	for i := range 50 {
		threads = append(threads, irq.ThreadRate{PID: 1000, TID: 1000 + i, Comm: "iperf3", UserPct: float64(i % 60), SystemPct: 10, CPU: (i * 5) % 128})
	}
	var pcie []irq.PCIeState
	for _, l := range limits {
		pcie = append(pcie, irq.PCIeState{Address: l.Path[0], GTs: 5, Width: 4}, irq.PCIeState{Address: l.Path[1], GTs: 5, Width: 4})
	}
	samples := runOf{cpus: cpus, nics: nics, threads: threads, pcie: pcie}.samples(600)
	if v := Judge(samples, limits); v.Bound == BoundUnknown || len(ceilingsOf(v, BoundPCIe)) != 4 {
		b.Fatalf("bound %s, ceilings %+v", v.Bound, v.Ceilings)
	}
	b.ReportAllocs()
	for b.Loop() {
		Judge(samples, limits)
	}
}

// TestJudgeSharedCPU: a CPU saturated by the command's thread (40 %), its
// softirq work (20 %) and another process (40 %, the load generator's
// server, say) is the command's: the run's own work is the larger part of
// it, and the thread the larger part of that. With the other process at
// 70 % and the run's own work under half, the CPU is nobody's ceiling:
// the other work bound the run.
func TestJudgeSharedCPU(t *testing.T) {
	pps := ppsFor(500, 1518)
	nics := []irq.NICRate{nicAt("veth0", pps, 1514, pps/20, 62)}
	thread := []irq.ThreadRate{{PID: 10, TID: 10, Comm: "iperf3", UserPct: 5, SystemPct: 35, CPU: 1}}
	v := judgeRoom(runOf{cpus: []irq.CPURate{cpuAt(0, 0, 0, 0, 3), cpuAt(1, 0, 20, 20, 60)}, nics: nics, threads: thread}.samples(4), nil)
	wantBound(t, v, BoundCommand)
	if *v.Limit.CPU != 1 || v.Limit.Share != 1 {
		t.Errorf("limit %+v", v.Limit)
	}
	other := []irq.ThreadRate{{PID: 10, TID: 10, Comm: "iperf3", UserPct: 5, SystemPct: 15, CPU: 1}}
	v = judgeRoom(runOf{cpus: []irq.CPURate{cpuAt(0, 0, 0, 0, 3), cpuAt(1, 0, 5, 75, 15)}, nics: nics, threads: other}.samples(4), nil)
	wantBound(t, v, BoundOtherWork)
	if v.Limit != nil || v.Cause == nil || v.Cause.Subject != "CPU 1" || !strings.Contains(v.Summary, "70 % user and system time that is not the command's") {
		t.Errorf("cause %+v: %s", v.Cause, v.Summary)
	}
}

// TestJudgeUnweighedPeak: a sample whose interval cannot be weighed (0 s)
// sets no peak, so a glitch of huge rates in it does not leave the real
// samples below half the "busiest" and the run unjudged.
func TestJudgeUnweighedPeak(t *testing.T) {
	pps := ppsFor(950, 1518)
	good := runOf{cpus: idleCPUs(0, 1), nics: []irq.NICRate{nicAt("eth0", pps, 1514, 0, 0)}}.samples(5)
	glitch := good[0]
	glitch.IntervalS = 0
	glitch.NICs = []irq.NICRate{nicAt("eth0", 1e9, 1514, 0, 0)}
	v := judgeRoom(append([]irq.Sample{glitch}, good...), []Limits{{NIC: "eth0", PortMbps: 1000}})
	wantBound(t, v, BoundEthernet)
	if v.ActiveSamples != 5 {
		t.Errorf("active samples %d, want 5", v.ActiveSamples)
	}
}
