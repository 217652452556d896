package pcie

import (
	"fmt"
	"strings"
)

// The links whose reported speed and width are not a trained physical
// link: ports and devices inside a chipset or SoC, and Thunderbolt/USB4
// tunnels. docs/placeholders.md has the table with its sources; a device
// that is not in it gets the normal verdicts.

// chipLink is a PCI ID whose link values are architectural: a function or
// port that sits inside a chipset or SoC.
type chipLink struct {
	what   string // what it is, for the evidence
	source string // how nicdiag knows
}

// Sources of the chip table.
const (
	srcLewisburgPorts = "pci.ids 8086:37c2-37c7 (C620 Series Chipset Family PCIe Virtual Switch Port); a Supermicro X11SPM-TF lspci shows 37c5 at 2.5GT/s x1 above the X722 while the 37c0 uplink runs 8GT/s x8"
	srcX722           = "Linux drivers/net/ethernet/intel/i40e/i40e_main.c: X722 sets I40E_HW_CAP_NO_PCI_LINK_CHECK (\"Devices on the IOSF bus do not have this information and will report PCI Gen 1 x 1 by default\")"
	srcX550EM         = "Linux drivers/net/ethernet/intel/ixgbe/ixgbe_x550.c ixgbe_get_bus_info_X550em: \"X550em is not a PCI device\", bus type internal, width and speed unknown"
	srcC3000Ports     = "pci.ids 8086:19d1/19d2 (Atom Processor C3000 Series Integrated LAN Root Port #0/#1), the ports above the SoC's X553 MACs"
	srcAMDGPP         = "pci.ids (Debian package pci.ids 2023.04.11): AMD \"Internal PCIe GPP Bridge\", a bridge inside the SoC"
)

// chipPorts are upstream ports whose link to the device below lies inside
// the chip.
var chipPorts = map[[2]uint16]chipLink{
	{0x8086, 0x37c2}: {"Intel C620 (Lewisburg) PCH virtual switch port 0", srcLewisburgPorts},
	{0x8086, 0x37c3}: {"Intel C620 (Lewisburg) PCH virtual switch port 1", srcLewisburgPorts},
	{0x8086, 0x37c4}: {"Intel C620 (Lewisburg) PCH virtual switch port 2", srcLewisburgPorts},
	{0x8086, 0x37c5}: {"Intel C620 (Lewisburg) PCH virtual switch port 3", srcLewisburgPorts},
	{0x8086, 0x37c7}: {"Intel C620 (Lewisburg) PCH virtual switch port 5", srcLewisburgPorts},
	{0x8086, 0x19d1}: {"Intel Atom C3000 integrated LAN root port #0", srcC3000Ports},
	{0x8086, 0x19d2}: {"Intel Atom C3000 integrated LAN root port #1", srcC3000Ports},
	{0x1022, 0x13e5}: {"AMD Ariel Internal PCIe GPP Bridge 0 to Bus A", srcAMDGPP},
	{0x1022, 0x13e6}: {"AMD Ariel Internal PCIe GPP Bridge 0 to Bus B", srcAMDGPP},
	{0x1022, 0x1454}: {"AMD Family 17h (Models 00h-0fh) Internal PCIe GPP Bridge 0 to Bus B", srcAMDGPP},
	{0x1022, 0x1484}: {"AMD Starship/Matisse Internal PCIe GPP Bridge 0 to bus[E:B]", srcAMDGPP},
	{0x1022, 0x14b9}: {"AMD Family 17h-19h Internal PCIe GPP Bridge", srcAMDGPP},
	{0x1022, 0x15db}: {"AMD Raven/Raven2 Internal PCIe GPP Bridge 0 to Bus A", srcAMDGPP},
	{0x1022, 0x15dc}: {"AMD Raven/Raven2 Internal PCIe GPP Bridge 0 to Bus B", srcAMDGPP},
	{0x1022, 0x15fd}: {"AMD FireFlight Internal PCIe GPP Bridge 0 to Bus A", srcAMDGPP},
	{0x1022, 0x15fe}: {"AMD FireFlight Internal PCIe GPP Bridge 0 to Bus B", srcAMDGPP},
	{0x1022, 0x162a}: {"AMD Arden Internal PCIe GPP Bridge 0 to bus X", srcAMDGPP},
	{0x1022, 0x1635}: {"AMD Renoir Internal PCIe GPP Bridge to Bus", srcAMDGPP},
	{0x1022, 0x1648}: {"AMD VanGogh Internal PCIe GPP Bridge to Bus", srcAMDGPP},
}

// chipDevices are functions inside a chipset or SoC whose own link values
// are a token the hardware reports, not a trained link.
var chipDevices = map[[2]uint16]chipLink{}

