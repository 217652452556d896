package nicinfo

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/nicdiag/nicdiag/internal/text"
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
		parts = append(parts, fmt.Sprintf("%s GT/s x%d", fmtGTs(d.PCIeGTs), d.PCIeWidth))
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

// fmtGTs prints 2.5, 5, 8, 16 without trailing zeros.
func fmtGTs(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

type deviceKey struct {
	bus            Bus
	vendor, device uint16
}

type deviceTable struct {
	rows  []KnownDevice
	index map[deviceKey]int
}

var loadDevices = sync.OnceValue(func() deviceTable {
	rows, err := parseDevices(bytes.NewReader(devicesTSV))
	if err != nil {
		// The table is compiled in and TestEmbeddedTable parses it, so
		// this is a build defect, not a runtime condition.
		panic("nicinfo: " + err.Error())
	}
	t := deviceTable{rows: rows, index: make(map[deviceKey]int, len(rows))}
	for i, r := range rows {
		t.index[deviceKey{r.Bus, r.VendorID, r.DeviceID}] = i
	}
	return t
})

// LookupDevice returns the known-device row for a PCI vendor and device ID.
func LookupDevice(vendor, device uint16) (KnownDevice, bool) {
	return lookup(BusPCI, vendor, device)
}

// LookupUSBDevice returns the known-device row for a USB vendor and
// product ID.
func LookupUSBDevice(vendor, product uint16) (KnownDevice, bool) {
	return lookup(BusUSB, vendor, product)
}

func lookup(bus Bus, vendor, device uint16) (KnownDevice, bool) {
	t := loadDevices()
	i, ok := t.index[deviceKey{bus, vendor, device}]
	if !ok {
		return KnownDevice{}, false
	}
	d := t.rows[i]
	d.Drivers = slices.Clone(d.Drivers)
	return d, true
}

// KnownDevices returns every row of the known-device table, in file order.
func KnownDevices() []KnownDevice {
	t := loadDevices()
	out := make([]KnownDevice, len(t.rows))
	for i, r := range t.rows {
		r.Drivers = slices.Clone(r.Drivers)
		out[i] = r
	}
	return out
}

var deviceColumns = []string{"bus", "vendor", "device", "chip", "family", "kind", "ports",
	"max_pfs", "max_mbps", "pcie_gts", "pcie_width", "integrated", "drivers", "source"}

// parseDevices reads the known-device table. Every malformed row is an
// error naming its line; duplicate IDs are errors too.
func parseDevices(r io.Reader) ([]KnownDevice, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	var rows []KnownDevice
	seen := map[deviceKey]int{}
	header := false
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSuffix(sc.Text(), "\r")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if !header {
			if !slices.Equal(fields, deviceColumns) {
				return nil, fmt.Errorf("devices.tsv line %d: header must be the %d columns %s",
					line, len(deviceColumns), strings.Join(deviceColumns, ","))
			}
			header = true
			continue
		}
		d, err := parseDeviceRow(fields)
		if err != nil {
			return nil, fmt.Errorf("devices.tsv line %d: %w", line, err)
		}
		k := deviceKey{d.Bus, d.VendorID, d.DeviceID}
		if prev, dup := seen[k]; dup {
			return nil, fmt.Errorf("devices.tsv line %d: %s %04x:%04x already on line %d",
				line, d.Bus, d.VendorID, d.DeviceID, prev)
		}
		seen[k] = line
		rows = append(rows, d)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("devices.tsv line %d: %w", line+1, err)
	}
	if !header {
		return nil, fmt.Errorf("devices.tsv: no header line")
	}
	return rows, nil
}

// Speeds an Ethernet port can run at, in Mb/s (IEEE 802.3 plus 56GbE).
var ethSpeeds = []int{10, 100, 1000, 2500, 5000, 10000, 20000, 25000, 40000, 50000,
	56000, 100000, 200000, 400000, 800000}

