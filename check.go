// Package nicdiag joins the inventory (nicinfo), the PCIe path and bandwidth
// model (pcie) and the interrupt checks (irq) into the verdicts of `nicdiag
// check` and `nicdiag explain`: every finding about a host's network cards,
// worst first, and the throughput budget of each card.
package nicdiag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// Report is what Check found: the interfaces it looked at, the PCIe path and
// default-workload budget of each PCI NIC, and every finding, worst first.
type Report struct {
	NICs []nicinfo.NIC `json:"nics"`
	// Paths are keyed by PCI address.
	Paths map[string]*pcie.Path `json:"paths"`
	// Budgets hold the default workload's budget per PCI NIC, keyed by
	// interface name.
	Budgets map[string]*Budget `json:"budgets"`
	// NoNetdev are the network-class PCI functions without a network
	// interface (bound to vfio-pci and the like, or to no driver) that
	// were checked; their budgets are keyed by PCI address.
	NoNetdev []nicinfo.NoNetdevFunction `json:"no_netdev,omitempty"`
	Findings []finding.Finding          `json:"findings"`
	// Skipped names what could not be checked and why.
	Skipped []string `json:"skipped,omitempty"`
}

// Check inventories the host (or snapshot), walks every PCI NIC's path, solves
// the default workload (docs/design.md §3) for it and runs the identity and static
// IRQ checks. Network-class PCI functions without a netdev (vfio-pci, no
// driver) get the PCIe checks too. With WithInterfaces it reports on those
// interfaces (or PCI addresses of such functions) only.
func Check(ctx context.Context, opts ...Option) (*Report, error) {
	o := buildOptions(opts)
	all, err := nicinfo.List(ctx, o.nicinfo()...)
	if err != nil {
		return nil, err
	}
	var skipped []string
	bare, err := nicinfo.NoNetdev(ctx, o.nicinfo()...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		skipped = append(skipped, fmt.Sprintf("PCI functions without a netdev: %v", err))
	}
	names, sel := selectNoNetdev(all, bare, o.ifaces)
	nics, err := SelectNICs(all, names)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 && len(o.ifaces) > 0 {
		nics = nil // only PCI addresses were asked for
	}
	r := &Report{NICs: nics, NoNetdev: sel, Paths: map[string]*pcie.Path{}, Budgets: map[string]*Budget{}, Findings: []finding.Finding{}, Skipped: skipped}
	ident := nicinfo.CheckIdentity(all)
	nominal := map[string]bool{} // interfaces whose reported speed a misidentification makes nominal
	for _, f := range ident {
		if f.Code == finding.NICMisidentified {
			for _, name := range strings.Fields(f.Evidence["interfaces"]) {
				nominal[name] = true
			}
		}
	}
	r.Findings = append(r.Findings, ident...)
	r.Findings = append(r.Findings, nicinfo.CheckLinkModes(nics)...)
	subjects := map[string]bool{}
	reported := map[string]bool{} // limiting hops with a pcie.bottleneck already
	linkSeen := map[string]bool{} // link verdicts already reported, by code and port
	all = withNoNetdev(all, bare)
	checked := withNoNetdev(nics, sel)
	for i := range checked {
		n := &checked[i]
		subjects[n.Name] = true
		if n.PCI == nil || !n.Physical() || virtualPCI(n) {
			continue
		}
		subjects[n.PCI.Address] = true
		path, err := pcie.PathTo(ctx, n.PCI.Address, o.pcie()...)
		if err != nil {
			r.Skipped = append(r.Skipped, fmt.Sprintf("%s: PCIe path: %v", n.Name, err))
			continue
		}
		r.Paths[n.PCI.Address] = path
		for _, h := range path.Hops {
			subjects[h.Upstream.Address] = true
			subjects[h.Downstream.Address] = true
		}
		b, err := budget(n, all, path, pcie.Workload{})
		if err != nil {
			if !errors.Is(err, ErrNoPCIePath) {
				r.Skipped = append(r.Skipped, fmt.Sprintf("%s: budget: %v", n.Name, err))
			}
			r.Findings = append(r.Findings, onePerLink(path.Findings(), linkSeen)...)
			continue
		}
		r.Budgets[n.Name] = b
		r.Findings = append(r.Findings, onePerLink(pathFindings(n, all, path, b), linkSeen)...)
		if f, ok := bottleneck(b, all); ok && !reported[b.LimitingHop] {
			reported[b.LimitingHop] = true
			if nominal[n.Name] && b.PortSpeedSource == speedFromDriver {
				f.Severity = finding.Info
				f.Summary += " The port speed is the driver's nominal figure for a misidentified device (see nic.misidentified), so this ceiling is an upper bound, not a prediction."
				f.Fix = "Find out what the device really is first (nic.misidentified)."
			}
			r.Findings = append(r.Findings, f)
		}
	}
	irqFindings, err := irq.Check(ctx, nics, irq.WithRoot(o.root))
	if err != nil {
		r.Skipped = append(r.Skipped, fmt.Sprintf("irq checks: %v", err))
	}
	r.Findings = append(r.Findings, irqFindings...)
	r.Findings = dedupe(keep(r.Findings, subjects, len(o.ifaces) > 0))
	finding.Sort(r.Findings)
	return r, nil
}

