package irq

import (
	"strings"
)

// queueCounter is one direction of one queue: packets and bytes since the
// driver started counting. HasPackets and HasBytes say which of the two the
// driver exposes (sfc, for one, counts packets only).
type queueCounter struct {
	Packets, Bytes       uint64
	HasPackets, HasBytes bool
}

// queueCounters are a NIC's per-queue counters, by queue number. Both maps
// are empty when the driver exposes no per-queue counters.
type queueCounters struct {
	RX map[int]queueCounter
	TX map[int]queueCounter
	// Losses are the loss counters the same read returned, by
	// LossRate.Name: netdev qstats drop counters summed over the queues, or
	// the driver's ethtool loss counters (see lossClass).
	Losses lossCounters
	// Ethtool says the read was of the driver's ethtool statistics: their
	// loss counters are in Losses and need no second read.
	Ethtool bool
}

// queueStatser reads a NIC's per-queue counters by interface name.
type queueStatser interface {
	counters(iface string) (queueCounters, error)
}

// queueStatsFunc adapts a function to queueStatser.
type queueStatsFunc func(iface string) (queueCounters, error)

func (f queueStatsFunc) counters(iface string) (queueCounters, error) { return f(iface) }

// ethtoolQueueStats reads per-queue counters from the driver's ethtool
// statistics (ETHTOOL_GSTATS, what `ethtool -S` prints) over conn and
// keeps those parseQueueStatName understands, and the loss counters
// lossClass knows. A driver without ethtool statistics yields empty
// counters, not an error.
type ethtoolQueueStats struct {
	conn *nsConn
}

func (s ethtoolQueueStats) counters(iface string) (queueCounters, error) {
	var c queueCounters
	if err := s.countersInto(iface, &c); err != nil {
		return queueCounters{}, err
	}
	return c, nil
}

// countersInto is counters into dst, reusing its maps.
func (s ethtoolQueueStats) countersInto(iface string, dst *queueCounters) error {
	t, err := s.conn.ethtoolStats(iface)
	if err != nil {
		return err
	}
	t.queuesInto(dst)
	return nil
}

// queueStatsInto is a queueStatser that can fill a reading's counters in
// place, reusing their maps.
type queueStatsInto interface {
	countersInto(iface string, dst *queueCounters) error
}

// clear empties q, keeping its maps: no counters, as a failed read has.
func (q *queueCounters) clear() {
	clear(q.RX)
	clear(q.TX)
	clear(q.Losses)
	q.Ethtool = false
}

// parseQueueStats picks the per-queue packet and byte counters out of a
// driver's ethtool statistics. It understands these names (N is the queue
// number, DIR rx or tx):
//
//	DIR_queue_N_packets, DIR_queue_N_bytes   igb, igc, ixgbe, ixgbevf, ice, hv_netvsc, virtio_net before 6.10
//	DIR-N.packets, DIR-N.bytes               i40e, iavf
//	DIR-N.DIR_packets, DIR-N.DIR_bytes       older i40e, sfc (packets only)
//	DIRN_packets, DIRN_bytes                 mlx4, mlx5
//	queue_N_DIR_cnt, queue_N_DIR_bytes       ena
//	[N]: DIR_{ucast,mcast,bcast}_packets|bytes  bnxt_en (summed)
//
// Other statistics (drops, XDP counters such as veth's
// rx_queue_N_xdp_packets, totals without a queue number) are ignored.
// virtio_net since 6.10 and vmxnet3 expose no per-queue packet counters
// this way (virtio_net reports them over netdev netlink qstats instead).
func parseQueueStats(stats map[string]uint64) queueCounters {
	out := queueCounters{RX: map[int]queueCounter{}, TX: map[int]queueCounter{}}
	for name, v := range stats {
		q, ok := parseQueueStatName(name)
		if !ok {
			continue
		}
		m := out.RX
		if q.dir == KindTX {
			m = out.TX
		}
		c := m[q.index]
		if q.bytes {
			c.Bytes += v
			c.HasBytes = true
		} else {
			c.Packets += v
			c.HasPackets = true
		}
		m[q.index] = c
	}
	return out
}

