package nicdiag

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// offloadsCheck judges the offload features of the selected physical NICs
// (nicinfo.JudgedFeatures, read with ETHTOOL_GFEATURES):
//
//   - nic.offload_off: GRO, TSO, GSO, or receive or transmit checksumming
//     off on a NIC whose driver lets it be on (not "[fixed]"). Each costs
//     per-packet or per-byte CPU work, said as packet-rate arithmetic at
//     the link's speed. Warn on a link of at least offloadWarnMbps, info
//     below, on an emulated NIC (its speed is nominal) or at an unknown
//     speed.
//   - nic.lro_forwarding: LRO on while the host forwards (ip_forward or
//     IPv6 forwarding on) or the NIC is a bridge or Open vSwitch port: LRO
//     merges received frames and loses their boundaries, and the kernel
//     drops a merged frame it would route or bridge (skb_warn_if_lro in
//     ip_forward, ip6_forward, __br_forward). Warn.
//
// Paravirtual NICs (virtio_net, vmxnet3, ENA, ...) are not judged: their
// offloads are what the hypervisor offers, their speed is nominal, and
// their "LRO" is the host handing over packets with their GSO type set
// (virtio_net_hdr_to_skb), which the kernel can forward. A NIC without
// feature answers (an older snapshot, a driver without GFEATURES) gets no
// verdict.
var offloadsCheck = Checker{
	Name:  "offloads",
	Codes: []finding.Code{finding.NICOffloadOff, finding.NICLROForwarding},
	Run: func(h *Host) []finding.Finding {
		var out []finding.Finding
		for _, n := range h.Selected {
			if !offloadJudged(n) {
				continue
			}
			if f, ok := offloadsOff(n); ok {
				out = append(out, f)
			}
			if f, ok := h.lroForwarding(n); ok {
				out = append(out, f)
			}
		}
		return out
	},
}

// offloadWarnMbps is the link speed from which an offload or interrupt
// moderation that is off is a warning: 813 kpps of full-size frames per
// direction at 10 Gb/s, against 81 kpps at 1 Gb/s, which one core's
// receive path handles frame by frame.
const offloadWarnMbps = 10000

// Full-size frames for the packet-rate arithmetic: 1518 bytes (a 1500-byte
// MTU with Ethernet header and FCS), plus 20 bytes of preamble, start
// delimiter and inter-frame gap on the wire.
const (
	fullFrameBytes    = 1518
	wireOverheadBytes = 20
)

// fullFramesPerSecond is how many 1518-byte frames a link of mbps carries
// in one direction each second.
func fullFramesPerSecond(mbps int) float64 {
	return float64(mbps) * 1e6 / ((fullFrameBytes + wireOverheadBytes) * 8)
}

// offloadJudged: a network interface on a bus (not a software interface)
// that is not paravirtual, with feature answers.
func offloadJudged(n *NIC) bool {
	return n.Netdev() && n.Physical() && !n.Virtual && n.Features != nil
}

// linkCosts reports whether the NIC's speed is a real link's at or above
// offloadWarnMbps: not unknown, not an emulated NIC's nominal figure.
func linkCosts(n *NIC) bool {
	return n.Link.SpeedMbps >= offloadWarnMbps && nicinfo.Label(n.NIC) != nicinfo.LabelEmulated
}

// speedText is the link speed as a summary names it.
func speedText(n *NIC) string {
	switch {
	case n.Link.SpeedMbps <= 0:
		return "an unknown link speed"
	case nicinfo.Label(n.NIC) == nicinfo.LabelEmulated:
		return fmt.Sprintf("%d Mb/s (an emulated NIC's nominal speed)", n.Link.SpeedMbps)
	}
	return fmt.Sprintf("%d Mb/s", n.Link.SpeedMbps)
}

// featureState renders a feature for the evidence: "on", "off",
// "off (requested on)", "off [fixed]".
func featureState(f nicinfo.Feature) string {
	s := "off"
	if f.Active {
		s = "on"
	}
	if !f.Active && f.Requested {
		s += " (requested on)"
	}
	if f.Fixed {
		s += " [fixed]"
	}
	return s
}

// offload is one offload found off: what a person calls it, the ethtool -K
// keyword and systemd .link setting that turn it on, the kernel features
// it covers, and what its absence costs.
type offload struct {
	what, keyword, link string
	features            []string
	cost                string
}

