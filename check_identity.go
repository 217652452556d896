package nicdiag

import "github.com/nicdiag/nicdiag/finding"

// identityCheck: a device that is not what it says (nic.misidentified), and
// a NIC on USB (nic.usb_bus), judged over every NIC of the host, since a
// card's functions are judged together.
var identityCheck = Checker{
	Name:  "identity",
	Codes: []finding.Code{finding.NICMisidentified, finding.NICUSBBus},
	Run: func(h *Host) []finding.Finding {
		out := make([]finding.Finding, 0, len(h.Identity))
		for _, id := range h.Identity {
			out = append(out, id.Finding)
		}
		return out
	},
}
