package nicdiag

import (
	"fmt"
	"strconv"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/pcie"
)

// The transmit caps a physical function puts on its SR-IOV VFs
// (nic.vf_rate_limited), judged by virtualCheck.

// vfNIC returns the NIC on PCI function addr: its netdev when it has one.
func (h *Host) vfNIC(addr pcie.Address) *NIC {
	if addr == "" {
		return nil
	}
	var out *NIC
	for _, n := range h.NICs {
		if n.PCI != nil && n.PCI.Address == addr && (out == nil || n.Netdev() && !out.Netdev()) {
			out = n
		}
	}
	return out
}

// vfRateLimits reports nic.vf_rate_limited for each VF of pf whose PF caps
// its transmit rate: warn when the cap is below the link the VF sends on
// (the VF's own speed, else the PF's: a VF transmits through its PF's
// port), info when it is not, or when neither speed is known. The subject
// is the VF (its interface, or its PCI address when it has no netdev here),
// or the PF when the VF is not on this host.
func (h *Host) vfRateLimits(pf *NIC) []finding.Finding {
	if !pf.Netdev() || len(pf.VFConfig) == 0 {
		return nil
	}
	var out []finding.Finding
	for _, v := range pf.VFConfig {
		rate := v.MaxTxRateMbps
		if rate <= 0 {
			continue
		}
		vf := h.vfNIC(v.Function)
		subject, who := pf.Name, fmt.Sprintf("VF %d of %s", v.VF, pf.Name)
		if vf != nil {
			subject = vf.ID()
		}
		switch {
		case vf != nil && vf.Netdev():
			who = fmt.Sprintf("%s (VF %d of %s, %s)", vf.Name, v.VF, pf.Name, v.Function)
		case v.Function != "":
			who = fmt.Sprintf("VF %d of %s (%s)", v.VF, pf.Name, v.Function)
		}
		ref, from := 0, ""
		switch {
		case vf != nil && vf.Link.SpeedMbps > 0:
			ref, from = vf.Link.SpeedMbps, "the VF's link"
		case pf.Link.SpeedMbps > 0:
			ref, from = pf.Link.SpeedMbps, "its PF's link"
		}
		ev := map[string]string{
			"pf":               pf.Name,
			"vf":               strconv.Itoa(v.VF),
			"max_tx_rate_mbps": strconv.Itoa(rate),
		}
		if v.Function != "" {
			ev["function"] = string(v.Function)
		}
		if v.MinTxRateMbps > 0 {
			ev["min_tx_rate_mbps"] = strconv.Itoa(v.MinTxRateMbps)
		}
		f := finding.Finding{
			Code:         finding.NICVFRateLimited,
			Severity:     finding.Info,
			Subject:      subject,
			CapacityMbps: finding.Mbps(float64(rate)),
			Direction:    "tx",
			Evidence:     ev,
		}
		if ref > 0 {
			ev["link_mbps"] = strconv.Itoa(ref) + " (" + from + ")"
			f.DemandMbps = finding.Mbps(float64(ref))
		}
		switch {
		case ref > 0 && rate < ref:
			f.Severity = finding.Warn
			f.Summary = fmt.Sprintf("%s may send at most %d Mb/s: its PF caps the VF's transmit rate (max_tx_rate) at %.0f %% of the %d Mb/s of %s",
				who, rate, 100*float64(rate)/float64(ref), ref, from)
		case ref > 0:
			f.Summary = fmt.Sprintf("%s has a transmit cap of %d Mb/s set on its PF (max_tx_rate), at or above the %d Mb/s of %s: it does not bind",
				who, rate, ref, from)
		default:
			f.Summary = fmt.Sprintf("%s has a transmit cap of %d Mb/s set on its PF (max_tx_rate); the link speed is unknown, so whether it binds is not known",
				who, rate)
		}
		f.Fix = fmt.Sprintf("If the cap is not meant: ip link set %s vf %d max_tx_rate 0 (on the host that owns the PF; 0 removes it). If it is, it is the VF's allowance: size the workload to it.", pf.Name, v.VF)
		out = append(out, f)
	}
	return out
}
