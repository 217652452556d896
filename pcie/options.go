package pcie

import (
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/option"
)

// Option configures PathTo, Links and ReadLinkAttrs: one of this
// package's (WithNamer), or one of package option's (option.Root,
// option.ReadBudget, option.ReadDeadline).
type Option interface {
	ApplyRead(*option.Read)
	PCIeOption()
}

// own is an option of this package's.
type own func(*options)

func (own) ApplyRead(*option.Read) {}
func (own) PCIeOption()            {}

type options struct {
	root  fsroot.Root
	namer func(vendor, device uint16) string
}

// WithNamer fills End.Name from vendor and device IDs, e.g. with a pci.ids
// lookup. Without it names stay empty; this package never reads pci.ids.
func WithNamer(f func(vendor, device uint16) string) Option {
	return own(func(o *options) { o.namer = f })
}

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
	end, _ := r.End(time.Now())
	o.root = fsroot.New(r.Root).WithDeadline(end)
	return o
}
