// Package option holds the options every nicdiag package that reads a
// host takes: where it reads (Root: a snapshot directory instead of the
// live host) and for how long (ReadBudget, ReadDeadline). One Option
// value is good for all of them, beside each package's own options:
//
//	h, err := nicdiag.Inspect(ctx, option.Root("snapshot/"), nicdiag.WithInterfaces("eth0"))
//	nics, err := nicinfo.List(ctx, option.Root("snapshot/"))
package option

import "time"

// Read is where and for how long a host is read: what the options of this
// package set. A package gathers its options' Read and reads accordingly;
// a caller has no need of it.
type Read struct {
	// Root is the directory read; "" and "/" are the live host.
	Root string
	// Budget bounds the time one call spends reading, from its start;
	// Deadline ends the reads at a time. The last of ReadBudget and
	// ReadDeadline given is the one set (BudgetSet, DeadlineSet).
	Budget                 time.Duration
	Deadline               time.Time
	BudgetSet, DeadlineSet bool
}

// End returns when the reads of a call begun at start end: at the
// deadline or after the budget that was set (ok false when neither was),
// the zero time for none.
func (r Read) End(start time.Time) (end time.Time, ok bool) {
	switch {
	case r.DeadlineSet:
		return r.Deadline, true
	case r.BudgetSet && r.Budget > 0:
		return start.Add(r.Budget), true
	case r.BudgetSet:
		return time.Time{}, true
	}
	return time.Time{}, false
}

// Option sets where a host is read, or for how long. The functions of
// packages nicdiag, nicinfo, pcie, irq, monitor, stack and exporter take
// it among their own options.
type Option struct {
	set func(*Read)
}

// Root reads the kernel trees (/sys, /proc) under dir, an unpacked
// snapshot, instead of the live host. "" and "/" mean the live host.
func Root(dir string) Option {
	return Option{func(r *Read) { r.Root = dir }}
}

// ReadBudget bounds the time one call spends reading the root: once d has
// passed since the call began, every read left fails at once with an error
// wrapping nicdiag.ErrReadBudget, so that a huge
// or hostile snapshot cannot hold the caller. d <= 0 means no budget, also
// on a snapshot, which otherwise has nicinfo.DefaultReadBudget.
func ReadBudget(d time.Duration) Option {
	return Option{func(r *Read) { r.Budget, r.BudgetSet, r.DeadlineSet = d, true, false }}
}

// ReadDeadline is ReadBudget with the end given as a time, for calls that
// share one budget; the zero time means no budget.
func ReadDeadline(t time.Time) Option {
	return Option{func(r *Read) { r.Deadline, r.DeadlineSet, r.BudgetSet = t, true, false }}
}

// Of is the Option that sets all of r: a package passes what it was
// given on to another.
func Of(r Read) Option { return Option{func(dst *Read) { *dst = r }} }

// ApplyRead sets o in r: how a package takes an Option.
func (o Option) ApplyRead(r *Read) {
	if o.set != nil {
		o.set(r)
	}
}

// The marker methods make an Option one of each package's options; a
// package's own options carry its marker alone, so that the compiler
// refuses one given to another package.

// NicdiagOption marks an Option as one of package nicdiag's.
func (Option) NicdiagOption() {}

// NICInfoOption marks an Option as one of package nicinfo's.
func (Option) NICInfoOption() {}

// PCIeOption marks an Option as one of package pcie's.
func (Option) PCIeOption() {}

// IRQOption marks an Option as one of package irq's.
func (Option) IRQOption() {}

// MonitorOption marks an Option as one of package monitor's.
func (Option) MonitorOption() {}

// StackOption marks an Option as one of package stack's.
func (Option) StackOption() {}

// ExporterOption marks an Option as one of package exporter's.
func (Option) ExporterOption() {}
