package irq

import (
	"errors"
	"fmt"
	"sync"

	"github.com/nicdiag/nicdiag/internal/genl"
	"golang.org/x/sys/unix"
)

// netdevQueueStats reads per-queue counters from the kernel's netdev
// generic netlink family (NETDEV_CMD_QSTATS_GET at queue scope, Linux 6.8
// and later; what `ynl --family netdev --dump qstats-get` prints) over
// conn. It is the only per-queue source for virtio_net since 6.10, and
// drivers that fill it (mlx5, bnxt_en, gve, ice, ...) need no ethtool
// name parsing.
//
// An interface the kernel reports no queue statistics for (no netdev
// family, no QSTATS_GET command, or a driver without them) yields an error
// wrapping errNoQstats; the default source then reads ethtool instead.
type netdevQueueStats struct {
	conn   *nsConn
	family genlFamily
}

// countersInto is counters into dst, reusing its maps.
func (s *netdevQueueStats) countersInto(iface string, dst *queueCounters) error {
	return s.conn.qstatsInto(&s.family, iface, dst)
}

func (s *netdevQueueStats) counters(iface string) (queueCounters, error) {
	var c queueCounters
	if err := s.countersInto(iface, &c); err != nil {
		if err == errNoQstats {
			err = fmt.Errorf("%s: %w", iface, err)
		}
		return queueCounters{}, err
	}
	return c, nil
}

// maxQstatsMsgs bounds a dump (two rows per queue).
const maxQstatsMsgs = 4 * (maxQstatsQueue + 1)

// maxDumpQueues: above it, a reading asks each interface alone instead of
// dumping all.
const maxDumpQueues = 4096

// qstatsDump is a reading's queue statistics rows of every interface,
// from one dump (while there are not too many: then each interface is
// asked alone).
type qstatsDump struct {
	acc        qstatsAcc
	rows       []qstatsRow
	done, each bool
	err        error
}

// genlFamily is a generic netlink family's id, looked up by name on first
// use; family ids are global, not per namespace. A failed lookup is not
// kept: the next call asks again.
type genlFamily struct {
	mu sync.Mutex
	v  uint16 // 0 until looked up
}

func (f *genlFamily) id(conn *genl.Conn, name string) (uint16, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.v != 0 {
		return f.v, nil
	}
	id, err := conn.FamilyID(name)
	if err != nil {
		return 0, netlinkErr(err)
	}
	f.v = id
	return id, nil
}

// genlFamilyID returns the generic netlink socket and the id of family
// name on it.
func (c *nsConn) genlFamilyID(f *genlFamily, name string) (*genl.Conn, uint16, error) {
	conn, err := c.netlink(&c.gen, unix.NETLINK_GENERIC)
	if err != nil {
		return nil, 0, err
	}
	id, err := f.id(conn, name)
	return conn, id, err
}

// qstatsInto reads iface's netdev queue statistics (one QSTATS_GET dump
// at queue scope) into dst, reusing its maps; an interface without rows,
// or a kernel without them, is errNoQstats itself (unwrapped: the default
// source falls back to ethtool at every reading, and makes no message for
// it). In a reading the rows come from one dump of every interface's.
func (c *nsConn) qstatsInto(f *genlFamily, iface string, dst *queueCounters) error {
	idx, err := c.ifindex(iface)
	if err != nil {
		return err
	}
	conn, fam, err := c.genlFamilyID(f, netdevFamilyName)
	if err != nil {
		if conn == nil {
			return err
		}
		return errNoQstats
	}
	d := &c.q
	d.acc.out, d.acc.ifindex = dst, idx
	d.acc.reset()
	if c.inReading && !d.each && !d.done {
		d.done = true
		if d.err = c.dumpQstats(conn, fam); d.err != nil {
			// One interface's failure ends a dump of all: each is asked
			// alone from now on.
			d.each = true
		}
	}
	if c.inReading && !d.each {
		for i := 0; err == nil && i < len(d.rows); i++ {
			err = d.acc.addRow(&d.rows[i])
		}
	} else {
		err = c.qstatsOf(conn, fam, idx)
	}
	d.acc.out = nil
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL) {
			// EOPNOTSUPP: no QSTATS_GET (6.5 to 6.7); EINVAL: a policy
			// that refuses the request. The caller falls back.
			return errNoQstats
		}
		return fmt.Errorf("%s: netdev qstats: %w", iface, err)
	}
	if len(dst.RX) == 0 && len(dst.TX) == 0 {
		return errNoQstats
	}
	return nil
}

// qstatsStart begins a QSTATS_GET dump at queue scope.
func (c *nsConn) qstatsStart(fam uint16) {
	c.msg.Genl(fam, unix.NLM_F_DUMP, netdevCmdQstatsGet, netdevFamilyVersion)
	c.msg.U32(netdevAQstatsScope, netdevQstatsScopeQueue)
}

// qstatsOf dumps the rows of the interface ifindex into c.q.acc.
func (c *nsConn) qstatsOf(conn *genl.Conn, fam uint16, ifindex uint32) error {
	c.qstatsStart(fam)
	c.msg.U32(netdevAQstatsIfindex, ifindex)
	rows := 0
	return c.request(conn, true, func(typ uint16, p []byte) error {
		if typ != fam {
			return nil
		}
		if rows++; rows > maxQstatsMsgs {
			return fmt.Errorf("%w: more than %d replies", ErrMalformed, maxQstatsMsgs)
		}
		return c.q.acc.add(p)
	})
}

// dumpQstats reads the queue statistics rows of every interface into
// c.q.rows; with more rows than maxDumpQueues, the next readings ask each
// interface alone.
func (c *nsConn) dumpQstats(conn *genl.Conn, fam uint16) error {
	d := &c.q
	d.rows = d.rows[:0]
	c.qstatsStart(fam)
	err := c.request(conn, true, func(typ uint16, p []byte) error {
		if typ != fam {
			return nil
		}
		if len(d.rows) >= maxQstatsMsgs {
			return fmt.Errorf("%w: more than %d replies", ErrMalformed, maxQstatsMsgs)
		}
		r, err := parseQstatsMsg(p)
		if err != nil {
			return fmt.Errorf("netdev qstats message %d: %w", len(d.rows), err)
		}
		d.rows = append(d.rows, r)
		return nil
	})
	if len(d.rows) > maxDumpQueues {
		d.each = true
	}
	return err
}

// defaultQueueStats is the live default over conn: netdev qstats for an
// interface whose kernel and driver report them, its ethtool statistics
// otherwise.
func defaultQueueStats(conn *nsConn) queueStatser {
	return firstQueueStats{&netdevQueueStats{conn: conn}, ethtoolQueueStats{conn: conn}}
}
