package nicdiag

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/pcie"
)

// pcieHealthCheck: the PCIe settings and error counts that tuning guides
// check first, judged in throughput terms.
//
//   - pcie.mps_low: the path's Max Payload Size is below what every end of
//     the path supports (DevCap), and the default workload solved again with
//     the larger MPS has a ceiling at least mpsGain higher while the NIC is
//     PCIe-bound: warn. Where the larger MPS would not lift the ceiling (the
//     NIC is Ethernet-bound, or the gain is small) nothing is said.
//   - pcie.aer_errors: an end of the path whose AER statistics count
//     non-fatal or fatal errors since boot (warn), or at least
//     aerCorrectableMin correctable ones (info).
//   - pcie.iommu_translated: a 40 Gb/s or faster NIC whose IOMMU group's
//     default domain translates DMA ("DMA" or "DMA-FQ"): info.
var pcieHealthCheck = Checker{
	Name:  "pcie-health",
	Codes: []finding.Code{finding.PCIeMPSLow, finding.PCIeAERErrors, finding.PCIeIOMMUTranslated},
	Run: func(h *Host) []finding.Finding {
		var out []finding.Finding
		seen := map[pcie.Address]bool{}
		for _, n := range h.Selected {
			if !n.Judged() {
				continue
			}
			if f, ok := mpsLow(n); ok {
				out = append(out, f)
			}
			out = append(out, h.aerErrors(n, seen)...)
			if f, ok := iommuTranslated(n); ok {
				out = append(out, f)
			}
		}
		return out
	},
}

// mpsGain is the least relative rise of the ceiling that makes a low MPS a
// finding: the model's own spread between its variants is of this order, so
// a smaller gain is not one a person could measure.
const mpsGain = 0.05

// pathMaxPayload is the largest MPS every end of the path supports (DevCap
// MaxPayload): a TLP crosses every hop, so the smallest supported value
// bounds it. ok is false when an end's capability is unknown.
func pathMaxPayload(p *pcie.Path) (mps int, limitedBy pcie.Address, ok bool) {
	for _, hop := range p.Hops {
		for _, e := range []*pcie.End{&hop.Downstream, &hop.Upstream} {
			if e.Config == nil || e.Config.Express == nil || e.Config.Express.MaxPayloadSupported <= 0 {
				return 0, "", false
			}
			if s := e.Config.Express.MaxPayloadSupported; mps == 0 || s < mps {
				mps, limitedBy = s, e.Address
			}
		}
	}
	return mps, limitedBy, mps > 0
}

