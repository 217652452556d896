package nicinfo

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/pcie"
)

// Identity checks: does what a NIC reports about itself (PCI ID, link
// speed, link modes, PCIe link capability, function count, driver) fit
// the chip its ID names?
//
// What is never evidence: the PCI subsystem IDs. Board vendors and OEMs
// (Dell 1028, HPE 103c/1590, Oracle 108e, Lenovo 17aa, Supermicro 15d9,
// Google 1ae0, ASUS 1043, Gigabyte 1458, MSI 1462, Intel 8086) put their
// own subsystem IDs on genuine chips, and many boards leave 0000:0000.
// None of the rules below reads them. The one use of the subsystem is the
// opposite direction: a hypervisor's subsystem vendor (QEMU's 1af4,
// VMware's 15ad) on another vendor's chip marks an emulated device, which
// is exempt from the checks.

// Labels returned by Label.
const (
	LabelVirtual  = "virtual"  // paravirtual or software interface: speed nominal
	LabelEmulated = "emulated" // a hypervisor's model of a real chip
	LabelUSB      = "usb"      // a USB network adapter
	LabelVF       = "vf"       // an SR-IOV virtual function
)

// virtualDrivers are netdev or PCI drivers that only ever drive a
// hypervisor's NIC.
var virtualDrivers = []string{"virtio_net", "virtio-pci", "hv_netvsc", "vmxnet3", "ena",
	"gve", "vif", "xen-netfront", "veth", "tun", "bridge", "bonding", "dummy"}

// passthroughDrivers hand a device to a VM or to user space; they bind any
// ID and say nothing about what the device is.
var passthroughDrivers = []string{"vfio-pci", "vfio_pci", "pci-stub", "pci_stub",
	"uio_pci_generic", "igb_uio", "pciback", "xen-pciback"}

// driverMaxMbps is the fastest chip a driver binds, for NICs whose ID the
// table lacks: every chip these drivers bind tops out at this speed (their
// ID tables in Linux drivers/net/ethernet). atl1c and r8169 are left out:
// atl1c reports 10G/25G for MikroTik's CCR2004 since 2021 and r8169 now
// drives 5G and 10G Realtek chips.
var driverMaxMbps = map[string]int{
	"e1000": 1000, "e1000e": 1000, "igbvf": 1000, "igc": 2500, "8139too": 100,
	"8139cp": 100, "tg3": 1000, "alx": 1000, "atl1": 1000, "atl1e": 1000, "atl2": 100,
	"ixgbe": 10000, "ixgbevf": 10000,
}

// masquerade is a device known to borrow another chip's PCI ID, recognised
// by that ID together with a PCIe link capability the real chip lacks.
type masquerade struct {
	vendor, device uint16
	gts            float64
	width          int
	probably       string // completes "probably ..."
	bound          string // completes "its throughput is bound by ..."
	fix            string
	source         string
}

var masquerades = []masquerade{{
	vendor: 0x1969, device: 0x1083, gts: 8, width: 8,
	probably: "a MikroTik CCR2004-1G-2XS-PCIe router card emulating it",
	bound:    "the card's CPU forwarding every packet",
	fix: "Treat the AR8151 name and the 25000 Mb/s figure as nominal: the host talks to a " +
		"RouterOS router whose ARM CPU forwards each packet (Fast Path/FastTrack on, and per-core " +
		"load on the card, decide what it carries); atl1c offers no offloads.",
	source: "Annapurna Labs SoC emulating the AR8151 programming interface (1969:1083, atl1c); " +
		"card LnkCap 8 GT/s x8 (PCIe 3.0 x8 per the review at https://bokehui.net/article/100113552)",
}}

// ChipOf returns the known-device row for a NIC's PCI or USB ID.
func ChipOf(n NIC) (KnownDevice, bool) {
	switch {
	case n.PCI != nil:
		return LookupDevice(n.PCI.VendorID, n.PCI.DeviceID)
	case n.USB != nil:
		return LookupUSBDevice(n.USB.VendorID, n.USB.ProductID)
	}
	return KnownDevice{}, false
}

