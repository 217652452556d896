package pcie

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// notReadableNote is Config.Note for the 64-byte header that non-root
// readers get from sysfs.
const notReadableNote = "capabilities not readable (config is 64 bytes; needs root)"

// Config is what nicdiag decodes from a function's configuration space (the
// sysfs "config" file).
type Config struct {
	// Size is the number of bytes decoded: 64 without root, 256 or 4096
	// with.
	Size       int    `json:"size"`
	VendorID   uint16 `json:"vendor_id"`
	DeviceID   uint16 `json:"device_id"`
	Revision   uint8  `json:"revision"`
	Class      uint32 `json:"class"`
	HeaderType uint8  `json:"header_type"`
	// CapsReadable is false when the capability list lies beyond the bytes
	// read (the 64-byte non-root view); Note then says so and Express is nil.
	CapsReadable bool   `json:"caps_readable"`
	Note         string `json:"note,omitempty"`
	// Express is the PCI Express capability; nil for conventional PCI or
	// when the capabilities could not be read.
	Express *Express `json:"express,omitempty"`
	// Thunderbolt is true when the extended capabilities hold Intel's
	// Thunderbolt vendor-specific capability (VSEC ID 0x1234), the test
	// Linux uses for pci_dev.is_thunderbolt.
	Thunderbolt bool `json:"thunderbolt,omitempty"`
}

// Express holds the fields of the PCI Express capability that nicdiag uses.
// Sizes are bytes, speeds GT/s; 0 means the register was absent.
type Express struct {
	Offset   int      `json:"offset"`
	Version  int      `json:"version"`
	PortType PortType `json:"port_type"`
	// MaxPayloadSupported is DevCap "MaxPayload"; MaxPayload and
	// MaxReadRequest are what DevCtl set.
	MaxPayloadSupported int `json:"devcap_max_payload"`
	MaxPayload          int `json:"max_payload"`
	MaxReadRequest      int `json:"max_read_request"`
	// HasLink is false for root complex integrated endpoints and event
	// collectors, whose link registers are not implemented.
	HasLink      bool    `json:"has_link"`
	LinkCapSpeed float64 `json:"lnkcap_speed_gts,omitempty"`
	LinkCapWidth int     `json:"lnkcap_width,omitempty"`
	PortNumber   int     `json:"port_number,omitempty"`
	ASPMSupport  ASPM    `json:"aspm_support"`
	ASPMEnabled  ASPM    `json:"aspm_enabled"`
	// RCB is the read completion boundary from LnkCtl: 64 or 128.
	RCB       int     `json:"rcb,omitempty"`
	LinkSpeed float64 `json:"lnksta_speed_gts,omitempty"`
	LinkWidth int     `json:"lnksta_width,omitempty"`
	// SupportedSpeeds is the LnkCap2 supported-speeds vector; empty for
	// version 1 capabilities and for devices that leave it zero.
	SupportedSpeeds []float64 `json:"supported_speeds_gts,omitempty"`
	// TargetSpeed is LnkCtl2's target link speed; 0 for version 1.
	TargetSpeed float64 `json:"target_speed_gts,omitempty"`
}

// PortType is the Device/Port Type field of the PCI Express capability.
type PortType int

// Port types (PCIe Base Spec, PCI Express Capabilities Register bits 7:4).
const (
	PortEndpoint         PortType = 0
	PortLegacyEndpoint   PortType = 1
	PortRootPort         PortType = 4
	PortUpstream         PortType = 5
	PortDownstream       PortType = 6
	PortPCIeToPCI        PortType = 7
	PortPCIToPCIe        PortType = 8
	PortRCiEP            PortType = 9
	PortRCEventCollector PortType = 10
)

var portNames = map[PortType]string{
	PortEndpoint:         "endpoint",
	PortLegacyEndpoint:   "legacy_endpoint",
	PortRootPort:         "root_port",
	PortUpstream:         "upstream_port",
	PortDownstream:       "downstream_port",
	PortPCIeToPCI:        "pcie_to_pci_bridge",
	PortPCIToPCIe:        "pci_to_pcie_bridge",
	PortRCiEP:            "rc_integrated_endpoint",
	PortRCEventCollector: "rc_event_collector",
}

// String returns a snake_case name such as "root_port".
func (p PortType) String() string {
	if n, ok := portNames[p]; ok {
		return n
	}
	return fmt.Sprintf("port_type_%d", int(p))
}

