package nicdiag

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// The thresholds of the stack check.
const (
	// conntrackWarnShare and conntrackInfoShare: the table's fill that
	// warns (new connections are dropped when it is full and nothing can
	// be evicted) and that is worth saying.
	conntrackWarnShare = 0.9
	conntrackInfoShare = 0.75
)

// stackCheck: this host's own network stack, host-wide (subject "host"):
// the connection-tracking table near its maximum or dropping for want of
// room (stack.conntrack_full: warn at 90 % full, or for drops since boot
// with the table 75 % full or early drops beside them; info from 75 %, for
// early drops, or for drops alone), and br_netfilter passing bridged
// frames through iptables on a host with a bridge (stack.br_netfilter,
// info: Kubernetes and Docker need it).
var stackCheck = Checker{
	Name:  "stack",
	Codes: []finding.Code{finding.StackConntrackFull, finding.StackBridgeNetfilter},
	Run: func(h *Host) []finding.Finding {
		var out []finding.Finding
		if f, ok := conntrackFull(h.Facts.Conntrack); ok {
			out = append(out, f)
		}
		if f, ok := h.bridgeNetfilter(); ok {
			out = append(out, f)
		}
		return out
	},
}

func conntrackFull(c *nicinfo.Conntrack) (finding.Finding, bool) {
	if c == nil || c.Max <= 0 {
		return finding.Finding{}, false
	}
	fill := float64(c.Count) / float64(c.Max)
	drop, early, failed := c.Stats["drop"], c.Stats["early_drop"], c.Stats["insert_failed"]
	sev := finding.Severity(-1)
	// drop counts packets refused for want of room and packets a protocol
	// tracker returned NF_DROP for (nf_conntrack_in): only with the table
	// filling or evicting does it say the table was full.
	full := fill >= conntrackInfoShare || early > 0
	switch {
	case fill >= conntrackWarnShare || drop > 0 && full:
		sev = finding.Warn
	case full || drop > 0:
		sev = finding.Info
	}
	if sev < 0 {
		return finding.Finding{}, false
	}
	ev := map[string]string{
		"count": strconv.FormatInt(c.Count, 10), "max": strconv.FormatInt(c.Max, 10),
		"fill_pct": strings.TrimSuffix(pct(fill), " %"), "drop": strconv.FormatUint(drop, 10),
		"early_drop": strconv.FormatUint(early, 10), "insert_failed": strconv.FormatUint(failed, 10),
		"warn_at_pct": strconv.Itoa(int(100 * conntrackWarnShare)),
	}
	if c.Buckets > 0 {
		ev["buckets"] = strconv.FormatInt(c.Buckets, 10)
	}
	says := []string{fmt.Sprintf("the connection-tracking table holds %d of its %d entries (%s)", c.Count, c.Max, pct(fill))}
	switch {
	case drop > 0 && full:
		says = append(says, fmt.Sprintf("it counted %d drops since boot (table full or a tracker refused): with the table near full or evicting (early_drop), most are likely new connections' first packets refused for want of room (the kernel logs \"nf_conntrack: table full, dropping packet\"), which the client sends again only after its retransmission timeout (1 s for a TCP SYN)", drop))
	case drop > 0:
		says = append(says, fmt.Sprintf("it counted %d drops since boot (table full or a tracker refused); with the table this empty and no early drops, most are likely packets a protocol tracker refused (`dmesg | grep nf_conntrack` says whether the table was ever full)", drop))
	}
	if early > 0 {
		says = append(says, fmt.Sprintf("it evicted %d unconfirmed entries early to make room (early_drop): it has been full", early))
	}
	newMax := max(2*c.Max, 262144)
	return finding.Finding{
		Code:     finding.StackConntrackFull,
		Severity: sev,
		Subject:  HostSubject,
		Summary:  sentence(strings.Join(says, "; ")),
		Fix: fmt.Sprintf("Give it room: `sysctl -w net.netfilter.nf_conntrack_max=%d` and `echo %d > /sys/module/nf_conntrack/parameters/hashsize` (about 300 bytes of memory per entry; keep both in /etc/sysctl.d and /etc/modprobe.d); or track less: exempt high-rate traffic that needs no state (`nft add rule inet raw prerouting udp dport 53 notrack`, or iptables `-t raw ... -j NOTRACK`), and shorten net.netfilter.nf_conntrack_tcp_timeout_established (432000 s by default).",
			newMax, newMax/4),
		Evidence: ev,
	}, true
}

// bridgeNetfilter: br_netfilter on, with a bridge on the host.
func (h *Host) bridgeNetfilter() (finding.Finding, bool) {
	b := h.Facts.BridgeNF
	if b == nil {
		return finding.Finding{}, false
	}
	var on []string
	for _, x := range []struct {
		v    *bool
		name string
	}{{b.IPTables, "bridge-nf-call-iptables"}, {b.IP6Tables, "bridge-nf-call-ip6tables"}} {
		if x.v != nil && *x.v {
			on = append(on, x.name)
		}
	}
	var bridges []string
	for _, n := range h.NICs {
		if n.Kind == "bridge" && n.Netdev() {
			bridges = append(bridges, n.Name)
		}
	}
	if len(on) == 0 || len(bridges) == 0 {
		return finding.Finding{}, false
	}
	var sets []string
	for _, o := range on {
		sets = append(sets, "net.bridge."+o+"=0")
	}
	return finding.Finding{
		Code:     finding.StackBridgeNetfilter,
		Severity: finding.Info,
		Subject:  HostSubject,
		Summary: fmt.Sprintf("br_netfilter is loaded with %s on, and this host has bridges (%s): every frame a bridge forwards between its ports goes through the iptables FORWARD chains and connection tracking, at routed-packet cost per frame, and fills the conntrack table (stack.conntrack_full).",
			joinAnd(on), strings.Join(bridges, ", ")),
		Fix: fmt.Sprintf("If nothing here filters bridged traffic with iptables: `sysctl -w %s` (keep it in /etc/sysctl.d), or do not load br_netfilter. Kubernetes (kube-proxy in iptables mode, kubeadm's preflight) and Docker's bridge networks need it on: leave it there.",
			strings.Join(sets, " ")),
		Evidence: map[string]string{"on": strings.Join(on, ", "), "bridges": strings.Join(bridges, ", ")},
	}, true
}