// Label returns a short tag for list and show output: LabelVirtual,
// LabelEmulated, LabelUSB, LabelVF, or "" for a physical function of a
// real chip. Virtual and emulated NICs get no identity or PCIe verdicts:
// their speed is nominal and their PCIe link emulated.
func Label(n NIC) string {
	row, known := ChipOf(n)
	switch {
	case n.Bus == BusVirtual, known && row.Kind == KindVirtual,
		slices.Contains(virtualDrivers, n.Driver),
		n.PCI != nil && slices.Contains(virtualDrivers, n.PCI.Driver):
		return LabelVirtual
	case emulated(n):
		return LabelEmulated
	case n.Bus == BusUSB:
		return LabelUSB
	case n.PCI != nil && (n.PCI.PhysFn != "" || known && row.Kind == KindVF):
		return LabelVF
	}
	return ""
}

// emulated reports a hypervisor's model of a real chip: QEMU gives its
// devices subsystem 1af4:1100, VMware gives its own 15ad; neither makes
// hardware.
func emulated(n NIC) bool {
	if n.PCI == nil {
		return false
	}
	sv := n.PCI.SubsystemVendor
	return (sv == 0x1af4 || sv == 0x15ad) && sv != n.PCI.VendorID
}

// LinkModeSpeed returns the speed in Mb/s of a kernel link-mode name such
// as "1000baseT/Full", "2500baseX/Full" or "100000baseSR4/Full"; ok is
// false for names that carry no speed ("Autoneg", "TP", "bit 99").
func LinkModeSpeed(mode string) (mbps int, ok bool) {
	i := 0
	for i < len(mode) && i < 7 && mode[i] >= '0' && mode[i] <= '9' {
		i++
	}
	if i == 0 || !strings.HasPrefix(mode[i:], "base") {
		return 0, false
	}
	v, err := strconv.Atoi(mode[:i])
	if err != nil || v == 0 {
		return 0, false
	}
	return v, true
}

// maxMode returns the fastest mode in modes and its speed; 0 when none
// carries a speed.
func maxMode(modes []string) (string, int) {
	best, top := "", 0
	for _, m := range modes {
		v, ok := LinkModeSpeed(m)
		if ok && (v > top || v == top && strings.HasSuffix(m, "/Full") && !strings.HasSuffix(best, "/Full")) {
			best, top = m, v
		}
	}
	return best, top
}

// legacyModeSpeeds are speeds every NIC of that speed can express in the
// 32-bit legacy ethtool mode masks (ETHTOOL_GSET). For other speeds (2.5G
// and 5G BASE-T, 25G and up) a driver read through the legacy call can
// report the speed without the mode, so a missing mode is no evidence.
var legacyModeSpeeds = []int{10, 100, 1000, 10000, 20000, 40000, 56000}

// contradiction is one fact that does not fit the chip.
type contradiction struct {
	rule string // evidence key
	text string
	weak bool // on its own, not worth a warning
}

// unit is what one identity verdict is about: the functions of one PCI
// device that share an ID, or one non-PCI NIC.
type unit struct {
	key  string
	nics []NIC
}

// Identity is the identity verdict on one card: its finding and, typed,
// what the finding covers, for checks that build on it.
type Identity struct {
	Finding finding.Finding
	// Interfaces are every interface the verdict covers.
	Interfaces []string
	// Functions are the card's PCI functions (VFs left out).
	Functions []pcie.Address
	// Misidentified is true for nic.misidentified: the speed the driver
	// reports for these interfaces is nominal, not a measurement.
	Misidentified bool
}

