package nicdiag

import (
	"fmt"
	"strconv"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// coalesceCheck: receive interrupt moderation off (nic.coalesce_off):
// rx-usecs 0, rx-frames at most 1 (or not a parameter of the driver) and
// adaptive-rx off (or not one), which include/uapi/linux/ethtool.h calls
// disabling coalescing: the NIC may raise an interrupt for every frame it
// receives. Warn on a real link of at least offloadWarnMbps whose answer
// came from ethtool netlink; info below, on an emulated NIC, at an unknown
// speed, or from the legacy ioctl (which reads a parameter the driver does
// not support as 0, so rx-usecs 0 there may not be a setting at all).
//
// Not judged: paravirtual NICs (virtio_net answers rx-usecs 0 and
// rx-frames 1 when the device cannot moderate, VIRTIO_NET_F_NOTF_COAL
// absent, and its interrupts are the hypervisor's notifications), USB NICs
// (their completions arrive through the host controller's interrupt), and
// a driver without coalescing (the answer is "not supported": Missing says
// so; no finding).
var coalesceCheck = Checker{
	Name:  "coalesce",
	Codes: []finding.Code{finding.NICCoalesceOff},
	Run:   func(h *Host) []finding.Finding { return perNIC(h, coalesceOff) },
}

// dynamicITR names the drivers whose rx-usecs 1-3 select a dynamic
// interrupt-throttling mode rather than microseconds, and their default
// (3: dynamic conservative).
var dynamicITR = map[string]bool{"igb": true, "igc": true, "e1000e": true, "e1000": true}

func coalesceOff(n *NIC) (finding.Finding, bool) {
	c := n.Coalesce
	if !n.Netdev() || !n.Physical() || n.Virtual || n.Bus == nicinfo.BusUSB || c == nil {
		return finding.Finding{}, false
	}
	if c.RXUsecs == nil || *c.RXUsecs != 0 ||
		c.RXFrames != nil && *c.RXFrames > 1 ||
		c.AdaptiveRX != nil && *c.AdaptiveRX {
		return finding.Finding{}, false
	}
	u32 := func(p *uint32) string {
		if p == nil {
			return "not supported"
		}
		return strconv.FormatUint(uint64(*p), 10)
	}
	onOff := func(p *bool) string {
		switch {
		case p == nil:
			return "not supported"
		case *p:
			return "on"
		}
		return "off"
	}
	speed, basis := portSpeed(n)
	ev := map[string]string{
		"rx_usecs": u32(c.RXUsecs), "rx_frames": u32(c.RXFrames), "adaptive_rx": onOff(c.AdaptiveRX),
		"tx_usecs": u32(c.TXUsecs), "tx_frames": u32(c.TXFrames), "adaptive_tx": onOff(c.AdaptiveTX),
		"source": c.Source, "link_mbps": strconv.Itoa(n.Link.SpeedMbps), "warn_at_mbps": strconv.Itoa(offloadWarnMbps),
	}
	if basis != "" {
		ev["judged_mbps"] = strconv.Itoa(speed)
	}
	if l := nicinfo.Label(n.NIC); l != "" {
		ev["label"] = l
	}
	rate := ""
	if speed > 0 {
		fps := fullFramesPerSecond(speed)
		ev["full_frames_per_s"] = fmt.Sprintf("%.0f", fps)
		rate = fmt.Sprintf(", up to %.0f k interrupts/s at line rate of 1518-byte frames", fps/1000)
	}
	sev := finding.Info
	if speed >= offloadWarnMbps && nicinfo.Label(n.NIC) != nicinfo.LabelEmulated && c.Source == nicinfo.CoalesceNetlink {
		sev = finding.Warn
	}
	var fix string
	switch {
	case dynamicITR[n.Driver]:
		fix = fmt.Sprintf("`ethtool -C %s rx-usecs 3` (for %s, 1-3 select the driver's dynamic interrupt throttling; 3, dynamic conservative, is its default), or a fixed delay such as `ethtool -C %s rx-usecs 50`", n.Name, n.Driver, n.Name)
	case c.AdaptiveRX != nil:
		fix = fmt.Sprintf("`ethtool -C %s adaptive-rx on`, or a fixed delay such as `ethtool -C %s rx-usecs 50`", n.Name, n.Name)
	default:
		fix = fmt.Sprintf("`ethtool -C %s rx-usecs 50` (a 50 µs delay: at most 20000 interrupts/s per queue)", n.Name)
	}
	fix += "; to keep it across reboots, UseAdaptiveRxCoalesce=yes or RxCoalesceSec=50us in the [Link] section of the interface's systemd .link file."
	return finding.Finding{
		Code:     finding.NICCoalesceOff,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s has receive interrupt moderation off (rx-usecs 0, rx-frames %s, adaptive-rx %s) at %s: the NIC may interrupt once per received frame%s; NAPI masks a queue's interrupt only while it polls, so below saturation each frame can cost an interrupt and a softirq",
			n.Name, ev["rx_frames"], ev["adaptive_rx"], coalesceSpeedText(n, speed, basis), rate),
		Fix:      fix,
		Evidence: ev,
	}, true
}

// coalesceSpeedText is the speed the summary names.
func coalesceSpeedText(n *NIC, speed int, basis string) string {
	if basis == "" {
		return speedText(n)
	}
	return atSpeed(speed, basis)
}