// selectNoNetdev splits names into interface names and the PCI addresses
// of functions without a netdev, returning the interface names and the
// functions selected: all of them when names is empty. A name that is an
// interface stays an interface.
func selectNoNetdev(all []nicinfo.NIC, bare []nicinfo.NoNetdevFunction, names []string) ([]string, []nicinfo.NoNetdevFunction) {
	if len(names) == 0 {
		return nil, bare
	}
	var ifaces []string
	var sel []nicinfo.NoNetdevFunction
	for _, name := range names {
		if i := findNoNetdev(bare, name); i >= 0 && !slices.ContainsFunc(all, func(n nicinfo.NIC) bool { return n.Name == name }) {
			sel = append(sel, bare[i])
			continue
		}
		ifaces = append(ifaces, name)
	}
	return ifaces, sel
}

// findNoNetdev returns the index of the function at PCI address addr
// ("0000:01:00.1", or "01:00.1" in domain 0000), or -1.
func findNoNetdev(bare []nicinfo.NoNetdevFunction, addr string) int {
	a := normBDF(addr)
	if a == "" {
		return -1
	}
	for i := range bare {
		if bare[i].Address == a {
			return i
		}
	}
	return -1
}

// withNoNetdev appends a stand-in NIC for each function without a netdev,
// named by its PCI address, with no netdev driver and no link speed: the
// budget then takes the PCI driver's DMA profile and the chip's top speed.
func withNoNetdev(all []nicinfo.NIC, bare []nicinfo.NoNetdevFunction) []nicinfo.NIC {
	if len(bare) == 0 {
		return all
	}
	out := append([]nicinfo.NIC(nil), all...)
	for i := range bare {
		f := bare[i].PCIFunction
		out = append(out, nicinfo.NIC{Name: f.Address, Bus: nicinfo.BusPCI, PCI: &f,
			Link: nicinfo.Link{SpeedMbps: nicinfo.SpeedUnknown}, NUMANode: bare[i].NUMANode,
			LocalCPUs: bare[i].LocalCPUs, Missing: bare[i].Missing})
	}
	return out
}

// SelectNICs returns the interfaces called names, in that order, or every
// physical one when names is empty. An unknown name is an error wrapping
// nicinfo.ErrNoInterface.
func SelectNICs(all []nicinfo.NIC, names []string) ([]nicinfo.NIC, error) {
	if len(names) == 0 {
		var out []nicinfo.NIC
		for _, n := range all {
			if n.Physical() {
				out = append(out, n)
			}
		}
		return out, nil
	}
	var out []nicinfo.NIC
	seen := map[string]bool{}
	for _, name := range names {
		match := func(n nicinfo.NIC) bool { return n.Name == name }
		if addr := normBDF(name); addr != "" && !slices.ContainsFunc(all, match) {
			// A PCI address names the interfaces of that function (one,
			// or several on a card with more ports per function).
			match = func(n nicinfo.NIC) bool { return n.PCI != nil && n.PCI.Address == addr }
		}
		found := false
		for _, n := range all {
			if !match(n) {
				continue
			}
			found = true
			if !seen[n.Name] {
				seen[n.Name] = true
				out = append(out, n)
			}
		}
		if !found {
			return nil, fmt.Errorf("nicdiag: %q: %w", name, nicinfo.ErrNoInterface)
		}
	}
	return out, nil
}

// normBDF is the canonical PCI address ("0000:01:00.1") of s, which may
// omit domain 0000 ("01:00.1"); "" when s is not a PCI address.
func normBDF(s string) string {
	a, err := nicinfo.ParseBDF(s)
	if err != nil {
		if a, err = nicinfo.ParseBDF("0000:" + s); err != nil {
			return ""
		}
	}
	return a
}

// pathFindings returns the path's link verdicts, with pcie.slot_limited
// raised to warn when a slot matching the device's own capability would
// remove the bottleneck the workload meets now.
func pathFindings(n *nicinfo.NIC, all []nicinfo.NIC, path *pcie.Path, b *Budget) []finding.Finding {
	fs := path.Findings()
	if b.Bound != pcie.BoundPCIe {
		return fs
	}
	for i := range fs {
		if fs[i].Code != finding.PCIeSlotLimited {
			continue
		}
		freed := *path
		freed.Hops = append([]pcie.Hop(nil), path.Hops...)
		for j := range freed.Hops {
			h := &freed.Hops[j]
			if h.SlotLimited {
				h.CapableSpeed = max(h.CapableSpeed, h.Downstream.Link.MaxSpeed)
				h.CapableWidth = max(h.CapableWidth, h.Downstream.Link.MaxWidth)
			}
		}
		alt, err := budget(n, all, &freed, b.Workload)
		if err != nil || alt.AtCapabilityBound != pcie.BoundEthernet {
			continue
		}
		fs[i].Severity = finding.Warn
		if fs[i].Evidence == nil {
			fs[i].Evidence = map[string]string{}
		}
		fs[i].Evidence["ceiling_now_mbps"] = mbps(b.CeilingMbps.Nominal)
		fs[i].Evidence["ceiling_in_matching_slot_mbps"] = mbps(alt.AtCapabilityMbps.Nominal)
		fs[i].Summary = strings.TrimSuffix(fs[i].Summary, ".") + fmt.Sprintf(
			"; this costs throughput: %s Mb/s per direction now, %s Mb/s in a slot matching the card (%s).",
			mbps(b.CeilingMbps.Nominal), mbps(alt.AtCapabilityMbps.Nominal), workloadWords(b.Workload))
	}
	return fs
}

