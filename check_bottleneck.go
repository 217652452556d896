package nicdiag

import (
	"fmt"
	"strings"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/pcie"
)

// bottleneckCheck: a PCIe path that cannot carry the ports' line rate for
// the default workload (pcie.bottleneck), once per limiting hop. The
// default workload counts the ports that can carry traffic (budget.Ports);
// a port without a carrier raises none itself. Warn; error
// below half the demand; info when the port speed it rests on is the
// driver's nominal figure for a misidentified device.
var bottleneckCheck = Checker{
	Name:  "pcie bottleneck",
	Codes: []finding.Code{finding.PCIeBottleneck},
	Run: func(h *Host) []finding.Finding {
		seen := map[pcie.Address]bool{}
		var out []finding.Finding
		for _, n := range h.Selected {
			b := n.Budget
			if b == nil || !pathBound(b) || b.CeilingMbps.Nominal >= b.EthernetMbps || seen[b.LimitingHop] || idle(n) {
				continue // an uncabled port carries nothing: its siblings' budgets count what does
			}
			seen[b.LimitingHop] = true
			out = append(out, h.bottleneck(n))
		}
		return out
	},
}

func (h *Host) bottleneck(n *NIC) finding.Finding {
	b := n.Budget
	sev := finding.Warn
	if b.CeilingMbps.Nominal < b.EthernetMbps/2 {
		sev = finding.Error
	}
	hop := b.Hop(b.LimitingHop)
	var link string
	if hop != nil {
		link = fmt.Sprintf("%s GT/s x%d", pcie.FormatGTs(hop.Speed), hop.Width)
	}
	stage := fmt.Sprintf("the %s link at %s%s", link, b.LimitingHop, limitWords(hop))
	fix := "Move the card to a slot (or adapter) that trains wider or faster, or use fewer ports at once; `nicdiag explain " + b.Interface + "` shows the calculation."
	if hop != nil && hop.Chipset != nil {
		stage = hopWords(b, b.LimitingHop)
		fix = "Move the card to a CPU-attached slot (one not behind the chipset), or use fewer ports at once; `nicdiag explain " + b.Interface + "` shows the calculation."
	}
	if hop != nil && hop.Tunnel != nil {
		stage = fmt.Sprintf("the %s PCIe tunnel at %s (its bridges report %s, a nominal figure)", hop.Tunnel.Class, b.LimitingHop, link)
		fix = "Use a faster tunnel (a Thunderbolt 4/USB4 or Thunderbolt 5 host and enclosure) or a PCIe slot, or fewer ports at once; `nicdiag explain " + b.Interface + "` shows the calculation."
	}
	summary := fmt.Sprintf("%s: %s need %s Mb/s per direction at line rate, but %s carries about %s Mb/s (%s–%s) of %d-byte frames: the PCIe path is the ceiling.",
		b.Interface, portsWords(b), mbps(b.EthernetMbps), stage,
		mbps(b.CeilingMbps.Nominal), mbps(b.CeilingMbps.Low), mbps(b.CeilingMbps.High), b.Workload.FrameBytes)
	var shared []string
	for _, s := range b.SharersAt(b.LimitingHop) {
		shared = append(shared, s.Words())
	}
	if len(shared) > 0 {
		summary += " That link is shared with " + joinAnd(shared) + ", which take part of it when busy (pcie.shared_uplink)."
	}
	if id := h.ident[n.Name]; id != nil && b.PortSpeedSource == budget.FromRealDevice {
		sev = finding.Warn // the real figure is one measurement, not a line rate
		summary = fmt.Sprintf("%s: the card behind it (misidentified: see nic.misidentified) is known to move about %d Mb/s (measured one way while it moved 5.6 Gb/s the other; budgeted here in both directions), but %s carries about %s Mb/s (%s–%s) of %d-byte frames: the PCIe link is the ceiling, whatever the driver claims.",
			b.Interface, id.MovesMbps, stage, mbps(b.CeilingMbps.Nominal), mbps(b.CeilingMbps.Low), mbps(b.CeilingMbps.High), b.Workload.FrameBytes)
		fix = "Give the card a link that carries what it moves: a slot (and riser) that trains the card's full width and speed; `nicdiag show " + b.Interface + "` shows each hop."
	}
	if h.nominalSpeed(n) {
		sev = finding.Info
		summary += " The port speed is the driver's nominal figure for a misidentified device (see nic.misidentified), so this ceiling is an upper bound, not a prediction."
		fix = "Find out what the device really is first (nic.misidentified)."
	}
	return finding.Finding{
		Code:     finding.PCIeBottleneck,
		Severity: sev,
		Subject:  b.Interface,
		Summary:  summary,
		Fix:      fix,
		Evidence: map[string]string{
			"workload":           workloadWords(b.Workload),
			"limiting_hop":       string(b.LimitingHop),
			"link":               link,
			"pcie_direction":     string(b.LimitingDirection),
			"profile":            b.Profile,
			"at_capability":      mbps(b.AtCapabilityMbps.Nominal) + " Mb/s (" + string(b.AtCapabilityBound) + "-bound)",
			"ethernet_demand":    mbps(b.EthernetMbps) + " Mb/s",
			"port_speed_source":  string(b.PortSpeedSource),
			"interfaces_sharing": strings.Join(h.sharing(b), ","),
			"devices_sharing":    strings.Join(shared, "; "),
		},
		CapacityMbps: finding.Mbps(round1(b.CeilingMbps.Nominal)),
		DemandMbps:   finding.Mbps(round1(b.EthernetMbps)),
		Direction:    string(b.Workload.Direction),
	}
}

