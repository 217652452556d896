package irq

// ethtoolTable is an interface's ethtool statistics names as read last,
// what each counts for the sampler, and the buffer their values are read
// into.
type ethtoolTable struct {
	ifindex uint32
	n       uint32
	names   []string
	kind    []statKind
	queue   []queueStat
	class   []LossClass
	loss    []string // LossRate.Name of a loss counter
	vals    []uint64 // ethtool_stats: its header, then the values
}

// statKind is what one ethtool statistic is to the sampler.
type statKind uint8

const (
	statOther     statKind = iota
	statQueue              // a per-queue packet or byte counter (parseQueueStatName)
	statLoss               // a loss counter (lossClass)
	statQueueLoss          // both
)

// setNames makes names the table's statistics and classifies each.
func (t *ethtoolTable) setNames(names []string) {
	t.n = uint32(len(names))
	t.names, t.kind, t.queue, t.class, t.loss = names, t.kind[:0], t.queue[:0], t.class[:0], t.loss[:0]
	last := make(map[string]int, len(names))
	for i, name := range names {
		last[name] = i
	}
	for i, name := range t.names {
		k := statOther
		q, isQueue := parseQueueStatName(name)
		cl, isLoss := lossClass(name)
		if last[name] != i { // of two statistics of one name the last counts, as in a map
			isQueue, isLoss = false, false
		}
		switch {
		case isQueue && isLoss:
			k = statQueueLoss
		case isQueue:
			k = statQueue
		case isLoss:
			k = statLoss
		}
		lname := ""
		if isLoss {
			lname = lossEthtool + name
		}
		t.kind, t.queue, t.class, t.loss = append(t.kind, k), append(t.queue, q), append(t.class, cl), append(t.loss, lname)
	}
}

// values returns the statistics' values read last.
func (t *ethtoolTable) values() []uint64 {
	if t.n == 0 {
		return nil
	}
	return t.vals[1 : 1+t.n]
}

// queuesInto puts t's per-queue counters (as parseQueueStats reads them)
// and its loss counters (as ethtoolLosses) into dst, reusing its maps.
func (t *ethtoolTable) queuesInto(dst *queueCounters) {
	dst.reset()
	dst.Ethtool = true
	vals := t.values()
	for i, k := range t.kind[:len(vals)] {
		if k == statQueue || k == statQueueLoss {
			q := t.queue[i]
			m := dst.RX
			if q.dir == KindTX {
				m = dst.TX
			}
			c := m[q.index]
			if q.bytes {
				c.Bytes += vals[i]
				c.HasBytes = true
			} else {
				c.Packets += vals[i]
				c.HasPackets = true
			}
			m[q.index] = c
		}
		if k == statLoss || k == statQueueLoss {
			dst.Losses[t.loss[i]] = lossCounter{t.class[i], vals[i]}
		}
	}
}

// lossesInto appends t's loss counters to dst.
func (t *ethtoolTable) lossesInto(dst *lossList) {
	vals := t.values()
	for i, k := range t.kind[:len(vals)] {
		if k == statLoss || k == statQueueLoss {
			*dst = append(*dst, lossEntry{t.loss[i], lossCounter{t.class[i], vals[i]}})
		}
	}
}