func offloadsOff(n *NIC) (finding.Finding, bool) {
	found := offloadsFound(n)
	if len(found) == 0 {
		return finding.Finding{}, false
	}
	return offloadFinding(n, found), true
}

// lineRates returns the packet rate at n's line rate for a cost, in full
// the first time it is called, and the byte rate; "" for both without a
// speed.
func lineRates(speed int) (frames func() string, bytes string) {
	said := false
	frames = func() string {
		switch {
		case speed <= 0:
			return ""
		case said:
			return fmt.Sprintf(" (%.0f kpps at line rate)", fullFramesPerSecond(speed)/1000)
		}
		said = true
		return fmt.Sprintf(" (%.0f kpps of 1518-byte frames at %d Mb/s)", fullFramesPerSecond(speed)/1000, speed)
	}
	if speed > 0 {
		bytes = fmt.Sprintf(" (%.0f MB/s at line rate)", float64(speed)/8)
	}
	return frames, bytes
}

// offloadsFound lists the offloads n has off though its driver can turn
// them on, in the order the finding names them.
func offloadsFound(n *NIC) []offload {
	fs := n.Features
	off := func(name string) bool {
		f, ok := fs[name]
		return ok && !f.Active && !f.Fixed && !coveredByWorkaround(n, name)
	}
	frames, bytes := lineRates(n.Link.SpeedMbps)

	var csums []string // the transmit checksum features the driver has
	csumOn, csumChangeable := false, false
	for _, name := range []string{nicinfo.FeatureTXChecksumIPv4, nicinfo.FeatureTXChecksumIP, nicinfo.FeatureTXChecksumIPv6} {
		if f, ok := fs[name]; ok {
			csums = append(csums, name)
			csumOn = csumOn || f.Active
			csumChangeable = csumChangeable || !f.Fixed
		}
	}
	sg, hasSG := fs[nicinfo.FeatureScatterGather]
	// TSO needs scatter-gather and transmit checksumming; with either
	// fixed off, turning TSO on cannot work.
	tsoBlocked := hasSG && !sg.Active && sg.Fixed || len(csums) > 0 && !csumOn && !csumChangeable
	var tso []string
	if !tsoBlocked {
		for _, name := range []string{nicinfo.FeatureTSO, nicinfo.FeatureTSO6} {
			if off(name) {
				tso = append(tso, name)
			}
		}
	}

	var found []offload
	if off(nicinfo.FeatureGRO) {
		found = append(found, offload{"GRO", "gro", "GenericReceiveOffload=yes", []string{nicinfo.FeatureGRO},
			"without GRO the receive stack runs once per frame" + frames() + " instead of once per merged aggregate of a flow's frames, up to 64 KiB"})
	}
	if len(tso) > 0 {
		link := "TCPSegmentationOffload=yes"
		if slices.Contains(tso, nicinfo.FeatureTSO6) {
			link += " TCP6SegmentationOffload=yes"
		}
		found = append(found, offload{"TSO", "tso", link, tso,
			"without TSO the CPU cuts each TCP send of up to 64 KiB into MSS-sized segments itself (GSO) and the driver queues every one" + frames()})
	}
	if off(nicinfo.FeatureGSO) {
		found = append(found, offload{"GSO", "gso", "GenericSegmentationOffload=yes", []string{nicinfo.FeatureGSO},
			"without GSO, UDP segmentation-offload and tunnel sends go down the stack one segment at a time (TCP uses GSO whatever this says)"})
	}
	if off(nicinfo.FeatureRXChecksum) {
		found = append(found, offload{"receive checksumming", "rx", "ReceiveChecksumOffload=yes", []string{nicinfo.FeatureRXChecksum},
			"without receive checksum offload the CPU reads every received byte to verify TCP and UDP checksums" + bytes})
	}
	if len(csums) > 0 && !csumOn && csumChangeable {
		cost := "without transmit checksum offload the CPU sums every byte it sends" + bytes
		if _, ok := fs[nicinfo.FeatureTSO]; ok {
			cost += ", and the kernel keeps TSO off with it"
		}
		found = append(found, offload{"transmit checksumming", "tx", "TransmitChecksumOffload=yes", csums, cost})
	}
	if len(tso) > 0 && off(nicinfo.FeatureScatterGather) {
		found = append(found, offload{"scatter-gather", "sg", "", []string{nicinfo.FeatureScatterGather},
			"without scatter-gather every send is copied into one linear buffer, and the kernel keeps TSO off with it"})
	}
	return found
}

