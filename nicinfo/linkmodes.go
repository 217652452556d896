package nicinfo

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
)

// linkModeName returns the kernel's name for link-mode bit n
// ("1000baseT/Full", "25000baseSR/Full", "Autoneg", "TP"), or "bit N" for a
// bit newer than this table.
func linkModeName(n int) string {
	if n >= 0 && n < len(linkModeNames) && linkModeNames[n] != "" {
		return linkModeNames[n]
	}
	return "bit " + strconv.Itoa(n)
}

// decodeLinkModes turns a link-mode bitmap (32-bit words, least significant
// first, as ETHTOOL_GLINKSETTINGS returns it) into the names of the speed
// modes set in it, the list ethtool prints as "Supported link modes".
// Ports, pause and FEC bits are left out; unknown bits are kept as "bit N".
func decodeLinkModes(words []uint32) []string {
	var out []string
	for w, v := range words {
		for b := 0; v != 0 && b < 32; b++ {
			if v&(1<<b) == 0 {
				continue
			}
			v &^= 1 << b
			n := w*32 + b
			name := linkModeName(n)
			if isSpeedMode(name) || strings.HasPrefix(name, "bit ") {
				out = append(out, name)
			}
		}
	}
	return out
}

func isSpeedMode(name string) bool {
	return strings.HasSuffix(name, "/Full") || strings.HasSuffix(name, "/Half")
}

// linkModeSpeed returns the speed in Mb/s of a kernel link-mode name such
// as "1000baseT/Full", "2500baseX/Full" or "100000baseSR4/Full"; ok is
// false for names that carry no speed ("Autoneg", "TP", "bit 99").
func linkModeSpeed(mode string) (mbps int, ok bool) {
	i := 0
	for i < len(mode) && i < 7 && mode[i] >= '0' && mode[i] <= '9' {
		i++
	}
	if i == 0 || !strings.HasPrefix(mode[i:], "base") {
		return 0, false
	}
	v, err := strconv.Atoi(mode[:i])
	if err != nil || v == 0 {
		return 0, false
	}
	return v, true
}

// FastestMode returns the fastest speed mode among modes (kernel link-mode
// names such as "10000baseT/Full") and its speed in Mb/s; "" and 0 when
// none carries a speed. A full-duplex mode wins a tie.
func FastestMode(modes []string) (mode string, mbps int) { return maxMode(modes) }

// maxMode returns the fastest mode in modes and its speed; 0 when none
// carries a speed.
func maxMode(modes []string) (string, int) {
	best, top := "", 0
	for _, m := range modes {
		v, ok := linkModeSpeed(m)
		if ok && (v > top || v == top && strings.HasSuffix(m, "/Full") && !strings.HasSuffix(best, "/Full")) {
			best, top = m, v
		}
	}
	return best, top
}

// CheckLinkModes returns a nic.link_below_capability finding (warn) for
// each NIC whose link came up slower than the fastest mode both it
// supports and advertises, or at half duplex. Where the driver reports the
// link partner's advertised modes, the summary says which end is short:
// "the link partner offers only up to X" when the partner advertises
// nothing faster than the negotiated speed (info: the link is at the best
// speed both ends advertise; warn still for half duplex), "both ends
// advertise Y ...: the cable or a PHY downshifted" when it does. NICs with an unknown speed,
// a down link, or a virtual or emulated device get none.
func CheckLinkModes(nics []NIC) []finding.Finding {
	var out []finding.Finding
	for _, n := range nics {
		if f, ok := checkLinkMode(n); ok {
			out = append(out, f)
		}
	}
	finding.Sort(out)
	return out
}

func checkLinkMode(n NIC) (finding.Finding, bool) {
	speed := n.Link.SpeedMbps
	if nominal(n) || speed <= 0 || n.OperState == OperDown || n.OperState == OperLowerLayerDown {
		return finding.Finding{}, false
	}
	var common []string
	for _, m := range n.Link.Advertised {
		if slices.Contains(n.Link.Supported, m) {
			common = append(common, m)
		}
	}
	best, top := maxMode(common)
	half := n.Link.Duplex == DuplexHalf && !nominalField(n.Link, "duplex")
	if top <= speed && !half {
		return finding.Finding{}, false
	}
	ev := linkModeEvidence(n)
	f := finding.Finding{Code: finding.NICLinkBelowCapability, Severity: finding.Warn,
		Subject: n.Name, Evidence: ev, CapacityMbps: finding.Mbps(float64(speed))}
	var parts []string
	partner := partnerLimit(n, common, speed, top)
	if top > speed {
		ev["best_common_mode"] = best
		switch partner.kind {
		case partnerOffersLess:
			ev["partner_best_mode"] = partner.best
			parts = append(parts, fmt.Sprintf("negotiated %d Mb/s although it supports and advertises %s: "+
				"the link partner offers only up to %s", speed, best, partner.best))
		case partnerOffersMore:
			ev["partner_best_mode"] = partner.best
			parts = append(parts, fmt.Sprintf("negotiated %d Mb/s although both ends advertise %s: "+
				"the cable or a PHY downshifted", speed, partner.best))
		default:
			parts = append(parts, fmt.Sprintf("negotiated %d Mb/s although both supported and advertised modes "+
				"reach %s", speed, best))
		}
	}
	if half {
		parts = append(parts, "runs at half duplex (one direction at a time, with collisions)")
		if top <= speed {
			f.CapacityMbps = finding.Mbps(float64(speed) / 2)
		}
	}
	f.Summary = n.Name + " " + strings.Join(parts, " and ")
	f.Fix = linkFix(best, speed, half, n.Link.Autoneg)
	if top > speed && partner.kind == partnerOffersLess {
		f.Fix = partnerFix(partner.best, half, n.Link.Autoneg)
		if !half {
			// The best mode both ends advertise: the link is as fast as
			// the pair allows, and this end is not below its capability
			// on that link.
			f.Severity = finding.Info
			f.Summary += ": the link runs at the best speed both ends share"
		}
	}
	return f, true
}

