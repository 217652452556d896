package nicdiag

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/pcie"
)

// uplinkCheck: a hop of a NIC's PCIe path that also carries other devices
// (pcie.shared_uplink): an NVMe, a GPU, another NIC behind the same switch
// or chipset uplink (budget.Sharer). The default workload's model counts
// this NIC's ports only; the others take part of the hop when busy, up to
// what their own links carry. Raised when the NIC's line rate and what the
// others can take do not fit the hop together, so that with them busy the
// NIC keeps less than its line rate: what they leave, or at least an
// equal turn of the link (1/(1+N) of it); info: what the others take is
// their links' capability, not a measurement. Once per hop.
var uplinkCheck = Checker{
	Name:  "shared uplink",
	Codes: []finding.Code{finding.PCIeSharedUplink},
	Run: func(h *Host) []finding.Finding {
		seen := map[pcie.Address]bool{}
		var out []finding.Finding
		for _, n := range h.Selected {
			b := n.Budget
			if b == nil || !n.Judged() || idle(n) {
				continue
			}
			for _, hr := range b.Model.Hops {
				addr := pcie.Address(hr.Addr)
				if seen[addr] {
					continue
				}
				if f, ok := sharedUplink(n, b, hr); ok {
					seen[addr] = true
					out = append(out, f)
				}
			}
		}
		return out
	},
}

// sharedUplink judges one hop of n's budget.
func sharedUplink(n *NIC, b *budget.Budget, hr budget.HopResult) (finding.Finding, bool) {
	addr := pcie.Address(hr.Addr)
	others := b.SharersAt(addr)
	carries := hr.PCIeMbps.Nominal
	if len(others) == 0 || hr.RawGbps <= 0 || carries <= 0 {
		return finding.Finding{}, false
	}
	var take float64
	var words []string
	for _, s := range others {
		take += s.Gbps
		words = append(words, s.Words())
	}
	// With every sharer busy, the NIC keeps what they leave, and at least
	// an equal turn of the link's arbitration (round robin between its
	// requesters): carries / (1 + sharers).
	otherShare := min(1, take/hr.RawGbps)
	left := max(carries*(1-otherShare), carries/float64(1+len(others)))
	if left >= b.EthernetMbps {
		return finding.Finding{}, false
	}
	stage := hopWords(b, addr)
	summary := fmt.Sprintf("%s: %s carries about %s Mb/s of %s's frames (%s), which need %s Mb/s at line rate; it also carries %s, which can take up to %.1f Gb/s of its %.1f Gb/s (%s). With them busy, %s has about %s Mb/s there (what they leave, or an equal turn of the link), less than its line rate.",
		n.Name, stage, mbps(carries), n.Name, portsWords(b), mbps(b.EthernetMbps), joinAnd(words), take, hr.RawGbps, pct(otherShare), n.Name, mbps(left))
	ev := map[string]string{
		"hop": string(addr), "hop_raw_gbps": strconv.FormatFloat(hr.RawGbps, 'f', 2, 64),
		"nic_carries_mbps": mbps(carries), "ethernet_demand_mbps": mbps(b.EthernetMbps),
		"others_gbps": strconv.FormatFloat(take, 'f', 2, 64), "others": strings.Join(words, "; "),
		"left_when_busy_mbps": mbps(left),
	}
	if c := b.Chipset(); c != nil && c.Upstream.Address == addr && c.Chipset != nil {
		ev["chipset_uplink"] = c.Chipset.Link + " (" + c.Chipset.Chipset + ")"
	}
	return finding.Finding{
		Code:     finding.PCIeSharedUplink,
		Severity: finding.Info,
		Subject:  n.Name,
		Summary:  summary,
		Fix: fmt.Sprintf("Where %s must run at line rate while the others are busy, move it (or them) to a slot on another link: a CPU-attached slot rather than one behind the chipset or a switch; `nicdiag explain %s` shows the hop and what shares it.",
			n.Name, n.Name),
		Evidence:     ev,
		CapacityMbps: finding.Mbps(round1(left)),
		DemandMbps:   finding.Mbps(round1(b.EthernetMbps)),
		Direction:    string(b.Workload.Direction),
	}, true
}

// hopWords names the hop at addr: "the 8 GT/s x4 link at 0000:00:01.3",
// or the modelled chipset uplink.
func hopWords(b *budget.Budget, addr pcie.Address) string {
	h := b.Hop(addr)
	switch {
	case h == nil:
		return "the link at " + string(addr)
	case h.Chipset != nil:
		return fmt.Sprintf("the chipset uplink (%s between the CPU and the %s chipset, %s GT/s x%d: modelled from the datasheet)",
			h.Chipset.Link, h.Chipset.Chipset, pcie.FormatGTs(h.Speed), h.Width)
	case h.Tunnel != nil:
		return fmt.Sprintf("the %s PCIe tunnel at %s", h.Tunnel.Class, addr)
	}
	return fmt.Sprintf("the %s GT/s x%d link at %s", pcie.FormatGTs(h.Speed), h.Width, addr)
}