// Identify returns the identity verdict on each card whose reported facts
// contradict the chip its ID names (nic.misidentified), and on each USB
// adapter (nic.usb_bus). A card is the functions of one PCI device
// (domain:bus:device) that share a vendor:device ID, so the MikroTik's four
// "AR8151" functions get one verdict; its subject is the interface name
// when the card has one interface, else the first function's PCI address.
// Virtual and emulated NICs are skipped: their speed is nominal and their
// PCIe link emulated.
//
// Severity: warn when the speed, link modes, PCIe capability or function
// count contradict the chip (the printed figures cannot be trusted and
// the real bound is elsewhere); info when the only oddity is a driver the
// table does not list for the ID (out-of-tree and newer drivers bind more
// IDs). Never error: a wrong name costs no throughput by itself.
func Identify(nics []NIC) []Identity {
	var out []Identity
	for _, u := range groupUnits(nics) {
		if id, ok := checkUnit(u); ok {
			out = append(out, id)
		}
	}
	for _, n := range nics {
		if n.Bus == BusUSB && Label(n) == LabelUSB {
			out = append(out, Identity{Finding: usbFinding(n), Interfaces: []string{n.Name}})
		}
	}
	return out
}

// CheckIdentity returns the findings of Identify, worst first.
func CheckIdentity(nics []NIC) []finding.Finding {
	ids := Identify(nics)
	out := make([]finding.Finding, len(ids))
	for i := range ids {
		out[i] = ids[i].Finding
	}
	finding.Sort(out)
	return out
}

// groupUnits groups PCI functions by device and ID, in input order.
func groupUnits(nics []NIC) []unit {
	var units []unit
	at := map[string]int{}
	for _, n := range nics {
		switch Label(n) {
		case LabelVirtual, LabelEmulated:
			continue
		}
		key := "iface " + n.Name
		if n.PCI != nil {
			key = fmt.Sprintf("%s %04x:%04x", n.PCI.Address.Slot(), n.PCI.VendorID, n.PCI.DeviceID)
		}
		if i, ok := at[key]; ok {
			units[i].nics = append(units[i].nics, n)
			continue
		}
		at[key] = len(units)
		units = append(units, unit{key: key, nics: []NIC{n}})
	}
	return units
}

