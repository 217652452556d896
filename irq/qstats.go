package irq

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nicdiag/nicdiag/internal/genl"
)

// The netdev generic netlink family's queue statistics, from the kernel's
// include/uapi/linux/netdev.h (Linux 6.8 and later; virtio_net fills them
// since 6.10). Checked against a 6.18 kernel: the per-queue sums match
// /sys/class/net/IFACE/statistics (TestKernelNetdevQueueStatsEth0).
const (
	netdevFamilyName    = "netdev"
	netdevFamilyVersion = 1

	netdevCmdQstatsGet = 12 // NETDEV_CMD_QSTATS_GET

	netdevAQstatsIfindex   = 1  // NETDEV_A_QSTATS_IFINDEX, u32
	netdevAQstatsQueueType = 2  // NETDEV_A_QSTATS_QUEUE_TYPE, u32 enum netdev_queue_type
	netdevAQstatsQueueID   = 3  // NETDEV_A_QSTATS_QUEUE_ID, u32
	netdevAQstatsScope     = 4  // NETDEV_A_QSTATS_SCOPE, uint (enum netdev_qstats_scope)
	netdevAQstatsRxPackets = 8  // NETDEV_A_QSTATS_RX_PACKETS, uint
	netdevAQstatsRxBytes   = 9  // NETDEV_A_QSTATS_RX_BYTES, uint
	netdevAQstatsTxPackets = 10 // NETDEV_A_QSTATS_TX_PACKETS, uint
	netdevAQstatsTxBytes   = 11 // NETDEV_A_QSTATS_TX_BYTES, uint

	// Receive drop counters, read as losses. An
	// allocation failure may or may not drop a packet (netdev.yaml), and
	// counts as one.
	netdevAQstatsRxAllocFail      = 12 // NETDEV_A_QSTATS_RX_ALLOC_FAIL, uint
	netdevAQstatsRxHwDrops        = 13 // NETDEV_A_QSTATS_RX_HW_DROPS, uint
	netdevAQstatsRxHwDropOverruns = 14 // NETDEV_A_QSTATS_RX_HW_DROP_OVERRUNS, uint

	netdevQueueTypeRX = 0 // NETDEV_QUEUE_TYPE_RX
	netdevQueueTypeTX = 1 // NETDEV_QUEUE_TYPE_TX

	netdevQstatsScopeQueue = 1 // NETDEV_QSTATS_SCOPE_QUEUE

	genlHdrLen = genl.GenlHeaderLen // struct genlmsghdr

	// maxQstatsQueue bounds a queue id, as maxQueueDigits does for ethtool
	// names.
	maxQstatsQueue = 99999
)

// errNoQstats says the kernel or driver has no netdev queue statistics for
// an interface: the family or the command is missing, or the dump had no
// rows for it. The default source then reads ethtool statistics instead.
var errNoQstats = errors.New("no netdev queue statistics")

// qstatsLosses are the loss counters of a qstats row, by LossRate.Name,
// in qstatsRow.losses order.
var qstatsLosses = [...]string{lossQstats + "rx-alloc-fail", lossQstats + "rx-hw-drops", lossQstats + "rx-hw-drop-overruns"}

// qstatsAcc gathers the rows of one interface of a qstats dump, message
// by message, into out, whose maps it reuses. Rows of other interfaces
// are skipped; a counter absent from a row is one the driver does not
// fill. The loss counters (qstatsLosses) are summed over the rows that
// have them, into Losses; a queue-scope dump leaves out what a driver
// counts outside its queues (its base statistics), so the sums can fall
// short of the device's.
type qstatsAcc struct {
	out     *queueCounters
	ifindex uint32
	seen    map[[2]uint32]bool
	n       int // messages added
}

// reset empties out's maps (making them where nil) for a new dump.
func (a *qstatsAcc) reset() {
	a.out.reset()
	if a.seen == nil {
		a.seen = map[[2]uint32]bool{}
	}
	clear(a.seen)
	a.n = 0
}

// reset empties q for new counters, making its maps where nil.
func (q *queueCounters) reset() {
	if q.RX == nil {
		q.RX = map[int]queueCounter{}
	}
	if q.TX == nil {
		q.TX = map[int]queueCounter{}
	}
	if q.Losses == nil {
		q.Losses = lossCounters{}
	}
	q.clear()
}

// add adds one message of the dump.
func (a *qstatsAcc) add(m []byte) error {
	i := a.n
	r, err := parseQstatsMsg(m)
	if err != nil {
		a.n++
		return fmt.Errorf("netdev qstats message %d: %w", i, err)
	}
	return a.addRow(&r)
}

// addRow adds one parsed message of the dump.
func (a *qstatsAcc) addRow(r *qstatsRow) error {
	i := a.n
	a.n++
	if r.ifindex != a.ifindex {
		return nil
	}
	key := [2]uint32{r.qtype, r.qid}
	if a.seen[key] {
		return fmt.Errorf("netdev qstats message %d: %w: queue %d type %d twice", i, ErrMalformed, r.qid, r.qtype)
	}
	a.seen[key] = true
	dst := a.out.RX
	c := queueCounter{Packets: r.rxPackets, Bytes: r.rxBytes, HasPackets: r.has&hasRXPackets != 0, HasBytes: r.has&hasRXBytes != 0}
	if r.qtype == netdevQueueTypeTX {
		dst = a.out.TX
		c = queueCounter{Packets: r.txPackets, Bytes: r.txBytes, HasPackets: r.has&hasTXPackets != 0, HasBytes: r.has&hasTXBytes != 0}
	}
	if c.HasPackets || c.HasBytes {
		dst[int(r.qid)] = c
	}
	for j, name := range qstatsLosses {
		if r.has&(hasRXAllocFail<<j) != 0 {
			l := a.out.Losses[name]
			a.out.Losses[name] = lossCounter{LossNIC, l.Value + r.losses[j]}
		}
	}
	return nil
}