// MarshalText encodes the port type as its name.
func (p PortType) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText decodes a name written by MarshalText.
func (p *PortType) UnmarshalText(b []byte) error {
	for t, n := range portNames {
		if n == string(b) {
			*p = t
			return nil
		}
	}
	var v int
	if _, err := fmt.Sscanf(string(b), "port_type_%d", &v); err != nil {
		return fmt.Errorf("pcie: unknown port type %q", b)
	}
	*p = PortType(v)
	return nil
}

// downFacing reports whether a port of this type is the upstream end of a
// link (it faces away from the root).
func (p PortType) downFacing() bool {
	return p == PortRootPort || p == PortDownstream || p == PortPCIToPCIe
}

// ASPM is a set of ASPM states: bit 0 L0s, bit 1 L1.
type ASPM uint8

// ASPM states.
const (
	ASPML0s ASPM = 1
	ASPML1  ASPM = 2
)

// String returns "none", "L0s", "L1" or "L0s L1".
func (a ASPM) String() string {
	var s []string
	if a&ASPML0s != 0 {
		s = append(s, "L0s")
	}
	if a&ASPML1 != 0 {
		s = append(s, "L1")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " ")
}

// MarshalText encodes the set as its String.
func (a ASPM) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText decodes a set written by MarshalText.
func (a *ASPM) UnmarshalText(b []byte) error {
	var v ASPM
	for _, f := range strings.Fields(string(b)) {
		switch f {
		case "none":
		case "L0s":
			v |= ASPML0s
		case "L1":
			v |= ASPML1
		default:
			return fmt.Errorf("pcie: unknown ASPM state %q", f)
		}
	}
	*a = v
	return nil
}

// speedOf maps a 4-bit link speed code (LnkCap, LnkSta, LnkCtl2) to GT/s;
// 0 for codes no generation uses.
func speedOf(code uint32) float64 {
	switch code {
	case 1:
		return 2.5
	case 2:
		return 5
	case 3:
		return 8
	case 4:
		return 16
	case 5:
		return 32
	case 6:
		return 64
	case 7:
		return 128
	}
	return 0
}

// Capability offsets and IDs.
const (
	capPtrOffset   = 0x34
	capPtrCardBus  = 0x14
	capIDExpress   = 0x10
	extCapStart    = 0x100
	extCapIDVSEC   = 0x000b
	vsecIDIntelTBT = 0x1234
	vendorIntel    = 0x8086
)

// DecodeConfig decodes a configuration space as read from sysfs. It needs the
// 64-byte header (ErrConfigTruncated otherwise). When only the header was
// readable, the result has CapsReadable false and a Note; when the function
// has no PCI Express capability (conventional PCI), Express is nil. A
// capability list that loops or points outside the header-to-end range gives
// ErrCapList; all ones gives ErrNoDevice.
func DecodeConfig(b []byte) (*Config, error) {
	if len(b) < 64 {
		return nil, fmt.Errorf("%w: %d bytes, need the 64-byte header", ErrConfigTruncated, len(b))
	}
	le := binary.LittleEndian
	c := &Config{
		Size:       len(b),
		VendorID:   le.Uint16(b[0:]),
		DeviceID:   le.Uint16(b[2:]),
		Revision:   b[8],
		Class:      uint32(b[0x0b])<<16 | uint32(b[0x0a])<<8 | uint32(b[0x09]),
		HeaderType: b[0x0e] & 0x7f,
	}
	if c.VendorID == 0xffff {
		return nil, ErrNoDevice
	}
	c.CapsReadable = true
	status := le.Uint16(b[6:])
	if status&0x10 == 0 { // no capability list at all
		return c, nil
	}
	ptrAt := capPtrOffset
	if c.HeaderType == 2 {
		ptrAt = capPtrCardBus
	}
	ptr := int(b[ptrAt] & 0xfc)
	if ptr >= len(b) && len(b) <= 64 {
		c.CapsReadable = false
		c.Note = notReadableNote
		return c, nil
	}
	off, err := findCap(b, ptr, capIDExpress)
	if err != nil {
		return nil, err
	}
	if off == 0 {
		return c, nil
	}
	if c.Express, err = decodeExpress(b, off); err != nil {
		return nil, err
	}
	c.Thunderbolt, c.Note = findTBT(b, c.VendorID)
	return c, nil
}

