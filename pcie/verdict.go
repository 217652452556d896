package pcie

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
)

// Hop verdicts.
const (
	VerdictOK              = "ok"
	VerdictDowngraded      = "downgraded"
	VerdictSlotLimited     = "slot_limited"
	VerdictIdleDowntrained = "idle_downtrained"
	// VerdictArchitectural: the reported link is not a trained physical
	// link (virtual device, inside a chipset, Thunderbolt tunnel); Reason
	// says how nicdiag knows.
	VerdictArchitectural = "architectural"
	// VerdictUnknown: a value the verdict needs could not be read; Reason
	// says which.
	VerdictUnknown = "unknown"
)

// virtualVendors are PCI vendors whose devices are emulated by a hypervisor:
// their link speed and width are whatever the hypervisor reports.
var virtualVendors = map[uint16]string{
	0x1af4: "Red Hat virtio",
	0x1b36: "Red Hat QEMU",
	0x15ad: "VMware",
	0x1414: "Microsoft Hyper-V",
	0x5853: "Xen",
	0x1ab8: "Parallels",
}

// internalPorts are ports whose link lies inside a chip. The names are
// pci.ids' (Debian package pci.ids 2023.04.11), which is how nicdiag knows.
var internalPorts = map[[2]uint16]string{
	{0x1022, 0x13e5}: "AMD Ariel Internal PCIe GPP Bridge 0 to Bus A",
	{0x1022, 0x13e6}: "AMD Ariel Internal PCIe GPP Bridge 0 to Bus B",
	{0x1022, 0x1454}: "AMD Family 17h (Models 00h-0fh) Internal PCIe GPP Bridge 0 to Bus B",
	{0x1022, 0x1484}: "AMD Starship/Matisse Internal PCIe GPP Bridge 0 to bus[E:B]",
	{0x1022, 0x14b9}: "AMD Family 17h-19h Internal PCIe GPP Bridge",
	{0x1022, 0x14cd}: "AMD Family 19h USB4/Thunderbolt PCIe tunnel",
	{0x1022, 0x15db}: "AMD Raven/Raven2 Internal PCIe GPP Bridge 0 to Bus A",
	{0x1022, 0x15dc}: "AMD Raven/Raven2 Internal PCIe GPP Bridge 0 to Bus B",
	{0x1022, 0x15fd}: "AMD FireFlight Internal PCIe GPP Bridge 0 to Bus A",
	{0x1022, 0x15fe}: "AMD FireFlight Internal PCIe GPP Bridge 0 to Bus B",
	{0x1022, 0x162a}: "AMD Arden Internal PCIe GPP Bridge 0 to bus X",
	{0x1022, 0x1635}: "AMD Renoir Internal PCIe GPP Bridge to Bus",
	{0x1022, 0x1648}: "AMD VanGogh Internal PCIe GPP Bridge to Bus",
}

// architectural says why a hop's link is not a trained physical link, or "".
func architectural(h *Hop) string {
	for _, e := range []*End{&h.Downstream, &h.Upstream} {
		if n, ok := virtualVendors[e.VendorID]; ok {
			return fmt.Sprintf("emulated link: %s is a %s device (vendor %04x), so its link speed is whatever the hypervisor reports", e.Address, n, e.VendorID)
		}
	}
	if n, ok := internalPorts[[2]uint16{h.Upstream.VendorID, h.Upstream.DeviceID}]; ok {
		return fmt.Sprintf("link inside the chip: port %s is %04x:%04x %q (pci.ids), so its reported speed is architectural", h.Upstream.Address, h.Upstream.VendorID, h.Upstream.DeviceID, n)
	}
	if isTBT(&h.Upstream) && isTBT(&h.Downstream) {
		return "both ends are Thunderbolt ports (Intel Thunderbolt VSEC 0x1234 in config space, the test Linux uses): the link is inside the controller or tunnelled, and its reported speed is nominal"
	}
	return ""
}

func isTBT(e *End) bool { return e.Config != nil && e.Config.Thunderbolt }

// maxOf returns an end's maximum speed and width: sysfs first, then LnkCap
// (old kernels have no max_link_* files).
func maxOf(e *End) (float64, int) {
	s, w := e.Link.MaxSpeed, e.Link.MaxWidth
	if x := express(e); x != nil {
		if s == 0 {
			s = x.LinkCapSpeed
		}
		if w == 0 {
			w = x.LinkCapWidth
		}
	}
	return s, w
}

// curOf returns an end's current speed and width: sysfs, then LnkSta.
func curOf(e *End) (float64, int) {
	s, w := e.Link.CurrentSpeed, e.Link.CurrentWidth
	if x := express(e); x != nil {
		if s == 0 {
			s = x.LinkSpeed
		}
		if w == 0 {
			w = x.LinkWidth
		}
	}
	return s, w
}

func express(e *End) *Express {
	if e.Config == nil || e.Config.Express == nil || !e.Config.Express.HasLink {
		return nil
	}
	return e.Config.Express
}