// qstatsRow is one message of a queue-scope qstats dump.
type qstatsRow struct {
	ifindex, qtype, qid                    uint32
	rxPackets, rxBytes, txPackets, txBytes uint64
	losses                                 [len(qstatsLosses)]uint64
	has                                    uint16
}

const (
	hasIfindex = 1 << iota
	hasQtype
	hasQid
	hasRXPackets
	hasRXBytes
	hasTXPackets
	hasTXBytes
	hasRXAllocFail // then one bit per qstatsLosses entry
	hasRXHwDrops
	hasRXHwDropOverruns
)

// parseQstatsMsg reads one qstats message: a genlmsghdr and flat
// attributes. It needs ifindex, queue type (rx or tx) and queue id; unknown
// attributes are skipped.
func parseQstatsMsg(b []byte) (qstatsRow, error) {
	var r qstatsRow
	if len(b) < genlHdrLen {
		return r, fmt.Errorf("%w: %d bytes, shorter than a genlmsghdr", ErrMalformed, len(b))
	}
	if b[0] != netdevCmdQstatsGet {
		return r, fmt.Errorf("%w: command %d, not QSTATS_GET", ErrMalformed, b[0])
	}
	err := walkAttrs(b[genlHdrLen:], func(typ uint16, v []byte) error {
		var err error
		switch typ {
		case netdevAQstatsIfindex:
			r.ifindex, err = attrU32(v)
			r.has |= hasIfindex
		case netdevAQstatsQueueType:
			r.qtype, err = attrU32(v)
			r.has |= hasQtype
		case netdevAQstatsQueueID:
			r.qid, err = attrU32(v)
			r.has |= hasQid
		case netdevAQstatsRxPackets:
			r.rxPackets, err = attrUint(v)
			r.has |= hasRXPackets
		case netdevAQstatsRxBytes:
			r.rxBytes, err = attrUint(v)
			r.has |= hasRXBytes
		case netdevAQstatsTxPackets:
			r.txPackets, err = attrUint(v)
			r.has |= hasTXPackets
		case netdevAQstatsTxBytes:
			r.txBytes, err = attrUint(v)
			r.has |= hasTXBytes
		case netdevAQstatsRxAllocFail, netdevAQstatsRxHwDrops, netdevAQstatsRxHwDropOverruns:
			j := typ - netdevAQstatsRxAllocFail
			r.losses[j], err = attrUint(v)
			r.has |= hasRXAllocFail << j
		}
		if err != nil {
			return fmt.Errorf("attribute %d: %w", typ, err)
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	const need = hasIfindex | hasQtype | hasQid
	if r.has&need != need {
		return r, fmt.Errorf("%w: row without ifindex, queue type or queue id", ErrMalformed)
	}
	if r.ifindex == 0 {
		return r, fmt.Errorf("%w: ifindex 0", ErrMalformed)
	}
	if r.qtype != netdevQueueTypeRX && r.qtype != netdevQueueTypeTX {
		return r, fmt.Errorf("%w: queue type %d", ErrMalformed, r.qtype)
	}
	if r.qid > maxQstatsQueue {
		return r, fmt.Errorf("%w: queue id %d", ErrMalformed, r.qid)
	}
	return r, nil
}

// walkAttrs calls f with the type (flags masked off) and value of each
// netlink attribute in b (genl.Attrs). An attribute whose length is below
// the header or past the end of b is an error wrapping ErrMalformed; the
// padding after the last one may be missing.
func walkAttrs(b []byte, f func(typ uint16, v []byte) error) error {
	return netlinkErr(genl.Attrs(b, f))
}

func attrU32(v []byte) (uint32, error) {
	if len(v) != 4 {
		return 0, fmt.Errorf("%w: u32 of %d bytes", ErrMalformed, len(v))
	}
	return binary.NativeEndian.Uint32(v), nil
}

// attrUint reads an NLA_UINT: the kernel writes 4 bytes when the value fits
// in 32 bits, else 8.
func attrUint(v []byte) (uint64, error) {
	switch len(v) {
	case 4:
		return uint64(binary.NativeEndian.Uint32(v)), nil
	case 8:
		return binary.NativeEndian.Uint64(v), nil
	}
	return 0, fmt.Errorf("%w: uint of %d bytes", ErrMalformed, len(v))
}

// firstQueueStats asks primary and, where it has nothing for an interface,
// fallback.
type firstQueueStats struct{ primary, fallback queueStatser }

func (s firstQueueStats) counters(iface string) (queueCounters, error) {
	c, err := s.primary.counters(iface)
	if err == nil && (len(c.RX) > 0 || len(c.TX) > 0) {
		return c, nil
	}
	return s.fallback.counters(iface)
}

// countersInto is counters into dst, reusing its maps, when both sources
// can.
func (s firstQueueStats) countersInto(iface string, dst *queueCounters) error {
	p, ok1 := s.primary.(queueStatsInto)
	f, ok2 := s.fallback.(queueStatsInto)
	if !ok1 || !ok2 {
		c, err := s.counters(iface)
		*dst = c
		return err
	}
	if err := p.countersInto(iface, dst); err == nil && (len(dst.RX) > 0 || len(dst.TX) > 0) {
		return nil
	}
	return f.countersInto(iface, dst)
}
