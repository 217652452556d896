package nicinfo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
)

// Bond is a bonding master's configuration, from
// /sys/class/net/BOND/bonding/ (Documentation/networking/bonding.rst): the
// kernel writes mode and xmit_hash_policy as "NAME NUMBER" ("802.3ad 4",
// "layer3+4 1") and slaves as the members' names separated by spaces.
type Bond struct {
	// Mode is the bonding mode's name: "balance-rr", "active-backup",
	// "balance-xor", "broadcast", "802.3ad", "balance-tlb" or
	// "balance-alb".
	Mode string `json:"mode"`
	// HashPolicy is xmit_hash_policy's name ("layer2", "layer3+4",
	// "layer2+3", "encap2+3", "encap3+4", "vlan+srcmac"); "" when not
	// read.
	HashPolicy string `json:"xmit_hash_policy,omitempty"`
	// Slaves are the members, in the kernel's order.
	Slaves []string `json:"slaves,omitempty"`
	// ActiveSlave is the member carrying traffic in active-backup mode;
	// "" in the other modes or with no member up.
	ActiveSlave string `json:"active_slave,omitempty"`
}

// Bonding modes that hash each flow onto one member by xmit_hash_policy.
const (
	BondModeXOR          = "balance-xor"
	BondMode8023AD       = "802.3ad"
	BondModeActiveBackup = "active-backup"
)

// ParseBondSetting parses a bonding attribute the kernel writes as "NAME
// NUMBER" (mode, xmit_hash_policy, lacp_rate) and returns the name; ok is
// false for anything else.
func ParseBondSetting(s string) (name string, ok bool) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 || !validBondWord(f[0]) {
		return "", false
	}
	if len(f) == 2 {
		if _, err := strconv.ParseUint(f[1], 10, 8); err != nil {
			return "", false
		}
	}
	return f[0], true
}

func validBondWord(s string) bool {
	if len(s) > 32 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.') {
			return false
		}
	}
	return true
}

// ParseBondSlaves parses bonding/slaves: interface names separated by
// spaces. Names that cannot be interfaces are dropped, as are repeats.
func ParseBondSlaves(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range strings.Fields(s) {
		if validIfaceName(n) && !seen[n] && len(out) < 1024 {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// readBond fills NIC.Bond from the netdev's bonding/ directory; nil for
// an interface that is not a bonding master or whose mode cannot be read.
func (r *reader) readBond(dir string) {
	d := dir + "/bonding"
	s, err := r.root.ReadString(d + "/mode")
	if err != nil {
		return
	}
	mode, ok := ParseBondSetting(s)
	if !ok {
		r.missing("bond.mode", fmt.Errorf("not a bonding mode: %q", text.Clip(s)))
		return
	}
	b := &Bond{Mode: mode}
	if s, err := r.root.ReadString(d + "/xmit_hash_policy"); err == nil {
		b.HashPolicy, _ = ParseBondSetting(s)
	}
	if s, err := r.root.ReadString(d + "/slaves"); err == nil {
		b.Slaves = ParseBondSlaves(s)
	}
	if s, err := r.root.ReadString(d + "/active_slave"); err == nil {
		if a := strings.TrimSpace(s); validIfaceName(a) {
			b.ActiveSlave = a
		}
	}
	r.nic.Bond = b
}

// readLower fills NIC.Lower from the netdev's lower_IFACE links: the
// interfaces a VLAN, bond, team, macvlan or bridge sits on.
func (r *reader) readLower(dir string) {
	names, err := r.root.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range names {
		if l, ok := strings.CutPrefix(e, "lower_"); ok && validIfaceName(l) {
			r.nic.Lower = append(r.nic.Lower, l)
		}
	}
	sort.Strings(r.nic.Lower)
}