func checkUnit(u unit) (Identity, bool) {
	first := u.nics[0]
	row, known := ChipOf(first)
	chip := chipName(first, row, known)
	// maxMbps is the chip's top speed; limit says where it comes from.
	maxMbps, limit := 0, ""
	switch {
	case known && row.MaxMbps > 0:
		maxMbps = row.MaxMbps
		limit = fmt.Sprintf("the %s's %d Mb/s", chip, maxMbps)
	case driverMaxMbps[first.Driver] > 0:
		maxMbps = driverMaxMbps[first.Driver]
		limit = fmt.Sprintf("the %d Mb/s every chip %s drives tops out at", maxMbps, first.Driver)
	}

	var cs []contradiction
	add := func(c contradiction) {
		if !slices.ContainsFunc(cs, func(o contradiction) bool { return o.text == c.text }) {
			cs = append(cs, c)
		}
	}
	ev := map[string]string{}
	var names []string
	var addrs []pcie.Address
	var lnkGTs float64
	var lnkWidth int
	for _, n := range u.nics {
		names = append(names, n.Name)
		vf := n.PCI != nil && (n.PCI.PhysFn != "" || known && row.Kind == KindVF)
		if n.PCI != nil && !vf && !slices.Contains(addrs, n.PCI.Address) {
			addrs = append(addrs, n.PCI.Address)
		}
		speed := n.Link.SpeedMbps
		topMode, top := maxMode(n.Link.Supported)
		if speed > 0 && top > 0 && speed > top &&
			(slices.Contains(legacyModeSpeeds, speed) || top < 1000 || maxMbps > 0 && speed > maxMbps) {
			add(contradiction{"speed_above_modes",
				fmt.Sprintf("reports %d Mb/s but lists no link mode above %d Mb/s (%s)", speed, top, topMode), false})
			ev["speed_mbps"] = strconv.Itoa(speed)
			ev["supported_max"] = topMode
		}
		if maxMbps > 0 && speed > maxMbps {
			add(contradiction{"speed_above_chip",
				fmt.Sprintf("reports %d Mb/s, above %s", speed, limit), false})
			ev["speed_mbps"] = strconv.Itoa(speed)
		}
		if maxMbps > 0 {
			var over []string
			for _, m := range append(slices.Clone(n.Link.Supported), n.Link.Advertised...) {
				if v, ok := LinkModeSpeed(m); ok && v > maxMbps && !slices.Contains(over, m) {
					over = append(over, m)
				}
			}
			if len(over) > 0 {
				add(contradiction{"modes_above_chip",
					fmt.Sprintf("lists link mode %s, above %s", strings.Join(over, ", "), limit), false})
				ev["modes_above_chip"] = strings.Join(over, " ")
			}
		}
		if n.PCI != nil && n.PCI.Link != nil && known && !vf && (row.PCIeGTs > 0 || row.PCIeWidth > 0) {
			l := n.PCI.Link
			if row.PCIeGTs > 0 && l.MaxSpeed > row.PCIeGTs*1.02 ||
				row.PCIeWidth > 0 && l.MaxWidth > row.PCIeWidth {
				lnkGTs, lnkWidth = l.MaxSpeed, l.MaxWidth
				add(contradiction{"pcie_beyond_chip",
					fmt.Sprintf("its PCIe link capability is %s, beyond the %s's %s",
						linkText(l.MaxSpeed, l.MaxWidth), chip, linkText(row.PCIeGTs, row.PCIeWidth)), false})
				ev["lnkcap"] = linkText(l.MaxSpeed, l.MaxWidth)
				ev["chip_pcie"] = linkText(row.PCIeGTs, row.PCIeWidth)
			}
		}
		if known && n.PCI != nil {
			for _, drv := range []string{n.PCI.Driver, n.Driver} {
				if drv == "" || slices.Contains(passthroughDrivers, drv) || slices.Contains(row.Drivers, drv) {
					continue
				}
				add(contradiction{"driver_mismatch",
					fmt.Sprintf("is driven by %s, which the table does not list for %04x:%04x (%s)",
						drv, row.VendorID, row.DeviceID, strings.Join(row.Drivers, ", ")), true})
				ev["driver"] = drv
			}
		}
	}
	if known && row.MaxPFs > 0 && len(addrs) > row.MaxPFs {
		add(contradiction{"functions_above_chip",
			fmt.Sprintf("shows %d functions on one PCI device, but the %s has at most %d",
				len(addrs), chip, row.MaxPFs), false})
		ev["functions"] = strconv.Itoa(len(addrs))
		ev["chip_max_functions"] = strconv.Itoa(row.MaxPFs)
	}
	if len(cs) == 0 {
		return Identity{}, false
	}

	sev := finding.Info
	identity := false // the device is not the chip at all
	for _, c := range cs {
		if !c.weak {
			sev = finding.Warn
		}
		if c.rule == "pcie_beyond_chip" || c.rule == "functions_above_chip" {
			identity = true
		}
	}
	var texts, rules []string
	for _, c := range cs {
		texts = append(texts, c.text)
		if !slices.Contains(rules, c.rule) {
			rules = append(rules, c.rule)
		}
	}
	ev["contradictions"] = strings.Join(texts, "; ")
	ev["rules"] = strings.Join(rules, " ")
	ev["interfaces"] = strings.Join(names, " ")
	if first.PCI != nil {
		ev["pci_id"] = fmt.Sprintf("%04x:%04x", first.PCI.VendorID, first.PCI.DeviceID)
		ev["pci_functions"] = joinAddrs(addrs)
		if first.PCI.DeviceName != "" {
			ev["pci_name"] = first.PCI.DeviceName
		}
	}
	if first.Driver != "" {
		ev["netdev_driver"] = first.Driver
	}
	if known {
		ev["chip"] = row.Chip
		ev["chip_describe"] = row.Describe()
		ev["chip_source"] = row.Source
		if row.MaxMbps > 0 {
			ev["chip_max_mbps"] = strconv.Itoa(row.MaxMbps)
		}
	}

	f := finding.Finding{
		Code:     finding.NICMisidentified,
		Severity: sev,
		Subject:  first.Name,
		Evidence: ev,
	}
	if len(u.nics) > 1 && len(addrs) > 0 {
		f.Subject = string(addrs[0])
	}
	// who names the card: "eth0 (8086:15d7)", or for several interfaces
	// "1969:1083 at 0000:01:00 (enp1s0f0, enp1s0f1)".
	who := first.Name
	switch {
	case first.PCI != nil && len(names) > 1:
		who = fmt.Sprintf("%s at %s (%s)", ev["pci_id"], first.PCI.Address.Slot(), strings.Join(names, ", "))
	case first.PCI != nil:
		who = fmt.Sprintf("%s (%s)", first.Name, ev["pci_id"])
	}

	switch {
	case identity && known:
		m, isMasq := findMasquerade(first, lnkGTs, lnkWidth)
		if isMasq {
			ev["probably"] = strings.TrimSuffix(m.probably, " emulating it")
			ev["probably_source"] = m.source
			f.Summary = fmt.Sprintf("%s %s: not a genuine %s (%s) but probably %s; its throughput is bound by %s, "+
				"and at most by the PCIe %s link", who, strings.Join(texts, "; "), row.Chip, row.Describe(),
				m.probably, m.bound, linkText(lnkGTs, lnkWidth))
			f.Fix = m.fix
		} else {
			bound := "what the device really is"
			if lnkGTs > 0 && lnkWidth > 0 {
				bound += ", and at most by the PCIe " + linkText(lnkGTs, lnkWidth) + " link"
			}
			f.Summary = fmt.Sprintf("%s %s: not a genuine %s (%s) but probably another device that reuses "+
				"its ID; its throughput is bound by %s", who, strings.Join(texts, "; "), row.Chip, row.Describe(), bound)
			f.Fix = "Treat the reported name and speed as nominal; identify the card from its label or " +
				"vendor, and measure throughput instead of trusting the reported speed."
		}
		if g, ok := pcie.GenBySpeed(lnkGTs); ok && lnkWidth > 0 {
			ev["pcie_link_raw_mbps"] = strconv.Itoa(int(math.Round(g.RawGbps(lnkWidth) * 1000)))
		}
	case sev == finding.Warn && maxMbps > 0:
		what := fmt.Sprintf("%s drives only chips of up to %d Mb/s", first.Driver, maxMbps)
		if known {
			what = fmt.Sprintf("the %s is %s", chip, row.Describe())
		}
		f.Summary = fmt.Sprintf("%s %s; %s, so each port carries at most %d Mb/s",
			who, strings.Join(texts, "; "), what, maxMbps)
		f.CapacityMbps = finding.Mbps(float64(maxMbps))
		f.Fix = "Trust the chip's limit, not the driver's figures; a driver or firmware update usually " +
			"fixes the report."
	case sev == finding.Warn:
		f.Summary = fmt.Sprintf("%s %s; the speed figure is nominal and says nothing about throughput",
			who, strings.Join(texts, "; "))
		f.Fix = "Measure throughput instead of trusting the reported speed, and check what the device " +
			"really is."
	default:
		f.Summary = fmt.Sprintf("%s %s", who, strings.Join(texts, "; "))
		f.Fix = "Check that this driver is meant for the card; out-of-tree or newer drivers may bind " +
			"more IDs than the table lists."
	}
	return Identity{Finding: f, Interfaces: names, Functions: addrs, Misidentified: true}, true
}

