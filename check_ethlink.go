package nicdiag

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/pcie"
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
// peer, a VM or a container). nic.known_issue: a row of the known-issue
// table (KnownIssues) matches the NIC's ID, revision and driver, and its
// condition holds (the row's severity) or could not be read (info). The partner's advertised modes refine
// nic.link_below_capability (the link modes family).
var ethlinkCheck = Checker{
	Name:  "ethlink",
	Codes: []finding.Code{finding.NICLinkFlapping, finding.NICKnownIssue},
	Run: func(h *Host) []finding.Finding {
		var out []finding.Finding
		issues := KnownIssues()
		for _, n := range h.Selected {
			if f, ok := linkFlapping(n); ok {
				out = append(out, f)
			}
			out = append(out, knownIssues(n, issues)...)
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

// knownIssues returns a nic.known_issue finding for each row of issues that
// matches n and whose condition holds or is unknown.
func knownIssues(n *NIC, issues []KnownIssue) []finding.Finding {
	if !n.Netdev() {
		return nil
	}
	var out []finding.Finding
	for _, k := range issues {
		if !issueMatches(n, k) {
			continue
		}
		holds, known, state := issueCondition(n, k.Condition)
		if known && !holds {
			continue
		}
		sev := finding.Info
		if known && k.Severity == "warn" {
			sev = finding.Warn
		}
		id := fmt.Sprintf("%04x:%04x", k.VendorID, k.DeviceID)
		ev := map[string]string{"id": id, "bus": k.Bus, "driver": n.Driver, "condition": k.Condition,
			"state": state, "source": k.Source}
		if n.PCI != nil {
			ev["revision"] = fmt.Sprintf("%02x", n.PCI.Revision)
		}
		if n.FirmwareVersion != "" {
			ev["firmware_version"] = n.FirmwareVersion
		}
		summary := fmt.Sprintf("%s (%s, %s): %s", n.Name, id, n.Driver, k.Symptom)
		if known {
			summary += " (here: " + state + ")"
		} else {
			summary += "; it applies if " + strings.ReplaceAll(conditionText(k.Condition), "IFACE", n.Name) + ", which could not be read here (" + state + ")"
		}
		bdf := "BDF"
		if n.PCI != nil {
			bdf = string(n.PCI.Address)
		}
		fix := strings.NewReplacer("IFACE", n.Name, "BDF", bdf).Replace(k.Fix)
		if fix != "" {
			fix = strings.ToUpper(fix[:1]) + fix[1:] + ". "
		}
		out = append(out, finding.Finding{Code: finding.NICKnownIssue, Severity: sev, Subject: n.Name,
			Summary: summary, Evidence: ev, Fix: fix + "Source: " + k.Source})
	}
	return out
}

func issueMatches(n *NIC, k KnownIssue) bool {
	if n.Driver != k.Driver {
		return false
	}
	switch k.Bus {
	case "pci":
		p := n.PCI
		return p != nil && p.VendorID == k.VendorID && p.DeviceID == k.DeviceID &&
			(k.Revision == nil || *k.Revision == p.Revision)
	case "usb":
		u := n.USB
		return u != nil && u.VendorID == k.VendorID && u.ProductID == k.DeviceID
	}
	return false
}

// issueCondition says whether a row's condition holds on n; known is false
// when the fact was not read. state words what was read.
func issueCondition(n *NIC, cond string) (holds, known bool, state string) {
	switch cond {
	case IssueBound:
		return true, true, n.Driver + " is bound"
	case IssueEEEActive:
		e := n.EEE
		switch {
		case e == nil:
			return false, false, "EEE not read"
		case e.Active:
			return true, true, "EEE enabled and active"
		case e.Enabled:
			return false, true, "EEE enabled, not active"
		}
		return false, true, "EEE disabled"
	case IssueASPML1:
		var ex *pcie.Express
		if n.Path != nil && n.Path.Device.Config != nil {
			ex = n.Path.Device.Config.Express
		}
		switch {
		case ex == nil || !ex.HasLink:
			return false, false, "ASPM not read (the PCIe capability needs root)"
		case ex.ASPMEnabled&pcie.ASPML1 != 0:
			return true, true, "ASPM " + ex.ASPMEnabled.String() + " enabled"
		}
		return false, true, "ASPM L1 disabled"
	}
	return false, false, "unknown condition"
}

func conditionText(cond string) string {
	switch cond {
	case IssueEEEActive:
		return "EEE is active (`ethtool --show-eee IFACE`)"
	case IssueASPML1:
		return "ASPM L1 is enabled (`lspci -vv`: LnkCtl)"
	}
	return cond
}
