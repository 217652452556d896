package pcie

import (
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// Option configures PathTo, Links and ReadLinkAttrs.
type Option func(*options)

type options struct {
	root     fsroot.Root
	deadline time.Time
	namer    func(vendor, device uint16) string
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

// WithReadDeadline stops the reads of the root's files at t: after it every
// read fails at once with an error matching context.DeadlineExceeded, and
// what was not read is reported as unread. The zero time sets no deadline.
func WithReadDeadline(t time.Time) Option {
	return func(o *options) { o.deadline = t }
}

func buildOptions(opts []Option) options {
	var o options
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	o.root = o.root.WithDeadline(o.deadline)
	return o
}
