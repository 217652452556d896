package irq

import (
	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/vishvananda/netlink"
)

// LinkCounters are an interface's packet and byte counters since it came up.
type LinkCounters struct {
	RXPackets, TXPackets, RXBytes, TXBytes, RXDropped uint64
}

// LinkStatser reads an interface's counters by name.
type LinkStatser interface {
	LinkCounters(iface string) (LinkCounters, error)
}

// SysfsStats reads /sys/class/net/IFACE/statistics under root ("/" for the
// live host, where it sees the network namespace sysfs was mounted in).
func SysfsStats(root string) LinkStatser { return sysfsStats{fsroot.New(root)} }

type sysfsStats struct{ r fsroot.Root }

func (s sysfsStats) LinkCounters(iface string) (LinkCounters, error) {
	var c LinkCounters
	dir := "/sys/class/net/" + iface + "/statistics/"
	for _, f := range []struct {
		name string
		dst  *uint64
	}{
		{"rx_packets", &c.RXPackets}, {"tx_packets", &c.TXPackets},
		{"rx_bytes", &c.RXBytes}, {"tx_bytes", &c.TXBytes}, {"rx_dropped", &c.RXDropped},
	} {
		v, err := s.r.ReadInt(dir + f.name)
		if err != nil {
			return c, err
		}
		*f.dst = uint64(v)
	}
	return c, nil
}

// NetlinkStats reads 64-bit counters over netlink through h, which may be
// bound to another network namespace (netlink.NewHandleAt). A nil h uses
// the caller's namespace.
func NetlinkStats(h *netlink.Handle) LinkStatser { return netlinkStats{h} }

type netlinkStats struct{ h *netlink.Handle }

func (s netlinkStats) LinkCounters(iface string) (LinkCounters, error) {
	var l netlink.Link
	var err error
	if s.h != nil {
		l, err = s.h.LinkByName(iface)
	} else {
		l, err = netlink.LinkByName(iface)
	}
	if err != nil {
		return LinkCounters{}, err
	}
	st := l.Attrs().Statistics
	if st == nil {
		return LinkCounters{}, errf("%s: no statistics over netlink", iface)
	}
	return LinkCounters{RXPackets: st.RxPackets, TXPackets: st.TxPackets, RXBytes: st.RxBytes,
		TXBytes: st.TxBytes, RXDropped: st.RxDropped}, nil
}
