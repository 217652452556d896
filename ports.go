package nicdiag

import (
	"strings"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// ports is the host's view of the ports on n's path for its budget: the
// VFs (no extra ports), the ports without a carrier (no traffic in the
// default workload) and the fastest known speed of another port of n's
// card, for a port of unknown speed.
func (h *Host) ports(n *NIC) budget.Ports {
	p := budget.Ports{VFs: h.vfs, Idle: map[pcie.Address]bool{}}
	for _, o := range h.NICs {
		if o.PCI == nil || !o.Netdev() || o.Virtual {
			continue
		}
		if idle(o) {
			p.Idle[o.PCI.Address] = true
		}
		if n.PCI != nil && o != n && sameDevice(o.PCI.Address, n.PCI.Address) && o.PCI.PhysFn == "" &&
			o.Link.SpeedMbps > p.SiblingMbps && h.ident[o.Name] == nil {
			p.SiblingMbps = o.Link.SpeedMbps
		}
	}
	return p
}

// idle reports whether a netdev carries no traffic now: down (no carrier,
// or set down) with no link speed.
func idle(n *NIC) bool {
	return n.Link.SpeedMbps <= 0 && (n.OperState == nicinfo.OperDown || n.OperState == nicinfo.OperLowerLayerDown)
}

// sameDevice reports whether a and b are functions of one PCI device
// (domain, bus and device equal: "0000:03:00.0" and "0000:03:00.1").
func sameDevice(a, b pcie.Address) bool {
	da, _, okA := strings.Cut(string(a), ".")
	db, _, okB := strings.Cut(string(b), ".")
	return okA && okB && da == db
}
