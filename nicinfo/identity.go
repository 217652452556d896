package nicinfo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/text"
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
// is exempt from the checks (see Label); QEMU's e1000e, which keeps Intel's
// 8086:0000, is marked so only on a guest whose DMI names QEMU.
//
// This file holds the verdict and its wording; identity_rules.go gathers
// the contradictions, masquerade.go names the known impostors, usb.go has
// the USB bus verdict and label.go the classifier that exempts virtual and
// emulated NICs.

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
	// MovesMbps, for a known masquerade, is what the real device is known
	// to move per direction, summed over its functions (0: unknown), and
	// MovesSource cites it. Checks judge the card's link against it.
	MovesMbps   int
	MovesSource string
	// RealDevice and BoundBy, for a known masquerade, say what the device
	// probably is ("a MikroTik CCR2004-1G-2XS-PCIe router card emulating
	// it") and what bounds its throughput ("the card's CPU forwarding
	// every packet"); empty otherwise.
	RealDevice string
	BoundBy    string
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

// unit is what one identity verdict is about: the functions of one PCI
// device that share an ID, or one non-PCI NIC.
type unit struct {
	key  string
	nics []NIC
}

// groupUnits groups PCI functions by device and ID, in input order.
func groupUnits(nics []NIC) []unit {
	var units []unit
	at := map[string]int{}
	for _, n := range nics {
		if nominal(n) {
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

// checkUnit is the verdict on one unit: its contradictions gathered, then
// weighed and worded.
func checkUnit(u unit) (Identity, bool) {
	c := newUnitCheck(u.nics[0])
	for _, n := range u.nics {
		c.gather(n)
	}
	c.checkFunctions()
	if len(c.cs) == 0 {
		return Identity{}, false
	}
	f := c.finding(len(u.nics) > 1)
	id := Identity{Finding: f, Interfaces: c.names, Functions: c.addrs, Misidentified: true}
	if c.masq != nil {
		id.MovesMbps, id.MovesSource = c.masq.movesMbps, c.masq.movesSource
		id.RealDevice, id.BoundBy = c.masq.probably, c.masq.bound
	}
	return id, true
}

// severity weighs the contradictions: warn unless all are weak; identity
// is true when they say the device is not the chip at all.
func (c *unitCheck) severity() (sev finding.Severity, identity bool) {
	sev = finding.Info
	for _, x := range c.cs {
		if !x.weak {
			sev = finding.Warn
		}
		if x.rule == "pcie_beyond_chip" || x.rule == "functions_above_chip" {
			identity = true
		}
	}
	return sev, identity
}

// evidence completes the finding's evidence and returns the contradictions
// as the summary joins them.
func (c *unitCheck) evidence() string {
	var texts, rules []string
	for _, x := range c.cs {
		texts = append(texts, x.text)
		if !slices.Contains(rules, x.rule) {
			rules = append(rules, x.rule)
		}
	}
	ev, first, row := c.ev, c.first, c.row
	ev["contradictions"] = strings.Join(texts, "; ")
	ev["rules"] = strings.Join(rules, " ")
	ev["interfaces"] = strings.Join(c.names, " ")
	if first.PCI != nil {
		ev["pci_id"] = fmt.Sprintf("%04x:%04x", first.PCI.VendorID, first.PCI.DeviceID)
		ev["pci_functions"] = text.Join(c.addrs, " ")
		if first.PCI.DeviceName != "" {
			ev["pci_name"] = first.PCI.DeviceName
		}
	}
	if first.Driver != "" {
		ev["netdev_driver"] = first.Driver
	}
	if c.known {
		ev["chip"] = row.Chip
		ev["chip_describe"] = row.Describe()
		ev["chip_source"] = row.Source
		if row.MaxMbps > 0 {
			ev["chip_max_mbps"] = strconv.Itoa(row.MaxMbps)
		}
	}
	return strings.Join(texts, "; ")
}

// finding words the verdict; several says the unit has more than one NIC.
func (c *unitCheck) finding(several bool) finding.Finding {
	sev, identity := c.severity()
	texts := c.evidence()
	first := c.first
	f := finding.Finding{Code: finding.NICMisidentified, Severity: sev, Subject: first.Name, Evidence: c.ev}
	if several && len(c.addrs) > 0 {
		f.Subject = string(c.addrs[0])
	}
	who := c.who()
	switch {
	case identity && c.known:
		c.wordNotTheChip(&f, who, texts)
	case sev == finding.Warn && c.maxMbps > 0:
		what := fmt.Sprintf("%s drives only chips of up to %d Mb/s", first.Driver, c.maxMbps)
		if c.known {
			what = fmt.Sprintf("the %s is %s", c.chip, c.row.Describe())
		}
		f.Summary = fmt.Sprintf("%s %s; %s, so each port carries at most %d Mb/s", who, texts, what, c.maxMbps)
		f.CapacityMbps = finding.Mbps(float64(c.maxMbps))
		f.Fix = "Trust the chip's limit, not the driver's figures; a driver or firmware update usually " +
			"fixes the report."
	case sev == finding.Warn:
		f.Summary = fmt.Sprintf("%s %s; the speed figure is nominal and says nothing about throughput", who, texts)
		f.Fix = "Measure throughput instead of trusting the reported speed, and check what the device " +
			"really is."
	default:
		f.Summary = fmt.Sprintf("%s %s", who, texts)
		f.Fix = "Check that this driver is meant for the card; out-of-tree or newer drivers may bind " +
			"more IDs than the table lists."
	}
	return f
}

// who names the card: "eth0 (8086:15d7)", or for several interfaces
// "1969:1083 at 0000:01:00 (enp1s0f0, enp1s0f1)".
func (c *unitCheck) who() string {
	first := c.first
	switch {
	case first.PCI != nil && len(c.names) > 1:
		return fmt.Sprintf("%s at %s (%s)", c.ev["pci_id"], first.PCI.Address.Slot(), strings.Join(c.names, ", "))
	case first.PCI != nil:
		return fmt.Sprintf("%s (%s)", first.Name, c.ev["pci_id"])
	}
	return first.Name
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
