package stack

import (
	"net"
	"strconv"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// addConntrack makes n UDP conntrack entries in the named namespace over
// ctnetlink and returns n.
func addConntrack(t *testing.T, name string, n int) int {
	t.Helper()
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for i := range n {
		f := &netlink.ConntrackFlow{FamilyType: unix.AF_INET, TimeOut: 300,
			Forward: netlink.IPTuple{SrcIP: net.ParseIP("10.1.1.1"), DstIP: net.ParseIP("10.1.1.2"), Protocol: unix.IPPROTO_UDP, SrcPort: uint16(1000 + i), DstPort: 53},
			Reverse: netlink.IPTuple{SrcIP: net.ParseIP("10.1.1.2"), DstIP: net.ParseIP("10.1.1.1"), Protocol: unix.IPPROTO_UDP, SrcPort: 53, DstPort: uint16(1000 + i)}}
		if err := h.ConntrackCreate(netlink.ConntrackTable, netlink.InetFamily(unix.AF_INET), f); err != nil {
			t.Skipf("ctnetlink: %v", err)
		}
	}
	return n
}

func itoa(i int) string { return strconv.Itoa(i) }
