package nicinfo

import (
	"fmt"

	"github.com/nicdiag/nicdiag/internal/text"
)

// XDP is the XDP program attached to an interface (IFLA_XDP), as `ip link`
// shows it ("xdp", "xdpgeneric", "xdpoffload", "xdpmulti").
type XDP struct {
	// Mode is how the program runs: "driver" (native, in the driver's
	// receive path), "generic" (skb mode, after the kernel built an skb),
	// "offload" (on the NIC) or "multi" (more than one).
	Mode   string `json:"mode"`
	ProgID uint32 `json:"prog_id,omitempty"`
}

// XDP modes.
const (
	XDPDriver  = "driver"
	XDPGeneric = "generic"
	XDPOffload = "offload"
	XDPMulti   = "multi"
)

// xdpMode names IFLA_XDP_ATTACHED's values (XDP_ATTACHED_*).
func xdpMode(v uint32) string {
	switch v {
	case 1:
		return XDPDriver
	case 2:
		return XDPGeneric
	case 3:
		return XDPOffload
	case 4:
		return XDPMulti
	}
	return ""
}

// Tunnel is a VXLAN or Geneve device's setup (IFLA_INFO_DATA), as `ip -d
// link show` prints it.
type Tunnel struct {
	// Kind is "vxlan" or "geneve".
	Kind string `json:"kind"`
	// VNI is the network identifier; Port the UDP destination port.
	VNI  uint32 `json:"vni"`
	Port int    `json:"port,omitempty"`
	// Link is the underlay device a VXLAN sends through (IFLA_VXLAN_LINK,
	// "dev eth0"); "" when it routes by destination.
	Link string `json:"link,omitempty"`
}

// Tunnel kinds.
const (
	TunnelVXLAN  = "vxlan"
	TunnelGeneve = "geneve"
)

// check validates a tunnel or XDP record read from a snapshot.
func (a *NetlinkAnswers) checkOverlay() error {
	if x := a.XDP; x != nil {
		switch x.Mode {
		case XDPDriver, XDPGeneric, XDPOffload, XDPMulti:
		default:
			return fmt.Errorf("%w: XDP mode %q", ErrMalformed, text.Clip(x.Mode))
		}
	}
	if t := a.Tunnel; t != nil {
		switch {
		case t.Kind != TunnelVXLAN && t.Kind != TunnelGeneve:
			return fmt.Errorf("%w: tunnel kind %q", ErrMalformed, text.Clip(t.Kind))
		case t.VNI > 1<<24-1 || t.Port < 0 || t.Port > 65535:
			return fmt.Errorf("%w: tunnel VNI %d port %d", ErrMalformed, t.VNI, t.Port)
		case t.Link != "" && !validIfaceName(t.Link):
			return fmt.Errorf("%w: tunnel link %q", ErrMalformed, text.Clip(t.Link))
		}
	}
	return nil
}
