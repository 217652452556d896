package nicinfo

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
)

// Forwarding says whether the host routes packets between its interfaces:
// the net.ipv4.ip_forward and net.ipv6.conf.all.forwarding sysctls (of the
// network namespace nicdiag runs in, on the live host). A nil field could
// not be read: a snapshot taken before nicdiag captured these files has
// neither.
type Forwarding struct {
	IPv4 *bool `json:"ipv4,omitempty"`
	IPv6 *bool `json:"ipv6,omitempty"`
}

// Sysctl files ReadForwarding reads; snapshot.Capture copies them.
const (
	IPv4ForwardFile = "/proc/sys/net/ipv4/ip_forward"
	IPv6ForwardFile = "/proc/sys/net/ipv6/conf/all/forwarding"
)

// On reports whether either family forwards.
func (f Forwarding) On() bool {
	return f.IPv4 != nil && *f.IPv4 || f.IPv6 != nil && *f.IPv6
}

// Known reports whether either sysctl was read.
func (f Forwarding) Known() bool { return f.IPv4 != nil || f.IPv6 != nil }

// ReadForwarding reads the forwarding sysctls under the root (option.Root).
// A file that is absent or unreadable leaves its field nil; one that does
// not hold an integer is an ErrMalformed error (the other field is still
// filled).
func ReadForwarding(opts ...Option) (Forwarding, error) {
	o := buildOptions(opts)
	var f Forwarding
	var errs []string
	for _, s := range []struct {
		file string
		dst  **bool
	}{{IPv4ForwardFile, &f.IPv4}, {IPv6ForwardFile, &f.IPv6}} {
		b, err := o.root.ReadFileMax(s.file, 64)
		if err != nil {
			continue // absent (an old snapshot, no IPv6) or unreadable: unknown
		}
		v, err := parseSysctlBool(string(b))
		if err != nil {
			errs = append(errs, s.file+": "+err.Error())
			continue
		}
		*s.dst = &v
	}
	if len(errs) > 0 {
		return f, wrapErr(fmt.Errorf("%w: %s", ErrMalformed, strings.Join(errs, "; ")))
	}
	return f, nil
}

// parseSysctlBool reads a sysctl integer ("1\n"): non-zero is on.
func parseSysctlBool(s string) (bool, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return false, fmt.Errorf("not an integer: %q", text.Clip(s))
	}
	return v != 0, nil
}

// ovsMaster is the master every Open vSwitch datapath port has.
const ovsMaster = "ovs-system"

// readBridge fills NIC.Bridge from the netdev's directory (a kernel
// path): its brport/ (a bridge port: the bridge is brport/bridge's target,
// else master's), its master's brport/ (a bond or team slave whose master
// is a bridge port), or an ovs-system master.
func (r *reader) readBridge(dir string) {
	bridgeOf := func(d string) string {
		if !r.root.Exists(d + "/brport") {
			return ""
		}
		for _, l := range []string{d + "/brport/bridge", d + "/master"} {
			if b, err := r.readLinkBase(l); err == nil && validIfaceName(b) {
				return b
			}
		}
		return "(unknown)" // a port whose bridge link is gone: still a port
	}
	if b := bridgeOf(dir); b != "" {
		r.nic.Bridge = b
		return
	}
	m, err := r.readLinkBase(dir + "/master")
	if err != nil || !validIfaceName(m) {
		return
	}
	if m == ovsMaster {
		r.nic.Bridge = m
		return
	}
	if up, err := r.root.Realpath("/sys/class/net/" + m); err == nil {
		r.nic.Bridge = bridgeOf(up)
	}
}
