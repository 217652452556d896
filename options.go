package nicdiag

import (
	"context"
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// Option configures Inspect, Check and Explain.
type Option func(*options)

type options struct {
	root    string
	pciIDs  string
	ifaces  []string
	ethtool nicinfo.EthtoolSource
	ethSet  bool
	// inventoryOnly skips paths, budgets and queues (WithInventoryOnly).
	inventoryOnly bool
	brief         bool // WithSoftwareBrief
	// readBudget is WithReadBudget's; deadline is when the call's reads of
	// the root end (zero: never), set by buildOptions.
	readBudget    time.Duration
	readBudgetSet bool
	deadline      time.Time
}

// WithRoot reads a snapshot directory instead of the live host ("" or "/").
func WithRoot(dir string) Option { return func(o *options) { o.root = dir } }

// WithPCIIDs names the pci.ids file to take device names from.
func WithPCIIDs(path string) Option { return func(o *options) { o.pciIDs = path } }

// WithInterfaces selects the NICs to judge: interface names or PCI
// addresses (of an interface's function, or of a function without a
// netdev). By default every physical NIC is selected.
func WithInterfaces(names ...string) Option {
	return func(o *options) { o.ifaces = append(o.ifaces, names...) }
}

// WithInventoryOnly has Inspect read the inventory and identities only:
// no PCIe paths, budgets, /proc/interrupts, queue maps or driver loss
// statistics (ETHTOOL_GSTATS, which some drivers answer by asking the
// firmware), for a caller such as `nicdiag list` that shows nothing else.
func WithInventoryOnly() Option { return func(o *options) { o.inventoryOnly = true } }

// WithSoftwareBrief reads software interfaces (loopback, bridges, bonds,
// VLANs, veth, tunnels) in brief: sysfs and ethtool's driver info only (see
// nicinfo.WithSoftwareBrief). For a caller that judges and shows physical
// NICs only, such as `nicdiag list` without --all.
func WithSoftwareBrief() Option { return func(o *options) { o.brief = true } }

// WithEthtool sets where ethtool answers come from (see nicinfo.WithEthtool).
func WithEthtool(src nicinfo.EthtoolSource) Option {
	return func(o *options) { o.ethtool, o.ethSet = src, true }
}

// ErrReadBudget is wrapped by the errors of the reads a spent read budget
// stopped (see WithReadBudget); errors.Is(err, context.DeadlineExceeded)
// also holds for it.
var ErrReadBudget = fsroot.ErrBudget

// WithReadBudget bounds the time one call spends reading a root's files:
// once d has passed since the call began, every read of the inventory left
// fails at once with an error wrapping ErrReadBudget, so that a huge or
// hostile snapshot cannot hold the caller. A snapshot root has
// nicinfo.DefaultReadBudget unless this says otherwise; the live host has
// none. d <= 0 means no budget. A context deadline sooner than the budget's
// end is the reads' end too. The budget covers the whole call: the
// inventory, the PCIe paths, /proc/interrupts, the queue maps and the
// counters, read in that order.
func WithReadBudget(d time.Duration) Option {
	return func(o *options) { o.readBudget, o.readBudgetSet = d, true }
}

func buildOptions(opts []Option) options {
	var o options
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	switch {
	case o.readBudgetSet && o.readBudget > 0:
		o.deadline = time.Now().Add(o.readBudget)
	case !o.readBudgetSet && !fsroot.New(o.root).Live():
		o.deadline = time.Now().Add(nicinfo.DefaultReadBudget)
	}
	return o
}

// bound makes a context deadline sooner than the read budget's end the
// reads' end: they stop with the context, even one blocked in a slow file.
func (o *options) bound(ctx context.Context) {
	if d, ok := ctx.Deadline(); ok && (o.deadline.IsZero() || d.Before(o.deadline)) {
		o.deadline = d
	}
}

func (o options) nicinfo() []nicinfo.Option {
	// One deadline for every nicinfo call of the Inspect, Check or Explain.
	out := []nicinfo.Option{nicinfo.WithRoot(o.root), nicinfo.WithReadDeadline(o.deadline)}
	if o.pciIDs != "" {
		out = append(out, nicinfo.WithPCIIDs(o.pciIDs))
	}
	if o.ethSet {
		out = append(out, nicinfo.WithEthtool(o.ethtool))
	}
	if o.brief {
		out = append(out, nicinfo.WithSoftwareBrief())
	}
	return out
}

func (o options) pcie() []pcie.Option {
	return []pcie.Option{pcie.WithRoot(o.root), pcie.WithReadDeadline(o.deadline)}
}

func (o options) irq() []irq.Option {
	return []irq.Option{irq.WithRoot(o.root), irq.WithReadDeadline(o.deadline)}
}

// rootDir is the directory read: "/" for the live host.
func (o options) rootDir() string {
	if o.root == "" {
		return "/"
	}
	return o.root
}
