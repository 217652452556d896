package nicdiag

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// bondCheck: bonds (NIC.Bond). A bond of N members at S Mb/s moves N × S
// only across flows: each flow is hashed onto one member
// (bond.single_flow, info), and the default hash policy layer2 (or
// layer2+3) puts all traffic between two hosts on one member however many
// flows there are (warn, on balance-xor and 802.3ad). Members at different
// speeds, or one down (bond.member_mismatch, warn): the slower member caps
// the flows hashed to it. An active-backup bond carries traffic on one
// member (info); a slower active member than a backup is a warn. A bond of
// one member says nothing. A bond is judged when it or one of its members
// is selected.
var bondCheck = Checker{
	Name:  "bond",
	Codes: []finding.Code{finding.BondSingleFlow, finding.BondMemberMismatch},
	Run: func(h *Host) []finding.Finding {
		var out []finding.Finding
		for _, b := range h.NICs {
			if b.Bond == nil || (!b.Selected && !h.anySelected(b.Bond.Slaves)) {
				continue
			}
			m := h.bondMembers(b)
			if len(m) < 2 {
				continue // one member: nothing to spread or to mismatch
			}
			if f, ok := bondSingleFlow(b, m); ok {
				out = append(out, f)
			}
			if f, ok := bondMismatch(b, m); ok {
				out = append(out, f)
			}
		}
		return out
	},
}

// anySelected reports whether an interface of these names is selected.
func (h *Host) anySelected(names []string) bool {
	for _, name := range names {
		if n := h.named(name); n != nil && n.Selected {
			return true
		}
	}
	return false
}

// bondMember is one member of a bond as the inventory has it.
type bondMember struct {
	name string
	mbps int  // nicinfo.SpeedUnknown when not known
	up   bool // operstate up (or unknown: not judged down)
}

func (h *Host) bondMembers(b *NIC) []bondMember {
	var out []bondMember
	for _, name := range b.Bond.Slaves {
		m := bondMember{name: name, mbps: nicinfo.SpeedUnknown, up: true}
		if n := h.named(name); n != nil {
			m.mbps = n.Link.SpeedMbps
			switch n.OperState {
			case nicinfo.OperDown, nicinfo.OperLowerLayerDown, "notpresent":
				m.up = false
			}
		}
		out = append(out, m)
	}
	return out
}

func (m bondMember) String() string {
	s := "unknown speed"
	if m.mbps > 0 {
		s = strconv.Itoa(m.mbps) + " Mb/s"
	}
	if !m.up {
		s += ", down"
	}
	return m.name + " " + s
}

func memberList(m []bondMember) string {
	parts := make([]string, len(m))
	for i, x := range m {
		parts[i] = x.String()
	}
	return strings.Join(parts, ", ")
}

// uniformMbps is the members' common speed, or 0 when they differ or one
// is unknown.
func uniformMbps(m []bondMember) int {
	s := m[0].mbps
	for _, x := range m {
		if x.mbps != s || x.mbps <= 0 {
			return 0
		}
	}
	return s
}

func bondEvidence(b *NIC, m []bondMember) map[string]string {
	ev := map[string]string{
		"mode":    b.Bond.Mode,
		"members": memberList(m),
		"count":   strconv.Itoa(len(m)),
	}
	if b.Bond.HashPolicy != "" {
		ev["xmit_hash_policy"] = b.Bond.HashPolicy
	}
	if b.Bond.ActiveSlave != "" {
		ev["active_slave"] = b.Bond.ActiveSlave
	}
	return ev
}

// perHostPolicy reports whether a hash policy sends all traffic between
// two hosts through one member: layer2 hashes the MAC addresses, layer2+3
// the MAC and IP addresses, neither the ports.
func perHostPolicy(p string) bool { return p == "layer2" || p == "layer2+3" }

