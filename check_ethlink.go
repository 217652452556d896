package nicdiag

import (
	"fmt"
	"strconv"

	"github.com/nicdiag/nicdiag/finding"
)

// flapDownsMin is how many times a NIC's carrier must have gone down since
// the netdev appeared before nic.link_flapping speaks. A healthy boot
// brings it down once or twice (the driver starts with the carrier off,
// then autonegotiation may restart once), and every `ip link set down`,
// ring or channel change (`ethtool -G`/`-L` reset many drivers' links)
// and suspend adds one: ten is beyond what routine administration leaves
// on a server, and each real drop costs the link for 1-3 s of
// renegotiation and every TCP flow on it a retransmission timeout.
const flapDownsMin = 10

// ethlinkCheck: the Ethernet link's own health. nic.link_flapping: a
// carrier that went down flapDownsMin times or more since boot (warn for a
// NIC on a bus; info for a virtual interface, whose carrier follows a
// peer, a VM or a container). The partner's advertised modes refine
// nic.link_below_capability (the link modes family).
var ethlinkCheck = Checker{
	Name:  "ethlink",
	Codes: []finding.Code{finding.NICLinkFlapping},
	Run: func(h *Host) []finding.Finding {
		var out []finding.Finding
		for _, n := range h.Selected {
			if f, ok := linkFlapping(n); ok {
				out = append(out, f)
			}
		}
		return out
	},
}

func linkFlapping(n *NIC) (finding.Finding, bool) {
	c := n.Carrier
	if !n.Netdev() || c == nil || c.Downs() < flapDownsMin {
		return finding.Finding{}, false
	}
	downs := c.Downs()
	ev := map[string]string{"carrier_changes": strconv.FormatInt(c.Changes, 10)}
	if c.Up != nil {
		ev["carrier_up_count"] = strconv.FormatInt(*c.Up, 10)
	}
	if c.Down != nil {
		ev["carrier_down_count"] = strconv.FormatInt(*c.Down, 10)
	} else {
		ev["carrier_downs_estimated"] = strconv.FormatInt(downs, 10)
	}
	if n.OperState != "" {
		ev["operstate"] = string(n.OperState)
	}
	f := finding.Finding{Code: finding.NICLinkFlapping, Severity: finding.Warn, Subject: n.Name, Evidence: ev}
	how := "went down"
	if c.Down == nil {
		how = "went down about" // half of carrier_changes
	}
	f.Summary = fmt.Sprintf("%s's carrier %s %d times since the interface appeared (usually boot; the counts do "+
		"not say when): each drop stops the link for the renegotiation and stalls every TCP flow on it", n.Name, how, downs)
	f.Fix = fmt.Sprintf("Watch whether it is still flapping: `ip -s link show %s` (carrier_changes), "+
		"`journalctl -k | grep -i 'link is'` for the times; reseat or replace the cable, SFP or DAC, try another "+
		"switch port and look at the switch's port log; with EEE active on the link, try `ethtool --set-eee %s eee off`", n.Name, n.Name)
	if !n.Physical() {
		f.Severity = finding.Info
		f.Summary = fmt.Sprintf("%s's carrier went down %d times since it was created: a virtual interface's "+
			"carrier follows its peer, VM or container, so restarts count too", n.Name, downs)
		f.Fix = fmt.Sprintf("If the peer of %s is not being restarted, look at what brings it down: "+
			"`ip -s link show %s`, `journalctl -k`", n.Name, n.Name)
	}
	return f, true
}
