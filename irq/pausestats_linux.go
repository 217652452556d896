package irq

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ethtoolPauseStats reads a NIC's pause frame counters over ethtool netlink
// (ETHTOOL_MSG_PAUSE_GET with ETHTOOL_FLAG_STATS, Linux 5.11 and later):
// one request per call, on a socket opened, like the namespace, per call
// in the network namespace whose file is at netns ("": the caller's).
//
// A kernel without the ethtool family, a driver without pause parameters
// (EOPNOTSUPP: veth, virtio_net) or without pause statistics (an empty
// nest: igb, igc, e1000e) yields no counters, and that is no error.
type ethtoolPauseStats struct {
	netns  string
	family genlFamily
	// none are the interfaces that answered without counters: a driver
	// does not gain pause statistics while it runs, so they are not asked
	// again (a request costs a netlink handle and a socket).
	none map[string]bool
	conn *nsConn // when set, its kept socket is used (the live default)
}

func (s *ethtoolPauseStats) losses(iface string) (lossCounters, error) {
	if s.none[iface] {
		return nil, nil
	}
	p, err := s.counts(iface)
	if err == nil && !p.HasTX && !p.HasRX && len(s.none) < maxNoPause {
		if s.none == nil {
			s.none = map[string]bool{}
		}
		s.none[iface] = true
	}
	if err != nil || !p.HasTX && !p.HasRX {
		return nil, err
	}
	out := lossCounters{}
	p.losses(out)
	return out, nil
}

// counts reads iface's pause counters; pauseCounts{} where the kernel or
// driver has none.
func (s *ethtoolPauseStats) counts(iface string) (pauseCounts, error) {
	if s.conn != nil {
		return s.conn.pauseCounts(&s.family, iface)
	}
	var p pauseCounts
	err := linkInNetns(s.netns, iface, func(ns netns.NsHandle, h *netlink.Handle, idx uint32) error {
		fam, err := s.family.id(h, ethtoolFamilyName)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				return nil // no ethtool netlink (before 5.6, or ETHTOOL_NETLINK=n)
			}
			return fmt.Errorf("%s: %w", iface, err)
		}
		msgs, err := pauseGet(ns, fam, idx)
		if errors.Is(err, unix.EOPNOTSUPP) {
			return nil // no get_pauseparam
		}
		if err != nil {
			return fmt.Errorf("%s: ethtool pause: %w", iface, err)
		}
		if len(msgs) != 1 {
			return fmt.Errorf("%s: ethtool pause: %w: %d replies", iface, ErrMalformed, len(msgs))
		}
		if p, err = parsePauseStats(msgs[0]); err != nil {
			return fmt.Errorf("%s: ethtool pause: %w", iface, err)
		}
		return nil
	})
	return p, err
}

// pauseGet sends PAUSE_GET for ifindex, with statistics, and returns the
// replies (one, then the ack).
func pauseGet(ns netns.NsHandle, fam uint16, ifindex uint32) ([][]byte, error) {
	hdr := nl.NewRtAttr(unix.NLA_F_NESTED|ethtoolAPauseHeader, nil)
	hdr.AddRtAttr(ethtoolAHeaderDevIndex, nl.Uint32Attr(ifindex))
	hdr.AddRtAttr(ethtoolAHeaderFlags, nl.Uint32Attr(ethtoolFlagStats))
	return genlRequest(ns, fam, unix.NLM_F_ACK, 1,
		genlHeader{ethtoolMsgPauseGet, ethtoolFamilyVersion}, hdr)
}

// defaultPauseStats is the live default in the network namespace at netns
// ("": the caller's).
// maxNoPause bounds the interfaces remembered as without pause counters.
const maxNoPause = 4096

func defaultPauseStats(netns string, conn ...*nsConn) lossStatser {
	p := &ethtoolPauseStats{netns: netns}
	if len(conn) > 0 {
		p.conn = conn[0]
	}
	return p
}
