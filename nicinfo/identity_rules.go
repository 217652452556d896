package nicinfo

// The identity rules: each compares one fact a NIC reports with the chip
// its ID names and records a contradiction, with its evidence, on the
// unit's unitCheck. identity.go weighs and words them.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/pcie"
)

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

// unitCheck collects what a unit's NICs contradict about their chip, and
// the evidence for it.
type unitCheck struct {
	first NIC // the unit's first NIC: its ID and driver name the chip
	row   KnownDevice
	known bool
	chip  string // the chip's name for messages
	// maxMbps is the chip's top speed (0: unknown); limit says where it
	// comes from, for messages.
	maxMbps int
	limit   string

	cs    []contradiction
	ev    map[string]string
	names []string       // every interface
	addrs []pcie.Address // the PFs, VFs left out
	// lnkGTs and lnkWidth are the PCIe capability that contradicts the chip.
	lnkGTs   float64
	lnkWidth int
	// masq is the known masquerade the unit matched, if any.
	masq *masquerade
}

func newUnitCheck(first NIC) *unitCheck {
	row, known := ChipOf(first)
	c := &unitCheck{first: first, row: row, known: known, chip: chipName(first, row, known), ev: map[string]string{}}
	switch {
	case known && row.MaxMbps > 0:
		c.maxMbps = row.MaxMbps
		c.limit = fmt.Sprintf("the %s's %d Mb/s", c.chip, c.maxMbps)
	case driverMaxMbps[first.Driver] > 0:
		c.maxMbps = driverMaxMbps[first.Driver]
		c.limit = fmt.Sprintf("the %d Mb/s every chip %s drives tops out at", c.maxMbps, first.Driver)
	}
	return c
}

// add records a contradiction once, however many functions show it.
func (c *unitCheck) add(rule, text string, weak bool) {
	if !slices.ContainsFunc(c.cs, func(o contradiction) bool { return o.text == text }) {
		c.cs = append(c.cs, contradiction{rule, text, weak})
	}
}

// gather checks one of the unit's NICs against the chip.
func (c *unitCheck) gather(n NIC) {
	c.names = append(c.names, n.Name)
	vf := sriovVF(n, c.row, c.known)
	if n.PCI != nil && !vf && !slices.Contains(c.addrs, n.PCI.Address) {
		c.addrs = append(c.addrs, n.PCI.Address)
	}
	c.checkSpeed(n)
	c.checkModes(n)
	if !vf {
		c.checkPCIe(n)
	}
	c.checkDriver(n)
}

// checkSpeed: a speed above every listed mode (where the list could have
// said so), or above the chip.
func (c *unitCheck) checkSpeed(n NIC) {
	speed := n.Link.SpeedMbps
	topMode, top := maxMode(n.Link.Supported)
	if speed > 0 && top > 0 && speed > top &&
		(slices.Contains(legacyModeSpeeds, speed) || top < 1000 || c.maxMbps > 0 && speed > c.maxMbps) {
		c.add("speed_above_modes",
			fmt.Sprintf("reports %d Mb/s but lists no link mode above %d Mb/s (%s)", speed, top, topMode), false)
		c.ev["speed_mbps"] = strconv.Itoa(speed)
		c.ev["supported_max"] = topMode
	}
	if c.maxMbps > 0 && speed > c.maxMbps {
		c.add("speed_above_chip", fmt.Sprintf("reports %d Mb/s, above %s", speed, c.limit), false)
		c.ev["speed_mbps"] = strconv.Itoa(speed)
	}
}

// checkModes: supported or advertised modes faster than the chip.
func (c *unitCheck) checkModes(n NIC) {
	if c.maxMbps <= 0 {
		return
	}
	var over []string
	for _, m := range append(slices.Clone(n.Link.Supported), n.Link.Advertised...) {
		if v, ok := linkModeSpeed(m); ok && v > c.maxMbps && !slices.Contains(over, m) {
			over = append(over, m)
		}
	}
	if len(over) > 0 {
		c.add("modes_above_chip",
			fmt.Sprintf("lists link mode %s, above %s", strings.Join(over, ", "), c.limit), false)
		c.ev["modes_above_chip"] = strings.Join(over, " ")
	}
}

// checkPCIe: a PF's PCIe link capability beyond the chip's.
func (c *unitCheck) checkPCIe(n NIC) {
	row := c.row
	if n.PCI == nil || n.PCI.Link == nil || !c.known || row.PCIeGTs <= 0 && row.PCIeWidth <= 0 {
		return
	}
	l := n.PCI.Link
	if row.PCIeGTs > 0 && l.MaxSpeed > row.PCIeGTs*1.02 || row.PCIeWidth > 0 && l.MaxWidth > row.PCIeWidth {
		c.lnkGTs, c.lnkWidth = l.MaxSpeed, l.MaxWidth
		c.add("pcie_beyond_chip", fmt.Sprintf("its PCIe link capability is %s, beyond the %s's %s",
			linkText(l.MaxSpeed, l.MaxWidth), c.chip, linkText(row.PCIeGTs, row.PCIeWidth)), false)
		c.ev["lnkcap"] = linkText(l.MaxSpeed, l.MaxWidth)
		c.ev["chip_pcie"] = linkText(row.PCIeGTs, row.PCIeWidth)
	}
}

// checkDriver: a driver the table does not list for the ID (weak). The
// PCI driver link and ethtool's answer are two witnesses: when either
// names a listed driver, the other's odd name is no evidence (a damaged
// or dangling link in a snapshot; mlx4_en on mlx4_core).
func (c *unitCheck) checkDriver(n NIC) {
	if !c.known || n.PCI == nil {
		return
	}
	row := c.row
	drivers := []string{n.PCI.Driver, n.Driver}
	for _, drv := range drivers {
		if drv != "" && slices.Contains(row.Drivers, drv) {
			return
		}
	}
	for _, drv := range drivers {
		if drv == "" || slices.Contains(passthroughDrivers, drv) {
			continue
		}
		c.add("driver_mismatch", fmt.Sprintf("is driven by %s, which the table does not list for %04x:%04x (%s)",
			drv, row.VendorID, row.DeviceID, strings.Join(row.Drivers, ", ")), true)
		c.ev["driver"] = drv
	}
}

// checkFunctions: more PFs on one PCI device than the chip has.
func (c *unitCheck) checkFunctions() {
	if c.known && c.row.MaxPFs > 0 && len(c.addrs) > c.row.MaxPFs {
		c.add("functions_above_chip", fmt.Sprintf("shows %d functions on one PCI device, but the %s has at most %d",
			len(c.addrs), c.chip, c.row.MaxPFs), false)
		c.ev["functions"] = strconv.Itoa(len(c.addrs))
		c.ev["chip_max_functions"] = strconv.Itoa(c.row.MaxPFs)
	}
}