func parseDeviceRow(f []string) (KnownDevice, error) {
	var d KnownDevice
	if len(f) != len(deviceColumns) {
		return d, fmt.Errorf("%d columns, want %d", len(f), len(deviceColumns))
	}
	col := func(i int) string { return f[i] }
	switch col(0) {
	case "pci":
		d.Bus = BusPCI
	case "usb":
		d.Bus = BusUSB
	default:
		return d, fmt.Errorf("bus %q: want pci or usb", text.Clip(col(0)))
	}
	var err error
	if d.VendorID, err = parseID(col(1)); err != nil {
		return d, fmt.Errorf("vendor: %w", err)
	}
	if d.DeviceID, err = parseID(col(2)); err != nil {
		return d, fmt.Errorf("device: %w", err)
	}
	if d.Chip = col(3); !printable(d.Chip) {
		return d, fmt.Errorf("chip %q: want printable text", text.Clip(d.Chip))
	}
	if d.Family = col(4); !printable(d.Family) {
		return d, fmt.Errorf("family %q: want printable text", text.Clip(d.Family))
	}
	switch k := FunctionKind(col(5)); k {
	case KindPF, KindVF, KindVirtual:
		d.Kind = k
	default:
		return d, fmt.Errorf("kind %q: want pf, vf or virtual", text.Clip(col(5)))
	}
	if d.Ports, err = parseCount(col(6), 64); err != nil {
		return d, fmt.Errorf("ports: %w", err)
	}
	if d.MaxPFs, err = parseCount(col(7), 256); err != nil {
		return d, fmt.Errorf("max_pfs: %w", err)
	}
	if d.MaxMbps, err = parseCount(col(8), math.MaxInt32); err != nil {
		return d, fmt.Errorf("max_mbps: %w", err)
	}
	if d.MaxMbps != 0 && !slices.Contains(ethSpeeds, d.MaxMbps) {
		return d, fmt.Errorf("max_mbps %d: not an Ethernet speed", d.MaxMbps)
	}
	if s := col(9); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !slices.Contains([]float64{2.5, 5, 8, 16, 32, 64}, v) {
			return d, fmt.Errorf("pcie_gts %q: want 2.5, 5, 8, 16, 32 or 64", text.Clip(s))
		}
		d.PCIeGTs = v
	}
	if d.PCIeWidth, err = parseCount(col(10), 32); err != nil {
		return d, fmt.Errorf("pcie_width: %w", err)
	}
	if w := d.PCIeWidth; w != 0 && !slices.Contains([]int{1, 2, 4, 8, 12, 16, 32}, w) {
		return d, fmt.Errorf("pcie_width %d: want 1, 2, 4, 8, 12, 16 or 32", w)
	}
	switch i := Integration(col(11)); i {
	case Discrete, Chipset, SoC:
		d.Integrated = i
	default:
		return d, fmt.Errorf("integrated %q: want no, chipset or soc", text.Clip(col(11)))
	}
	if d.Bus == BusUSB && (d.PCIeGTs != 0 || d.PCIeWidth != 0) {
		return d, fmt.Errorf("a usb row has no pcie_gts or pcie_width")
	}
	for _, drv := range strings.Split(col(12), ",") {
		if !driverName(drv) {
			return d, fmt.Errorf("drivers %q: want a comma list of module names", text.Clip(col(12)))
		}
		d.Drivers = append(d.Drivers, drv)
	}
	if d.Source = col(13); !printable(d.Source) {
		return d, fmt.Errorf("source %q: want a citation", text.Clip(d.Source))
	}
	return d, nil
}

// parseID parses four lower-case hex digits.
func parseID(s string) (uint16, error) {
	if len(s) != 4 {
		return 0, fmt.Errorf("%q: want 4 hex digits", text.Clip(s))
	}
	var v uint16
	for _, c := range []byte(s) {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint16(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint16(c-'a'+10)
		default:
			return 0, fmt.Errorf("%q: want 4 lower-case hex digits", s)
		}
	}
	return v, nil
}

// parseCount parses an empty field (0: unknown) or a decimal 1..max.
func parseCount(s string, max int) (int, error) {
	if s == "" {
		return 0, nil
	}
	if len(s) > 10 {
		return 0, fmt.Errorf("%q: want a number from 1 to %d", text.Clip(s), max)
	}
	v := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q: want a number from 1 to %d", text.Clip(s), max)
		}
		v = v*10 + int(c-'0')
	}
	if v < 1 || v > max {
		return 0, fmt.Errorf("%q: want a number from 1 to %d", s, max)
	}
	return v, nil
}

// driverName accepts Linux module names: a-z, 0-9, '_' and '-'.
func driverName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// printable accepts non-empty text without control characters.
func printable(s string) bool {
	if strings.TrimSpace(s) == "" || len(s) > 400 {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return false
		}
	}
	return true
}
