package stack

import (
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/option"
)

// Option configures NewSampler: one of this package's, or one of package
// option's. option.Root reads /proc under a directory instead of the live
// host: a recorded /proc tree (its net/snmp, net/netstat,
// net/stat/nf_conntrack, sys/net/..., PID/stat files) reads like the live
// one, as one network namespace; under another root nothing is asked over
// netlink (there are no flows, qdiscs or routes) and WithNetns has no
// effect. option.ReadDeadline (or option.ReadBudget, from NewSampler)
// stops the reads of the root's files: after it, every read fails at once
// with an error matching context.DeadlineExceeded.
type Option interface {
	ApplyRead(*option.Read)
	StackOption()
}

// own is an option of this package's.
type own func(*options)

func (own) ApplyRead(*option.Read) {}
func (own) StackOption()           {}

type options struct {
	root      fsroot.Root
	netns     []string
	pid       int
	ifaces    []string
	scanEvery time.Duration
	now       func() time.Time
}

func newOptions(opts []Option) options {
	o := options{scanEvery: time.Second, now: time.Now}
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

// WithNetns adds the network namespace whose file is at path
// ("/run/netns/NAME", "/proc/PID/ns/net") to those read; the interfaces of
// WithInterfaces are in the first one given. It may be given more than
// once. The namespace file is opened once and held.
func WithNetns(path string) Option {
	return own(func(o *options) { o.netns = append(o.netns, path) })
}

// WithProcessTree makes the run the process pid and every process below
// it (Sampler.Watch can set it later): its sockets are the flows, its
// network namespaces those read, and its time on each CPU the run's own.
func WithProcessTree(pid int) Option {
	return own(func(o *options) { o.pid = max(pid, 0) })
}

// WithInterfaces names interfaces whose qdiscs are read, beside those the
// flows route through; without a process tree, the flows are the sockets
// bound to these interfaces' addresses. Without either, the flows are
// every socket of the namespaces read not bound to a loopback address.
func WithInterfaces(names ...string) Option {
	return own(func(o *options) { o.ifaces = append(o.ifaces, names...) })
}

// WithScanEvery sets how often the process table is scanned for the other
// work on each CPU: at the first reading at least d after the previous
// scan, and never more than 2 % of the time: a scan reads every
// /proc/PID/stat (BenchmarkSample/scan-5000), so one that took 40 ms waits
// 2 s. The default is 1 s; 0 or less scans at every reading, whatever it
// costs. The run's tree is followed at every reading through the kernel's
// children lists, and its threads read, whatever the scans.
func WithScanEvery(d time.Duration) Option {
	return own(func(o *options) { o.scanEvery = d })
}

// withClock replaces time.Now (tests).
func withClock(now func() time.Time) Option {
	return own(func(o *options) { o.now = now })
}
