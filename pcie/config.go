package pcie

import (
	"fmt"
	"strings"
)

// notReadableNote is Config.Note for the 64-byte header that non-root
// readers get from sysfs.
const notReadableNote = "capabilities not readable (config is 64 bytes; needs root)"

// Config is what nicdiag decodes from a function's configuration space (the
// sysfs "config" file).
type Config struct {
	// Size is the size of the configuration space readable: 64 without
	// root, 256 or 4096 with. Of it, only the header, the capability
	// headers and the PCI Express capability are read (and an Intel
	// function's extended capability headers).
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
