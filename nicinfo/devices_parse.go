package nicinfo

// The parser of devices.tsv, the known-device table: strict, since the
// table is compiled in and every row is a claim about real hardware.

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
)

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
