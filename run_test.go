package nicdiag_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/stack"
)

var updateRuns = flag.Bool("update-runs", false, "rewrite testdata/runs/*.jsonl from the field reports' numbers")

// nicLoad is one NIC's counters in a reconstructed run: packets per second
// and the mean bytes per packet as a Linux driver counts them (no FCS).
type nicLoad struct {
	name           string
	rxPPS, rxBytes float64
	txPPS, txBytes float64
	losses         []irq.LossRate
	queues         []irq.QueueRate
}

// cpuLoad is one CPU's load in a reconstructed run.
type cpuLoad struct {
	irq, softirq, user, system float64
}

// runCase is a monitored run rebuilt from a field report: the snapshot of
// the machine (its Limits come from Inspect, as at the start of a real
// run) and the counters the report's numbers imply.
type runCase struct {
	name     string
	snapshot string
	origin   string // where the numbers come from, and what is reconstructed
	nics     []nicLoad
	cpus     []cpuLoad
	threads  []irq.ThreadRate
	want     monitor.Bound
	// wantShare bounds the verdict's achieved/ceiling share; 0: unchecked.
	wantShareLo, wantShareHi float64
	// wantText must appear in the verdict's summary.
	wantText []string
	// stack is this host's stack in sample i (nil: not read); wantCodes
	// are findings the record must have besides the verdict's.
	stack     func(i int) *stack.Sample
	wantCodes []finding.Code
}

func (c runCase) samples(n int) []monitor.Sample {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var out []monitor.Sample
	for i := 0; i < n; i++ {
		x := irq.Sample{Time: t0.Add(time.Duration(i+1) * time.Second), IntervalS: 1, IRQTimeAccounted: true}
		for id, l := range c.cpus {
			irqPct := l.irq
			busy := l.irq + l.softirq + l.user + l.system
			x.CPUs = append(x.CPUs, irq.CPURate{CPU: id, IRQPct: &irqPct, SoftIRQPct: l.softirq, BusyPct: busy,
				UserPct: l.user, SystemPct: l.system, IdlePct: 100 - busy})
		}
		for _, l := range c.nics {
			x.NICs = append(x.NICs, irq.NICRate{Name: l.name, RXPacketsPerS: l.rxPPS, RXBytesPerS: l.rxPPS * l.rxBytes,
				TXPacketsPerS: l.txPPS, TXBytesPerS: l.txPPS * l.txBytes, Losses: l.losses, Queues: l.queues})
		}
		x.Threads = c.threads
		s := monitor.Sample{Sample: x}
		if c.stack != nil {
			s.Stack = c.stack(i)
			s.Stack.Time, s.Stack.IntervalS = x.Time, 1
		}
		out = append(out, s)
	}
	return out
}

// fieldRuns are the field reports' runs (docs/field-reports.md). Counter
// values are reconstructed from the reported throughput: bytes per packet
// 1514 for full-size TCP segments (1518-byte frames), 66 for their ACKs.
var fieldRuns = []runCase{{
	name:     "82576-seed-pcie",
	snapshot: "82576-minipcie-x1",
	origin: "report 001: the dual 82576 on a 2.5 GT/s x1 mini-PCIe adapter, both ports forwarding both ways at once, " +
		"just under 1400 Mb/s; reconstructed as 689 Mb/s of 1518-byte frames per port per direction (1378 per direction in all); " +
		"CPU load reconstructed (the report gives none): the busiest of 4 cores 31 % busy",
	nics: []nicLoad{
		{name: "enp1s0f0", rxPPS: 56_740, rxBytes: 1514, txPPS: 56_740, txBytes: 1514},
		{name: "enp1s0f1", rxPPS: 56_740, rxBytes: 1514, txPPS: 56_740, txBytes: 1514},
	},
	cpus:        []cpuLoad{{irq: 4, softirq: 25, system: 2}, {irq: 3, softirq: 22, system: 2}, {system: 3}, {system: 2}},
	want:        monitor.BoundPCIe,
	wantShareLo: 0.93, wantShareHi: 0.99,
	wantText: []string{"enp1s0f0+enp1s0f1 moved 1378 Mb/s per direction", "the 2.5 GT/s x1 link at 0000:00:1c.0",
		"the PCIe path bound this run", "the busiest core was 31 % busy"},
}, {
	name:     "i350-same-adapter-ethernet",
	snapshot: "i350-minipcie-x1",
	origin: "report 001: I350 cards on the same adapter, 2000 Mb/s in OpenWrt (996 + 996); reconstructed as each port at " +
		"80,900 frames/s of 1518 bytes each way (982 Mb/s of frame bits, the line carrying 987 at that size); CPU load reconstructed",
	nics: []nicLoad{
		{name: "enp1s0f0", rxPPS: 80_900, rxBytes: 1514, txPPS: 80_900, txBytes: 1514},
		{name: "enp1s0f1", rxPPS: 80_900, rxBytes: 1514, txPPS: 80_900, txBytes: 1514},
	},
	cpus:        []cpuLoad{{irq: 5, softirq: 35, system: 2}, {irq: 4, softirq: 30, system: 2}, {system: 3}, {system: 2}},
	want:        monitor.BoundEthernet,
	wantShareLo: 0.99, wantShareHi: 1.0,
	wantText: []string{"the Ethernet link bound this run"},
}, {
	name:     "ccr2004-fastpath-off-outside",
	snapshot: "ccr2004-host",
	origin: "report 000: the CCR2004-1G-2XS-PCIe with Fast Path off, 2.80 Gbit/s remote → host (WAN → LAN) while one of the " +
		"card's four cores is near 100 %; reconstructed as enp1s0f0 receiving 230,900 frames/s of 1518 bytes and sending ACKs, " +
		"with the host's cores (a Core i9-10850K, 20 CPUs here 4 shown) near idle; this host's stack reconstructed with room (the report names no drop, window or shaper: roomyStack)",
	nics: []nicLoad{
		{name: "enp1s0f0", rxPPS: 230_900, rxBytes: 1514, txPPS: 115_000, txBytes: 66},
		{name: "enp1s0f1"}, {name: "enp1s0f2"}, {name: "enp1s0f3"},
	},
	cpus:     []cpuLoad{{irq: 1, softirq: 9, system: 6}, {softirq: 2, system: 3}, {system: 2}, {system: 1}},
	stack:    roomyStack,
	want:     monitor.BoundOutside,
	wantText: []string{"nothing in this host was near its limit", "MikroTik CCR2004-1G-2XS-PCIe", "the card's CPU"},
}, {
	name:     "apu1c-rtl8111e-core",
	snapshot: "rtl8111-ich10-x58",
	origin: "report 004: the apu1c routing one iperf stream with --mss 600, ~190 kpps and 814 Mb/s, CPU ~80 % mostly in IRQ; " +
		"the machine is the rtl8111-ich10-x58 snapshot (two RTL8111 on 2.5 GT/s x1, as the apu1c's), reconstructed as " +
		"enp7s0 receiving 155,000 frames/s of 670 bytes and enp8s0 sending them, ACKs back, with CPU 0 in irq+softirq",
	nics: []nicLoad{
		{name: "enp7s0", rxPPS: 155_000, rxBytes: 666, txPPS: 35_000, txBytes: 66},
		{name: "enp8s0", rxPPS: 35_000, rxBytes: 66, txPPS: 155_000, txBytes: 666},
	},
	cpus:     []cpuLoad{{irq: 61, softirq: 38, system: 0.5}, {user: 20, system: 40}},
	want:     monitor.BoundCore,
	wantText: []string{"CPU 0 was", "that core bound this run"},
}}

