package nicdiag

import (
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// Option configures Check and Explain.
type Option func(*options)

type options struct {
	root    string
	pciIDs  string
	ifaces  []string
	ethtool nicinfo.EthtoolSource
	ethSet  bool
}

// WithRoot reads a snapshot directory instead of the live host ("" or "/").
func WithRoot(dir string) Option { return func(o *options) { o.root = dir } }

// WithPCIIDs names the pci.ids file to take device names from.
func WithPCIIDs(path string) Option { return func(o *options) { o.pciIDs = path } }

// WithInterfaces restricts Check to the named interfaces; by default it
// checks every physical one.
func WithInterfaces(names ...string) Option {
	return func(o *options) { o.ifaces = append(o.ifaces, names...) }
}

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
