package nicinfo

import (
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// Option configures List and Get.
type Option func(*options)

type options struct {
	root       fsroot.Root
	pciIDs     string // explicit pci.ids path; "" searches
	ethtool    EthtoolSource
	ethtoolSet bool
	netlink    bool
	brief      bool // WithSoftwareBrief
	// deadline ends the call's reads of the root (WithReadBudget,
	// WithReadDeadline); without one a snapshot gets DefaultReadBudget.
	deadline    time.Time
	deadlineSet bool
}

// DefaultReadBudget is how long one call may spend reading a snapshot root
// unless WithReadBudget or WithReadDeadline says otherwise. The live host
// has no budget by default.
const DefaultReadBudget = 30 * time.Second

// ErrReadBudget is wrapped by the errors of the reads a spent budget stopped
// (see WithReadBudget): the call fails with it when nothing could be listed,
// and names it in Missing when it stopped part way. errors.Is(err,
// context.DeadlineExceeded) also holds for it.
var ErrReadBudget = fsroot.ErrBudget

// WithRoot reads the kernel trees under dir (an unpacked snapshot) instead of
// the live host. "" and "/" mean the live host.
func WithRoot(dir string) Option {
	return func(o *options) {
		o.root = fsroot.New(dir)
		o.applyDeadline()
	}
}

// WithReadBudget bounds the time a call spends reading the root: once d has
// passed since the call began, every read left fails at once with an error
// wrapping ErrReadBudget. d <= 0 means no budget, on a snapshot too (see
// DefaultReadBudget).
func WithReadBudget(d time.Duration) Option {
	return func(o *options) {
		o.deadline, o.deadlineSet = time.Time{}, true
		if d > 0 {
			o.deadline = time.Now().Add(d)
		}
		o.applyDeadline()
	}
}

// WithReadDeadline is WithReadBudget with the end given as a time, for
// calls that share one budget; the zero time means no budget.
func WithReadDeadline(t time.Time) Option {
	return func(o *options) {
		o.deadline, o.deadlineSet = t, true
		o.applyDeadline()
	}
}

// applyDeadline gives the root its deadline, whichever of WithRoot and
// WithReadBudget came first: the one set, else DefaultReadBudget for a
// snapshot.
func (o *options) applyDeadline() {
	switch {
	case o.deadlineSet:
		o.root = o.root.WithDeadline(o.deadline)
	case !o.root.Live():
		o.root = o.root.WithBudget(DefaultReadBudget)
	}
}

// WithPCIIDs names the pci.ids file (plain or .gz) to take names from. By
// default the root's own usr/share/{misc,hwdata}/pci.ids(.gz) is used when a
// snapshot ships one, else the host's /usr/share/misc/pci.ids,
// /usr/share/hwdata/pci.ids and their .gz variants. Nothing is ever fetched.
func WithPCIIDs(path string) Option {
	return func(o *options) { o.pciIDs = path }
}

// WithEthtool sets where ethtool answers come from. By default the live host
// asks the kernel (LiveEthtool) and a snapshot reads ethtool/IFACE.json
// (EthtoolFiles). nil turns ethtool off: its fields are named in Missing.
func WithEthtool(src EthtoolSource) Option {
	return func(o *options) { o.ethtool, o.ethtoolSet = src, true }
}

// WithNetlink turns the netlink query for link kinds on the live host on
// (the default) or off. Snapshots never use netlink.
func WithNetlink(on bool) Option {
	return func(o *options) { o.netlink = on }
}

// WithSoftwareBrief has List and Get read a software interface (one with no
// device in sysfs: loopback, bridge, bond, VLAN, veth, ifb, tunnel) in
// brief: its sysfs attributes and ethtool's driver info, not its link
// settings, channels, rings, offloads, coalescing, pause, EEE or
// statistics; its Missing says so. One whose driver info names a PCI
// function (a driver that set no device link) is read in full. For callers
// that show software interfaces by name only, such as `nicdiag list`
// without --all: a host with hundreds of veth pairs is spared a dozen
// ethtool requests for each.
func WithSoftwareBrief() Option {
	return func(o *options) { o.brief = true }
}

func buildOptions(opts []Option) options {
	o := options{netlink: true}
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	if !o.ethtoolSet {
		if o.root.Live() {
			o.ethtool = LiveEthtool()
		} else {
			o.ethtool = fileEthtool{root: o.root} // the same root, deadline and all
		}
	}
	return o
}
