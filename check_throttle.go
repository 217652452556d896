package nicdiag

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/unit"
	"github.com/nicdiag/nicdiag/irq"
)

// The thresholds of the throttle check.
const (
	// pauseMin and pauseShare: pause frames since boot that warn, at least
	// this many and one per 1000 frames of the direction they hold back
	// (received pauses against frames sent, sent pauses against frames
	// received). One XOFF stops the sender for up to 65535 quanta of 512
	// bit times (33.6 ms at 1 Gb/s, 3.4 ms at 10 Gb/s) or until an XON: a
	// pause per 1000 frames is a link stopped again and again under load.
	// Fewer, or a smaller share: info.
	pauseMin   = 1000
	pauseShare = 1e-3
	// allowanceMin: an allowance counter since boot that warns; one to
	// allowanceMin-1 is info (a burst the platform queued).
	allowanceMin = 1000
)

// throttleCheck: what held this host's traffic back since the driver
// started counting (usually boot), from the counters Inspect read
// (LossTotals): pause frames both ways (nic.pause_frames) and a cloud
// NIC's allowance counters (nic.allowance_exceeded, ENA). Each says which
// way, what it costs, and the fix; `nicdiag monitor` during a run says
// whether it still happens (run.pause, run.allowance_exceeded).
var throttleCheck = Checker{
	Name:  "throttle",
	Codes: []finding.Code{finding.NICPauseFrames, finding.NICAllowanceExceeded},
	Run: func(h *Host) []finding.Finding {
		var out []finding.Finding
		for _, n := range h.Selected {
			if n.LossTotals == nil {
				continue
			}
			if f, ok := pauseFrames(n); ok {
				out = append(out, f)
			}
			if f, ok := allowances(n); ok {
				out = append(out, f)
			}
		}
		return out
	},
}

// pauseFrames judges one NIC's pause frames since boot.
func pauseFrames(n *NIC) (finding.Finding, bool) {
	t := n.LossTotals
	rx, tx, names, ok := t.Pause()
	if !ok || rx < pauseMin && tx < pauseMin {
		return finding.Finding{}, false
	}
	ev := map[string]string{
		"counted":            "since the driver started counting (boot or driver load)",
		"pause_rx_frames":    strconv.FormatUint(rx, 10),
		"pause_tx_frames":    strconv.FormatUint(tx, 10),
		"rx_packets":         strconv.FormatUint(t.RXPackets, 10),
		"tx_packets":         strconv.FormatUint(t.TXPackets, 10),
		"counters":           strings.Join(names, ", "),
		"warn_at_share_pct":  strings.TrimSuffix(pct(pauseShare), " %"),
		"warn_at_pause_min":  strconv.Itoa(pauseMin),
		"flow_control_state": "not read",
	}
	if p := n.Pause; p != nil {
		ev["flow_control_state"] = fmt.Sprintf("autoneg %s, rx %s, tx %s", onOffWord(p.Autoneg), onOffWord(p.RX), onOffWord(p.TX))
	}
	share := func(v, of uint64) float64 {
		if of == 0 {
			return 1
		}
		return float64(v) / float64(of)
	}
	rxShare, txShare := share(rx, t.TXPackets), share(tx, t.RXPackets)
	var says, fixes []string
	sev := finding.Info
	if rx >= pauseMin {
		s := fmt.Sprintf("received %d pause frames (XOFF and XON; %s of the %s frames it sent): the link partner told this host to stop sending, each XOFF for up to 65535 × 512 bit times or until its XON", rx, pct(rxShare), unit.Count(float64(t.TXPackets)))
		if n.Pause != nil && !n.Pause.RX {
			s += "; RX flow control is off now, so they are counted, not obeyed"
		} else if rxShare >= pauseShare {
			sev = finding.Warn
		}
		says = append(says, s)
		fixes = append(fixes, fmt.Sprintf("the partner (switch port) runs out of buffer for what this host sends: look at its port's egress and pause counters; where TCP is left to handle congestion, turn flow control off at both ends (`ethtool -A %s autoneg off rx off tx off`, and the switch port's flow control), so a congested port drops instead of stopping the whole link", n.Name))
	}
	if tx >= pauseMin {
		says = append(says, fmt.Sprintf("sent %d pause frames (XOFF and XON; %s of the %s frames it received): this host could not take what arrived and told the partner to stop, holding back every flow on the link", tx, pct(txShare), unit.Count(float64(t.RXPackets))))
		if txShare >= pauseShare {
			sev = finding.Warn
		}
		fixes = append(fixes, "drain the receive side faster: "+fasterReceive(n))
	}
	return finding.Finding{
		Code:     finding.NICPauseFrames,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("Since the driver started counting (usually boot), %s %s. The counters say nothing about when: `nicdiag monitor` during a run shows whether it still happens.",
			n.Name, strings.Join(says, "; it ")),
		Fix:      sentence(strings.Join(fixes, "; ")) + " `ethtool -a " + n.Name + "` shows the flow control settings.",
		Evidence: ev,
	}, true
}

