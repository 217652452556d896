package pcie

import "github.com/nicdiag/nicdiag/internal/fsroot"

// Option configures PathTo, Links and ReadLinkAttrs.
type Option func(*options)

type options struct {
	root  fsroot.Root
	namer func(vendor, device uint16) string
}

// WithRoot reads the kernel trees under dir (an unpacked snapshot) instead of
// the live host. "" and "/" mean the live host.
func WithRoot(dir string) Option {
	return func(o *options) { o.root = fsroot.New(dir) }
}

// WithNamer fills End.Name from vendor and device IDs, e.g. with a pci.ids
// lookup. Without it names stay empty; this package never reads pci.ids.
func WithNamer(f func(vendor, device uint16) string) Option {
	return func(o *options) { o.namer = f }
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
