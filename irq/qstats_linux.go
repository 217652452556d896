package irq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// netdevQueueStats reads per-queue counters from the kernel's netdev
// generic netlink family (NETDEV_CMD_QSTATS_GET at queue scope, Linux 6.8
// and later; what `ynl --family netdev --dump qstats-get` prints). It is
// the only per-queue source for virtio_net since 6.10, and drivers that
// fill it (mlx5, bnxt_en, gve, ice, ...) need no ethtool name parsing.
//
// netns is the file of the network namespace to read ("": the caller's);
// it is opened, like the sockets, at every call.
//
// An interface the kernel reports no queue statistics for (no netdev
// family, no QSTATS_GET command, or a driver without them) yields an error
// wrapping errNoQstats; the default source then reads ethtool instead.
type netdevQueueStats struct {
	netns  string
	family genlFamily
	conn   *nsConn // when set, its kept socket is used (the live default)
}

// countersInto is counters into dst, reusing its maps.
func (s *netdevQueueStats) countersInto(iface string, dst *queueCounters) error {
	if s.conn == nil {
		c, err := s.counters(iface)
		*dst = c
		return err
	}
	return s.conn.qstatsInto(&s.family, iface, dst)
}

func (s *netdevQueueStats) counters(iface string) (queueCounters, error) {
	if s.conn != nil {
		var c queueCounters
		if err := s.countersInto(iface, &c); err != nil {
			if err == errNoQstats {
				err = fmt.Errorf("%s: %w", iface, err)
			}
			return queueCounters{}, err
		}
		return c, nil
	}
	var c queueCounters
	err := linkInNetns(s.netns, iface, func(ns netns.NsHandle, h *netlink.Handle, idx uint32) error {
		fam, err := s.familyID(h)
		if err != nil {
			return fmt.Errorf("%s: %w", iface, err)
		}
		msgs, err := genlRequest(ns, fam, unix.NLM_F_DUMP, maxQstatsMsgs,
			genlHeader{netdevCmdQstatsGet, netdevFamilyVersion},
			nl.NewRtAttr(netdevAQstatsIfindex, nl.Uint32Attr(idx)),
			nl.NewRtAttr(netdevAQstatsScope, nl.Uint32Attr(netdevQstatsScopeQueue)))
		if err != nil {
			if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL) {
				// EOPNOTSUPP: no QSTATS_GET (6.5 to 6.7); EINVAL: a policy
				// that refuses the request.
				return fmt.Errorf("%s: %w: %w", iface, errNoQstats, err)
			}
			return fmt.Errorf("%s: netdev qstats: %w", iface, err)
		}
		if c, err = parseQstatsDump(msgs, idx); err != nil {
			return fmt.Errorf("%s: %w", iface, err)
		}
		return nil
	})
	if err != nil {
		return queueCounters{}, err
	}
	if len(c.RX) == 0 && len(c.TX) == 0 {
		return c, fmt.Errorf("%s: %w", iface, errNoQstats)
	}
	return c, nil
}

// linkInNetns opens the network namespace whose file is at path ("": the
// caller's) and a netlink handle in it, looks iface up there and calls f
// with them and its index. Everything is opened per call and closed
// before it returns.
func linkInNetns(path, iface string, f func(ns netns.NsHandle, h *netlink.Handle, ifindex uint32) error) error {
	ns, err := openNetns(path)
	if err != nil {
		return err
	}
	if ns.IsOpen() {
		defer ns.Close()
	}
	h := &netlink.Handle{} // no sockets of its own: the caller's namespace
	if ns.IsOpen() {
		if h, err = netlink.NewHandleAt(ns, unix.NETLINK_ROUTE, unix.NETLINK_GENERIC); err != nil {
			return err
		}
		defer h.Close()
	}
	link, err := h.LinkByName(iface)
	if err != nil {
		return fmt.Errorf("%s: %w", iface, err)
	}
	return f(ns, h, uint32(link.Attrs().Index))
}

// maxQstatsMsgs bounds a dump (two rows per queue).
const maxQstatsMsgs = 4 * (maxQstatsQueue + 1)

// genlRequest sends a generic netlink request of family fam (its
// genlmsghdr and attributes in data) in namespace ns (netns.None(): the
// caller's), on a socket of its own, and returns the payloads of the
// replies up to the NLMSG_DONE, or the NLMSG_ERROR that ends them (a dump
// ends with the one, a request flagged NLM_F_ACK with the other); more
// than max replies is an error. It reads the replies itself: the kernel
// sends qstats rows without NLM_F_MULTI (genlmsg_iput), on which
// nl.NetlinkRequest.Execute stops after the first row.
func genlRequest(ns netns.NsHandle, fam uint16, flags, max int, data ...nl.NetlinkRequestData) ([][]byte, error) {
	sock, err := genlSocket(ns)
	if err != nil {
		return nil, err
	}
	defer sock.Close()
	return genlRequestOn(sock, fam, flags, max, data...)
}