// sharing names the NICs (interfaces, or the addresses of functions
// without a netdev) of physical functions below the budget's limiting hop.
func (h *Host) sharing(b *budget.Budget) []string {
	hop := b.Hop(b.LimitingHop)
	if hop == nil {
		return nil
	}
	var out []string
	for _, fn := range hop.Functions {
		for _, n := range h.NICs {
			if n.PCI != nil && n.PCI.Address == fn.Address && n.PCI.PhysFn == "" {
				out = append(out, n.ID())
			}
		}
	}
	return out
}

// pathBound reports whether the budget's ceiling is set on its PCIe path:
// a link or a tunnel.
func pathBound(b *budget.Budget) bool {
	return b.Bound == budget.BoundPCIe || b.Bound == budget.BoundTunnel
}

// limitWords says which end caps the hop's speed and width, port first:
// " (width x1 set by the port, speed 2.5 GT/s by the device)".
func limitWords(h *pcie.Hop) string {
	if h == nil {
		return ""
	}
	if h.Downgraded {
		return fmt.Sprintf(" (trained down: both ends support %s GT/s x%d)", pcie.FormatGTs(h.CapableSpeed), h.CapableWidth)
	}
	var parts []string
	width := fmt.Sprintf("width x%d", h.CapableWidth)
	speed := fmt.Sprintf("speed %s GT/s", pcie.FormatGTs(h.CapableSpeed))
	for _, by := range []pcie.Limiter{pcie.LimitPort, pcie.LimitDevice} {
		if h.WidthLimitedBy == by {
			parts = append(parts, width+" set by the "+string(by))
		}
		if h.SpeedLimitedBy == by {
			parts = append(parts, speed+" set by the "+string(by))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func portsWords(b *budget.Budget) string {
	if b.Workload.Ports == 1 {
		return fmt.Sprintf("1 port at %s Mb/s", mbps(b.Workload.PortMbps))
	}
	return fmt.Sprintf("%d ports at %s Mb/s", b.Workload.Ports, mbps(b.Workload.PortMbps))
}

func workloadWords(w budget.Workload) string {
	return fmt.Sprintf("%d port(s) × %s Mb/s, %d-byte frames, direction %s", w.Ports, mbps(w.PortMbps), w.FrameBytes, w.Direction)
}