// offloadFinding is the nic.offload_off finding for the offloads found off.
func offloadFinding(n *NIC, found []offload) finding.Finding {
	fs, speed := n.Features, n.Link.SpeedMbps
	var whats, costs, keywords, links, names []string
	ev := map[string]string{"link_mbps": strconv.Itoa(speed), "warn_at_mbps": strconv.Itoa(offloadWarnMbps)}
	for _, o := range found {
		whats = append(whats, o.what)
		costs = append(costs, o.cost)
		keywords = append(keywords, o.keyword+" on")
		if o.link != "" {
			links = append(links, o.link)
		}
		names = append(names, o.features...)
		for _, f := range o.features {
			ev[f] = featureState(fs[f])
		}
	}
	ev["offloads_off"] = strings.Join(names, ", ")
	if speed > 0 {
		ev["full_frames_per_s"] = fmt.Sprintf("%.0f", fullFramesPerSecond(speed))
	}
	if l := nicinfo.Label(n.NIC); l != "" {
		ev["label"] = l
	}
	sev := finding.Info
	if linkCosts(n) {
		sev = finding.Warn
	}
	them := "them"
	if len(found) == 1 {
		them = "it"
	}
	fix := fmt.Sprintf("`ethtool -K %s %s`", n.Name, strings.Join(keywords, " "))
	if len(links) > 0 {
		fix += fmt.Sprintf("; to keep it across reboots, %s in the [Link] section of the interface's systemd .link file (or the distribution's own network configuration)", strings.Join(links, " "))
	}
	return finding.Finding{
		Code:     finding.NICOffloadOff,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s has %s off though its driver can turn %s on, at %s: %s",
			n.Name, joinAnd(whats), them, speedText(n), strings.Join(costs, "; ")),
		Fix:      fix + ".",
		Evidence: ev,
	}
}

// lroForwarding: LRO on while frames received on n may be forwarded.
func (h *Host) lroForwarding(n *NIC) (finding.Finding, bool) {
	lro, ok := n.Features[nicinfo.FeatureLRO]
	if !ok || !lro.Active {
		return finding.Finding{}, false
	}
	ev := map[string]string{nicinfo.FeatureLRO: featureState(lro)}
	var why []string
	if fw := h.Forwarding; fw != nil {
		for _, s := range []struct {
			v        *bool
			key, say string
		}{{fw.IPv4, "ip_forward", "net.ipv4.ip_forward"}, {fw.IPv6, "ipv6_forwarding", "net.ipv6.conf.all.forwarding"}} {
			if s.v == nil {
				continue
			}
			ev[s.key] = "0"
			if *s.v {
				ev[s.key] = "1"
				why = append(why, s.say+" is 1")
			}
		}
	}
	switch {
	case n.Bridge == "ovs-system":
		why = append(why, "it is an Open vSwitch port")
		ev["bridge"] = n.Bridge
	case n.Bridge != "":
		why = append(why, "it is a port of bridge "+n.Bridge)
		ev["bridge"] = n.Bridge
	}
	if len(why) == 0 {
		return finding.Finding{}, false
	}
	fix := fmt.Sprintf("`ethtool -K %s lro off` (GRO still merges what this host receives for itself, and what GRO merges can be forwarded); to keep it off, LargeReceiveOffload=no in the [Link] section of its systemd .link file.", n.Name)
	if lro.Fixed {
		fix = fmt.Sprintf("The driver does not let LRO be turned off (`ethtool -k %s` shows it [fixed]): look for a driver or firmware setting that disables it, or forward through another NIC.", n.Name)
	}
	return finding.Finding{
		Code:     finding.NICLROForwarding,
		Severity: finding.Warn,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s has LRO on while %s: LRO merges received frames and loses their boundaries, and the kernel drops a merged frame it would route or bridge (ip_forward, ip6_forward and __br_forward call skb_warn_if_lro, which logs \"received packets cannot be forwarded while LRO is enabled\"); the kernel turns LRO off itself when forwarding is enabled or a NIC joins a bridge (dev_disable_lro), so it was turned on again since, or the driver does not let it go",
			n.Name, joinAnd(why)),
		Fix:      fix,
		Evidence: ev,
	}, true
}

// joinAnd joins "a", "a and b", "a, b and c".
func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