func bondSingleFlow(b *NIC, m []bondMember) (finding.Finding, bool) {
	bd := b.Bond
	ev := bondEvidence(b, m)
	s := uniformMbps(m)
	per := "one member's speed"
	across := fmt.Sprintf("the %d members together", len(m))
	if s > 0 {
		per = fmt.Sprintf("%d Mb/s", s)
		across = fmt.Sprintf("%d × %d = %d Mb/s", len(m), s, len(m)*s)
		ev["per_flow_mbps"] = strconv.Itoa(s)
		ev["aggregate_mbps"] = strconv.Itoa(len(m) * s)
	}
	f := finding.Finding{Code: finding.BondSingleFlow, Severity: finding.Info, Subject: b.Name, Evidence: ev}
	switch bd.Mode {
	case nicinfo.BondModeActiveBackup:
		active := bd.ActiveSlave
		if active == "" {
			active = "the active member"
		}
		f.Summary = fmt.Sprintf("%s is active-backup over %s: only %s carries traffic, the others stand by for failover, so the bond moves one member's speed (%s)",
			b.Name, memberList(m), active, per)
		return f, true
	case nicinfo.BondModeXOR, nicinfo.BondMode8023AD:
		pol := bd.HashPolicy
		if pol == "" {
			pol = "unknown"
		}
		if perHostPolicy(bd.HashPolicy) {
			f.Severity = finding.Warn
			f.Summary = fmt.Sprintf("%s (%s over %s) hashes by %s: all traffic between two hosts goes through one member however many flows it has, so one peer gets %s at most; %s only across several peers",
				b.Name, bd.Mode, memberList(m), bd.HashPolicy, per, across)
			f.Fix = fmt.Sprintf("Hash by ports too: `ip link set %s type bond xmit_hash_policy layer3+4` (an older kernel that refuses it while the bond is up wants `ip link set %[1]s down` first; persist it: netplan `parameters: transmit-hash-policy: layer3+4`, ifupdown `bond-xmit-hash-policy layer3+4`, systemd-networkd `[Bond] TransmitHashPolicy=layer3+4`); the switch hashes the other direction, so set its port-channel load balancing to source and destination IP and port as well. Each flow still uses one member.",
				b.Name)
			return f, true
		}
		f.Summary = fmt.Sprintf("%s (%s over %s, hash policy %s): one flow uses one member: %s at most per flow; %s only across flows",
			b.Name, bd.Mode, memberList(m), pol, per, across)
		return f, true
	case "balance-tlb", "balance-alb":
		f.Summary = fmt.Sprintf("%s (%s over %s) balances by peer: one flow uses one member: %s at most per flow; %s only across flows and peers",
			b.Name, bd.Mode, memberList(m), per, across)
		return f, true
	}
	return finding.Finding{}, false // balance-rr spreads one flow (reordering it); broadcast copies it
}

func bondMismatch(b *NIC, m []bondMember) (finding.Finding, bool) {
	var down []string
	fast := 0
	for _, x := range m {
		if !x.up {
			down = append(down, x.name)
		}
		if x.up && x.mbps > fast {
			fast = x.mbps
		}
	}
	var slow []string
	for _, x := range m {
		if x.up && x.mbps > 0 && x.mbps < fast {
			slow = append(slow, x.name)
		}
	}
	if len(down) == 0 && len(slow) == 0 {
		return finding.Finding{}, false
	}
	ev := bondEvidence(b, m)
	ev["fastest_mbps"] = strconv.Itoa(fast)
	if len(down) > 0 {
		ev["down"] = strings.Join(down, " ")
	}
	if len(slow) > 0 {
		ev["slower"] = strings.Join(slow, " ")
	}
	f := finding.Finding{Code: finding.BondMemberMismatch, Severity: finding.Warn, Subject: b.Name, Evidence: ev}
	var what []string
	if len(slow) > 0 {
		what = append(what, fmt.Sprintf("%s slower than the fastest member (%d Mb/s)", strings.Join(slow, ", "), fast))
	}
	if len(down) > 0 {
		what = append(what, strings.Join(down, ", ")+" down")
	}
	problem := strings.Join(what, "; ")
	f.Fix = fmt.Sprintf("Bring every member of %s to the same speed: check the cables, transceivers and switch ports of the slower or down members (`ethtool MEMBER`, `ip link show MEMBER`), or remove a member that cannot match (`ip link set MEMBER nomaster`).", b.Name)
	switch b.Bond.Mode {
	case nicinfo.BondModeActiveBackup:
		act := b.Bond.ActiveSlave
		if act != "" && slices.Contains(slow, act) {
			f.Summary = fmt.Sprintf("%s is active-backup and its active member %s is slower than a backup (%s): the bond moves %s's speed while a faster member idles",
				b.Name, act, memberList(m), act)
			f.Fix = fmt.Sprintf("Make the faster member active: `ip link set %s type bond primary FASTER` (or `echo FASTER > /sys/class/net/%s/bonding/active_slave`), and check why %s links slower.", b.Name, b.Name, act)
			return f, true
		}
		f.Severity = finding.Info
		f.Summary = fmt.Sprintf("%s is active-backup over %s: %s; traffic does not use the backups now, but after a failover the bond runs at what the new active member gives", b.Name, memberList(m), problem)
		return f, true
	case nicinfo.BondMode8023AD:
		f.Summary = fmt.Sprintf("%s (802.3ad over %s): %s: members at different speeds cannot share one LACP aggregator, so the kernel runs one aggregator and leaves the others idle; a member down takes its share of the bandwidth with it",
			b.Name, memberList(m), problem)
	default:
		f.Summary = fmt.Sprintf("%s (%s over %s): %s: the slower member caps the flows hashed to it, and a member down takes its share of the bandwidth with it",
			b.Name, b.Bond.Mode, memberList(m), problem)
	}
	return f, true
}