// bottleneck is pcie.bottleneck for a budget whose PCIe path cannot carry
// the ports' line rate: warn, error below half of the demand.
func bottleneck(b *Budget, nics []nicinfo.NIC) (finding.Finding, bool) {
	if b.Bound != pcie.BoundPCIe || b.CeilingMbps.Nominal >= b.EthernetMbps {
		return finding.Finding{}, false
	}
	sev := finding.Warn
	if b.CeilingMbps.Nominal < b.EthernetMbps/2 {
		sev = finding.Error
	}
	hop := b.LimitingHop
	var link string
	for _, h := range b.Hops {
		if h.Upstream.Address == hop {
			link = fmt.Sprintf("%s GT/s x%d", gts(h.Speed), h.Width)
		}
	}
	who := ""
	if b.LimitedBy != "" {
		who = fmt.Sprintf(" (%s-limited)", b.LimitedBy)
	}
	var sharing []string
	for _, h := range b.Hops {
		if h.Upstream.Address != hop {
			continue
		}
		for _, fn := range h.Functions {
			for _, n := range nics {
				if n.PCI != nil && n.PCI.Address == fn.Address && n.PCI.PhysFn == "" {
					sharing = append(sharing, n.Name)
				}
			}
		}
	}
	f := finding.Finding{
		Code:     finding.PCIeBottleneck,
		Severity: sev,
		Subject:  b.Interface,
		Summary: fmt.Sprintf("%s: %s need %s Mb/s per direction at line rate, but the %s link at %s%s carries about %s Mb/s (%s–%s) of %d-byte frames: the PCIe path is the ceiling.",
			b.Interface, portsWords(b), mbps(b.EthernetMbps), link, hop, who,
			mbps(b.CeilingMbps.Nominal), mbps(b.CeilingMbps.Low), mbps(b.CeilingMbps.High), b.Workload.FrameBytes),
		Fix: "Move the card to a slot (or adapter) that trains wider or faster, or use fewer ports at once; `nicdiag explain " + b.Interface + "` shows the calculation.",
		Evidence: map[string]string{
			"workload":           workloadWords(b.Workload),
			"limiting_hop":       hop,
			"link":               link,
			"pcie_direction":     string(b.LimitingDirection),
			"profile":            b.Profile,
			"at_capability":      mbps(b.AtCapabilityMbps.Nominal) + " Mb/s (" + string(b.AtCapabilityBound) + "-bound)",
			"ethernet_demand":    mbps(b.EthernetMbps) + " Mb/s",
			"port_speed_source":  b.PortSpeedSource,
			"interfaces_sharing": strings.Join(sharing, ","),
		},
		CapacityMbps: finding.Mbps(round1(b.CeilingMbps.Nominal)),
		DemandMbps:   finding.Mbps(round1(b.EthernetMbps)),
		Direction:    string(b.Workload.Direction),
	}
	return f, true
}

func portsWords(b *Budget) string {
	if b.Workload.Ports == 1 {
		return fmt.Sprintf("1 port at %s Mb/s", mbps(b.Workload.PortMbps))
	}
	return fmt.Sprintf("%d ports at %s Mb/s", b.Workload.Ports, mbps(b.Workload.PortMbps))
}

func workloadWords(w pcie.Workload) string {
	return fmt.Sprintf("%d port(s) × %s Mb/s, %d-byte frames, direction %s", w.Ports, mbps(w.PortMbps), w.FrameBytes, w.Direction)
}

// keep drops findings about subjects outside the selection, when there is one.
func keep(fs []finding.Finding, subjects map[string]bool, filter bool) []finding.Finding {
	if !filter {
		return fs
	}
	out := fs[:0]
	for _, f := range fs {
		if subjects[f.Subject] {
			out = append(out, f)
		}
	}
	return out
}

// onePerLink keeps one verdict per link: the functions of a multi-function
// card share their link and each would report it.
func onePerLink(fs []finding.Finding, seen map[string]bool) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if port := f.Evidence["port"]; port != "" {
			k := f.Code + "\x00" + port
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out = append(out, f)
	}
	return out
}

// dedupe drops repeated findings: the functions of one card share their
// path, so its hops' verdicts come once per function.
func dedupe(fs []finding.Finding) []finding.Finding {
	seen := map[string]bool{}
	out := fs[:0]
	for _, f := range fs {
		k := f.Code + "\x00" + f.Subject + "\x00" + f.Summary
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, f)
	}
	return out
}
