package nicdiag

import (
	"context"
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

// Option configures Inspect, Check and Explain: one of this package's
// (WithInterfaces, WithPCIIDs, WithEthtool, WithInventoryOnly,
// WithSoftwareBrief), or one of package option's: option.Root reads a
// snapshot directory instead of the live host; option.ReadBudget bounds
// the time one call spends reading the root's files (once it has passed,
// every read left fails at once with an error wrapping ErrReadBudget, so
// that a huge or hostile snapshot cannot hold the caller; a snapshot root
// has nicinfo.DefaultReadBudget unless it says otherwise, the live host
// none; it covers the whole call: the inventory, the PCIe paths,
// /proc/interrupts, the queue maps and the counters, read in that order);
// option.ReadDeadline gives that end as a time. A context deadline sooner
// than the budget's end is the reads' end too.
type Option interface {
	ApplyRead(*option.Read)
	NicdiagOption()
}

// own is an option of this package's.
type own func(*options)

func (own) ApplyRead(*option.Read) {}
func (own) NicdiagOption()         {}

type options struct {
	root    string
	pciIDs  string
	ifaces  []string
	ethtool nicinfo.EthtoolSource
	ethSet  bool
	// inventoryOnly skips paths, budgets and queues (WithInventoryOnly).
	inventoryOnly bool
	brief         bool // WithSoftwareBrief
	// deadline is when the call's reads of the root end (zero: never),
	// set by buildOptions.
	deadline time.Time
}

// WithPCIIDs names the pci.ids file to take device names from.
func WithPCIIDs(path string) Option { return own(func(o *options) { o.pciIDs = path }) }

// WithInterfaces selects the NICs to judge: interface names or PCI
// addresses (of an interface's function, or of a function without a
// netdev). By default every physical NIC is selected.
func WithInterfaces(names ...string) Option {
	return own(func(o *options) { o.ifaces = append(o.ifaces, names...) })
}

// WithInventoryOnly has Inspect read the inventory and identities only:
// no PCIe paths, budgets, /proc/interrupts, queue maps or driver loss
// statistics (ETHTOOL_GSTATS, which some drivers answer by asking the
// firmware), for a caller such as `nicdiag list` that shows nothing else.
func WithInventoryOnly() Option { return own(func(o *options) { o.inventoryOnly = true }) }

// WithSoftwareBrief reads software interfaces (loopback, bridges, bonds,
// VLANs, veth, tunnels) in brief: sysfs and ethtool's driver info only (see
// nicinfo.WithSoftwareBrief). For a caller that judges and shows physical
// NICs only, such as `nicdiag list` without --all.
func WithSoftwareBrief() Option { return own(func(o *options) { o.brief = true }) }

// WithEthtool sets where ethtool answers come from (see nicinfo.WithEthtool).
func WithEthtool(src nicinfo.EthtoolSource) Option {
	return own(func(o *options) { o.ethtool, o.ethSet = src, true })
}

// ErrReadBudget is wrapped by the errors of the reads a spent read budget
// stopped (see option.ReadBudget); errors.Is(err,
// context.DeadlineExceeded) also holds for it.
var ErrReadBudget = fsroot.ErrBudget

func buildOptions(opts []Option) options {
	var o options
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
	o.root = r.Root
	now := time.Now()
	if end, ok := r.End(now); ok {
		o.deadline = end
	} else if !fsroot.New(o.root).Live() {
		o.deadline = now.Add(nicinfo.DefaultReadBudget)
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
	out := []nicinfo.Option{o.read()}
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

// read is where the call reads and until when, for the packages below.
func (o options) read() option.Option {
	return option.Of(option.Read{Root: o.root, Deadline: o.deadline, DeadlineSet: true})
}

func (o options) pcie() []pcie.Option { return []pcie.Option{o.read()} }

func (o options) irq() []irq.Option { return []irq.Option{o.read()} }

// rootDir is the directory read: "/" for the live host.
func (o options) rootDir() string {
	if o.root == "" {
		return "/"
	}
	return o.root
}
