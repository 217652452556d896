package irq

import (
	"cmp"
	"slices"
	"strings"
)

// lossCounter is one loss counter's value at a reading.
type lossCounter struct {
	Class LossClass
	Value uint64
}

// lossCounters are a NIC's loss counters at a reading, keyed by
// LossRate.Name.
type lossCounters map[string]lossCounter

// The sources of loss counters: the prefix of LossRate.Name, in the order
// NICRate.Losses lists them.
const (
	lossSysfs   = "sysfs:"
	lossQstats  = "qstats:"
	lossEthtool = "ethtool:"
	// lossEthtoolNL names the standard pause statistics, read over
	// ethtool netlink (pausestats.go).
	lossEthtoolNL = "ethtool-nl:"
)

// lossEntry is one loss counter at a reading, by LossRate.Name.
type lossEntry struct {
	name string
	lossCounter
}

// lossList is a NIC's loss counters at a reading, in lossRates' order
// once sorted (compareLoss), one per name.
type lossList []lossEntry

// addMap appends m's counters.
func (l *lossList) addMap(m lossCounters) {
	for name, c := range m {
		*l = append(*l, lossEntry{name, c})
	}
}

// sort puts l in lossRates' order; of two counters of one name the one
// added last stays.
func (l *lossList) sort() {
	s := *l
	slices.SortStableFunc(s, func(a, b lossEntry) int { return compareLossName(a.name, b.name) })
	out := s[:0]
	for i, e := range s {
		if i+1 < len(s) && s[i+1].name == e.name {
			continue
		}
		out = append(out, e)
	}
	*l = out
}

// linkLosses adds the loss counters among an interface's statistics to dst:
// rx_dropped always, the others where they were read. They are named sysfs:
// also when read over netlink: both report the kernel's one set of
// interface counters (dev_get_stats).
func linkLosses(c linkCounters, dst *lossList) {
	*dst = append(*dst, lossEntry{lossSysfs + "rx_dropped", lossCounter{LossDropped, c.RXDropped}})
	for _, f := range [...]struct {
		name  string
		has   linkHas
		class LossClass
		v     uint64
	}{
		{lossSysfs + "rx_missed_errors", hasRXMissedErrors, LossNIC, c.RXMissedErrors},
		{lossSysfs + "rx_fifo_errors", hasRXFIFOErrors, LossNIC, c.RXFIFOErrors},
		{lossSysfs + "rx_over_errors", hasRXOverErrors, LossNIC, c.RXOverErrors},
		{lossSysfs + "tx_dropped", hasTXDropped, LossTX, c.TXDropped},
	} {
		if c.Has&f.has != 0 {
			*dst = append(*dst, lossEntry{f.name, lossCounter{f.class, f.v}})
		}
	}
}

// ethtoolLosses adds the loss counters among a driver's ethtool statistics
// (those lossClass knows) to dst.
func ethtoolLosses(stats map[string]uint64, dst lossCounters) {
	for name, v := range stats {
		if c, ok := lossClass(name); ok {
			dst[lossEthtool+name] = lossCounter{c, v}
		}
	}
}

// lossStatser reads a NIC's driver loss counters by interface name.
type lossStatser interface {
	losses(iface string) (lossCounters, error)
}

// lossStatsFunc adapts a function to lossStatser.
type lossStatsFunc func(iface string) (lossCounters, error)

func (f lossStatsFunc) losses(iface string) (lossCounters, error) { return f(iface) }

// ethtoolLossStats reads the loss counters among a driver's ethtool
// statistics over conn. A driver without ethtool statistics has no loss
// counters there, and that is no error.
type ethtoolLossStats struct {
	conn *nsConn
}

func (s ethtoolLossStats) losses(iface string) (lossCounters, error) {
	var l lossList
	if err := s.lossesInto(iface, &l); err != nil {
		return nil, err
	}
	out := lossCounters{}
	for _, e := range l {
		out[e.name] = e.lossCounter
	}
	return out, nil
}

// lossesInto appends iface's loss counters to dst.
func (s ethtoolLossStats) lossesInto(iface string, dst *lossList) error {
	t, err := s.conn.ethtoolStats(iface)
	if err != nil {
		return err
	}
	t.lossesInto(dst)
	return nil
}