func init() {
	for _, d := range []uint16{0x37cc, 0x37ce, 0x37cf, 0x37d0, 0x37d1, 0x37d2, 0x37d3, 0x37d4} {
		chipDevices[[2]uint16{0x8086, d}] = chipLink{"Intel X722 MAC integrated in the C620 (Lewisburg) PCH", srcX722}
	}
	for _, d := range []uint16{0x15aa, 0x15ab, 0x15ac, 0x15ad, 0x15ae, 0x15b0} {
		chipDevices[[2]uint16{0x8086, d}] = chipLink{"Intel X552/X557 MAC integrated in the Xeon D-1500 SoC", srcX550EM}
	}
	for _, d := range []uint16{0x15c2, 0x15c3, 0x15c4, 0x15c6, 0x15c7, 0x15c8, 0x15ce, 0x15e4, 0x15e5} {
		chipDevices[[2]uint16{0x8086, d}] = chipLink{"Intel X553 MAC integrated in the Atom C3000 SoC", srcX550EM}
	}
}

// Tunnel is a PCIe link carried through a Thunderbolt or USB4 fabric: the
// speed and width its bridges report are nominal, and what it carries is
// the tunnel's own figure.
type Tunnel struct {
	// Class is the fabric: "Thunderbolt 3", "Thunderbolt 4 / USB4 40G",
	// "Thunderbolt 5 / USB4 80G".
	Class string `json:"class"`
	// Gbps is the PCIe data the tunnel carries per direction.
	Gbps float64 `json:"gbps"`
	// Basis cites the figure.
	Basis string `json:"basis"`
	// How says how nicdiag recognised the tunnel.
	How string `json:"how"`
	// Fabric is what /sys/bus/thunderbolt says of the routers below the
	// host (generation, lanes and speed), when it is there.
	Fabric string `json:"fabric,omitempty"`

	byVSEC bool // recognised by the VSEC alone: the class is a guess
}

// Tunnel classes, weakest first. Figures per direction; see
// docs/placeholders.md.
var (
	tunnelTB3 = Tunnel{Class: "Thunderbolt 3", Gbps: 22,
		Basis: "Thunderbolt 3 tunnels PCIe 3.0 x4 but carries about 22 Gb/s of PCIe data in practice (Intel requires at least 16 Gb/s; a ConnectX-4 Lx behind a Titan Ridge enclosure measured 20.5 Gb/s)"}
	tunnelTB4 = Tunnel{Class: "Thunderbolt 4 / USB4 40G", Gbps: 32,
		Basis: "Intel's Thunderbolt 4 certification requires 32 Gb/s of PCIe data; no separate figure is published for a 40 Gb/s USB4 PCIe tunnel, so it is taken as the same"}
	tunnelTB5 = Tunnel{Class: "Thunderbolt 5 / USB4 80G", Gbps: 64,
		Basis: "Thunderbolt 5 (USB4 v2, 80 Gb/s) raises the PCIe tunnel to 64 Gb/s (PCIe 4.0 x4), per Intel's announcement"}
)

// tbBridges are the PCIe switch ports of discrete Thunderbolt controllers
// (pci.ids; Linux drivers/thunderbolt/nhi.h), by the tunnel class they
// support.
var tbBridges = map[uint16]*Tunnel{
	0x1576: &tunnelTB3, 0x1578: &tunnelTB3, 0x15c0: &tunnelTB3, 0x15d3: &tunnelTB3, 0x15da: &tunnelTB3, // Alpine Ridge
	0x15e7: &tunnelTB3, 0x15ea: &tunnelTB3, 0x15ef: &tunnelTB3, // Titan Ridge
	0x1133: &tunnelTB4, 0x1136: &tunnelTB4, // Maple Ridge
	0x0b26: &tunnelTB4,                     // Goshen Ridge
	0x5780: &tunnelTB5, 0x5786: &tunnelTB5, // Barlow Ridge 80G host and hub
	0x5783: &tunnelTB4, 0x57a4: &tunnelTB4, // Barlow Ridge 40G host and hub
}

// tunnelRootPorts are CPU-integrated Thunderbolt/USB4 root ports and
// USB4 bridges (pci.ids): the link below them is a tunnel whatever the
// device at its other end.
var tunnelRootPorts = map[[2]uint16]*Tunnel{}

func init() {
	for _, d := range []uint16{0x8a1d, 0x8a1f, 0x8a21, 0x8a23} { // Ice Lake Thunderbolt 3 root ports
		tunnelRootPorts[[2]uint16{0x8086, d}] = &tunnelTB3
	}
	for _, d := range []uint16{0x9a23, 0x9a25, 0x9a27, 0x9a29, 0x9a2b, 0x9a2d, 0x9a2f, 0x9a31, // Tiger Lake
		0x466e, 0x463f, 0x462f, 0x461f, // Alder Lake-P
		0xa76e, 0xa71f, 0xa72f, // Raptor Lake-P
		0x7ec4, 0x7ec5, 0x7ec6, 0x7ec7, // Meteor Lake-P
		0xa84e, 0xa84f} { // Lunar Lake
		tunnelRootPorts[[2]uint16{0x8086, d}] = &tunnelTB4
	}
	for _, d := range []uint16{0x150a, 0x14cd, 0x14ef} { // AMD USB4 bridges and tunnels
		tunnelRootPorts[[2]uint16{0x1022, d}] = &tunnelTB4
	}
}

