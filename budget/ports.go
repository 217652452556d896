package budget

import (
	"fmt"
	"slices"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// Ports says which network functions on a path are ports, which of them
// carry traffic, and what a port of unknown speed may run at.
type Ports struct {
	// VFs are the SR-IOV virtual functions on the host: they share a
	// port's wire and are not extra ports.
	VFs map[pcie.Address]bool
	// Idle are ports that carry no traffic now (no carrier): they still
	// count where a workload names its ports, not in the default one.
	// The NIC budgeted is never idle to its own budget.
	Idle map[pcie.Address]bool
	// SiblingMbps is a known link speed of another port of the same card,
	// for a port whose own speed and supported modes are unknown; 0 when
	// none is known.
	SiblingMbps int
}

// idleBut is the idle set without n's own function.
func (p Ports) idleBut(n *nicinfo.NIC) map[pcie.Address]bool {
	if n.PCI == nil || !p.Idle[n.PCI.Address] {
		return p.Idle
	}
	out := make(map[pcie.Address]bool, len(p.Idle))
	for a, v := range p.Idle {
		out[a] = v && a != n.PCI.Address
	}
	return out
}

// portSpeedFor fills w's port speed from the NIC when w gives none;
// sibling is a sibling port's known speed (0: none).
func portSpeedFor(n *nicinfo.NIC, w Workload, sibling int) (Workload, SpeedSource, error) {
	if w.PortMbps > 0 {
		return w, FromWorkload, nil
	}
	var src SpeedSource
	w.PortMbps, src = portSpeed(n, sibling)
	if w.PortMbps <= 0 {
		return w, "", fmt.Errorf("%s: link speed unknown and chip not in the known-device table; give the port speed: %w", n.ID(), ErrInvalidWorkload)
	}
	return w, src, nil
}

// portSpeed is the NIC's negotiated speed, else its fastest supported
// mode, else sibling (another port's speed, when above 0), else its chip's
// top speed from the known-device table; 0 when none is known.
func portSpeed(n *nicinfo.NIC, sibling int) (float64, SpeedSource) {
	if n.Link.SpeedMbps > 0 {
		return float64(n.Link.SpeedMbps), FromDriver
	}
	if _, top := nicinfo.FastestMode(n.Link.Supported); top > 0 {
		return float64(top), FromModes
	}
	if sibling > 0 {
		return float64(sibling), FromSibling
	}
	if n.PCI != nil {
		if d, ok := nicinfo.LookupDevice(n.PCI.VendorID, n.PCI.DeviceID); ok && d.MaxMbps > 0 {
			return float64(d.MaxMbps), FromChip
		}
	}
	return 0, ""
}

// activeOf is LinkParams.Active for active of shared ports: 0 (all of
// them) when none is idle.
func activeOf(active, shared int) int {
	if active >= shared {
		return 0
	}
	return active
}

// pathHops are the path's hops, device first, and the modelled chipset
// uplink above its root port when there is one (pcie.Path.Chipset).
func pathHops(path *pcie.Path) []pcie.Hop {
	if path.Chipset == nil {
		return path.Hops
	}
	return append(slices.Clone(path.Hops), *path.Chipset)
}

// Chipset returns the budget's modelled chipset uplink hop (DMI), or nil.
func (b *Budget) Chipset() *pcie.Hop {
	for i := range b.Hops {
		if b.Hops[i].Chipset != nil {
			return &b.Hops[i]
		}
	}
	return nil
}
