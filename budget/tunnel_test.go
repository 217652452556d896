package budget

import (
	"math"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// A Thunderbolt 3 tunnel (bridges at a nominal 2.5 GT/s x4, 22 Gb/s of PCIe
// data per direction) behind which the enclosure's own link is Gen3 x4: a
// 10GbE port fits, a 25GbE port does not, and the tunnel, not the 8 Gb/s
// its bridges report, sets the ceiling.
func TestTunnelCeiling(t *testing.T) {
	links := func(tunnel float64) []LinkParams {
		return []LinkParams{
			{Addr: "0000:07:01.0", GTs: 8, Width: 4, MPS: 128, Shared: 1},            // enclosure port → NIC
			{Addr: "0000:05:01.0", GTs: 2.5, Width: 4, MPS: 128, TunnelGbps: tunnel}, // the tunnel
			{Addr: "0000:00:1c.0", GTs: 8, Width: 4, MPS: 128},                       // host root port → controller
		}
	}
	p, _ := ProfileFor("atlantic", 0x1d6a, 0x07b1)
	r, err := Solve(links(22), p, Workload{PortMbps: 10000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Bound != BoundEthernet || r.Hops[1].RawGbps != 22 || r.Hops[1].TunnelGbps != 22 {
		t.Errorf("10GbE in a TB3 enclosure: %s-bound, tunnel hop raw %v", r.Bound, r.Hops[1].RawGbps)
	}
	p, _ = ProfileFor("mlx5_core", 0x15b3, 0x1015)
	r, err = Solve(links(22), p, Workload{PortMbps: 25000, Ports: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Bound != BoundTunnel || r.Hop != 1 || math.Abs(r.CeilingMbps.Nominal-22000) > 0.5 || r.CeilingMbps.High < r.CeilingMbps.Nominal {
		t.Errorf("25GbE in a TB3 enclosure: %s-bound at hop %d, %.0f Mb/s", r.Bound, r.Hop, r.CeilingMbps.Nominal)
	}
	// Read as a plain 2.5 GT/s x4 link, the same path would be blamed at
	// well under 8 Gb/s: the figure the kernel's own message gives.
	plain, err := Solve(links(0), p, Workload{PortMbps: 25000, Ports: 1})
	if err != nil || plain.CeilingMbps.Nominal > 8000 || plain.Bound != BoundPCIe {
		t.Errorf("nominal bridges: %v, %.0f Mb/s %s-bound", err, plain.CeilingMbps.Nominal, plain.Bound)
	}
	if _, err := Solve([]LinkParams{{GTs: 2.5, Width: 4, TunnelGbps: -1}}, p, Workload{PortMbps: 1000}); err == nil {
		t.Error("negative tunnel accepted")
	}
}

// A path whose only link reports width 0 is not called architectural: the
// budget says which link was not judged.
func TestNoLinkReasonUnknown(t *testing.T) {
	n := &nicinfo.NIC{Name: "eth0", Bus: nicinfo.BusPCI, PCI: &nicinfo.PCIFunction{Address: "0000:01:00.0", VendorID: 0x8086, DeviceID: 0x1521},
		Link: nicinfo.Link{SpeedMbps: 1000}}
	path := &pcie.Path{Hops: []pcie.Hop{{Upstream: pcie.End{Address: "0000:00:1c.0"}, Verdict: pcie.VerdictUnknown,
		Reason: "the link reports width 0 (down, or not reported)"}}}
	b, err := For(n, nil, path, Workload{})
	if err != nil || b.Bound != BoundEthernet || !strings.Contains(b.NoPCIe, "unknown speed or width") || strings.Contains(b.NoPCIe, "architectural") {
		t.Errorf("%+v, %v", b, err)
	}
}
