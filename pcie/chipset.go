package pcie

import (
	"fmt"
	"path"
	"strings"
)

// ChipsetUplink is the link between the CPU and an Intel chipset (ICH or
// PCH): DMI, which sysfs does not show. Every device behind the chipset's
// root ports shares it. A path whose root port is a chipset root port in
// the table of docs/chipset-uplinks.md ends with a modelled hop for it.
type ChipsetUplink struct {
	// Chipset names the chipset family ("Intel 7 Series/C210").
	Chipset string `json:"chipset"`
	// Link is the uplink as Intel names it ("DMI 2.0 x4").
	Link string `json:"link"`
	// Note says what the table cannot tell apart (a narrower link on some
	// chipsets of the family); "" when the family has one.
	Note string `json:"note,omitempty"`
	// Source is where the figures come from.
	Source string `json:"source"`
}

// chipsetRow is one family of Intel chipset root ports: a range of device
// IDs that holds the family's root ports (pci.ids 2023.04.10 names them;
// the range may hold other functions of the chipset, which are not PCI
// bridges and so never match) and the family's uplink. Where the family's chipsets differ, the
// row carries the widest link (no bottleneck is made up) and says so.
type chipsetRow struct {
	lo, hi  uint16
	chipset string
	link    string
	gts     float64
	width   int
	note    string
}

// The narrower links of the 100 and 300 Series' entry chipsets, whose root
// ports have the family's IDs.
const (
	h110 = "DMI 2.0 x4 (5 GT/s) on H110"
	h310 = "H310's may be DMI 2.0 x4 (its root ports run PCIe 2.0 like H110's; its DMI generation is not confirmed)"
)

// chipsetRows: the link of each family from Intel's chipset datasheets
// (docs/chipset-uplinks.md lists them).
var chipsetRows = []chipsetRow{
	{0x3a40, 0x3a4b, "Intel ICH10", "DMI 1.0 x4", 2.5, 4, ""},
	{0x3b42, 0x3b51, "Intel 5 Series/3400", "DMI 1.0 x4", 2.5, 4, ""},
	{0x1c10, 0x1c1f, "Intel 6 Series/C200", "DMI 2.0 x4", 5, 4, ""},
	{0x1d10, 0x1d1f, "Intel C600/X79", "DMI 2.0 x4", 5, 4, ""},
	{0x1e10, 0x1e1f, "Intel 7 Series/C210", "DMI 2.0 x4", 5, 4, ""},
	{0x8c10, 0x8c1f, "Intel 8 Series/C220", "DMI 2.0 x4", 5, 4, ""},
	{0x8c90, 0x8c9f, "Intel 9 Series", "DMI 2.0 x4", 5, 4, ""},
	{0x8d10, 0x8d1f, "Intel C610/X99", "DMI 2.0 x4", 5, 4, ""},
	{0xa110, 0xa11f, "Intel 100 Series/C230", "DMI 3.0 x4", 8, 4, h110},
	{0xa167, 0xa16a, "Intel 100 Series/C230", "DMI 3.0 x4", 8, 4, h110},
	{0xa190, 0xa19f, "Intel C620", "DMI 3.0 x4", 8, 4, "some C620 chipsets add PCIe uplinks of their own, which sysfs shows"},
	{0xa1e7, 0xa1ea, "Intel C620", "DMI 3.0 x4", 8, 4, "some C620 chipsets add PCIe uplinks of their own, which sysfs shows"},
	{0xa290, 0xa29f, "Intel 200 Series", "DMI 3.0 x4", 8, 4, ""},
	{0xa2e7, 0xa2ee, "Intel 200 Series", "DMI 3.0 x4", 8, 4, ""},
	{0xa32c, 0xa343, "Intel 300 Series (Cannon Lake PCH)", "DMI 3.0 x4", 8, 4, h310},
	{0xa390, 0xa3ef, "Intel 400 Series (Comet Lake PCH-V)", "DMI 3.0 x4", 8, 4, ""},
	{0x06a8, 0x06c7, "Intel 400 Series (Comet Lake PCH-H)", "DMI 3.0 x4", 8, 4, ""},
	{0x43b0, 0x43cf, "Intel 500 Series (Tiger Lake PCH-H)", "DMI 3.0 x8", 8, 8, "x4 with a 10th-generation Core CPU, and on B560 and H510"},
	{0x7ab0, 0x7acf, "Intel 600 Series (Alder Lake PCH-S)", "DMI 4.0 x8", 16, 8, "x4 on B660 and H610"},
}

// chipsetOf returns the row of an Intel PCI bridge (class 0x0604) with
// that device ID.
func chipsetOf(vendor, device uint16, class uint32) (chipsetRow, bool) {
	if vendor != 0x8086 || class>>8 != 0x0604 {
		return chipsetRow{}, false
	}
	for _, r := range chipsetRows {
		if device >= r.lo && device <= r.hi {
			return r, true
		}
	}
	return chipsetRow{}, false
}

// chipsetHop returns the modelled hop of the chipset uplink above the root
// port top (the upstream end of a path's last hop), whose sysfs directory
// is dir under the host bridge directory base; ok is false when top is not
// a chipset root port in the table. Its functions are every chipset root
// port of the family on that root bus and all that is below them.
func (w *walker) chipsetHop(top End, base string) (Hop, bool) {
	r, ok := chipsetOf(top.VendorID, top.DeviceID, top.Class)
	if !ok {
		return Hop{}, false
	}
	bus := strings.TrimPrefix(path.Base(base), "pci") // "0000:00"
	host := End{Address: Address(bus + ":00.0"), Name: "CPU (host bridge)"}
	down := End{Address: top.Address, Name: top.Name, VendorID: top.VendorID, DeviceID: top.DeviceID, Class: top.Class}
	h := Hop{
		Upstream: host, Downstream: down,
		Speed: r.gts, Width: r.width, CapableSpeed: r.gts, CapableWidth: r.width,
		Functions: []Function{},
		Verdict:   VerdictOK,
		Chipset: &ChipsetUplink{Chipset: r.chipset, Link: r.link, Note: r.note,
			Source: "the " + r.chipset + " chipset datasheet (docs/chipset-uplinks.md); modelled, not read from the hardware"},
	}
	names, _ := w.o.root.ReadDir(base)
	for _, n := range names {
		if !isAddress(n) {
			continue
		}
		dir := base + "/" + n
		v, err1 := w.o.root.ReadHex(dir+"/vendor", 4)
		d, err2 := w.o.root.ReadHex(dir+"/device", 4)
		cls, err3 := w.o.root.ReadHex(dir+"/class", 6)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		if o, ok := chipsetOf(uint16(v), uint16(d), cls); !ok || o.chipset != r.chipset {
			continue
		}
		h.Functions = append(h.Functions, Function{Address: Address(n), Class: cls, Bridge: true})
		h.Functions = append(h.Functions, w.functions(dir)...)
	}
	h.Notes = append(h.Notes, fmt.Sprintf("modelled: the %s between the CPU and the %s chipset, shared by everything behind its root ports; sysfs does not show it", r.link, r.chipset))
	if r.note != "" {
		h.Notes = append(h.Notes, "the widest the family has: "+r.note)
	}
	return h, true
}
