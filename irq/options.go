package irq

import (
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// Option configures Check, MapQueues and NewSampler.
type Option func(*options)

type options struct {
	root     fsroot.Root
	interval time.Duration
	stats    LinkStatser
	// queueStats is nil when per-queue counters are off; queueStatsSet
	// tells an explicit WithQueueStats(nil) from the default.
	queueStats    QueueStatser
	queueStatsSet bool
	now           func() time.Time
}

func newOptions(opts []Option) options {
	o := options{interval: time.Second, now: time.Now}
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	if o.interval <= 0 {
		o.interval = time.Second
	}
	if o.stats == nil {
		o.stats = SysfsStats(o.root.Dir())
	}
	if !o.queueStatsSet && o.root.Live() {
		o.queueStats = defaultQueueStats()
	}
	return o
}

// WithRoot reads /proc and /sys under dir instead of the live host ("/").
func WithRoot(dir string) Option {
	return func(o *options) { o.root = fsroot.New(dir) }
}

// WithInterval sets the time between samples (default 1s).
func WithInterval(d time.Duration) Option {
	return func(o *options) { o.interval = d }
}

// WithLinkStats sets where per-interface packet and byte counters come
// from. The default reads /sys/class/net/IFACE/statistics under the root;
// NetlinkStats reads them from another network namespace.
func WithLinkStats(s LinkStatser) Option {
	return func(o *options) { o.stats = s }
}

// WithQueueStats sets where per-queue packet and byte counters come from.
// The default on the live host, in the caller's network namespace, is per
// interface: first the kernel's netdev queue statistics
// (NetdevQueueStats(netns.None()), Linux 6.8+, the only source for
// virtio_net since 6.10); where the kernel has no netdev family or
// QSTATS_GET, or reports no queue rows for the interface, or that read
// fails, the driver's ethtool statistics (EthtoolQueueStats(nil)), whose
// answer or error stands. Under another root (a snapshot) there is none.
// nil turns per-queue counters off. A NIC in another network namespace
// needs NetdevQueueStats or EthtoolQueueStats bound to that namespace;
// otherwise its QueueStatsError reads "no such device".
func WithQueueStats(s QueueStatser) Option {
	return func(o *options) { o.queueStats, o.queueStatsSet = s, true }
}

// withClock replaces time.Now (tests).
func withClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}
