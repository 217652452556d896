package irq

import (
	"fmt"
	"math"

	"github.com/nicdiag/nicdiag/internal/text"
)

// LossClassOf says what a driver's ethtool statistic (a name `ethtool -S`
// prints) counts when it counts packets lost or held back, as the sampler
// classifies it; ok is false for every other name. Per-queue names and the
// names that repeat an interface statistic (rx_missed_errors, ...) are not
// among them: see the table in lossclass.go.
func LossClassOf(name string) (c LossClass, ok bool) { return lossClass(name) }

// IsLossStat reports whether LossClassOf knows name: the filter for the
// driver statistics worth keeping (nicinfo.KeepStats).
func IsLossStat(name string) bool {
	_, ok := lossClass(name)
	return ok
}

// LossTotals are an interface's receive counters since its driver started
// counting them: usually since boot, or since the driver was loaded; the
// kernel keeps no time of the start, and a counter says nothing about when
// its packets were lost.
type LossTotals struct {
	// RXPackets is /sys/class/net/IFACE/statistics/rx_packets.
	RXPackets uint64 `json:"rx_packets"`
	// TXPackets is /sys/class/net/IFACE/statistics/tx_packets.
	TXPackets uint64 `json:"tx_packets"`
	// Losses are every loss counter read, by the names LossRate uses
	// ("sysfs:rx_missed_errors", "ethtool:rx_no_buffer_count"): the
	// interface statistics first, then the driver's, each by name.
	Losses []LossTotal `json:"losses"`
}

// LossTotal is one loss counter's value since the driver started counting.
type LossTotal struct {
	Name  string    `json:"name"`
	Class LossClass `json:"class"`
	Value uint64    `json:"value"`
}

// Get returns the counter called name ("sysfs:rx_fifo_errors"), and whether
// it was read.
func (t *LossTotals) Get(name string) (uint64, bool) {
	if t == nil {
		return 0, false
	}
	for _, l := range t.Losses {
		if l.Name == name {
			return l.Value, true
		}
	}
	return 0, false
}

// ReadLossTotals reads iface's interface statistics
// (/sys/class/net/IFACE/statistics under the root, option.Root) and joins the
// loss counters among driverStats, a driver's `ethtool -S` counters (those
// LossClassOf does not know are ignored), into its LossTotals. The
// interface's loss counters are those the sampler reads: rx_dropped always
// (class nic, though the kernel adds its own drops to it), rx_missed_errors,
// rx_fifo_errors, rx_over_errors and tx_dropped where their files exist. A
// counter file that is absent or not a number is an error (one that
// matches fs.ErrNotExist when the statistics are not there at all), as is a
// value that no 64-bit counter of the kernel reaches (negative in the file).
func ReadLossTotals(iface string, driverStats map[string]uint64, opts ...Option) (*LossTotals, error) {
	o := newOptions(opts)
	st := &sysfsStats{r: o.root}
	defer st.close()
	c, err := st.counters(iface)
	if err != nil {
		return nil, err
	}
	for _, v := range []uint64{c.RXPackets, c.TXPackets, c.RXDropped, c.RXMissedErrors, c.RXFIFOErrors, c.RXOverErrors, c.TXDropped} {
		if v > math.MaxInt64 {
			return nil, fmt.Errorf("%s statistics: %w: negative counter", text.Clip(iface), ErrMalformed)
		}
	}
	var l lossList
	linkLosses(c, &l)
	m := lossCounters{}
	ethtoolLosses(driverStats, m)
	l.addMap(m)
	l.sort()
	out := &LossTotals{RXPackets: c.RXPackets, TXPackets: c.TXPackets, Losses: make([]LossTotal, 0, len(l))}
	for _, e := range l {
		out.Losses = append(out.Losses, LossTotal{Name: e.name, Class: e.Class, Value: e.Value})
	}
	return out, nil
}

// Pause sums the pause frame counters: received (the peer asked this host
// to stop) and sent (this host asked the peer), with the counters' names;
// ok is false when the driver counts none (or t is nil).
func (t *LossTotals) Pause() (rx, tx uint64, names []string, ok bool) {
	if t == nil {
		return 0, 0, nil, false
	}
	for _, l := range t.Losses {
		switch l.Class {
		case LossPauseRX:
			rx += l.Value
		case LossPauseTX:
			tx += l.Value
		default:
			continue
		}
		names = append(names, l.Name)
	}
	return rx, tx, names, len(names) > 0
}
