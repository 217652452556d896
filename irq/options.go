package irq

import (
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/option"
)

// Option configures MapQueues, ReadInterrupts, ReadSteering and NewSampler:
// one of this package's (WithInterval, WithNetns, WithPCIe) or one of
// package option's (option.Root, option.ReadDeadline: a Sampler's
// readings after the deadline fail the same way; it is meant for the
// one-shot readers). Under another root than the live host, per-queue
// counters and the driver's ethtool loss counters are not read (a
// snapshot has none) and WithNetns has no effect.
type Option interface {
	ApplyRead(*option.Read)
	IRQOption()
}

// own is an option of this package's.
type own func(*options)

func (own) ApplyRead(*option.Read) {}
func (own) IRQOption()             {}

type options struct {
	root     fsroot.Root
	interval time.Duration
	netns    string
	stats    linkStatser
	// queueStats is nil when per-queue counters are off; queueStatsSet
	// tells an explicit withQueueStats(nil) from the default.
	queueStats    queueStatser
	queueStatsSet bool
	// lossStats is nil when driver loss counters are off; lossStatsSet as
	// queueStatsSet.
	lossStats    lossStatser
	lossStatsSet bool
	// pauseStats is nil when ethtool netlink pause statistics are off;
	// pauseStatsSet as queueStatsSet.
	pauseStats    lossStatser
	pauseStatsSet bool
	now           func() time.Time
	pcie          []string // WithPCIe addresses
	// conn is the kept sockets of the live default sources (nil under a
	// root, off Linux, or when every source was replaced).
	conn *nsConn
}

func newOptions(opts []Option) options {
	o := options{interval: time.Second, now: time.Now}
	var r option.Read
	for _, f := range opts {
		if f == nil {
			continue
		}
		f.ApplyRead(&r)
		if f, ok := f.(own); ok {
			f(&o)
		}
	}
	if o.interval <= 0 {
		o.interval = time.Second
	}
	end, _ := r.End(time.Now())
	o.root = fsroot.New(r.Root).WithDeadline(end)
	if o.root.Live() && (o.stats == nil || !o.queueStatsSet || !o.lossStatsSet || !o.pauseStatsSet) {
		o.conn = newNSConn(o.netns) // nil off Linux: no live netlink sources
	}
	if o.stats == nil {
		switch {
		case o.conn != nil && o.netns != "":
			o.stats = connLinkStats{conn: o.conn}
		case o.conn != nil:
			o.stats = connLinkStats{conn: o.conn, sysfs: &sysfsStats{r: o.root}}
		default:
			o.stats = &sysfsStats{r: o.root}
		}
	}
	if o.conn == nil {
		return o
	}
	if !o.queueStatsSet {
		o.queueStats = defaultQueueStats(o.conn)
	}
	if !o.lossStatsSet {
		o.lossStats = ethtoolLossStats{conn: o.conn}
	}
	if !o.pauseStatsSet {
		o.pauseStats = defaultPauseStats(o.conn)
	}
	return o
}

// WithInterval sets the time between samples (default 1s).
func WithInterval(d time.Duration) Option {
	return own(func(o *options) { o.interval = d })
}

// WithNetns reads the sampled NICs' packet counters in the network
// namespace whose file is at path ("/run/netns/NAME", "/proc/PID/ns/net",
// or "/proc/self/fd/N" for a namespace the caller holds open) instead of
// the caller's: per interface, 64-bit counters over netlink, and per queue
// the kernel's netdev queue statistics or else the driver's ethtool
// statistics, as by default. The file is opened at every reading, so the
// namespace must outlive the sampler; a reading that cannot open it puts
// the error in NICRate.StatsError and QueueStatsError. "" is the caller's
// namespace. /proc and /sys are still read under the root (IRQs and CPU
// load are not per namespace).
//
// Without it, interface counters come from /sys/class/net/IFACE/statistics,
// and per-queue counters first from the kernel's netdev queue statistics
// (Linux 6.8+, the only source for virtio_net since 6.10), then, where the
// kernel has no netdev family or QSTATS_GET, reports no queue rows for the
// interface, or that read fails, from the driver's ethtool statistics,
// whose answer or error stands. The driver's ethtool loss counters (see
// NICRate.Losses) are read in the same namespace, once per NIC and
// reading. A NIC in another namespace needs WithNetns: otherwise its
// QueueStatsError reads "no such device".
func WithNetns(path string) Option {
	return own(func(o *options) { o.netns = path })
}

// WithPCIe makes each Sample.PCIe hold, for each PCI function addrs names
// ("0000:01:00.0"; the domain may be left out), its current link speed and
// width and the AER errors it logged in the interval, read from
// /sys/bus/pci/devices/ADDR (current_link_speed, current_link_width,
// aer_dev_correctable, aer_dev_nonfatal, aer_dev_fatal), in this order. A
// function that cannot be read has its PCIeState.Error set; the sample
// stands.
func WithPCIe(addrs ...string) Option {
	return own(func(o *options) { o.pcie = append(o.pcie, addrs...) })
}

// withQueueStats replaces where per-queue counters come from; nil turns
// them off (tests).
func withQueueStats(s queueStatser) Option {
	return own(func(o *options) { o.queueStats, o.queueStatsSet = s, true })
}

// withLossStats replaces where the driver's loss counters come from; nil
// turns them off (tests).
func withLossStats(s lossStatser) Option {
	return own(func(o *options) { o.lossStats, o.lossStatsSet = s, true })
}

// withPauseStats replaces the ethtool netlink pause statistics source (nil:
// off).
func withPauseStats(s lossStatser) Option {
	return own(func(o *options) { o.pauseStats, o.pauseStatsSet = s, true })
}

// withClock replaces time.Now (tests).
func withClock(now func() time.Time) Option {
	return own(func(o *options) { o.now = now })
}