// lossStatsInto is a lossStatser that appends to a reading's list.
type lossStatsInto interface {
	lossesInto(iface string, dst *lossList) error
}

// readLosses gathers each NIC's loss counters at reading r, whose link and
// queue counters are read: the interface's, those the queue read returned,
// unless that read was of the driver's ethtool statistics already, those
// of the loss source (one ETHTOOL_GSTATS call per NIC, not two), and the
// pause statistics over ethtool netlink (one PAUSE_GET per NIC). A loss
// source that fails is named in r.missing.
func (s *Sampler) readLosses(r *reading) {
	for i, n := range s.nics {
		nr := &r.nics[i]
		m := &nr.losses
		*m = (*m)[:0]
		if nr.linkErr == nil {
			linkLosses(nr.link, m)
		}
		ok := nr.queueErr == nil && nr.queued
		m.addMap(nr.queues.Losses)
		if s.o.lossStats != nil && !(ok && nr.queues.Ethtool) {
			var err error
			if li, into := s.o.lossStats.(lossStatsInto); into {
				err = li.lossesInto(n.Name, m)
			} else {
				var l lossCounters
				l, err = s.o.lossStats.losses(n.Name)
				m.addMap(l)
			}
			if err != nil {
				r.missing = append(r.missing, "ethtool -S "+n.Name+": "+err.Error())
			}
		}
		if s.o.pauseStats != nil {
			l, err := s.o.pauseStats.losses(n.Name)
			if err != nil {
				r.missing = append(r.missing, "ethtool pause "+n.Name+": "+err.Error())
			}
			m.addMap(l)
		}
		m.sort()
	}
}

// lossRates appends to dst the rate of every loss counter present at both
// readings, 0 included (a reader must tell "no drops" from "not counted"),
// sysfs: first, then qstats:, then ethtool:, then ethtool-nl:, each by
// name. A counter that went down was reset and counts from 0. a and b are
// sorted (lossList.sort).
func lossRates(a, b lossList, dt float64, dst []LossRate) []LossRate {
	i := 0
	for _, cc := range b {
		for i < len(a) && compareLossName(a[i].name, cc.name) < 0 {
			i++
		}
		if i < len(a) && a[i].name == cc.name {
			dst = append(dst, LossRate{Name: cc.name, Class: cc.Class, PerS: float64(delta64(a[i].Value, cc.Value)) / dt})
		}
	}
	return dst
}

func compareLoss(a, b LossRate) int { return compareLossName(a.Name, b.Name) }

func compareLossName(a, b string) int {
	return cmp.Or(cmp.Compare(lossSource(a), lossSource(b)), strings.Compare(a, b))
}

// lossSource ranks a loss name by its source.
func lossSource(name string) int {
	switch {
	case strings.HasPrefix(name, lossSysfs):
		return 0
	case strings.HasPrefix(name, lossQstats):
		return 1
	case strings.HasPrefix(name, lossEthtool):
		return 2
	case strings.HasPrefix(name, lossEthtoolNL):
		return 3
	}
	return 4
}

// lossMeans averages loss rates over a window by NIC and name, each sample
// weighted by its interval. A counter's mean is over the seconds it was
// counted in: one absent from a sample was not counted there, not 0.
type lossMeans map[string]map[string]*lossMean

type lossMean struct {
	r    LossRate // PerS holds the weighted sum until mean
	secs float64
}

func (m lossMeans) add(nic string, losses []LossRate, w float64) {
	byName := m[nic]
	if byName == nil {
		byName = map[string]*lossMean{}
		m[nic] = byName
	}
	for _, l := range losses {
		a := byName[l.Name]
		if a == nil {
			a = &lossMean{r: LossRate{Name: l.Name, Class: l.Class}}
			byName[l.Name] = a
		}
		a.r.PerS += l.PerS * w
		a.secs += w
	}
}

// mean returns nic's window means, in lossRates' order.
func (m lossMeans) mean(nic string) []LossRate {
	var out []LossRate
	for _, a := range m[nic] {
		r := a.r
		if a.secs > 0 {
			r.PerS /= a.secs
		}
		out = append(out, r)
	}
	slices.SortFunc(out, compareLoss)
	return out
}
