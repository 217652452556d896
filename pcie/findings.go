package pcie

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
)

// Findings returns the verdicts on every hop of p, nearest the device first.
func (p *Path) Findings() []finding.Finding {
	var fs []finding.Finding
	for i := range p.Hops {
		fs = append(fs, p.Hops[i].Findings()...)
	}
	return fs
}

// Findings returns the findings for one link: pcie.link_downgraded (warn),
// pcie.idle_downtrained (info) and pcie.slot_limited (info; raise it to warn
// when the bandwidth model says the limit costs throughput). Architectural,
// unknown and healthy links give none. The subject is the downstream
// function's address.
func (h *Hop) Findings() []finding.Finding {
	var fs []finding.Finding
	up, down := &h.Upstream, &h.Downstream
	if h.Downgraded {
		f := h.newFinding(finding.PCIeLinkDowngraded, finding.Warn)
		f.Summary = fmt.Sprintf("%s runs at %s though it and its port %s both support %s: the link trained down (bad seating, signal integrity or a BIOS cap)",
			down.Address, speedWidth(h.Speed, h.Width), up.Address, speedWidth(h.CapableSpeed, h.CapableWidth))
		if t := targetOf(h); t > 0 && t < h.CapableSpeed {
			f.Summary = fmt.Sprintf("%s runs at %s though it and its port %s both support %s: LnkCtl2 sets the target speed to %s GT/s (a firmware or OS cap)",
				down.Address, speedWidth(h.Speed, h.Width), up.Address, speedWidth(h.CapableSpeed, h.CapableWidth), FormatGTs(t))
		} else if express(down) == nil && express(up) == nil && h.Speed < h.CapableSpeed {
			f.Summary += "; whether it is only power saving could not be checked (LnkCtl2 and ASPM need root)"
		}
		f.Fix = "Reseat the card or try another slot, check the BIOS PCIe speed setting, then compare with nicdiag show under load."
		fs = append(fs, f)
	}
	if h.IdleDowntrained {
		f := h.newFinding(finding.PCIeIdleDowntrained, finding.Info)
		f.Summary = fmt.Sprintf("%s runs at %s GT/s though it and its port %s support %s GT/s, with ASPM L1 enabled and the target speed at %s GT/s: it may retrain to %s GT/s under load; re-check under load",
			down.Address, FormatGTs(h.Speed), up.Address, FormatGTs(h.CapableSpeed), FormatGTs(targetOf(h)), FormatGTs(h.CapableSpeed))
		f.Fix = "Re-check while traffic flows; to rule power saving out, boot with pcie_aspm=off."
		fs = append(fs, f)
	}
	if h.SlotLimited {
		fs = append(fs, h.SlotLimitedFinding(finding.Info, ""))
	}
	return fs
}

// SlotLimitedFinding is the pcie.slot_limited verdict on h at severity sev.
// cost, when not empty, says what the limit costs and ends the summary
// ("this costs throughput: ..."); a caller that knows the workload raises
// the verdict to warn with it.
func (h *Hop) SlotLimitedFinding(sev finding.Severity, cost string) finding.Finding {
	up, down := &h.Upstream, &h.Downstream
	uMaxS, uMaxW := maxOf(up)
	dMaxS, dMaxW := maxOf(down)
	f := h.newFinding(finding.PCIeSlotLimited, sev)
	var dev, port []string
	if dMaxS > uMaxS && uMaxS > 0 {
		dev, port = append(dev, FormatGTs(dMaxS)+" GT/s"), append(port, FormatGTs(uMaxS)+" GT/s")
	}
	if dMaxW > uMaxW && uMaxW > 0 {
		dev, port = append(dev, "x"+strconv.Itoa(dMaxW)), append(port, "x"+strconv.Itoa(uMaxW))
	}
	f.Summary = fmt.Sprintf("%s can do %s but its port %s allows only %s: the slot (or adapter) limits the link to %s",
		down.Address, strings.Join(dev, " "), up.Address, strings.Join(port, " "), speedWidth(h.CapableSpeed, h.CapableWidth))
	if cost != "" {
		f.Summary += "; " + cost
	}
	f.Fix = fmt.Sprintf("Move the card to a slot (or adapter) that carries %s, if its ports need more than %s.",
		speedWidth(dMaxS, dMaxW), speedWidth(h.CapableSpeed, h.CapableWidth))
	return f
}

// newFinding fills the subject and the evidence every PCIe finding carries.
func (h *Hop) newFinding(code finding.Code, sev finding.Severity) finding.Finding {
	up, down := &h.Upstream, &h.Downstream
	uMaxS, uMaxW := maxOf(up)
	dMaxS, dMaxW := maxOf(down)
	uCurS, uCurW := curOf(up)
	ev := map[string]string{
		"device":         string(down.Address),
		"port":           string(up.Address),
		"device_max":     speedWidth(dMaxS, dMaxW),
		"port_max":       speedWidth(uMaxS, uMaxW),
		"trained":        speedWidth(h.Speed, h.Width),
		"port_current":   speedWidth(uCurS, uCurW),
		"capable":        speedWidth(h.CapableSpeed, h.CapableWidth),
		"mps":            sizeOr(down.MaxPayload, down),
		"port_mps":       sizeOr(up.MaxPayload, up),
		"mrrs":           sizeOr(down.MaxReadRequest, down),
		"aspm":           aspmOf(h),
		"target_speed":   "unknown (config not readable)",
		"functions":      functionList(h.Functions),
		"speed_limit_by": string(h.SpeedLimitedBy),
		"width_limit_by": string(h.WidthLimitedBy),
	}
	if t := targetOf(h); t > 0 {
		ev["target_speed"] = FormatGTs(t) + " GT/s"
	}
	for k, v := range ev {
		if v == "" {
			delete(ev, k) // e.g. no end limits the speed
		}
	}
	if len(h.Notes) > 0 {
		ev["notes"] = strings.Join(h.Notes, "; ")
	}
	return finding.Finding{Code: code, Severity: sev, Subject: string(down.Address), Evidence: ev}
}

func aspmOf(h *Hop) string {
	var parts []string
	for _, e := range []*End{&h.Upstream, &h.Downstream} {
		s := "unknown (config not readable)"
		if x := express(e); x != nil {
			s = x.ASPMEnabled.String() + " enabled"
		}
		parts = append(parts, string(e.Address)+": "+s)
	}
	return strings.Join(parts, ", ")
}

func sizeOr(v int, e *End) string {
	if v > 0 {
		return strconv.Itoa(v)
	}
	if e.ConfigNote != "" {
		return "unknown (" + e.ConfigNote + ")"
	}
	return "unknown"
}

func functionList(fns []Function) string {
	a := make([]string, len(fns))
	for i, f := range fns {
		a[i] = string(f.Address)
	}
	return strings.Join(a, ",")
}

// speedWidth renders "2.5 GT/s x4", with "?" for unknown parts.
func speedWidth(s float64, w int) string {
	ss, ws := "?", "?"
	if s > 0 {
		ss = FormatGTs(s)
	}
	if w > 0 {
		ws = strconv.Itoa(w)
	}
	return ss + " GT/s x" + ws
}