// findMasquerade matches a known masquerade by ID and LnkCap.
func findMasquerade(n NIC, gts float64, width int) (masquerade, bool) {
	if n.PCI == nil {
		return masquerade{}, false
	}
	for _, m := range masquerades {
		if m.vendor == n.PCI.VendorID && m.device == n.PCI.DeviceID &&
			math.Abs(gts-m.gts) <= 0.02*m.gts && width == m.width {
			return m, true
		}
	}
	return masquerade{}, false
}

// chipName names the chip for messages: the table's name, else pci.ids',
// else the ID.
func chipName(n NIC, row KnownDevice, known bool) string {
	switch {
	case known:
		return row.Chip
	case n.PCI != nil && n.PCI.DeviceName != "":
		return n.PCI.DeviceName
	case n.PCI != nil:
		return fmt.Sprintf("%04x:%04x", n.PCI.VendorID, n.PCI.DeviceID)
	}
	return "device"
}

// linkText renders "8 GT/s x8"; unknown parts are left out.
func linkText(gts float64, width int) string {
	switch {
	case gts > 0 && width > 0:
		return fmt.Sprintf("%s GT/s x%d", pcie.FormatGTs(gts), width)
	case gts > 0:
		return pcie.FormatGTs(gts) + " GT/s"
	case width > 0:
		return fmt.Sprintf("x%d", width)
	}
	return "unknown"
}

