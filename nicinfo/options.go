package nicinfo

import "github.com/nicdiag/nicdiag/internal/fsroot"

// Option configures List and Get.
type Option func(*options)

type options struct {
	root       fsroot.Root
	pciIDs     string // explicit pci.ids path; "" searches
	ethtool    EthtoolSource
	ethtoolSet bool
	netlink    bool
}

// WithRoot reads the kernel trees under dir (an unpacked snapshot) instead of
// the live host. "" and "/" mean the live host.
func WithRoot(dir string) Option {
	return func(o *options) { o.root = fsroot.New(dir) }
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
			o.ethtool = EthtoolFiles(o.root.Dir())
		}
	}
	return o
}
