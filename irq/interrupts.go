package irq

import (
	"bytes"
	"strconv"
	"strings"
)

const interruptsFile = "/proc/interrupts"

// Interrupts is one reading of /proc/interrupts. Count columns are keyed by
// the CPU ids in the header, so a file written while CPUs are offline
// ("CPU0 CPU2 CPU3") is never misaligned.
//
// An Interrupts is meant to be reused: ParseInterrupts into the same value
// again keeps its slices and, when the layout has not changed, its strings,
// so a steady-state sample allocates nothing.
type Interrupts struct {
	// CPUs holds the CPU id of each count column, in file order.
	CPUs []int
	// Lines holds one entry per row, in file order.
	Lines []Line

	counts []uint64 // row i is counts[i*len(CPUs) : (i+1)*len(CPUs)]
}

// Line is one row of /proc/interrupts.
type Line struct {
	// Name is the row label without the colon: "38", "NMI", "LOC".
	Name string
	// IRQ is the IRQ number, or -1 for a named row such as "NMI".
	IRQ int
	// Chip is the interrupt controller ("PCI-MSIX-0000:00:03.0", "IR-PCI-MSI",
	// "IO-APIC"); empty for named rows.
	Chip string
	// HWIRQ is the hardware IRQ number within the chip, as printed ("1");
	// empty when the kernel did not print one.
	HWIRQ string
	// Trigger is "edge", "fasteoi", "Level"...; empty when not printed.
	Trigger string
	// Actions is the rest of the line: the handler names joined by ", "
	// ("virtio2-input.0", "ehci_hcd:usb1, mmc0"), or the description of a
	// named row ("Local timer interrupts"). Names may contain spaces.
	Actions string
	// Columns is how many count columns the row has: len(CPUs) for most rows,
	// 1 for "ERR" and "MIS".
	Columns int

	tail string // the raw text after the counts, to detect layout changes
}

// Counts returns the per-column counts of row i; it aliases the Interrupts'
// storage and is valid until the next parse into it.
func (x *Interrupts) Counts(i int) []uint64 {
	n := len(x.CPUs)
	return x.counts[i*n : (i+1)*n]
}

// Total returns the sum over all columns of row i.
func (x *Interrupts) Total(i int) uint64 {
	var t uint64
	for _, v := range x.Counts(i) {
		t += v
	}
	return t
}

// Index returns the row of IRQ number irq, or -1.
func (x *Interrupts) Index(irq int) int {
	// Numbered rows are sorted ascending in the file; search that prefix.
	lo, hi := 0, len(x.Lines)
	for lo < hi && x.Lines[hi-1].IRQ < 0 {
		hi--
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch v := x.Lines[m].IRQ; {
		case v == irq:
			return m
		case v < irq:
			lo = m + 1
		default:
			hi = m
		}
	}
	for i := range x.Lines { // the file was not sorted after all
		if x.Lines[i].IRQ == irq {
			return i
		}
	}
	return -1
}

// ActionNames splits a numbered row's action string into handler names;
// nil for named rows.
func (l *Line) ActionNames() []string {
	if l.IRQ < 0 || l.Actions == "" {
		return nil
	}
	return strings.Split(l.Actions, ", ")
}

// ParseInterrupts parses the contents of /proc/interrupts into x, reusing
// x's storage. On error x holds no rows.
func ParseInterrupts(b []byte, x *Interrupts) error {
	x.Lines = x.Lines[:0]
	x.counts = x.counts[:0]
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		nl = len(b)
	}
	cpus, err := parseCPUHeader(b[:nl], x.CPUs[:0])
	x.CPUs = cpus
	if err != nil {
		return &ParseError{File: interruptsFile, Line: 1, Err: err}
	}
	ncpu := len(cpus)
	old := x.Lines[:cap(x.Lines)] // previous rows, for reusing strings
	lineNo := 1
	for p := nl + 1; p < len(b); {
		lineNo++
		e := bytes.IndexByte(b[p:], '\n')
		if e < 0 {
			e = len(b)
		} else {
			e += p
		}
		line := b[p:e]
		p = e + 1
		if len(bytes.TrimSpace(line)) == 0 {
			continue // a blank line separates arch rows on some kernels
		}
		n := len(x.Lines)
		start := len(x.counts)
		x.counts = growCounts(x.counts, ncpu)
		var prev *Line
		if n < len(old) {
			prev = &old[n]
		}
		l, err := parseRow(line, x.counts[start:start+ncpu], prev)
		if err != nil {
			x.Lines = x.Lines[:0]
			x.counts = x.counts[:0]
			return &ParseError{File: interruptsFile, Line: lineNo, Err: err}
		}
		x.Lines = append(x.Lines, l)
	}
	return nil
}

// growCounts extends c by n zeroed entries, reusing capacity.
func growCounts(c []uint64, n int) []uint64 {
	l := len(c)
	if cap(c)-l < n {
		nc := make([]uint64, l, 2*cap(c)+n)
		copy(nc, c)
		c = nc
	}
	c = c[:l+n]
	clear(c[l:])
	return c
}

// parseRow parses one row into counts; prev, when it has the same name and
// tail, lends its strings so that nothing is allocated.
func parseRow(line []byte, counts []uint64, prev *Line) (Line, error) {
	colon := bytes.IndexByte(line, ':')
	if colon < 0 {
		return Line{}, errf("no colon in %q", clip(line))
	}
	name := bytes.TrimSpace(line[:colon])
	if len(name) == 0 || bytes.ContainsAny(name, " \t") {
		return Line{}, errf("bad row label %q", clip(line[:colon]))
	}
	var l Line
	if prev != nil && prev.Name == string(name) {
		l.Name, l.IRQ = prev.Name, prev.IRQ
	} else {
		l.Name = string(name)
		l.IRQ = -1
		if v, err := strconv.Atoi(l.Name); err == nil && v >= 0 {
			l.IRQ = v
		}
	}
	rest := line[colon+1:]
	i, col := parseCounts(rest, counts)
	if col < 0 {
		return Line{}, errf("count overflows 64 bits in row %q", clip(name))
	}
	if col == 0 {
		return Line{}, errf("row %q has no counts", clip(name))
	}
	l.Columns = col
	tail := bytes.TrimSpace(rest[i:])
	if prev != nil && prev.Name == l.Name && prev.tail == string(tail) {
		l.tail, l.Chip, l.HWIRQ, l.Trigger, l.Actions = prev.tail, prev.Chip, prev.HWIRQ, prev.Trigger, prev.Actions
		return l, nil
	}
	l.tail = string(tail)
	if l.IRQ < 0 {
		l.Actions = l.tail
		return l, nil
	}
	l.Chip, l.HWIRQ, l.Trigger, l.Actions = splitTail(l.tail)
	return l, nil
}
