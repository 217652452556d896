package monitor_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/stack"
)

// snapshotLimits are the Limits Inspect builds for a snapshot, as at the
// start of a real run.
func snapshotLimits(t *testing.T, name string) []monitor.Limits {
	t.Helper()
	h, err := nicdiag.Inspect(context.Background(), option.Root(filepath.Join("..", "testdata", "snapshots", name)))
	if err != nil {
		t.Fatal(err)
	}
	_, limits := h.Monitored()
	return limits
}

// forwarding is ports forwarding full-size frames both ways at pps each.
func forwarding(n int, pps float64, ports ...string) []irq.Sample {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var out []irq.Sample
	for i := range n {
		x := irq.Sample{Time: t0.Add(time.Duration(i+1) * time.Second), IntervalS: 1, IRQTimeAccounted: true}
		for c := range 4 {
			irqPct := 2.0
			x.CPUs = append(x.CPUs, irq.CPURate{CPU: c, IRQPct: &irqPct, SoftIRQPct: 10, BusyPct: 14, SystemPct: 2, IdlePct: 86})
		}
		for _, p := range ports {
			x.NICs = append(x.NICs, irq.NICRate{Name: p, RXPacketsPerS: pps, RXBytesPerS: pps * 1514, TXPacketsPerS: pps, TXBytesPerS: pps * 1514})
		}
		out = append(out, x)
	}
	return out
}

// judgeRoomy judges samples on a host whose stack had room in every layer:
// its namespace read without a drop, no conntrack, no shaper.
func judgeRoomy(samples []irq.Sample, limits []monitor.Limits) monitor.Verdict {
	w := monitor.NewWindow(limits)
	for _, x := range samples {
		w.AddSample(monitor.Sample{Sample: x, Stack: &stack.Sample{IntervalS: x.IntervalS, Namespaces: []stack.Namespace{{
			ID: 1, Sockets: &stack.SocketCounters{}, ConntrackAbsent: true}}}})
	}
	return w.Verdict()
}

// TestJudgeSnapshotSharedHop: on the 82576 mini-PCIe adapter of field
// report 001 (Limits from Inspect), both ports cross the one 2.5 GT/s x1
// hop: one port at the report's rate is half the hop and outside_host,
// both together fill it.
func TestJudgeSnapshotSharedHop(t *testing.T) {
	limits := snapshotLimits(t, "82576-minipcie-x1")
	if len(limits) != 2 || len(limits[0].Links) == 0 || len(limits[1].Links) == 0 || limits[0].Links[0].Addr != limits[1].Links[0].Addr {
		t.Fatalf("limits %+v: want two ports behind one hop", limits)
	}
	hop := limits[0].Links[0].Addr
	pcieOf := func(v monitor.Verdict) []monitor.Ceiling {
		var out []monitor.Ceiling
		for _, c := range v.Ceilings {
			if c.Layer == monitor.BoundPCIe {
				out = append(out, c)
			}
		}
		return out
	}

	one := judgeRoomy(forwarding(10, 56_740, "enp1s0f0"), limits)
	if one.Bound != monitor.BoundOutside {
		t.Errorf("one port: %s: %s", one.Bound, one.Summary)
	}
	both := judgeRoomy(forwarding(10, 56_740, "enp1s0f0", "enp1s0f1"), limits)
	if both.Bound != monitor.BoundPCIe || both.Limit.Subject != hop || !slices.Equal(both.Limit.NICs, []string{"enp1s0f0", "enp1s0f1"}) {
		t.Fatalf("both ports: %s %+v: %s", both.Bound, both.Limit, both.Summary)
	}
	p1, p2 := pcieOf(one), pcieOf(both)
	if len(p1) != 1 || len(p2) != 1 {
		t.Fatalf("pcie ceilings %+v / %+v", p1, p2)
	}
	if r := p2[0].Share / p1[0].Share; r < 1.999 || r > 2.001 {
		t.Errorf("two ports put %v times one port's load on the hop, want 2", r)
	}
	if p2[0].Share < 0.9 || p2[0].Share > 1 {
		t.Errorf("both ports at %v of the hop, want the report's 93-99 %%", p2[0].Share)
	}
}