// tunnelOf returns the tunnel a hop's link is carried through, or nil.
func tunnelOf(h *Hop) *Tunnel {
	up, down := &h.Upstream, &h.Downstream
	if t := tunnelRootPorts[[2]uint16{up.VendorID, up.DeviceID}]; t != nil {
		c := *t
		if dt := tbBridge(down); dt != nil && dt.Gbps < c.Gbps {
			c = *dt // an older controller at the far end: the weaker class
		}
		c.How = fmt.Sprintf("port %s is %04x:%04x, a Thunderbolt/USB4 root port or bridge (pci.ids)", up.Address, up.VendorID, up.DeviceID)
		return &c
	}
	ut, dt := tbBridge(up), tbBridge(down)
	if ut == nil || dt == nil {
		return nil
	}
	c := *ut
	if dt.Gbps < c.Gbps {
		c = *dt
	}
	c.How = fmt.Sprintf("both ends are Thunderbolt controller bridges (%04x:%04x and %04x:%04x in pci.ids, or the Intel Thunderbolt VSEC 0x1234 in config space, as Linux's set_pcie_thunderbolt tests): the link between two controllers is the tunnel",
		up.VendorID, up.DeviceID, down.VendorID, down.DeviceID)
	return &c
}

// tbBridge returns the tunnel class of a Thunderbolt controller's bridge, or
// nil for other functions. A bridge with the Thunderbolt VSEC but an ID not
// in the table is taken as the weakest class.
func tbBridge(e *End) *Tunnel {
	if e.VendorID == vendorIntel {
		if t := tbBridges[e.DeviceID]; t != nil {
			return t
		}
	}
	if isTBT(e) && e.Class>>8 == 0x0604 {
		return &tunnelVSEC
	}
	return nil
}

// tunnelVSEC is the class of a bridge known only by its Thunderbolt VSEC.
var tunnelVSEC = func() Tunnel { t := tunnelTB3; t.byVSEC = true; return t }()

// chipReason says why the hop's link is inside a chip, or "".
func chipReason(h *Hop) string {
	if c, ok := chipPorts[[2]uint16{h.Upstream.VendorID, h.Upstream.DeviceID}]; ok {
		return fmt.Sprintf("link inside the chip: port %s is %04x:%04x, %s (%s), so its reported speed is architectural",
			h.Upstream.Address, h.Upstream.VendorID, h.Upstream.DeviceID, c.what, c.source)
	}
	if c, ok := chipDevices[[2]uint16{h.Downstream.VendorID, h.Downstream.DeviceID}]; ok {
		return fmt.Sprintf("link inside the chip: %s is %04x:%04x, an %s (%s), so its reported speed is a token",
			h.Downstream.Address, h.Downstream.VendorID, h.Downstream.DeviceID, c.what, c.source)
	}
	return ""
}

// fabric is what readFabric read: the routers' lowest generation and their
// links.
type fabric struct {
	gen  int
	desc string
}

// readFabric reads the Thunderbolt/USB4 routers below the host
// (/sys/bus/thunderbolt/devices/D-R, not the host router D-0): the lowest
// generation among them and a description of their links, or 0 and "" when
// there are none.
func (w *walker) readFabric() (gen int, desc string) {
	r := w.o.root
	const dir = "/sys/bus/thunderbolt/devices"
	names, err := r.ReadDir(dir)
	if err != nil {
		return 0, ""
	}
	var parts []string
	for _, n := range names {
		d, router, ok := strings.Cut(n, "-")
		if !ok || router == "0" || d == "" || strings.ContainsAny(router, ".:") {
			continue // the host router, a domain or an XDomain/service
		}
		g, err := r.ReadInt(dir + "/" + n + "/generation")
		if err != nil || g <= 0 || g > 16 {
			continue
		}
		if gen == 0 || int(g) < gen {
			gen = int(g)
		}
		p := fmt.Sprintf("%s: generation %d", n, g)
		speed, _ := r.ReadString(dir + "/" + n + "/rx_speed")
		lanes, _ := r.ReadInt(dir + "/" + n + "/rx_lanes")
		if speed != "" && lanes > 0 {
			p += fmt.Sprintf(", %d × %s", lanes, strings.TrimSpace(speed))
		}
		parts = append(parts, p)
	}
	return gen, strings.Join(parts, "; ")
}

// refineTunnel adds what /sys/bus/thunderbolt says to a tunnel found by
// VSEC alone (no ID in the table: class taken as the weakest), which the
// routers' generation can raise: 4 is USB4.
func refineTunnel(t *Tunnel, gen int, desc string) {
	if desc == "" {
		return
	}
	t.Fabric = desc
	if t.byVSEC && gen >= 4 && t.Gbps < tunnelTB4.Gbps {
		how := t.How
		*t = tunnelTB4
		t.How, t.Fabric = how+"; /sys/bus/thunderbolt reports a USB4 router (generation 4)", desc
	}
}
