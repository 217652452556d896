package pcie

import (
	"strings"
	"testing"
)

func idEnd(addr string, vendor, device uint16, class uint32, maxS float64, maxW int, curS float64, curW int) End {
	e := hopEnd(addr, maxS, maxW, curS, curW, nil)
	e.VendorID, e.DeviceID, e.Class = vendor, device, class
	return e
}

// The links the chip table and the tunnel table know: each is judged
// architectural with its reason, a tunnel carries its class's figure, and
// the physical links next to them keep their verdicts.
func TestKnownLinks(t *testing.T) {
	const bridge, nic = 0x060400, 0x020000
	for _, tc := range []struct {
		name    string
		hop     Hop
		verdict Verdict
		reason  string  // substring of Reason
		tunnel  float64 // Gb/s, 0 for none
	}{
		{"X722 behind the Lewisburg virtual switch port", Hop{
			Upstream:   idEnd("0000:b4:03.0", 0x8086, 0x37c5, bridge, 2.5, 1, 2.5, 1),
			Downstream: idEnd("0000:b5:00.0", 0x8086, 0x37d2, nic, 2.5, 1, 2.5, 1)},
			VerdictArchitectural, "C620 (Lewisburg) PCH virtual switch port 3", 0},
		{"the Lewisburg uplink is a real link", Hop{
			Upstream:   idEnd("0000:b2:00.0", 0x8086, 0x2030, bridge, 8, 16, 8, 4),
			Downstream: idEnd("0000:b3:00.0", 0x8086, 0x37c0, bridge, 8, 8, 8, 4)},
			VerdictDowngraded, "", 0},
		{"X553 on its SoC port", Hop{
			Upstream:   idEnd("0000:00:16.0", 0x8086, 0x19d1, bridge, 2.5, 1, 2.5, 1),
			Downstream: idEnd("0000:02:00.0", 0x8086, 0x15c8, nic, 2.5, 1, 2.5, 1)},
			VerdictArchitectural, "Atom C3000", 0},
		{"Titan Ridge host port to a Titan Ridge enclosure: a TB3 tunnel", Hop{
			Upstream:   idEnd("0000:05:01.0", 0x8086, 0x15ea, bridge, 2.5, 4, 2.5, 4),
			Downstream: idEnd("0000:06:00.0", 0x8086, 0x15ef, bridge, 2.5, 4, 2.5, 4)},
			VerdictArchitectural, "Thunderbolt 3", 22},
		{"Maple Ridge host, Titan Ridge enclosure: the weaker end sets the class", Hop{
			Upstream:   idEnd("0000:05:01.0", 0x8086, 0x1136, bridge, 2.5, 4, 2.5, 4),
			Downstream: idEnd("0000:06:00.0", 0x8086, 0x15ef, bridge, 2.5, 4, 2.5, 4)},
			VerdictArchitectural, "Thunderbolt 3", 22},
		{"Tiger Lake TBT root port to any device: a TB4 tunnel", Hop{
			Upstream:   idEnd("0000:00:07.0", 0x8086, 0x9a23, bridge, 2.5, 1, 2.5, 1),
			Downstream: idEnd("0000:20:00.0", 0x1b21, 0x2463, bridge, 8, 4, 2.5, 1)},
			VerdictArchitectural, "Thunderbolt 4", 32},
		{"inside the enclosure: its port to the NIC is a physical link", Hop{
			Upstream:   idEnd("0000:07:01.0", 0x8086, 0x15ef, bridge, 8, 4, 8, 4),
			Downstream: idEnd("0000:08:00.0", 0x15b3, 0x1015, nic, 8, 8, 8, 4)},
			VerdictSlotLimited, "", 0},
		{"an unknown device gets the normal verdicts", Hop{
			Upstream:   idEnd("0000:00:1c.0", 0x8086, 0xa33c, bridge, 8, 4, 2.5, 1),
			Downstream: idEnd("0000:01:00.0", 0x8086, 0x1533, nic, 2.5, 1, 2.5, 1)},
			VerdictOK, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.hop
			evaluate(&h)
			if h.Verdict != tc.verdict || !strings.Contains(h.Reason, tc.reason) {
				t.Fatalf("verdict %s (%s), want %s with %q", h.Verdict, h.Reason, tc.verdict, tc.reason)
			}
			switch {
			case tc.tunnel == 0 && h.Tunnel != nil:
				t.Errorf("tunnel %+v on a link", h.Tunnel)
			case tc.tunnel > 0 && (h.Tunnel == nil || h.Tunnel.Gbps != tc.tunnel || h.Tunnel.Basis == "" || h.Tunnel.How == ""):
				t.Errorf("tunnel %+v, want %v Gb/s with basis and how", h.Tunnel, tc.tunnel)
			}
			if h.Verdict == VerdictArchitectural && len(h.Findings()) != 0 {
				t.Errorf("architectural link judged: %v", h.Findings())
			}
		})
	}
}

// A bridge with the Thunderbolt VSEC but an ID the table lacks still
// marks a tunnel (the weakest class), as Linux's set_pcie_thunderbolt does.
func TestTunnelByVSEC(t *testing.T) {
	tb := func(addr string) End {
		e := idEnd(addr, 0x8086, 0xffee, 0x060400, 2.5, 4, 2.5, 4)
		e.Config = &Config{CapsReadable: true, Thunderbolt: true}
		return e
	}
	h := Hop{Upstream: tb("0000:05:01.0"), Downstream: tb("0000:06:00.0")}
	evaluate(&h)
	if h.Tunnel == nil || h.Tunnel.Class != "Thunderbolt 3" {
		t.Fatalf("VSEC-only bridges: %+v (%s)", h.Tunnel, h.Reason)
	}
}

// A TB4 root port with a Thunderbolt 3 enclosure below: the weaker class.
func TestTunnelRootPortTakesTheWeakerEnd(t *testing.T) {
	h := Hop{
		Upstream:   idEnd("0000:00:07.0", 0x8086, 0x9a23, 0x060400, 2.5, 4, 2.5, 4),
		Downstream: idEnd("0000:05:00.0", 0x8086, 0x15ef, 0x060400, 2.5, 4, 2.5, 4)}
	evaluate(&h)
	if h.Tunnel == nil || h.Tunnel.Class != "Thunderbolt 3" || h.Tunnel.Gbps != 22 {
		t.Errorf("Tiger Lake port, Titan Ridge enclosure: %+v", h.Tunnel)
	}
}