// usbBus describes a USB bus speed: its name and the most a bulk endpoint
// can move over it in Mb/s (high speed: 13 packets of 512 B per 125 µs
// microframe, shared by both directions; SuperSpeed: the line rate after
// 8b/10b or 128b/132b encoding, each direction).
func usbBus(mbps int) (name string, capacity float64, shared bool) {
	switch {
	case mbps <= 0:
		return "", 0, false
	case mbps <= 12:
		return "USB 1.1 (12 Mb/s)", 19 * 64 * 8 * 1000 / 1e6, true
	case mbps <= 480:
		return "USB 2.0 (480 Mb/s)", 13 * 512 * 8 * 8000 / 1e6, true
	case mbps <= 5000:
		return "USB 3.2 Gen 1 (5 Gb/s)", 5000 * 8 / 10.0, false
	case mbps <= 10000:
		return "USB 3.2 Gen 2 (10 Gb/s)", 10000 * 128 / 132.0, false
	}
	return fmt.Sprintf("USB 3.2 Gen 2x2 (%d Mb/s)", mbps), float64(mbps) * 128 / 132.0, false
}

// usbFinding reports the USB bus ceiling of a USB network adapter: warn when
// the bus carries less than the adapter's Ethernet speed, else info.
func usbFinding(n NIC) finding.Finding {
	f := finding.Finding{Code: finding.NICUSBBus, Severity: finding.Info, Subject: n.Name,
		Evidence: map[string]string{}}
	need, needFrom := 0, ""
	if row, ok := ChipOf(n); ok && row.MaxMbps > 0 {
		need, needFrom = row.MaxMbps, row.Chip
		f.Evidence["chip"] = row.Chip
		f.Evidence["chip_max_mbps"] = strconv.Itoa(row.MaxMbps)
	}
	if mode, top := maxMode(n.Link.Supported); need == 0 && top > 0 {
		need, needFrom = top, mode
	}
	if need == 0 && n.Link.SpeedMbps > 0 {
		need, needFrom = n.Link.SpeedMbps, "the link"
	}
	if need > 0 {
		f.Evidence["ethernet_mbps"] = strconv.Itoa(need)
		f.DemandMbps = finding.Mbps(float64(need))
	}
	var bus int
	if n.USB != nil {
		bus = n.USB.SpeedMbps
		f.Evidence["usb_path"] = n.USB.Path
		f.Evidence["usb_id"] = fmt.Sprintf("%04x:%04x", n.USB.VendorID, n.USB.ProductID)
	}
	name, capacity, shared := usbBus(bus)
	if name == "" {
		f.Summary = fmt.Sprintf("%s is a USB network adapter; its USB bus speed is unknown", n.Name)
		return f
	}
	f.Evidence["usb_speed_mbps"] = strconv.Itoa(bus)
	f.Evidence["usb_bulk_mbps"] = strconv.FormatFloat(capacity, 'f', 0, 64)
	f.CapacityMbps = finding.Mbps(math.Round(capacity))
	dir := "each way"
	if shared {
		dir = "for both directions together"
	}
	switch {
	case need > 0 && capacity < float64(need):
		f.Severity = finding.Warn
		f.Summary = fmt.Sprintf("%s is on %s, which moves at most about %.0f Mb/s %s, below the %d Mb/s of %s",
			n.Name, name, capacity, dir, need, needFrom)
		f.Fix = "Plug the adapter into a faster USB port (USB 3 ports are often blue or marked SS), " +
			"without a USB 2 hub or cable in between."
	case need > 0:
		f.Summary = fmt.Sprintf("%s is on %s, which moves up to about %.0f Mb/s %s: enough for the %d Mb/s of %s, "+
			"though USB adds per-packet latency and CPU cost", n.Name, name, capacity, dir, need, needFrom)
	default:
		f.Summary = fmt.Sprintf("%s is on %s, which moves up to about %.0f Mb/s %s", n.Name, name, capacity, dir)
	}
	return f
}

