package monitor

import (
	"context"
	"fmt"
	"slices"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/stack"
)

// follower reads this host's stack at each sample of a run, right after
// the NICs' counters, and, with WithRoutedInterfaces, adds the interfaces
// the command's flows leave by to those the run samples. The irq sampler
// fixes its NICs when it starts: adding one starts a new sampler over the
// old NICs and the new, whose first reading is taken at once, so that
// only the few milliseconds in between go unsampled.
type follower struct {
	o       options
	s       *stack.Sampler
	err     error // why s could not start
	nics    []nicinfo.NIC
	iopts   []irq.Option
	pid     int
	added   []Limits // for the next sample
	refused map[string]bool
}

// start opens the stack sampler of a run over nics.
func (f *follower) start(ctx context.Context, o options, nics []nicinfo.NIC, iopts []irq.Option) {
	f.o, f.nics, f.iopts, f.refused = o, slices.Clone(nics), iopts, map[string]bool{}
	var sopts []stack.Option
	if root := o.read.Root; root != "" && root != "/" {
		sopts = append(sopts, option.Root(root))
	}
	if o.netns != "" {
		sopts = append(sopts, stack.WithNetns(o.netns))
	}
	var names []string
	for _, n := range nics {
		names = append(names, n.Name)
	}
	if len(names) > 0 {
		sopts = append(sopts, stack.WithInterfaces(names...))
	}
	f.s, f.err = stack.NewSampler(ctx, sopts...)
}

// watch makes pid's tree the run's for the stack.
func (f *follower) watch(pid int) {
	f.pid = pid
	if f.s != nil {
		f.s.Watch(pid)
	}
}

// sample reads the stack over the interval of x, the NICs' sample just
// taken, and returns the run's Sample.
func (f *follower) sample(ctx context.Context, x irq.Sample) Sample {
	out := Sample{Sample: x, Added: f.added}
	f.added = nil
	if f.s == nil {
		st := stack.Sample{Time: x.Time, IntervalS: x.IntervalS, Missing: []string{fmt.Sprintf("this host's stack: %v", f.err)}}
		out.Stack = &st
		return out
	}
	st, err := f.s.Read(ctx)
	if err != nil {
		st = stack.Sample{Time: x.Time, IntervalS: x.IntervalS, Missing: []string{fmt.Sprintf("this host's stack: %v", err)}}
	}
	out.Stack = &st
	return out
}

// extend adds the interfaces of this namespace that st's flows leave by
// and the run does not sample yet (WithRoutedInterfaces): it returns a
// new sampler over them and the old NICs, having closed old, or nil when
// nothing was added. An interface that cannot be read or sampled is not
// tried again.
func (f *follower) extend(ctx context.Context, old *irq.Sampler, st *stack.Sample) *irq.Sampler {
	if !f.o.routed || f.o.netns != "" || st == nil {
		return nil
	}
	var self uint64
	found := false
	for _, n := range st.Namespaces {
		if n.Path == "" {
			self, found = n.ID, true
		}
	}
	if !found {
		return nil
	}
	var add []nicinfo.NIC
	var lims []Limits
	for _, i := range st.Interfaces {
		if i.Netns != self || f.refused[i.Name] || slices.ContainsFunc(f.nics, func(n nicinfo.NIC) bool { return n.Name == i.Name }) ||
			slices.ContainsFunc(add, func(n nicinfo.NIC) bool { return n.Name == i.Name }) {
			continue
		}
		n, err := nicinfo.Get(ctx, i.Name, option.Of(f.o.read))
		if err != nil {
			f.refused[i.Name] = true
			continue
		}
		add = append(add, *n)
		l := Limits{NIC: n.Name, Virtual: nicinfo.IsVirtual(n), MTU: n.MTU, Why: WhyRouted}
		if n.PCI != nil {
			l.Address = n.PCI.Address.String()
		}
		lims = append(lims, l)
	}
	if len(add) == 0 {
		return nil
	}
	s, err := irq.NewSampler(ctx, append(slices.Clone(f.nics), add...), f.iopts...)
	if err != nil {
		for _, n := range add {
			f.refused[n.Name] = true
		}
		return nil
	}
	old.Close()
	if f.pid > 0 {
		s.Watch(f.pid)
	}
	f.nics = append(f.nics, add...)
	f.added = append(f.added, lims...)
	return s
}

// close closes the stack sampler.
func (f *follower) close() {
	if f.s != nil {
		f.s.Close()
		f.s = nil
	}
}
