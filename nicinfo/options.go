package nicinfo

import (
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/option"
)

// Option configures List, Get and the other readers: one of this
// package's (WithPCIIDs, WithEthtool, WithNetlink, WithSoftwareBrief), or
// one of package option's (option.Root, option.ReadBudget,
// option.ReadDeadline). A snapshot root has DefaultReadBudget unless one
// of the latter says otherwise; the live host has none.
type Option interface {
	ApplyRead(*option.Read)
	NICInfoOption()
}

// own is an option of this package's.
type own func(*options)

func (own) ApplyRead(*option.Read) {}
func (own) NICInfoOption()         {}

type options struct {
	root       fsroot.Root
	pciIDs     string // explicit pci.ids path; "" searches
	ethtool    EthtoolSource
	ethtoolSet bool
	netlink    bool
	brief      bool // WithSoftwareBrief
}

// DefaultReadBudget is how long one call may spend reading a snapshot root
// unless option.ReadBudget or option.ReadDeadline says otherwise. The live host
// has no budget by default.
const DefaultReadBudget = 30 * time.Second

// ErrReadBudget is wrapped by the errors of the reads a spent budget stopped
// (see option.ReadBudget): the call fails with it when nothing could be listed,
// and names it in Missing when it stopped part way. errors.Is(err,
// context.DeadlineExceeded) also holds for it.
var ErrReadBudget = fsroot.ErrBudget

// WithPCIIDs names the pci.ids file (plain or .gz) to take names from. By
// default the root's own usr/share/{misc,hwdata}/pci.ids(.gz) is used when a
// snapshot ships one, else the host's /usr/share/misc/pci.ids,
// /usr/share/hwdata/pci.ids and their .gz variants. Nothing is ever fetched.
func WithPCIIDs(path string) Option {
	return own(func(o *options) { o.pciIDs = path })
}

// WithEthtool sets where ethtool answers come from. By default the live host
// asks the kernel (LiveEthtool) and a snapshot reads ethtool/IFACE.json
// (EthtoolFiles). nil turns ethtool off: its fields are named in Missing.
func WithEthtool(src EthtoolSource) Option {
	return own(func(o *options) { o.ethtool, o.ethtoolSet = src, true })
}

// WithNetlink turns the netlink query for link kinds on the live host on
// (the default) or off. Snapshots never use netlink.
func WithNetlink(on bool) Option {
	return own(func(o *options) { o.netlink = on })
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
	return own(func(o *options) { o.brief = true })
}

func buildOptions(opts []Option) options {
	o := applyOptions(opts)
	if !o.ethtoolSet {
		if o.root.Live() {
			o.ethtool = LiveEthtool()
		} else {
			o.ethtool = fileEthtool{root: o.root} // the same root, deadline and all
		}
	}
	return o
}

// applyOptions gathers opts, with no ethtool source made.
func applyOptions(opts []Option) options {
	o := options{netlink: true}
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
	o.root = fsroot.New(r.Root)
	switch end, ok := r.End(time.Now()); {
	case ok:
		o.root = o.root.WithDeadline(end)
	case !o.root.Live():
		o.root = o.root.WithBudget(DefaultReadBudget)
	}
	return o
}
