package budget

import (
	"testing"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// A dual-port ConnectX-6 Dx (15b3:101d, 200000 Mb/s in the known-device
// table) on a 16 GT/s x16 link, port 0 at 100 Gb/s, port 1 uncabled
// (speed unknown, its supported modes up to 100000baseCR4/Full): port 0's
// default workload is its own port alone (port 1 carries nothing), and
// port 1's takes its fastest mode, not the chip's 200000, for both ports
// (197399 Mb/s of demand, not the 394798 that two ports at 200000 make).
// Port 0 is Ethernet-bound. Reconstructed: the link and modes are what
// mlx5_core reports for an MCX623106AN in a Gen4 x16 slot.
func TestPortsIdleAndModes(t *testing.T) {
	p0, p1 := pcie.Address("0000:41:00.0"), pcie.Address("0000:41:00.1")
	path := &pcie.Path{Hops: []pcie.Hop{{
		Upstream:   pcie.End{Address: "0000:40:01.1"},
		Downstream: pcie.End{Address: p0},
		Speed:      16, Width: 16, CapableSpeed: 16, CapableWidth: 16,
		Functions: []pcie.Function{{Address: p0, Network: true, Class: 0x020000}, {Address: p1, Network: true, Class: 0x020000}},
		Verdict:   pcie.VerdictOK,
	}}}
	nic := func(addr pcie.Address, speed int, modes ...string) *nicinfo.NIC {
		return &nicinfo.NIC{Name: "p" + string(addr[len(addr)-1]), Bus: nicinfo.BusPCI, Driver: "mlx5_core",
			PCI:  &nicinfo.PCIFunction{Address: addr, VendorID: 0x15b3, DeviceID: 0x101d, Class: 0x020000},
			Link: nicinfo.Link{SpeedMbps: speed, Supported: modes}}
	}
	modes := []string{"25000baseCR/Full", "50000baseCR2/Full", "100000baseCR4/Full"}
	up, down := nic(p0, 100000, modes...), nic(p1, nicinfo.SpeedUnknown, modes...)
	ports := Ports{Idle: map[pcie.Address]bool{p1: true}, SiblingMbps: 100000}

	b, err := ForPorts(up, ports, path, Workload{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Workload.Ports != 1 || b.Workload.PortMbps != 100000 || b.Bound != BoundEthernet {
		t.Errorf("port 0: %d ports at %v, %s-bound (demand %.0f)", b.Workload.Ports, b.Workload.PortMbps, b.Bound, b.EthernetMbps)
	}
	// Asked for both ports, both count: the shared count is not cut.
	if b, err := ForPorts(up, ports, path, Workload{Ports: 2}); err != nil || b.MostPorts() != 2 || b.Workload.Ports != 2 {
		t.Errorf("port 0, 2 ports asked: %+v, %v", b, err)
	}

	b, err = ForPorts(down, ports, path, Workload{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Workload.Ports != 2 || b.Workload.PortMbps != 100000 || b.PortSpeedSource != FromModes || int(b.EthernetMbps) != 197399 {
		t.Errorf("port 1: %d ports at %v from %q, %s-bound (demand %.0f, PCIe %.0f)",
			b.Workload.Ports, b.Workload.PortMbps, b.PortSpeedSource, b.Bound, b.EthernetMbps, b.PCIeMbps.Nominal)
	}
	// No modes: the sibling's speed, still not the chip's 200000.
	b, err = ForPorts(nic(p1, nicinfo.SpeedUnknown), ports, path, Workload{})
	if err != nil || b.Workload.PortMbps != 100000 || b.PortSpeedSource != FromSibling {
		t.Errorf("port 1 without modes: %v from %q, %v", b.Workload.PortMbps, b.PortSpeedSource, err)
	}
	// Nothing known of either: the chip's top speed, as before.
	b, err = ForPorts(nic(p1, nicinfo.SpeedUnknown), Ports{}, path, Workload{})
	if err != nil || b.Workload.PortMbps != 200000 || b.PortSpeedSource != FromChip {
		t.Errorf("port 1, nothing known: %v from %q, %v", b.Workload.PortMbps, b.PortSpeedSource, err)
	}
}