// CheckLinkModes returns a nic.link_below_capability finding (warn) for
// each NIC whose link came up slower than the fastest mode both it
// supports and advertises, or at half duplex. NICs with an unknown speed,
// a down link, or a virtual or emulated device get none.
func CheckLinkModes(nics []NIC) []finding.Finding {
	var out []finding.Finding
	for _, n := range nics {
		switch Label(n) {
		case LabelVirtual, LabelEmulated:
			continue
		}
		speed := n.Link.SpeedMbps
		if speed <= 0 || n.OperState == "down" || n.OperState == "lowerlayerdown" {
			continue
		}
		var common []string
		for _, m := range n.Link.Advertised {
			if slices.Contains(n.Link.Supported, m) {
				common = append(common, m)
			}
		}
		best, top := maxMode(common)
		half := n.Link.Duplex == "half"
		if top <= speed && !half {
			continue
		}
		ev := map[string]string{
			"speed_mbps": strconv.Itoa(speed),
			"duplex":     n.Link.Duplex,
		}
		if len(n.Link.Supported) > 0 {
			ev["supported"] = strings.Join(n.Link.Supported, " ")
		}
		if len(n.Link.Advertised) > 0 {
			ev["advertised"] = strings.Join(n.Link.Advertised, " ")
		}
		if n.Link.Autoneg != nil {
			ev["autoneg"] = strconv.FormatBool(*n.Link.Autoneg)
		}
		f := finding.Finding{Code: finding.NICLinkBelowCapability, Severity: finding.Warn,
			Subject: n.Name, Evidence: ev, CapacityMbps: finding.Mbps(float64(speed))}
		var parts []string
		if top > speed {
			ev["best_common_mode"] = best
			parts = append(parts, fmt.Sprintf("negotiated %d Mb/s although both supported and advertised modes "+
				"reach %s", speed, best))
		}
		if half {
			parts = append(parts, "runs at half duplex (one direction at a time, with collisions)")
			if top <= speed {
				f.CapacityMbps = finding.Mbps(float64(speed) / 2)
			}
		}
		f.Summary = n.Name + " " + strings.Join(parts, " and ")
		f.Fix = linkFix(best, speed, half, n.Link.Autoneg)
		out = append(out, f)
	}
	finding.Sort(out)
	return out
}

// linkFix suggests what usually causes a slow or half-duplex link.
func linkFix(best string, speed int, half bool, autoneg *bool) string {
	var s []string
	if autoneg != nil && !*autoneg {
		s = append(s, "autonegotiation is off, so the speed and duplex are forced: turn it on at both ends")
	}
	switch {
	case strings.Contains(best, "baseT/") || strings.Contains(best, "baseT1"):
		top, _ := LinkModeSpeed(best)
		switch {
		case top >= 10000:
			s = append(s, "check the cable (10GBASE-T wants Cat6a, 100 m; Cat6 reaches 55 m) and the switch port")
		case top >= 2500:
			s = append(s, "check the cable (2.5/5GBASE-T want Cat5e or better) and that the switch port does "+
				"NBASE-T, not just 1 and 10 Gb/s")
		default:
			s = append(s, "check the cable (1000BASE-T needs all 4 pairs, Cat5e) and the switch port's speed setting")
		}
	case best != "":
		s = append(s, "check the transceiver or DAC and the switch port's configured speed")
	}
	if half {
		s = append(s, "half duplex usually means the peer is forced to a speed while this end autonegotiates")
	}
	if len(s) == 0 {
		return ""
	}
	out := strings.Join(s, "; ")
	return strings.ToUpper(out[:1]) + out[1:] + "."
}

func joinAddrs(a []pcie.Address) string {
	s := make([]string, len(a))
	for i, x := range a {
		s[i] = string(x)
	}
	return strings.Join(s, " ")
}