// mpsLow solves the NIC's default workload again with every link at the
// largest MPS the path supports and reports the gain when it costs
// throughput now.
func mpsLow(n *NIC) (finding.Finding, bool) {
	b := n.Budget
	if b == nil || n.Path == nil || b.Bound != budget.BoundPCIe || b.CeilingMbps.Nominal <= 0 {
		return finding.Finding{}, false
	}
	links, p, ok := b.Inputs()
	if !ok {
		return finding.Finding{}, false
	}
	target, limiter, ok := pathMaxPayload(n.Path)
	if !ok || target > 4096 || target <= b.Model.MPS {
		return finding.Finding{}, false
	}
	for i := range links {
		links[i].MPS = target
	}
	r, err := budget.Solve(links, p, b.Workload)
	if err != nil || r.CeilingMbps.Nominal < b.CeilingMbps.Nominal*(1+mpsGain) {
		return finding.Finding{}, false
	}
	now, then := b.CeilingMbps.Nominal, r.CeilingMbps.Nominal
	// pci=pcie_bus_perf also sets each MRRS to the device's MPS
	// (drivers/pci/probe.c pcie_write_mrrs, pci.c pcie_set_readrq): what
	// that option would give, which a larger MRRS kept by the BIOS beats.
	perf := "unknown"
	for i := range links {
		links[i].MRRS = target
	}
	if rp, err := budget.Solve(links, p, b.Workload); err == nil {
		perf = mbps(rp.CeilingMbps.Nominal)
	}
	var set []string
	for _, hop := range n.Path.Hops {
		for _, e := range []*pcie.End{&hop.Downstream, &hop.Upstream} {
			set = append(set, fmt.Sprintf("%s %d/%d", e.Address, e.MaxPayload, e.Config.Express.MaxPayloadSupported))
		}
	}
	return finding.Finding{
		Code:     finding.PCIeMPSLow,
		Severity: finding.Warn,
		Subject:  n.ID(),
		Summary: fmt.Sprintf("%s's PCIe path runs with a %d-byte Max Payload Size where every end supports %d: each %d-byte TLP carries its header and framing again, and the PCIe-bound ceiling of %s Mb/s would be %s Mb/s (+%.0f %%) at MPS %d",
			n.ID(), b.Model.MPS, target, b.Model.MPS, mbps(now), mbps(then), 100*(then/now-1), target),
		Fix: fmt.Sprintf("Raise the PCIe Max Payload Size in the BIOS setup, or boot with pci=pcie_bus_perf: the kernel then sets each device's MPS to the largest its parent bus allows, but also clamps each MRRS to that MPS (a ceiling of %s Mb/s here). Setting DevCtl with setpci at run time is risky: every device on the path must agree, and one sending TLPs larger than a peer's MPS raises malformed-TLP errors or hangs the link.", perf),
		Evidence: map[string]string{
			"workload":               workloadWords(b.Workload),
			"mps":                    strconv.Itoa(b.Model.MPS),
			"mrrs":                   strconv.Itoa(b.Model.MRRS),
			"path_max_payload":       strconv.Itoa(target),
			"path_max_limited_by":    string(limiter),
			"mps_set_supported":      strings.Join(set, ", "),
			"ceiling_mbps":           mbps(now),
			"ceiling_at_path_max":    mbps(then),
			"ethernet_demand":        mbps(b.EthernetMbps) + " Mb/s",
			"limiting_hop":           string(b.LimitingHop),
			"bound_at_path_max_mps":  string(r.Bound),
			"ceiling_gain_threshold": fmt.Sprintf("%.0f %%", 100*mpsGain),
			"ceiling_pcie_bus_perf":  perf + fmt.Sprintf(" (MPS and MRRS %d)", target),
		},
		CapacityMbps: finding.Mbps(round1(now)),
		DemandMbps:   finding.Mbps(round1(b.EthernetMbps)),
		Direction:    string(b.Workload.Direction),
	}, true
}

// aerCorrectableMin is the correctable-error count since boot that makes an
// end worth a look. A few (receiver errors and bad DLLPs while the link
// trains at boot, or leaves a low-power state) are normal; a hundred is
// well past that, and each replayed TLP is sent again on the link.
const aerCorrectableMin = 100

// aerErrors reports each end of the NIC's path whose AER counts since
// boot pass the thresholds, once per end over every NIC (seen).
func (h *Host) aerErrors(n *NIC, seen map[pcie.Address]bool) []finding.Finding {
	if n.Path == nil {
		return nil
	}
	var out []finding.Finding
	for _, hop := range n.Path.Hops {
		for _, e := range []*pcie.End{&hop.Downstream, &hop.Upstream} {
			a := e.AER
			if a == nil || e.Address == "" || seen[e.Address] {
				continue
			}
			uncorr := a.NonFatal + a.Fatal
			if uncorr == 0 && a.Correctable < aerCorrectableMin {
				continue
			}
			seen[e.Address] = true
			sev, what := finding.Info, fmt.Sprintf("%d correctable", a.Correctable)
			if uncorr > 0 {
				sev = finding.Warn
				what = fmt.Sprintf("%d non-fatal and %d fatal uncorrectable (and %d correctable)", a.NonFatal, a.Fatal, a.Correctable)
			}
			ev := map[string]string{
				"address":     string(e.Address),
				"correctable": strconv.FormatUint(a.Correctable, 10),
				"nonfatal":    strconv.FormatUint(a.NonFatal, 10),
				"fatal":       strconv.FormatUint(a.Fatal, 10),
				"link":        fmt.Sprintf("%s GT/s x%d", pcie.FormatGTs(hop.Speed), hop.Width),
				"interface":   n.ID(),
				"since":       "boot (run.aer_errors counts during a monitored run)",
			}
			if len(a.Types) > 0 {
				var ts []string
				for _, k := range slices.Sorted(maps.Keys(a.Types)) {
					ts = append(ts, fmt.Sprintf("%s %d", k, a.Types[k]))
				}
				ev["types"] = strings.Join(ts, ", ")
			}
			if a.Note != "" {
				ev["note"] = a.Note
			}
			out = append(out, finding.Finding{
				Code:     finding.PCIeAERErrors,
				Severity: sev,
				Subject:  string(e.Address),
				Summary: fmt.Sprintf("%s on %s's PCIe path has counted %s AER errors since boot: a corrected error means a TLP or DLLP was replayed on the link (bandwidth spent twice), an uncorrectable one a transaction lost",
					e.Address, n.ID(), what),
				Fix:      "See which errors count (the types here; dmesg | grep -i aer), then reseat the card or move it to another slot, check riser cables and retimers, and update the NIC firmware and BIOS; `nicdiag monitor` shows whether they keep counting under load (run.aer_errors).",
				Evidence: ev,
			})
		}
	}
	return out
}

