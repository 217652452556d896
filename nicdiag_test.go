package nicdiag

import (
	"context"
	"testing"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

const snaps = "testdata/snapshots/"

// The seed case (docs/field-reports.md report 001, docs/pcie-model.md §4.1): a dual 82576 on a
// mini-PCIe→x1 adapter forwards both ways at just under 1400 Mb/s.
func TestExplainSeed82576(t *testing.T) {
	b, err := Explain(context.Background(), "enp1s0f0", budget.Workload{}, option.Root(snaps+"82576-minipcie-x1"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Bound != budget.BoundPCIe {
		t.Errorf("bound = %s, want pcie", b.Bound)
	}
	if b.Workload.Ports != 2 || b.Workload.Direction != budget.Both || b.Workload.FrameBytes != 1518 || b.Workload.PortMbps != 1000 {
		t.Errorf("default workload = %+v, want 2 ports × 1000 Mb/s, both, 1518 B", b.Workload)
	}
	if c := b.CeilingMbps; c.Nominal < 1300 || c.Nominal > 1490 || c.Low > c.Nominal || c.High < c.Nominal {
		t.Errorf("ceiling = %+v, want nominal in 1300–1490 with low ≤ nominal ≤ high", c)
	}
	// The x4 card in an x1 adapter: the port caps the width (what a
	// matching slot lifts), the 2.5 GT/s chip caps the speed.
	if b.LimitingHop != "0000:00:1c.0" || b.LimitedBy != "port" || b.WidthLimitedBy != "port" || b.SpeedLimitedBy != "device" {
		t.Errorf("limiting hop %q limited by %q (speed %q, width %q), want 0000:00:1c.0, width by the port, speed by the device",
			b.LimitingHop, b.LimitedBy, b.SpeedLimitedBy, b.WidthLimitedBy)
	}
	if b.EthernetMbps < 1970 || b.EthernetMbps > 1980 {
		t.Errorf("ethernet = %.0f, want 1974 (2 × 1000 × 1518/1538)", b.EthernetMbps)
	}
}

func TestExplainOneWayIsEthernetBound(t *testing.T) {
	b, err := Explain(context.Background(), "enp1s0f0", budget.Workload{Direction: budget.Forward}, option.Root(snaps+"82576-minipcie-x1"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Bound != budget.BoundEthernet || b.CeilingMbps.Nominal < 980 || b.CeilingMbps.Nominal > 990 {
		t.Errorf("one-way forwarding: %s-bound at %.0f Mb/s, want ethernet-bound at 987", b.Bound, b.CeilingMbps.Nominal)
	}
}

func TestExplainI350SameAdapterIsEthernetBound(t *testing.T) {
	b, err := Explain(context.Background(), "enp1s0f0", budget.Workload{}, option.Root(snaps+"i350-minipcie-x1"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Bound != budget.BoundEthernet {
		t.Errorf("I350 at 5 GT/s x1: bound %s, want ethernet", b.Bound)
	}
}

func TestExplainVirtualAndUnknown(t *testing.T) {
	b, err := Explain(context.Background(), "eth0", budget.Workload{}, option.Root(snaps+"virtio-kvm"))
	if err != nil || b.Bound != budget.BoundNone || b.NoPCIe == "" || len(b.Hops) != 0 {
		t.Errorf("virtio: %+v, %v; want a budget with nothing physical to bound it", b, err)
	}
	_, err = Explain(context.Background(), "nosuch0", budget.Workload{}, option.Root(snaps+"virtio-kvm"))
	if err == nil {
		t.Error("unknown interface: no error")
	}
}

func codes(fs []finding.Finding) map[finding.Code]finding.Severity {
	m := map[finding.Code]finding.Severity{}
	for _, f := range fs {
		if s, ok := m[f.Code]; !ok || f.Severity > s {
			m[f.Code] = f.Severity
		}
	}
	return m
}

func TestCheckSeed82576(t *testing.T) {
	r, err := Check(context.Background(), option.Root(snaps+"82576-minipcie-x1"))
	if err != nil {
		t.Fatal(err)
	}
	c := codes(r.Findings)
	if s, ok := c[finding.PCIeBottleneck]; !ok || s != finding.Warn {
		t.Errorf("pcie.bottleneck = %v (present %v), want warn (1435 of 1974 Mb/s is above half)", s, ok)
	}
	if s, ok := c[finding.PCIeSlotLimited]; !ok || s != finding.Warn {
		t.Errorf("pcie.slot_limited = %v (present %v), want warn: an x4 slot removes the bottleneck", s, ok)
	}
	if _, ok := c[finding.PCIeLinkDowngraded]; ok {
		t.Error("pcie.link_downgraded raised for a Gen1-only chip behind a Gen2 port")
	}
	n := 0
	for _, f := range r.Findings {
		if f.Code == finding.PCIeBottleneck || f.Code == finding.PCIeSlotLimited {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d PCIe findings, want one bottleneck and one slot limit for the card's one link", n)
	}
	if r.Findings[0].Severity < r.Findings[len(r.Findings)-1].Severity {
		t.Error("findings not worst first")
	}
}

func TestCheckHealthyAndVirtual(t *testing.T) {
	for _, snap := range []string{"connectx3pro-haswell", "virtio-kvm", "i350-minipcie-x1", "empty-ports-x0"} {
		r, err := Check(context.Background(), option.Root(snaps+snap))
		if err != nil {
			t.Fatalf("%s: %v", snap, err)
		}
		for _, f := range r.Findings {
			switch f.Code {
			case finding.PCIeBottleneck, finding.PCIeLinkDowngraded:
				t.Errorf("%s: unexpected %s", snap, f)
			case finding.PCIeSlotLimited:
				if f.Severity != finding.Info {
					t.Errorf("%s: slot limit that costs nothing raised to %s", snap, f.Severity)
				}
			}
		}
	}
}

func TestCheckInterfaceFilter(t *testing.T) {
	r, err := Check(context.Background(), option.Root(snaps+"82576-minipcie-x1"), WithInterfaces("enp1s0f1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Interfaces(); len(got) != 1 || got[0] != "enp1s0f1" {
		t.Fatalf("NICs = %v, want enp1s0f1 only", got)
	}
	if _, ok := codes(r.Findings)[finding.PCIeBottleneck]; !ok {
		t.Error("the shared link's bottleneck is missing when checking the second port alone")
	}
	if _, err := Check(context.Background(), option.Root(snaps+"82576-minipcie-x1"), WithInterfaces("nosuch0")); err == nil {
		t.Error("unknown interface: no error")
	}
}

func BenchmarkExplain(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		if _, err := Explain(ctx, "enp1s0f0", budget.Workload{}, option.Root(snaps+"82576-minipcie-x1")); err != nil {
			b.Fatal(err)
		}
	}
}

// Seed 000: the MikroTik card is flagged, and its PCIe "bottleneck", which
// rests on the driver's nominal 25000 Mb/s, is only information.
func TestCheckMasqueradingCard(t *testing.T) {
	r, err := Check(context.Background(), option.Root(snaps+"ccr2004-host"))
	if err != nil {
		t.Fatal(err)
	}
	c := codes(r.Findings)
	if s, ok := c[finding.NICMisidentified]; !ok || s != finding.Warn {
		t.Errorf("nic.misidentified = %v (present %v), want warn", s, ok)
	}
	if s, ok := c[finding.PCIeBottleneck]; ok && s != finding.Info {
		t.Errorf("pcie.bottleneck on a nominal speed = %v, want info", s)
	}
}

// The snapshot of the development VM (nicdiag snapshot): virtio on
// conventional PCI, joined through virtio2, nothing to judge on PCIe.
func TestCheckFirecrackerSnapshot(t *testing.T) {
	r, err := Check(context.Background(), option.Root(snaps+"firecracker-virtio-vm"))
	if err != nil {
		t.Fatal(err)
	}
	sel := r.Host.Selected
	if len(sel) != 1 || sel[0].Name != "eth0" || sel[0].PCI == nil ||
		sel[0].PCI.Address != "0000:00:03.0" || sel[0].Driver != "virtio_net" || sel[0].PCI.Driver != "virtio-pci" {
		t.Fatalf("NICs = %+v, want eth0 = virtio_net on 0000:00:03.0", sel)
	}
	for _, f := range r.Findings {
		if f.Code == finding.PCIeBottleneck || f.Code == finding.PCIeLinkDowngraded || f.Code == finding.NICMisidentified {
			t.Errorf("virtual NIC judged: %s", f)
		}
	}
}

// BenchmarkBudget is explain's arithmetic for one NIC, its inventory and
// path already read: the model solved now and at capability.
func BenchmarkBudget(b *testing.B) {
	ctx := context.Background()
	root := snaps + "82576-minipcie-x1"
	nics, err := nicinfo.List(ctx, option.Root(root))
	if err != nil {
		b.Fatal(err)
	}
	n := &nics[0]
	path, err := pcie.PathTo(ctx, n.PCI.Address, option.Root(root))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := budget.For(n, nil, path, budget.Workload{}); err != nil {
			b.Fatal(err)
		}
	}
}
