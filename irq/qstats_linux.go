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
	netns string

	mu     sync.Mutex
	family uint16 // 0 until looked up
}

func (s *netdevQueueStats) counters(iface string) (queueCounters, error) {
	ns, err := openNetns(s.netns)
	if err != nil {
		return queueCounters{}, err
	}
	if ns.IsOpen() {
		defer ns.Close()
	}
	h := &netlink.Handle{} // no sockets of its own: the caller's namespace
	if ns.IsOpen() {
		if h, err = netlink.NewHandleAt(ns, unix.NETLINK_ROUTE, unix.NETLINK_GENERIC); err != nil {
			return queueCounters{}, err
		}
		defer h.Close()
	}
	link, err := h.LinkByName(iface)
	if err != nil {
		return queueCounters{}, fmt.Errorf("%s: %w", iface, err)
	}
	fam, err := s.familyID(h)
	if err != nil {
		return queueCounters{}, fmt.Errorf("%s: %w", iface, err)
	}
	idx := uint32(link.Attrs().Index)
	msgs, err := dumpQstats(ns, fam, idx)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL) {
			// EOPNOTSUPP: no QSTATS_GET (6.5 to 6.7); EINVAL: a policy
			// that refuses the request.
			return queueCounters{}, fmt.Errorf("%s: %w: %w", iface, errNoQstats, err)
		}
		return queueCounters{}, fmt.Errorf("%s: netdev qstats: %w", iface, err)
	}
	c, err := parseQstatsDump(msgs, idx)
	if err != nil {
		return queueCounters{}, fmt.Errorf("%s: %w", iface, err)
	}
	if len(c.RX) == 0 && len(c.TX) == 0 {
		return c, fmt.Errorf("%s: %w", iface, errNoQstats)
	}
	return c, nil
}

// maxQstatsMsgs bounds a dump (two rows per queue).
const maxQstatsMsgs = 4 * (maxQstatsQueue + 1)

// dumpQstats runs a queue-scope QSTATS_GET dump for ifindex in namespace ns
// (netns.None(): the caller's) and returns the payloads of its messages. It reads the replies itself: the kernel sends
// qstats rows without NLM_F_MULTI (genlmsg_iput), on which
// nl.NetlinkRequest.Execute stops after the first row.
func dumpQstats(ns netns.NsHandle, fam uint16, ifindex uint32) ([][]byte, error) {
	sock, err := nl.GetNetlinkSocketAt(ns, netns.None(), unix.NETLINK_GENERIC)
	if err != nil {
		return nil, err
	}
	defer sock.Close()
	if err := sock.SetSendTimeout(&nl.SocketTimeoutTv); err != nil {
		return nil, err
	}
	if err := sock.SetReceiveTimeout(&nl.SocketTimeoutTv); err != nil {
		return nil, err
	}
	req := nl.NewNetlinkRequest(int(fam), unix.NLM_F_DUMP)
	req.AddData(&nl.Genlmsg{Command: netdevCmdQstatsGet, Version: netdevFamilyVersion})
	req.AddData(nl.NewRtAttr(netdevAQstatsIfindex, nl.Uint32Attr(ifindex)))
	req.AddData(nl.NewRtAttr(netdevAQstatsScope, nl.Uint32Attr(netdevQstatsScopeQueue)))
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
				// A dump flagged NLM_F_DUMP_INTR (the queue set changed
				// meanwhile) still holds counters; the next sample reads
				// them again.
				return out, nil
			case fam:
				if len(out) >= maxQstatsMsgs {
					return nil, fmt.Errorf("%w: more than %d qstats rows", ErrMalformed, maxQstatsMsgs)
				}
				out = append(out, m.Data)
			}
		}
	}
}

// familyID looks the netdev family up once; generic netlink family ids are
// global, not per namespace.
func (s *netdevQueueStats) familyID(h *netlink.Handle) (uint16, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.family != 0 {
		return s.family, nil
	}
	f, err := h.GenlFamilyGet(netdevFamilyName)
	if err != nil {
		return 0, fmt.Errorf("%w: generic netlink family %q: %w", errNoQstats, netdevFamilyName, err)
	}
	if f.ID == 0 {
		return 0, fmt.Errorf("%w: family %q has id 0", errNoQstats, netdevFamilyName)
	}
	s.family = f.ID
	return f.ID, nil
}

// defaultQueueStats is the live default in the network namespace at netns
// ("": the caller's): netdev qstats for an interface whose kernel and
// driver report them, its ethtool statistics otherwise.
func defaultQueueStats(netns string) queueStatser {
	return firstQueueStats{&netdevQueueStats{netns: netns}, ethtoolQueueStats{netns: netns}}
}