// genlHeader is a struct genlmsghdr for a request: command, version and
// a reserved u16 that must be 0. nl.Genlmsg is not used: its Serialize
// views the 2-byte struct as 4 bytes, sending whatever follows it in
// memory as "reserved", which a 6.18 kernel answers with EINVAL (the
// qstats of eth0 here failed so at random).
type genlHeader struct{ cmd, version uint8 }

func (h genlHeader) Len() int          { return genlHdrLen }
func (h genlHeader) Serialize() []byte { return []byte{h.cmd, h.version, 0, 0} }

// genlSocket opens a generic netlink socket in namespace ns (netns.None():
// the caller's), with the send and receive timeouts of package nl.
func genlSocket(ns netns.NsHandle) (*nl.NetlinkSocket, error) {
	sock, err := nl.GetNetlinkSocketAt(ns, netns.None(), unix.NETLINK_GENERIC)
	if err != nil {
		return nil, err
	}
	if err := sock.SetSendTimeout(&nl.SocketTimeoutTv); err != nil {
		sock.Close()
		return nil, err
	}
	if err := sock.SetReceiveTimeout(&nl.SocketTimeoutTv); err != nil {
		sock.Close()
		return nil, err
	}
	return sock, nil
}

// genlRequestOn is genlRequest on sock, a socket kept open between
// requests: replies to an earlier request that gave up (a timeout) are
// told apart by their sequence number and skipped.
func genlRequestOn(sock *nl.NetlinkSocket, fam uint16, flags, max int, data ...nl.NetlinkRequestData) ([][]byte, error) {
	req := nl.NewNetlinkRequest(int(fam), flags)
	for _, d := range data {
		req.AddData(d)
	}
	if err := sock.Send(req); err != nil {
		return nil, err
	}
	pid, err := sock.GetPid()
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		msgs, from, err := sock.Receive()
		if err != nil {
			return nil, err
		}
		if from.Pid != nl.PidKernel {
			continue
		}
		for _, m := range msgs {
			if m.Header.Seq != req.Seq || m.Header.Pid != pid {
				continue
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE, unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					if m.Header.Type == unix.NLMSG_DONE {
						return out, nil
					}
					return nil, fmt.Errorf("%w: short NLMSG_ERROR", ErrMalformed)
				}
				if errno := int32(binary.NativeEndian.Uint32(m.Data[:4])); errno < 0 {
					return nil, unix.Errno(-errno)
				}
				// An ack, or the end of a dump; one flagged
				// NLM_F_DUMP_INTR (the queue set changed meanwhile) still
				// holds counters, and the next sample reads them again.
				return out, nil
			case fam:
				if len(out) >= max {
					return nil, fmt.Errorf("%w: more than %d replies", ErrMalformed, max)
				}
				out = append(out, m.Data)
			}
		}
	}
}

// familyID looks the netdev family up once.
func (s *netdevQueueStats) familyID(h *netlink.Handle) (uint16, error) {
	id, err := s.family.id(h, netdevFamilyName)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errNoQstats, err)
	}
	return id, nil
}

// genlFamily is a generic netlink family's id, looked up by name on first
// use; family ids are global, not per namespace. A failed lookup is not
// kept: the next call asks again.
type genlFamily struct {
	mu sync.Mutex
	v  uint16 // 0 until looked up
}

// known returns the id when it was looked up already, else 0.
func (f *genlFamily) known() uint16 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.v
}

func (f *genlFamily) id(h *netlink.Handle, name string) (uint16, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.v != 0 {
		return f.v, nil
	}
	g, err := h.GenlFamilyGet(name)
	if err != nil {
		return 0, fmt.Errorf("generic netlink family %q: %w", name, err)
	}
	if g.ID == 0 {
		return 0, fmt.Errorf("generic netlink family %q has id 0", name)
	}
	f.v = g.ID
	return g.ID, nil
}

// defaultQueueStats is the live default in the network namespace at netns
// ("": the caller's): netdev qstats for an interface whose kernel and
// driver report them, its ethtool statistics otherwise; asked over conn's
// kept sockets when conn is set.
func defaultQueueStats(netns string, conn ...*nsConn) queueStatser {
	var c *nsConn
	if len(conn) > 0 {
		c = conn[0]
	}
	return firstQueueStats{&netdevQueueStats{netns: netns, conn: c}, ethtoolQueueStats{netns: netns, conn: c}}
}
