package nicdiag

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/unit"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// PartLinkErrors names a NIC's damaged-frame counters in Host.Unread:
// nic.link_errors was not judged.
const PartLinkErrors Part = "damaged-frame counters (nic.link_errors)"

// The thresholds of the link errors check.
const (
	// linkErrWarnMin and linkErrWarnShare: damaged frames since boot that
	// warn, at least this many and one in 10^6 of those received, or ten
	// times what the link's standard allows where that is more (linkBER):
	// a link within its standard never warns. One frame in 10^6 lost caps
	// a TCP flow near 28 Gb/s at 0.5 ms RTT and 1.4 Gb/s at 10 ms (Mathis
	// et al.: MSS/RTT × 1.22/√p).
	linkErrWarnMin   = 1000
	linkErrWarnShare = 1e-6
	// linkErrInfoMin: fewer than this since boot is a plug-in or link
	// training: nothing.
	linkErrInfoMin = 100
	// frameBits are the bits of a full-size frame (1518 bytes), the one a
	// bit error ratio damages most often.
	frameBits = 1518 * 8
)

// linkStandard is the bit error ratio IEEE 802.3 specifies for the
// Ethernet PHYs of a speed (docs/host-audit.md has the sources), the
// loosest where several PHYs share the speed.
type linkStandard struct {
	upToMbps int
	name     string
	ber      float64
}

// linkStandards, by speed. 2.5G and 5GBASE-T take 1000BASE-T's figure (no
// public source states clause 126's): a looser figure can only make the
// check warn less. An unknown speed takes the loosest of all.
var linkStandards = []linkStandard{
	{10, "10BASE-T", 1e-8},
	{100, "100BASE-X", 1e-12},
	{1000, "1000BASE-T", 1e-10},
	{5000, "2.5G/5GBASE-T (taken as 1000BASE-T)", 1e-10},
	{math.MaxInt, "10 Gb/s and faster Ethernet", 1e-12},
}

// linkBER is the standard of a link at speed Mb/s (SpeedUnknown: the
// loosest) and the share of full-size frames it may lose within it.
func linkBER(speed int) (linkStandard, float64) {
	st := linkStandards[0]
	for _, s := range linkStandards {
		if speed > 0 && speed <= s.upToMbps {
			st = s
			break
		}
	}
	return st, -math.Expm1(frameBits * math.Log1p(-st.ber))
}

// linkErrorsCheck: frames the NIC received damaged since its driver
// started counting (nic.link_errors): CRC/FCS, symbol and alignment
// errors, from the interface statistics and the driver's own counters, and
// the blocks its FEC could not correct. The largest counter of each kind
// is taken (the sysfs and driver counters of one kind count the same
// frames), the damaged frames are the largest kind, set against the frames
// received: warn at linkErrWarnMin and linkErrWarnShare, info from
// linkErrInfoMin below that. Length errors are not damage on the wire
// (igb and e1000e count frames longer than the MTU in rx_length_errors,
// ruc + roc: a jumbo-frame peer on a 1500-byte MTU): from linkErrInfoMin
// they are said apart, at info, with the MTU as the fix.
var linkErrorsCheck = Checker{
	Name:  "link errors",
	Codes: []finding.Code{finding.NICLinkErrors},
	Run:   func(h *Host) []finding.Finding { return perNIC(h, linkErrors) },
}

// physicalKinds are the kinds of damaged frames the physical layer causes.
var physicalKinds = []nicinfo.LinkErrorKind{nicinfo.ErrCRC, nicinfo.ErrSymbol, nicinfo.ErrAlignment}

func linkErrors(n *NIC) (finding.Finding, bool) {
	l := n.LinkErrors
	if l == nil || !n.Physical() || n.Virtual {
		return finding.Finding{}, false
	}
	ev := map[string]string{"counted": "since the driver started counting (boot or driver load)", "rx_packets": strconv.FormatUint(l.RXPackets, 10)}
	for _, c := range l.Counters {
		ev[c.Name] = strconv.FormatUint(c.Value, 10)
	}
	length := l.ByKind()[nicinfo.ErrLength]
	lengthSays, lengthFix := lengthErrors(n, length)
	damaged, parts := physicalDamage(n, l, ev)
	if damaged < linkErrInfoMin {
		if lengthSays == "" {
			return finding.Finding{}, false
		}
		return finding.Finding{
			Code: finding.NICLinkErrors, Severity: finding.Info, Subject: n.Name,
			Summary:  fmt.Sprintf("%s %s.", n.Name, lengthSays),
			Fix:      lengthFix,
			Evidence: ev,
		}, true
	}
	share := float64(damaged) / (float64(l.RXPackets) + float64(damaged))
	ev["damaged"] = strconv.FormatUint(damaged, 10)
	ev["damaged_share"] = strconv.FormatFloat(share, 'g', 3, 64)
	st, allowed := linkBER(n.Link.SpeedMbps)
	ev["standard_frame_loss"] = strconv.FormatFloat(allowed, 'g', 3, 64)
	sev := finding.Info
	if damaged >= linkErrWarnMin && share >= max(linkErrWarnShare, 10*allowed) {
		sev = finding.Warn
	}
	sound := fmt.Sprintf("where a link within %s's specification (a bit error ratio of %s) loses at most %s of its 1518-byte frames", st.name, berWords(st.ber), sci(allowed))
	if n.Link.SpeedMbps <= 0 {
		sound = "where a link of unknown speed within the loosest Ethernet specification (" + st.name + ", a bit error ratio of " + berWords(st.ber) + ") loses at most " + sci(allowed) + " of its 1518-byte frames"
	}
	cost := fmt.Sprintf("each is lost and resent by TCP: at that loss rate one TCP flow of 1448-byte segments tops out near %s at 0.5 ms RTT and %s at 10 ms",
		mathisWords(share, 0.5e-3), mathisWords(share, 10e-3))
	f := finding.Finding{
		Code:     finding.NICLinkErrors,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s received %s since the driver started counting: %s of the %s frames it received, %s; %s.",
			n.Name, joinAnd(parts), sci(share), unit.Count(float64(l.RXPackets)), sound, cost),
		Fix: fmt.Sprintf("Look at the physical layer of %s: reseat or replace the cable, DAC or module (its own diagnostics: `ethtool -m %s`, nic.module_diagnostics), clean fibre connectors at both ends, try another switch port and read that port's error counters; 10GBASE-T wants Cat6a. Whether they still grow: `ethtool -S %s | grep -i -E 'crc|symbol|align'` twice under load.",
			n.Name, n.Name, n.Name),
		Evidence: ev,
	}
	if lengthSays != "" {
		f.Summary += " Apart from those, it " + lengthSays + "."
		f.Fix += " " + lengthFix
	}
	return f, true
}