// evaluate fills the hop's trained and capable values and its verdict.
func evaluate(h *Hop) {
	up, down := &h.Upstream, &h.Downstream
	uMaxS, uMaxW := maxOf(up)
	dMaxS, dMaxW := maxOf(down)
	uCurS, uCurW := curOf(up)
	dCurS, dCurW := curOf(down)
	h.Speed, h.Width = dCurS, dCurW
	if h.Speed == 0 {
		h.Speed = uCurS
	}
	if h.Width == 0 {
		h.Width = uCurW
	}
	if dCurS > 0 && uCurS > 0 && (dCurS != uCurS || dCurW != uCurW) {
		h.Notes = append(h.Notes, fmt.Sprintf("the ends disagree: port %s reports %s, device %s reports %s",
			up.Address, speedWidth(uCurS, uCurW), down.Address, speedWidth(dCurS, dCurW)))
	}
	h.CapableSpeed, h.SpeedLimitedBy = capable(uMaxS, dMaxS)
	h.CapableWidth, h.WidthLimitedBy = capableW(uMaxW, dMaxW)

	if r := architectural(h); r != "" {
		h.Verdict, h.Reason = VerdictArchitectural, r
		return
	}
	if h.Width == 0 && uCurW == 0 {
		h.Verdict = VerdictUnknown
		h.Reason = "the link reports width 0 (down, or not reported)"
		return
	}
	var unknown []string
	if h.CapableSpeed == 0 || h.Speed == 0 {
		unknown = append(unknown, "speed")
	}
	if h.CapableWidth == 0 || h.Width == 0 {
		unknown = append(unknown, "width")
	}
	downS := h.CapableSpeed > 0 && h.Speed > 0 && h.Speed < h.CapableSpeed
	downW := h.CapableWidth > 0 && h.Width > 0 && h.Width < h.CapableWidth
	h.SlotLimited = (dMaxS > 0 && uMaxS > 0 && dMaxS > uMaxS) || (dMaxW > 0 && uMaxW > 0 && dMaxW > uMaxW)
	if downS && !downW && idle(h) {
		h.IdleDowntrained = true
	} else {
		h.Downgraded = downS || downW
	}
	switch {
	case h.Downgraded:
		h.Verdict = VerdictDowngraded
	case h.IdleDowntrained:
		h.Verdict = VerdictIdleDowntrained
	case h.SlotLimited:
		h.Verdict = VerdictSlotLimited
	case len(unknown) == 2:
		h.Verdict = VerdictUnknown
		h.Reason = "the maximum or current speed and width of an end could not be read"
	default:
		h.Verdict = VerdictOK
	}
	if len(unknown) == 1 && !h.Downgraded {
		h.Notes = append(h.Notes, "link "+unknown[0]+" not judged: an end's value could not be read")
	}
}

// capable returns the lower of two maxima and which end sets it.
func capable(port, dev float64) (float64, Limiter) {
	switch {
	case port == 0 || dev == 0:
		return 0, ""
	case dev < port:
		return dev, LimitDevice
	case port < dev:
		return port, LimitPort
	}
	return dev, ""
}

func capableW(port, dev int) (int, Limiter) {
	v, by := capable(float64(port), float64(dev))
	return int(v), by
}

// idle reports whether a speed below capability may be power saving: the
// target speed (LnkCtl2) still asks for the capable speed and ASPM L1 is
// enabled on the link.
func idle(h *Hop) bool {
	var l1 bool
	for _, e := range []*End{&h.Upstream, &h.Downstream} {
		if x := express(e); x != nil {
			l1 = l1 || x.ASPMEnabled&ASPML1 != 0
		}
	}
	return l1 && targetOf(h) >= h.CapableSpeed
}

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
			f.Summary = fmt.Sprintf("%s runs at %s though it and its port %s both support %s: LnkCtl2 sets the target speed to %s GT/s (a BIOS or driver cap)",
				down.Address, speedWidth(h.Speed, h.Width), up.Address, speedWidth(h.CapableSpeed, h.CapableWidth), num(t))
		} else if express(down) == nil && express(up) == nil && h.Speed < h.CapableSpeed {
			f.Summary += "; whether it is only power saving could not be checked (LnkCtl2 and ASPM need root)"
		}
		f.Fix = "Reseat the card or try another slot, check the BIOS PCIe speed setting, then compare with nicdiag show under load."
		fs = append(fs, f)
	}
	if h.IdleDowntrained {
		f := h.newFinding(finding.PCIeIdleDowntrained, finding.Info)
		f.Summary = fmt.Sprintf("%s runs at %s GT/s though it and its port %s support %s GT/s, with ASPM L1 enabled and the target speed at %s GT/s: it may retrain to %s GT/s under load; re-check under load",
			down.Address, num(h.Speed), up.Address, num(h.CapableSpeed), num(targetOf(h)), num(h.CapableSpeed))
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
		dev, port = append(dev, num(dMaxS)+" GT/s"), append(port, num(uMaxS)+" GT/s")
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
		ev["target_speed"] = num(t) + " GT/s"
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

// targetOf returns the link's target speed (LnkCtl2), 0 if unknown. It is
// the upstream end's: in a downstream port the field caps the speed the link
// trains to, while in an upstream port or endpoint it only sets the
// compliance speed. Without the port's config, function 0 of the device
// stands in; other functions of a multi-function device leave the field
// reserved (often 0, which decodes as 2.5 GT/s), so they are not used.
func targetOf(h *Hop) float64 {
	if x := express(&h.Upstream); x != nil && x.TargetSpeed > 0 {
		return x.TargetSpeed
	}
	if x := express(&h.Downstream); x != nil && strings.HasSuffix(string(h.Downstream.Address), ":00.0") {
		return x.TargetSpeed
	}
	return 0
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
		ss = num(s)
	}
	if w > 0 {
		ws = strconv.Itoa(w)
	}
	return ss + " GT/s x" + ws
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
