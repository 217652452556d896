package nicinfo

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/nicdiag/nicdiag/pcie"
)

// devicesTSV is the known-device table; its header comment documents the
// columns.
//
//go:embed devices.tsv
var devicesTSV []byte

// FunctionKind says what kind of function a known device ID is.
type FunctionKind string

// Function kinds in the known-device table.
const (
	// KindPF is a physical function: a real port of a real chip.
	KindPF FunctionKind = "pf"
	// KindVF is an SR-IOV virtual function; it is never counted as a port.
	KindVF FunctionKind = "vf"
	// KindVirtual is a hypervisor's paravirtual NIC (virtio, vmxnet3, ENA,
	// gVNIC): its speed is nominal and its PCIe link is emulated.
	KindVirtual FunctionKind = "virtual"
)

// Integration says where a chip's MAC lives.
type Integration string

// Integration values in the known-device table.
const (
	Discrete Integration = "no"      // a chip of its own
	Chipset  Integration = "chipset" // a MAC in the PCH/ICH or IOH
	SoC      Integration = "soc"     // a MAC in a CPU or SoC package
)

// KnownDevice is one row of the known-device table: what a chip can really
// do. Zero numbers mean unknown; checks that need them stay silent.
type KnownDevice struct {
	// Bus is BusPCI or BusUSB: the ID space VendorID and DeviceID belong
	// to (for USB, DeviceID is the product ID).
	Bus      Bus    `json:"bus"`
	VendorID uint16 `json:"vendor_id"`
	DeviceID uint16 `json:"device_id"`
	// Chip is the chip's name, as pci.ids spells it where it has it
	// ("AR8151 v2.0", "I350", "ConnectX-4 Lx").
	Chip string `json:"chip"`
	// Family is the product family ("Intel 82599/X520").
	Family string `json:"family"`
	// Kind says whether the ID is a physical function, an SR-IOV VF or a
	// paravirtual NIC.
	Kind FunctionKind `json:"kind"`
	// Ports is how many Ethernet ports one chip drives.
	Ports int `json:"ports,omitempty"`
	// MaxPFs is the most physical functions one chip exposes on one PCI
	// device: the ports, or more where the chip partitions them.
	MaxPFs int `json:"max_pfs,omitempty"`
	// MaxMbps is the chip's fastest Ethernet speed per port.
	MaxMbps int `json:"max_mbps,omitempty"`
	// PCIeGTs and PCIeWidth are the chip's PCIe link capability.
	PCIeGTs   float64 `json:"pcie_gts,omitempty"`
	PCIeWidth int     `json:"pcie_width,omitempty"`
	// Integrated says whether the MAC is a chip of its own or part of a
	// chipset or SoC (which then has no PCIe link values).
	Integrated Integration `json:"integrated"`
	// Drivers are the Linux drivers that bind this ID: the PCI driver and,
	// where it differs, the netdev driver.
	Drivers []string `json:"drivers"`
	// Source cites where the row's facts come from.
	Source string `json:"source"`
}

// Describe returns a short description of what the chip is, such as "a
// 2.5 GT/s x1 gigabit chip" or "a 100 Gb/s chip"; unknown facts are left
// out.
func (d KnownDevice) Describe() string {
	var parts []string
	switch d.Integrated {
	case Chipset:
		parts = append(parts, "chipset-integrated")
	case SoC:
		parts = append(parts, "SoC-integrated")
	}
	if d.PCIeGTs > 0 && d.PCIeWidth > 0 {
		parts = append(parts, fmt.Sprintf("%s GT/s x%d", pcie.FormatGTs(d.PCIeGTs), d.PCIeWidth))
	}
	if d.MaxMbps > 0 {
		parts = append(parts, speedClass(d.MaxMbps))
	}
	if len(parts) == 0 {
		return "a known chip"
	}
	return article(parts[0]) + " " + strings.Join(parts, " ") + " chip"
}

// article returns "an" before words said with a leading vowel ("an 8 GT/s",
// "an 11"), else "a".
func article(word string) string {
	if word == "" {
		return "a"
	}
	if strings.ContainsRune("8aeiouAEIOU", rune(word[0])) || strings.HasPrefix(word, "11") ||
		strings.HasPrefix(word, "18 ") {
		return "an"
	}
	return "a"
}

// speedClass names an Ethernet speed the way people say it.
func speedClass(mbps int) string {
	switch mbps {
	case 10:
		return "10 Mb/s"
	case 100:
		return "fast Ethernet"
	case 1000:
		return "gigabit"
	}
	if mbps%1000 == 0 {
		return fmt.Sprintf("%d Gb/s", mbps/1000)
	}
	return fmt.Sprintf("%g Gb/s", float64(mbps)/1000)
}

type deviceKey struct {
	bus            Bus
	vendor, device uint16
}

// loadDevices parses the whole table, for knownDevices; lookups do not
// need it.
var loadDevices = sync.OnceValue(func() []KnownDevice {
	rows, err := parseDevices(bytes.NewReader(devicesTSV))
	if err != nil {
		// The table is compiled in and TestEmbeddedTable parses it, so
		// this is a build defect, not a runtime condition.
		panic("nicinfo: " + err.Error())
	}
	return rows
})

// LookupDevice returns the known-device row for a PCI vendor and device ID.
func LookupDevice(vendor, device uint16) (KnownDevice, bool) {
	return lookup(BusPCI, vendor, device)
}

// lookupUSBDevice returns the known-device row for a USB vendor and
// product ID.
func lookupUSBDevice(vendor, product uint16) (KnownDevice, bool) {
	return lookup(BusUSB, vendor, product)
}

// lookup finds one ID's row by searching the embedded table for the start
// of its line and parsing that line alone: a run looks up a few IDs, and
// parsing all rows cost 0.9 ms and 1,500 allocations of every command.
// TestLookupEveryRow holds it to the full parse.
func lookup(bus Bus, vendor, device uint16) (KnownDevice, bool) {
	var key [16]byte
	k := fmt.Appendf(key[:0], "\n%s\t%04x\t%04x\t", bus, vendor, device)
	i := bytes.Index(devicesTSV, k)
	if i < 0 {
		return KnownDevice{}, false
	}
	line := devicesTSV[i+1:]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	d, err := parseDeviceRow(strings.Split(strings.TrimSuffix(string(line), "\r"), "\t"))
	if err != nil {
		panic("nicinfo: devices.tsv: " + err.Error()) // a build defect, as in loadDevices
	}
	return d, true
}

// ChipOf returns the known-device row for a NIC's PCI or USB ID.
func ChipOf(n NIC) (KnownDevice, bool) {
	switch {
	case n.PCI != nil:
		return LookupDevice(n.PCI.VendorID, n.PCI.DeviceID)
	case n.USB != nil:
		return lookupUSBDevice(n.USB.VendorID, n.USB.ProductID)
	}
	return KnownDevice{}, false
}

// knownDevices returns every row of the known-device table, in file order.
func knownDevices() []KnownDevice {
	rows := loadDevices()
	out := make([]KnownDevice, len(rows))
	for i, r := range rows {
		r.Drivers = slices.Clone(r.Drivers)
		out[i] = r
	}
	return out
}
