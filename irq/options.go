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
	now      func() time.Time
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

// withClock replaces time.Now (tests).
func withClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}