// TestFieldRunVerdicts: each field report's run, rebuilt as a record
// with the machine's Limits in its start line, reads back (offline, as
// `nicdiag report` does) to the layer the report's author found by hand.
func TestFieldRunVerdicts(t *testing.T) {
	for _, c := range fieldRuns {
		t.Run(c.name, func(t *testing.T) {
			h, err := nicdiag.Inspect(context.Background(), option.Root(filepath.Join("testdata", "snapshots", c.snapshot)))
			if err != nil {
				t.Fatal(err)
			}
			_, limits := h.Monitored()
			var b bytes.Buffer
			w := monitor.NewWriter(&b)
			if err := w.WriteStart(monitor.Header{Interval: time.Second, Command: []string{"# " + c.origin}, Limits: limits}); err != nil {
				t.Fatal(err)
			}
			for _, x := range c.samples(10) {
				if err := w.WriteRunSample(x); err != nil {
					t.Fatal(err)
				}
			}
			file := filepath.Join("testdata", "runs", c.name+".jsonl")
			if *updateRuns {
				if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			onDisk, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -run TestFieldRunVerdicts -update-runs)", err)
			}
			if !bytes.Equal(onDisk, b.Bytes()) {
				t.Errorf("%s is stale: run go test -run TestFieldRunVerdicts -update-runs", file)
			}
			rec, err := monitor.ReadRecordFile(file)
			if err != nil {
				t.Fatal(err)
			}
			v := rec.Verdict
			if v == nil {
				t.Fatal("no verdict read back")
			}
			if v.Bound != c.want {
				t.Fatalf("bound %s, want %s: %s\nceilings %+v", v.Bound, c.want, v.Summary, v.Ceilings)
			}
			for _, s := range c.wantText {
				if !strings.Contains(v.Summary, s) {
					t.Errorf("summary lacks %q:\n%s", s, v.Summary)
				}
			}
			if c.wantShareHi > 0 {
				if v.Share == nil || *v.Share < c.wantShareLo || *v.Share > c.wantShareHi {
					t.Errorf("share %v, want %.2f..%.2f", v.Share, c.wantShareLo, c.wantShareHi)
				}
			}
			code := map[monitor.Bound]finding.Code{monitor.BoundPCIe: finding.RunPCIeBound, monitor.BoundEthernet: finding.RunEthernetBound,
				monitor.BoundOutside: finding.RunOutsideHost, monitor.BoundCore: finding.RunCoreBound,
				monitor.BoundConntrack: finding.RunConntrackDrops}[c.want]
			for _, code := range append([]finding.Code{code}, c.wantCodes...) {
				found := false
				for _, f := range rec.Summary.Findings {
					found = found || f.Code == code
				}
				if !found {
					t.Errorf("no %s among the record's findings %v", code, rec.Summary.Findings)
				}
			}
			t.Logf("%s", v.Summary)
		})
	}
}
