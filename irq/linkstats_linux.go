package irq

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// linkDump is a reading's interface counters of every link, from one
// RTM_GETSTATS dump (while there are not too many links: then each
// interface is asked alone).
type linkDump struct {
	stats      map[uint32]linkCounters
	done, each bool
	err        error
}

// maxDumpLinks: above it, a reading asks each interface alone instead of
// dumping all.
const maxDumpLinks = 256

// linkStats reads iface's interface counters (RTM_GETSTATS with
// IFLA_STATS_LINK_64: the rtnl_link_stats64 the kernel's dev_get_stats
// fills, as sysfs's statistics files print them). In a reading they come
// from one dump of every link's.
func (c *nsConn) linkStats(iface string) (linkCounters, error) {
	idx, err := c.ifindex(iface)
	if err != nil {
		return linkCounters{}, err
	}
	conn, err := c.netlink(&c.route, unix.NETLINK_ROUTE)
	if err != nil {
		return linkCounters{}, err
	}
	if d := &c.link; c.inReading && !d.each {
		if !d.done {
			d.done = true
			d.err = c.dumpLinkStats()
		}
		if d.err != nil {
			return linkCounters{}, fmt.Errorf("%s: %w", iface, d.err)
		}
		if v, ok := d.stats[idx]; ok {
			return v, nil
		}
		// made after the dump: asked alone
	}
	c.msg.Start(unix.RTM_GETSTATS, 0, ifStatsMsg(idx))
	var out linkCounters
	found := false
	err = c.request(conn, false, func(typ uint16, p []byte) error {
		var err error
		_, out, found, err = parseLinkStats(typ, p)
		return err
	})
	if err != nil {
		return linkCounters{}, fmt.Errorf("%s: %w", iface, err)
	}
	if !found {
		return linkCounters{}, fmt.Errorf("%s: no statistics over netlink", iface)
	}
	return out, nil
}

// ifStatsMsg is struct if_stats_msg asking for ifindex's (0: every
// link's) IFLA_STATS_LINK_64.
func ifStatsMsg(ifindex uint32) []byte {
	var hdr [12]byte
	binary.NativeEndian.PutUint32(hdr[4:], ifindex)
	binary.NativeEndian.PutUint32(hdr[8:], 1<<(unix.IFLA_STATS_LINK_64-1))
	return hdr[:]
}

// dumpLinkStats reads every link's counters into c.link; with more links
// than maxDumpLinks, the next readings ask each interface alone.
func (c *nsConn) dumpLinkStats() error {
	d := &c.link
	if d.stats == nil {
		d.stats = map[uint32]linkCounters{}
	}
	clear(d.stats)
	c.msg.Start(unix.RTM_GETSTATS, unix.NLM_F_DUMP, ifStatsMsg(0))
	err := c.request(c.route, true, func(typ uint16, p []byte) error {
		idx, v, ok, err := parseLinkStats(typ, p)
		if ok {
			d.stats[idx] = v
		}
		return err
	})
	if len(d.stats) > maxDumpLinks {
		d.each = true
	}
	return err
}

// parseLinkStats reads an RTM_NEWSTATS message (struct if_stats_msg, then
// attributes): the link's index and its IFLA_STATS_LINK_64 counters; ok
// is false when it has none.
func parseLinkStats(typ uint16, p []byte) (idx uint32, out linkCounters, ok bool, err error) {
	const hdr = 12
	if typ != unix.RTM_NEWSTATS || len(p) < hdr {
		return 0, out, false, fmt.Errorf("%w: RTM_GETSTATS reply of type %d, %d bytes", ErrMalformed, typ, len(p))
	}
	idx = binary.NativeEndian.Uint32(p[4:])
	err = walkAttrs(p[hdr:], func(t uint16, v []byte) error {
		if t != unix.IFLA_STATS_LINK_64 {
			return nil
		}
		if len(v) < 16*8 {
			return fmt.Errorf("%w: rtnl_link_stats64 of %d bytes", ErrMalformed, len(v))
		}
		u := func(i int) uint64 { return binary.NativeEndian.Uint64(v[8*i:]) }
		// struct rtnl_link_stats64: rx_packets, tx_packets, rx_bytes,
		// tx_bytes, rx_errors, tx_errors, rx_dropped, tx_dropped,
		// multicast, collisions, rx_length_errors, rx_over_errors,
		// rx_crc_errors, rx_frame_errors, rx_fifo_errors,
		// rx_missed_errors, ...
		out = linkCounters{RXPackets: u(0), TXPackets: u(1), RXBytes: u(2), TXBytes: u(3), RXDropped: u(6),
			TXDropped: u(7), RXOverErrors: u(11), RXFIFOErrors: u(14), RXMissedErrors: u(15), Has: hasAllLinkLosses}
		ok = true
		return nil
	})
	if err != nil {
		return idx, linkCounters{}, false, err
	}
	return idx, out, ok, nil
}
