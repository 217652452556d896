package pcie

import (
	"fmt"
	"strings"
)

// Verdict sums up a link: what it trained at against what both of its ends
// support. It marshals as its string value. Where more than one applies,
// Hop.Verdict holds the gravest and the Hop's flags say which apply.
type Verdict string

// Verdicts.
const (
	// VerdictOK: the link runs at what both ends support.
	VerdictOK Verdict = "ok"
	// VerdictDowngraded: the link trained below what both ends support.
	VerdictDowngraded Verdict = "downgraded"
	// VerdictSlotLimited: the device supports more than its upstream port.
	VerdictSlotLimited Verdict = "slot_limited"
	// VerdictIdleDowntrained: only the speed is below capability, with ASPM
	// L1 enabled and the target speed (LnkCtl2) at capability: likely
	// power saving.
	VerdictIdleDowntrained Verdict = "idle_downtrained"
	// VerdictArchitectural: the reported link is not a trained physical
	// link (virtual device, inside a chipset, Thunderbolt tunnel); Reason
	// says how nicdiag knows.
	VerdictArchitectural Verdict = "architectural"
	// VerdictUnknown: a value the verdict needs could not be read; Reason
	// says which.
	VerdictUnknown Verdict = "unknown"
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

// architectural says why a hop's link is not a trained physical link, or
// "", and fills h.Tunnel for a Thunderbolt or USB4 tunnel.
func architectural(h *Hop) string {
	for _, e := range []*End{&h.Downstream, &h.Upstream} {
		if n, ok := virtualVendors[e.VendorID]; ok {
			return fmt.Sprintf("emulated link: %s is a %s device (vendor %04x), so its link speed is whatever the hypervisor reports", e.Address, n, e.VendorID)
		}
	}
	if r := chipReason(h); r != "" {
		return r
	}
	if t := tunnelOf(h); t != nil {
		h.Tunnel = t
		return fmt.Sprintf("PCIe tunnel through %s: the %s its bridges report is nominal; it carries about %g Gb/s per direction (%s; %s)",
			t.Class, speedWidth(h.Speed, h.Width), t.Gbps, t.How, t.Basis)
	}
	if isTBT(&h.Upstream) && isTBT(&h.Downstream) {
		return "both ends are Thunderbolt ports (Intel Thunderbolt VSEC 0x1234 in config space, the test Linux uses): the link is inside the controller, and its reported speed is nominal"
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
