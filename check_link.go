package nicdiag

import (
	"fmt"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/pcie"
)

// pcieLinkCheck: the verdicts on each link of the selected NICs' paths
// (pcie.link_downgraded, pcie.idle_downtrained, pcie.slot_limited), one per
// link and code however many functions share the link. A slot limit is
// raised to warn when a slot matching the card would remove the PCIe
// bottleneck the default workload meets now.
var pcieLinkCheck = Checker{
	Name:  "pcie links",
	Codes: []finding.Code{finding.PCIeLinkDowngraded, finding.PCIeIdleDowntrained, finding.PCIeSlotLimited},
	Run: func(h *Host) []finding.Finding {
		type key struct {
			code finding.Code
			port pcie.Address
		}
		seen := map[key]bool{}
		var out []finding.Finding
		for _, n := range h.Selected {
			if !n.Judged() || n.Path == nil {
				continue
			}
			for i := range n.Path.Hops {
				hop := &n.Path.Hops[i]
				for _, f := range hop.Findings() {
					k := key{f.Code, hop.Upstream.Address}
					if seen[k] {
						continue
					}
					seen[k] = true
					if f.Code == finding.PCIeSlotLimited {
						f = h.slotLimited(n, hop, f)
					}
					out = append(out, f)
				}
			}
		}
		return out
	},
}

// slotLimited returns the slot-limit verdict f on hop at warn, with what
// it costs, when the NIC's budget is PCIe-bound now and Ethernet-bound in a
// slot matching the card; f unchanged otherwise.
func (h *Host) slotLimited(n *NIC, hop *pcie.Hop, f finding.Finding) finding.Finding {
	b := n.Budget
	if b == nil || !pathBound(b) {
		return f
	}
	alt, err := b.AtMatchingSlot(&n.NIC, h.vfs)
	if err != nil || alt.AtCapabilityBound != budget.BoundEthernet {
		return f
	}
	w := hop.SlotLimitedFinding(finding.Warn, fmt.Sprintf(
		"this costs throughput: %s Mb/s per direction now, %s Mb/s in a slot matching the card (%s).",
		mbps(b.CeilingMbps.Nominal), mbps(alt.AtCapabilityMbps.Nominal), workloadWords(b.Workload)))
	w.Evidence["ceiling_now_mbps"] = mbps(b.CeilingMbps.Nominal)
	w.Evidence["ceiling_in_matching_slot_mbps"] = mbps(alt.AtCapabilityMbps.Nominal)
	return w
}
