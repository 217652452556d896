package nicdiag

import (
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// linkModesCheck: an Ethernet link slower than both sides advertise, or at
// half duplex (nic.link_below_capability).
var linkModesCheck = Checker{
	Name:  "link modes",
	Codes: []finding.Code{finding.NICLinkBelowCapability},
	Run: func(h *Host) []finding.Finding {
		var nics []nicinfo.NIC
		for _, n := range h.Selected {
			if n.Netdev() {
				nics = append(nics, n.NIC)
			}
		}
		return nicinfo.CheckLinkModes(nics)
	},
}