// partner kinds: what the link partner's advertised modes say about a link
// that came up below this end's best mode.
const (
	partnerUnknown    = iota // no partner modes (autoneg off, driver silent)
	partnerOffersLess        // the partner's best common mode is the negotiated speed or less
	partnerOffersMore        // the partner advertises a common mode above the negotiated speed
)

type partnerVerdict struct {
	kind int
	best string // the partner's best mode that this end also advertises
}

// partnerLimit compares the partner's advertised modes with the modes this
// end offers (common: supported and advertised).
func partnerLimit(n NIC, common []string, speed, top int) partnerVerdict {
	if len(n.Link.PartnerAdvertised) == 0 || top <= speed {
		return partnerVerdict{}
	}
	var both []string
	for _, m := range n.Link.PartnerAdvertised {
		if slices.Contains(common, m) {
			both = append(both, m)
		}
	}
	pbest, ptop := maxMode(both)
	if ptop > speed {
		return partnerVerdict{partnerOffersMore, pbest}
	}
	if pbest == "" {
		// Nothing in common (a partner of another medium, or garbage):
		// no verdict.
		return partnerVerdict{}
	}
	return partnerVerdict{partnerOffersLess, pbest}
}

// partnerFix is the fix when the link partner (usually a switch port) is
// what limits the speed.
func partnerFix(pbest string, half bool, autoneg *bool) string {
	s := "The link partner (switch port) advertises no faster mode than " + pbest +
		": check the port's configured speed (a port limited to a speed, or an old or green-mode switch), " +
		"or move to a port that offers more; `ethtool IFACE` lists \"Link partner advertised link modes\""
	if autoneg != nil && !*autoneg {
		s += "; autonegotiation is off here, so nothing was negotiated: turn it on at both ends"
	}
	if half {
		s += "; half duplex usually means the peer is forced to a speed while this end autonegotiates"
	}
	return s + "."
}

// linkModeEvidence is the link as the finding cites it.
func linkModeEvidence(n NIC) map[string]string {
	ev := map[string]string{
		"speed_mbps": strconv.Itoa(n.Link.SpeedMbps),
		"duplex":     string(n.Link.Duplex),
	}
	if len(n.Link.Supported) > 0 {
		ev["supported"] = strings.Join(n.Link.Supported, " ")
	}
	if len(n.Link.Advertised) > 0 {
		ev["advertised"] = strings.Join(n.Link.Advertised, " ")
	}
	if len(n.Link.PartnerAdvertised) > 0 {
		ev["partner_advertised"] = strings.Join(n.Link.PartnerAdvertised, " ")
	}
	if n.Link.Autoneg != nil {
		ev["autoneg"] = strconv.FormatBool(*n.Link.Autoneg)
	}
	return ev
}

// linkFix suggests what usually causes a slow or half-duplex link.
func linkFix(best string, speed int, half bool, autoneg *bool) string {
	var s []string
	if autoneg != nil && !*autoneg {
		s = append(s, "autonegotiation is off, so the speed and duplex are forced: turn it on at both ends")
	}
	switch {
	case strings.Contains(best, "baseT/") || strings.Contains(best, "baseT1"):
		top, _ := linkModeSpeed(best)
		switch {
		case top >= 10000:
			s = append(s, "check the cable (10GBASE-T wants Cat6a, 100 m; Cat6 reaches 55 m) and the switch port")
		case top >= 2500:
			s = append(s, "check the cable (2.5/5GBASE-T want Cat5e or better) and that the switch port does "+
				"NBASE-T, not just 1 and 10 Gb/s")
		default:
			s = append(s, "check the cable (1000BASE-T needs all 4 pairs, Cat5e) and the switch port's speed setting")
		}
	case best != "":
		s = append(s, "check the transceiver or DAC and the switch port's configured speed")
	}
	if half {
		s = append(s, "half duplex usually means the peer is forced to a speed while this end autonegotiates")
	}
	if len(s) == 0 {
		return ""
	}
	out := strings.Join(s, "; ")
	return strings.ToUpper(out[:1]) + out[1:] + "."
}