// queueStat is what a per-queue statistic name says.
type queueStat struct {
	dir   QueueKind // KindRX or KindTX
	index int
	bytes bool // else packets
}

// maxQueueDigits bounds a queue number (no NIC has 100000 queues).
const maxQueueDigits = 5

// parseQueueStatName recognises the per-queue packet and byte counter names
// listed at parseQueueStats.
func parseQueueStatName(s string) (queueStat, bool) {
	var q queueStat
	var ok bool
	switch {
	case strings.HasPrefix(s, "["): // bnxt_en: "[N]: rx_ucast_packets"
		if q.index, s, ok = cutIndex(s[1:]); !ok {
			return q, false
		}
		if s, ok = strings.CutPrefix(s, "]: "); !ok {
			return q, false
		}
		if q.dir, s, ok = cutDir(s); !ok {
			return q, false
		}
		if s, ok = strings.CutPrefix(s, "_"); !ok || len(s) < 6 {
			return q, false
		}
		if c := s[:6]; c != "ucast_" && c != "mcast_" && c != "bcast_" {
			return q, false
		}
		q.bytes, ok = packetsOrBytes(s[6:])
		return q, ok
	case strings.HasPrefix(s, "queue_"): // ena: "queue_N_rx_cnt"
		if q.index, s, ok = cutIndex(s[6:]); !ok {
			return q, false
		}
		if s, ok = strings.CutPrefix(s, "_"); !ok {
			return q, false
		}
		if q.dir, s, ok = cutDir(s); !ok {
			return q, false
		}
		switch s {
		case "_cnt":
			return q, true
		case "_bytes":
			q.bytes = true
			return q, true
		}
		return q, false
	}
	if q.dir, s, ok = cutDir(s); !ok {
		return q, false
	}
	switch {
	case strings.HasPrefix(s, "_queue_"): // igb & co: "rx_queue_N_packets"
		if q.index, s, ok = cutIndex(s[7:]); !ok {
			return q, false
		}
		if s, ok = strings.CutPrefix(s, "_"); !ok {
			return q, false
		}
	case strings.HasPrefix(s, "-"): // i40e, sfc: "rx-N.packets", "rx-N.rx_packets"
		if q.index, s, ok = cutIndex(s[1:]); !ok {
			return q, false
		}
		if s, ok = strings.CutPrefix(s, "."); !ok {
			return q, false
		}
		s = strings.TrimPrefix(s, string(q.dir)+"_")
	default: // mlx4, mlx5: "rxN_packets"
		if q.index, s, ok = cutIndex(s); !ok {
			return q, false
		}
		if s, ok = strings.CutPrefix(s, "_"); !ok {
			return q, false
		}
	}
	q.bytes, ok = packetsOrBytes(s)
	return q, ok
}

// cutDir cuts "rx" or "tx" off the front of s.
func cutDir(s string) (dir QueueKind, rest string, ok bool) {
	if len(s) < 2 {
		return "", s, false
	}
	switch s[:2] {
	case "rx":
		return KindRX, s[2:], true
	case "tx":
		return KindTX, s[2:], true
	}
	return "", s, false
}

// cutIndex cuts a queue number off the front of s: decimal, no sign, no
// leading zero, at most maxQueueDigits digits.
func cutIndex(s string) (int, string, bool) {
	n := leadingDigits(s)
	if n == 0 || n > maxQueueDigits || (n > 1 && s[0] == '0') {
		return 0, s, false
	}
	v := 0
	for _, c := range s[:n] {
		v = v*10 + int(c-'0')
	}
	return v, s[n:], true
}

// packetsOrBytes reads the last word of a counter name.
func packetsOrBytes(s string) (bytes, ok bool) {
	switch s {
	case "packets":
		return false, true
	case "bytes":
		return true, true
	}
	return false, false
}