// iommuMinMbps is the port speed from which translated DMA is a finding:
// at 40 Gb/s and up the packet rate makes IOTLB misses and map/unmap work
// per buffer visible.
const iommuMinMbps = 40000

// iommuTranslated reports a fast NIC whose DMA goes through IOMMU
// translation.
func iommuTranslated(n *NIC) (finding.Finding, bool) {
	if !n.Netdev() || (n.IOMMUDomain != "DMA" && n.IOMMUDomain != "DMA-FQ") {
		return finding.Finding{}, false
	}
	speed := float64(n.Link.SpeedMbps)
	if speed <= 0 && n.Budget != nil {
		speed = n.Budget.Workload.PortMbps
	}
	if speed < iommuMinMbps {
		return finding.Finding{}, false
	}
	mode := "lazy invalidation (DMA-FQ): unmaps are batched through a flush queue"
	if n.IOMMUDomain == "DMA" {
		mode = "strict invalidation (DMA): every unmap waits for an IOTLB invalidation"
	}
	return finding.Finding{
		Code:     finding.PCIeIOMMUTranslated,
		Severity: finding.Info,
		Subject:  n.ID(),
		Summary: fmt.Sprintf("%s (%s Mb/s) DMAs through IOMMU translation with %s; at this packet rate each buffer is mapped and unmapped and IOTLB misses slow the device's DMA (Farshin et al., \"Overcoming the IOTLB wall for multi-100-Gbps Linux-based networking\", PeerJ Computer Science 2023)",
			n.ID(), mbps(speed), mode),
		Fix: "If DMA isolation of this NIC is not needed (it protects memory from a faulty or malicious device), boot with iommu=pt (intel_iommu=on iommu=pt keeps VT-d for VFIO guests), or for this group alone unbind the driver, echo identity > /sys/kernel/iommu_groups/N/type and bind it again. Keeping translation, iommu.strict=0 gives DMA-FQ instead of strict DMA.",
		Evidence: map[string]string{
			"iommu_domain": n.IOMMUDomain,
			"iommu_group":  n.IOMMUGroup,
			"port_mbps":    mbps(speed),
			"threshold":    strconv.Itoa(iommuMinMbps) + " Mb/s",
		},
	}, true
}

// readIOMMU reads the IOMMU group and its default domain type of every
// selected PCI netdev. A host without an IOMMU has no iommu_group links;
// a type that cannot be read leaves IOMMUDomain empty (nothing is judged).
func (h *Host) readIOMMU(o options) {
	r := fsroot.New(o.root)
	for _, n := range h.Selected {
		if n.PCI == nil {
			continue
		}
		dir := "/sys/bus/pci/devices/" + string(n.PCI.Address)
		g, err := r.LinkBase(dir + "/iommu_group")
		if err != nil {
			continue
		}
		n.IOMMUGroup = g
		if s, err := r.ReadString(dir + "/iommu_group/type"); err == nil && len(s) <= 32 {
			n.IOMMUDomain = strings.TrimSpace(s)
		}
	}
}