// fasterReceive lists the ways to drain a receive side that falls
// behind: a bigger RX ring when below its maximum, then drainWays.
func fasterReceive(n *NIC) string {
	if rx, rxMax, ok := ringState(n.Rings); ok && rx < rxMax {
		return fmt.Sprintf("raise the RX ring to its maximum (`ethtool -G %s rx %d`), then %s", n.Name, rxMax, drainWays(n))
	}
	return drainWays(n)
}

func onOffWord(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// allowanceFixes: what each ENA allowance counts and what lifts it, from
// the EC2 user guide (docs/host-audit.md).
var allowanceFixes = map[string][2]string{
	"bw_in_allowance_exceeded": {"inbound traffic above the instance's aggregate bandwidth",
		"a larger instance size, or an instance type with more network bandwidth (`aws ec2 describe-instance-types --instance-types TYPE --query 'InstanceTypes[].NetworkInfo.NetworkPerformance'`); an \"up to\" rating is a burst budget that runs out"},
	"bw_out_allowance_exceeded": {"outbound traffic above the instance's aggregate bandwidth",
		"a larger instance size, or an instance type with more network bandwidth; traffic leaving the placement group or region has a lower cap per flow (5 Gb/s)"},
	"pps_allowance_exceeded": {"packets per second (both ways) above the instance's allowance",
		"a larger instance size, or fewer, larger packets (jumbo frames inside the VPC: `ip link set IFACE mtu 9001`)"},
	"conntrack_allowance_exceeded": {"connections tracked for its security groups above the instance's allowance",
		"a larger instance size, or fewer tracked connections: security group rules that allow all traffic both ways (0.0.0.0/0) are not tracked"},
	"linklocal_allowance_exceeded": {"packets to the link-local services (Amazon DNS, instance metadata, Time Sync) above 1024 per second per interface",
		"a local DNS cache (systemd-resolved, dnsmasq, nscd), fewer instance-metadata calls"},
}

// allowances judges one NIC's allowance counters since boot.
func allowances(n *NIC) (finding.Finding, bool) {
	ev := map[string]string{"counted": "since the driver started counting (boot or driver load)"}
	var says, fixes []string
	sev := finding.Info
	for _, l := range n.LossTotals.Losses {
		if l.Class != irq.LossAllowance || l.Value == 0 {
			continue
		}
		name := strings.TrimPrefix(l.Name, "ethtool:")
		ev[l.Name] = strconv.FormatUint(l.Value, 10)
		what, fix := name, "a larger instance size"
		if a, ok := allowanceFixes[name]; ok {
			what, fix = a[0], a[1]
		}
		says = append(says, fmt.Sprintf("%d packets queued or dropped for %s (%s)", l.Value, what, name))
		fixes = append(fixes, name+": "+fix)
		if l.Value >= allowanceMin {
			sev = finding.Warn
		}
	}
	if len(says) == 0 {
		return finding.Finding{}, false
	}
	ev["warn_at"] = strconv.Itoa(allowanceMin)
	return finding.Finding{
		Code:     finding.NICAllowanceExceeded,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s: the cloud platform held back traffic since boot: %s. These are the instance's limits, not the NIC's or this host's: no setting here lifts them.",
			n.Name, strings.Join(says, "; ")),
		Fix:      strings.Join(fixes, "; ") + ". `ethtool -S " + n.Name + " | grep allowance` shows whether they still grow.",
		Evidence: ev,
	}, true
}

// sentence capitalises s and ends it with a full stop.
func sentence(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}
