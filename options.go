package nicdiag

import (
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
// no PCIe paths, budgets, /proc/interrupts or queue maps, for a caller such
// as `nicdiag list` that shows nothing else.
func WithInventoryOnly() Option { return func(o *options) { o.inventoryOnly = true } }

// WithEthtool sets where ethtool answers come from (see nicinfo.WithEthtool).
func WithEthtool(src nicinfo.EthtoolSource) Option {
	return func(o *options) { o.ethtool, o.ethSet = src, true }
}

func buildOptions(opts []Option) options {
	var o options
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

func (o options) nicinfo() []nicinfo.Option {
	out := []nicinfo.Option{nicinfo.WithRoot(o.root)}
	if o.pciIDs != "" {
		out = append(out, nicinfo.WithPCIIDs(o.pciIDs))
	}
	if o.ethSet {
		out = append(out, nicinfo.WithEthtool(o.ethtool))
	}
	return out
}

func (o options) pcie() []pcie.Option {
	return []pcie.Option{pcie.WithRoot(o.root)}
}

// rootDir is the directory read: "/" for the live host.
func (o options) rootDir() string {
	if o.root == "" {
		return "/"
	}
	return o.root
}
