package irq

import (
	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// linkCounters are an interface's packet and byte counters since it came up.
type linkCounters struct {
	RXPackets, TXPackets, RXBytes, TXBytes, RXDropped uint64
}

// linkStatser reads an interface's counters by name.
type linkStatser interface {
	counters(iface string) (linkCounters, error)
}

// sysfsStats reads /sys/class/net/IFACE/statistics under the root (on the
// live host it sees the network namespace sysfs was mounted in).
type sysfsStats struct{ r fsroot.Root }

func (s sysfsStats) counters(iface string) (linkCounters, error) {
	var c linkCounters
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

// netlinkStats reads 64-bit counters over netlink in the network namespace
// whose file is at netns ("": the caller's), opening it at every read.
type netlinkStats struct{ netns string }

func (s netlinkStats) counters(iface string) (linkCounters, error) {
	h, err := netlinkHandle(s.netns)
	if err != nil {
		return linkCounters{}, err
	}
	defer h.Close()
	l, err := h.LinkByName(iface)
	if err != nil {
		return linkCounters{}, err
	}
	st := l.Attrs().Statistics
	if st == nil {
		return linkCounters{}, errf("%s: no statistics over netlink", iface)
	}
	return linkCounters{RXPackets: st.RxPackets, TXPackets: st.TxPackets, RXBytes: st.RxBytes,
		TXBytes: st.TxBytes, RXDropped: st.RxDropped}, nil
}
