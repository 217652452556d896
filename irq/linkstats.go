package irq

import (
	"errors"
	"io/fs"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// linkCounters are an interface's packet and byte counters since it came up.
// The loss counters RXMissedErrors, RXFIFOErrors, RXOverErrors and TXDropped
// count only where Has says so (an older snapshot lacks their files).
type linkCounters struct {
	RXPackets, TXPackets, RXBytes, TXBytes, RXDropped uint64

	RXMissedErrors, RXFIFOErrors, RXOverErrors, TXDropped uint64
	Has                                                   linkHas
}

// linkHas says which optional counters of linkCounters were read.
type linkHas uint8

const (
	hasRXMissedErrors linkHas = 1 << iota
	hasRXFIFOErrors
	hasRXOverErrors
	hasTXDropped

	hasAllLinkLosses = hasRXMissedErrors | hasRXFIFOErrors | hasRXOverErrors | hasTXDropped
)

// linkStatser reads an interface's counters by name.
type linkStatser interface {
	counters(iface string) (linkCounters, error)
}

// sysfsStats reads /sys/class/net/IFACE/statistics under the root (on the
// live host it sees the network namespace sysfs was mounted in), into buf,
// reused: it is not safe for concurrent use.
type sysfsStats struct {
	r   fsroot.Root
	buf []byte
}

func (s *sysfsStats) counters(iface string) (linkCounters, error) {
	var c linkCounters
	dir := "/sys/class/net/" + iface + "/statistics/"
	for _, f := range []struct {
		name string
		dst  *uint64
		has  linkHas // 0: required
	}{
		{"rx_packets", &c.RXPackets, 0}, {"tx_packets", &c.TXPackets, 0},
		{"rx_bytes", &c.RXBytes, 0}, {"tx_bytes", &c.TXBytes, 0}, {"rx_dropped", &c.RXDropped, 0},
		{"rx_missed_errors", &c.RXMissedErrors, hasRXMissedErrors}, {"rx_fifo_errors", &c.RXFIFOErrors, hasRXFIFOErrors},
		{"rx_over_errors", &c.RXOverErrors, hasRXOverErrors}, {"tx_dropped", &c.TXDropped, hasTXDropped},
	} {
		var v int64
		var err error
		if v, s.buf, err = s.r.ReadIntInto(dir+f.name, s.buf); err != nil {
			if f.has != 0 && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return c, err
		}
		*f.dst = uint64(v)
		c.Has |= f.has
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
		TXBytes: st.TxBytes, RXDropped: st.RxDropped,
		RXMissedErrors: st.RxMissedErrors, RXFIFOErrors: st.RxFifoErrors, RXOverErrors: st.RxOverErrors,
		TXDropped: st.TxDropped, Has: hasAllLinkLosses}, nil
}
