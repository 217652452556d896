package irq

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ethtoolPauseStats reads a NIC's pause frame counters over ethtool netlink
// (ETHTOOL_MSG_PAUSE_GET with ETHTOOL_FLAG_STATS, Linux 5.11 and later),
// one request per call over conn.
//
// A kernel without the ethtool family, a driver without pause parameters
// (EOPNOTSUPP: veth, virtio_net) or without pause statistics (an empty
// nest: igb, igc, e1000e) yields no counters, and that is no error.
type ethtoolPauseStats struct {
	conn   *nsConn
	family genlFamily
	// none are the interfaces that answered without counters: a driver
	// does not gain pause statistics while it runs, so they are not asked
	// again.
	none map[string]bool
}

// maxNoPause bounds the interfaces remembered as without pause counters.
const maxNoPause = 4096

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
	c := s.conn
	var p pauseCounts
	idx, err := c.ifindex(iface)
	if err != nil {
		return p, err
	}
	conn, fam, err := c.genlFamilyID(&s.family, ethtoolFamilyName)
	switch {
	case conn != nil && errors.Is(err, unix.ENOENT):
		return p, nil // no ethtool netlink (before 5.6, or ETHTOOL_NETLINK=n)
	case err != nil:
		return p, fmt.Errorf("%s: %w", iface, err)
	}
	c.msg.Genl(fam, unix.NLM_F_ACK, ethtoolMsgPauseGet, ethtoolFamilyVersion)
	at := c.msg.Nest(ethtoolAPauseHeader)
	c.msg.U32(ethtoolAHeaderDevIndex, idx)
	c.msg.U32(ethtoolAHeaderFlags, ethtoolFlagStats)
	c.msg.End(at)
	replies := 0
	err = c.request(conn, true, func(typ uint16, b []byte) error {
		if typ != fam {
			return nil
		}
		replies++
		var err error
		p, err = parsePauseStats(b)
		return err
	})
	switch {
	case errors.Is(err, unix.EOPNOTSUPP):
		return pauseCounts{}, nil // no get_pauseparam
	case err != nil:
		return pauseCounts{}, fmt.Errorf("%s: ethtool pause: %w", iface, err)
	case replies != 1:
		return pauseCounts{}, fmt.Errorf("%s: ethtool pause: %w: %d replies", iface, ErrMalformed, replies)
	}
	return p, nil
}

// defaultPauseStats is the live default over conn.
func defaultPauseStats(conn *nsConn) lossStatser {
	return &ethtoolPauseStats{conn: conn}
}