// physicalDamage is the damaged frames the physical layer explains (the
// largest of the CRC, symbol and alignment counters and the FEC blocks
// not corrected), with a phrase per kind seen; ev gets the FEC counters.
func physicalDamage(n *NIC, l *nicinfo.LinkErrors, ev map[string]string) (uint64, []string) {
	kinds := l.ByKind()
	var damaged uint64
	var parts []string
	for _, k := range physicalKinds {
		c, ok := kinds[k]
		if !ok {
			continue
		}
		if c.Value > 0 {
			parts = append(parts, fmt.Sprintf("%d %s (%s)", c.Value, kindWords[k], c.Name))
		}
		damaged = max(damaged, c.Value)
	}
	if f := n.FEC; f != nil && f.Uncorrectable != nil {
		ev["fec_uncorrectable_blocks"] = strconv.FormatUint(*f.Uncorrectable, 10)
		if *f.Uncorrectable > 0 {
			parts = append(parts, fmt.Sprintf("%d FEC blocks it could not correct (%s FEC)", *f.Uncorrectable, f.Active))
		}
		damaged = max(damaged, *f.Uncorrectable)
		if f.Corrected != nil {
			ev["fec_corrected_blocks"] = strconv.FormatUint(*f.Corrected, 10)
		}
	}
	return damaged, parts
}

// lengthErrors says what the length errors are and their fix, or "" below
// linkErrInfoMin.
func lengthErrors(n *NIC, c nicinfo.LinkErrorCounter) (says, fix string) {
	if c.Value < linkErrInfoMin {
		return "", ""
	}
	mtu := "its MTU"
	if n.MTU > 0 {
		mtu = fmt.Sprintf("its %d-byte MTU", n.MTU)
	}
	says = fmt.Sprintf("dropped %d %s (%s) since the driver started counting: most often frames longer than %s allows (a peer that sends jumbo frames; igb and e1000e count those here), else runts; not damage on the wire",
		c.Value, kindWords[nicinfo.ErrLength], c.Name, mtu)
	fix = fmt.Sprintf("Give both ends of the link one MTU: `ip link show %s` here, the switch port's MTU and the peers' (`ip link set dev %s mtu 9000` on every host of the segment where jumbo frames are meant, or 1500 on the peer that sends them).",
		n.Name, n.Name)
	return says, fix
}

var kindWords = map[nicinfo.LinkErrorKind]string{
	nicinfo.ErrCRC: "frames with a bad CRC", nicinfo.ErrSymbol: "symbol errors",
	nicinfo.ErrAlignment: "misaligned frames", nicinfo.ErrLength: "frames of a wrong length",
}

// mathisWords is Mathis et al.'s ceiling on one TCP flow at loss share p
// and round-trip time rtt: MSS/RTT × 1.22/√p, for a 1448-byte MSS.
func mathisWords(p, rtt float64) string {
	bps := 1448 * 8 / rtt * 1.22 / math.Sqrt(p)
	if bps >= 1e9 {
		return strconv.FormatFloat(bps/1e9, 'f', 1, 64) + " Gb/s"
	}
	return strconv.FormatFloat(bps/1e6, 'f', 0, 64) + " Mb/s"
}

// berWords renders a bit error ratio as "10^-12".
func berWords(ber float64) string {
	return "10^" + strconv.Itoa(int(math.Round(math.Log10(ber))))
}

// sci renders a small share as "1 in N" ("1 in 14000").
func sci(share float64) string {
	if share <= 0 {
		return "none"
	}
	n := 1 / share
	s := strconv.FormatFloat(n, 'f', 0, 64)
	if n >= 1e6 {
		s = strings.TrimSuffix(strconv.FormatFloat(n/1e6, 'f', 1, 64), ".0") + " M"
	}
	return "1 in " + s
}