// findCap walks the standard capability list from ptr and returns the
// offset of capability id, or 0 when the list ends without it.
func findCap(b []byte, ptr, id int) (int, error) {
	var seen [256]bool
	for ptr != 0 {
		if ptr < 0x40 || ptr > 0xfc {
			return 0, fmt.Errorf("%w: pointer 0x%02x outside 0x40..0xfc", ErrCapList, ptr)
		}
		if ptr+2 > len(b) {
			return 0, fmt.Errorf("%w: capability pointer 0x%02x beyond %d bytes", ErrConfigTruncated, ptr, len(b))
		}
		if seen[ptr] {
			return 0, fmt.Errorf("%w: loop at 0x%02x", ErrCapList, ptr)
		}
		seen[ptr] = true
		switch int(b[ptr]) {
		case id:
			return ptr, nil
		case 0xff:
			return 0, fmt.Errorf("%w: capability ID 0xff at 0x%02x", ErrCapList, ptr)
		}
		ptr = int(b[ptr+1] & 0xfc)
	}
	return 0, nil
}

// decodeExpress decodes the PCI Express capability at off.
func decodeExpress(b []byte, off int) (*Express, error) {
	le := binary.LittleEndian
	need := off + 0x14 // through LnkSta
	if need > len(b) {
		return nil, fmt.Errorf("%w: Express capability at 0x%x runs past %d bytes", ErrConfigTruncated, off, len(b))
	}
	capReg := le.Uint16(b[off+2:])
	e := &Express{
		Offset:   off,
		Version:  int(capReg & 0xf),
		PortType: PortType(capReg >> 4 & 0xf),
	}
	devCap := le.Uint32(b[off+4:])
	devCtl := le.Uint16(b[off+8:])
	e.MaxPayloadSupported = 128 << (devCap & 7)
	e.MaxPayload = 128 << (devCtl >> 5 & 7)
	e.MaxReadRequest = 128 << (devCtl >> 12 & 7)
	if e.PortType == PortRCiEP || e.PortType == PortRCEventCollector {
		return e, nil
	}
	e.HasLink = true
	lnkCap := le.Uint32(b[off+0x0c:])
	lnkCtl := le.Uint16(b[off+0x10:])
	lnkSta := le.Uint16(b[off+0x12:])
	e.LinkCapSpeed = speedOf(lnkCap & 0xf)
	e.LinkCapWidth = int(lnkCap >> 4 & 0x3f)
	e.ASPMSupport = ASPM(lnkCap >> 10 & 3)
	e.PortNumber = int(lnkCap >> 24)
	e.ASPMEnabled = ASPM(lnkCtl & 3)
	e.RCB = 64
	if lnkCtl&0x8 != 0 {
		e.RCB = 128
	}
	e.LinkSpeed = speedOf(uint32(lnkSta & 0xf))
	e.LinkWidth = int(lnkSta >> 4 & 0x3f)
	if e.Version < 2 || off+0x32 > len(b) {
		return e, nil
	}
	lnkCap2 := le.Uint32(b[off+0x2c:])
	for bit := 1; bit <= 7; bit++ {
		if lnkCap2&(1<<bit) != 0 {
			e.SupportedSpeeds = append(e.SupportedSpeeds, speedOf(uint32(bit)))
		}
	}
	// A target speed hardwired to 0 means only 2.5 GT/s is supported
	// (as lspci reads it).
	if t := le.Uint16(b[off+0x30:]) & 0xf; t == 0 {
		e.TargetSpeed = 2.5
	} else {
		e.TargetSpeed = speedOf(uint32(t))
	}
	return e, nil
}

// findTBT looks for Intel's Thunderbolt VSEC in the extended capabilities.
// A broken extended list ends the search with a note instead of an error:
// the standard capabilities already decoded stay valid.
func findTBT(b []byte, vendor uint16) (bool, string) {
	if len(b) < extCapStart+8 || vendor != vendorIntel {
		return false, ""
	}
	le := binary.LittleEndian
	var seen [1024]bool
	for off := extCapStart; off != 0; {
		if off < extCapStart || off+8 > len(b) {
			return false, fmt.Sprintf("extended capability pointer 0x%x outside the config space", off)
		}
		if seen[off/4] {
			return false, fmt.Sprintf("extended capability list loops at 0x%x", off)
		}
		seen[off/4] = true
		h := le.Uint32(b[off:])
		if h == 0 || h == 0xffffffff {
			return false, ""
		}
		if h&0xffff == extCapIDVSEC && le.Uint32(b[off+4:])&0xffff == vsecIDIntelTBT {
			return true, ""
		}
		off = int(h>>20) & 0xffc
	}
	return false, ""
}
