package irq

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
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

	// counts holds the rows' counts: row i's are counts.row(i) when
	// rowOff is nil, else counts.row(rowOff[i]) (-1: not kept; a Sampler
	// keeps its NICs' rows only).
	counts countStore
	rowOff []int32
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
	// Where the row's text lies, for checking a later reading's row
	// against it without parsing its counts: the line's length, its colon
	// and the start of tail (the line's length when tail is empty).
	rawLen, colon, tailOff int32
}

// Counts returns the per-column counts of row i; it aliases the Interrupts'
// storage and is valid until the next parse into it. It is nil for a row
// whose counts a Sampler did not keep (never in a parse of ParseInterrupts
// or ReadInterrupts).
func (x *Interrupts) Counts(i int) []uint64 {
	k := i
	if x.rowOff != nil {
		if k = int(x.rowOff[i]); k < 0 {
			return nil
		}
	}
	return x.counts.row(k)
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
// x's storage. On error x holds no rows. The counts kept are bounded (see
// ErrTooLarge).
func ParseInterrupts(b []byte, x *Interrupts) error {
	lr := lineReader{buf: b, w: len(b), eof: true}
	return parseInterrupts(&lr, x, keepAll, nil, nil)
}

// parseMode says which rows' counts a parse keeps.
type parseMode uint8

const (
	keepAll  parseMode = iota // every row's, row after row (rowOff nil)
	keepNone                  // none: the layout alone (rowOff -1)
	keepSome                  // those keep marks, the file checked against a layout
)

// Caps on one parse: beyond them it fails with an error wrapping
// ErrTooLarge. maxCounts bounds the counts kept (8 bytes each: 128 MiB),
// maxRows the rows (a few hundred bytes each with their strings), maxLine
// one line (a row of 8192 CPUs is under 200 KiB).
const (
	maxCounts = 1 << 24
	maxRows   = 1 << 18
	maxLine   = 1 << 20
)

// errLayout says a row of a reading parsed against a layout (a Sampler's
// steady state) is not that layout's: the reading is parsed again in full.
var errLayout = errors.New("/proc/interrupts layout changed")

// parseInterrupts parses the lines of lr into x, reusing x's storage; on
// error x holds no rows.
//
// keepSome parses against ref, the layout of an earlier parse: the file
// must have ref's layout (its CPU header, and row after row the same label
// and tail: chip, hwirq, trigger, actions), else errLayout. Only the rows
// keep marks (by row) have their counts parsed and kept; each other row is
// checked by its length, label and tail alone: text between its label and
// its tail that is not a run of counts goes unnoticed, where its counts
// are not read.
func parseInterrupts(lr *lineReader, x *Interrupts, mode parseMode, ref *Interrupts, keep []bool) error {
	err := parseRows(lr, x, mode, ref, keep)
	if err != nil {
		x.Lines = x.Lines[:0]
		x.counts.n = 0
		x.rowOff = x.rowOff[:0]
		return err
	}
	x.counts.trim()
	return nil
}

func parseRows(lr *lineReader, x *Interrupts, mode parseMode, ref *Interrupts, keep []bool) error {
	x.Lines = x.Lines[:0]
	x.counts.n = 0
	x.rowOff = x.rowOff[:0]
	if err := x.parseHeader(lr, mode, keep); err != nil {
		return err
	}
	against := mode == keepSome // a steady reading, checked row by row
	if against && !slices.Equal(x.CPUs, ref.CPUs) {
		return errLayout
	}
	old := x.Lines[:cap(x.Lines)] // previous rows, for reusing strings
	for {
		line, ok, err := lr.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // a blank line separates arch rows on some kernels
		}
		if err := x.parseLine(lr, line, mode, ref, keep, old); err != nil {
			return err
		}
	}
	if against && len(x.Lines) != len(ref.Lines) {
		return errLayout
	}
	if mode == keepAll {
		x.rowOff = nil
	} else if x.rowOff == nil {
		x.rowOff = []int32{} // no rows, none kept
	}
	return nil
}

// parseHeader reads the CPU header into x.CPUs and sizes x.counts for the
// rows mode keeps.
func (x *Interrupts) parseHeader(lr *lineReader, mode parseMode, keep []bool) error {
	hdr, _, err := lr.next()
	if err != nil {
		return err
	}
	cpus, err := parseCPUHeader(hdr, x.CPUs[:0])
	x.CPUs = cpus
	if err != nil {
		return &ParseError{File: interruptsFile, Line: 1, Err: err}
	}
	x.counts.reset(len(cpus))
	switch mode {
	case keepNone:
		x.counts.hint = 1
	case keepSome:
		x.counts.hint = 0
		for _, k := range keep {
			if k {
				x.counts.hint++
			}
		}
	default:
		x.counts.hint = 0
	}
	return nil
}

// parseLine adds the row of line to x: checked against ref's row in a
// steady reading (keepSome), a row not kept taken from it as it was;
// reusing the strings of old, the rows of x's previous parse, otherwise.
func (x *Interrupts) parseLine(lr *lineReader, line []byte, mode parseMode, ref *Interrupts, keep []bool, old []Line) error {
	n := len(x.Lines)
	if n >= maxRows {
		return fmt.Errorf("%s: %w: over %d rows", interruptsFile, ErrTooLarge, maxRows)
	}
	against := mode == keepSome
	var prev *Line
	switch {
	case against:
		if n >= len(ref.Lines) {
			return errLayout
		}
		prev = &ref.Lines[n]
		if !keep[n] {
			if !prev.sameText(line) {
				return errLayout
			}
			x.Lines = append(x.Lines, *prev)
			x.rowOff = append(x.rowOff, -1)
			return nil
		}
	case n < len(old):
		prev = &old[n]
	}
	k, ncpu := x.counts.n, len(x.CPUs)
	if (k+1)*ncpu > lr.maxCounts() {
		return fmt.Errorf("%s: %w: over %d counts (%d CPUs)", interruptsFile, ErrTooLarge, lr.maxCounts(), ncpu)
	}
	l, err := parseRow(line, x.counts.add(), prev)
	if err != nil {
		return &ParseError{File: interruptsFile, Line: lr.line, Err: err}
	}
	if against && (l.Name != prev.Name || l.tail != prev.tail) {
		return errLayout
	}
	switch mode {
	case keepNone: // the counts were scratch
		x.counts.n--
		x.rowOff = append(x.rowOff, -1)
	case keepSome:
		x.rowOff = append(x.rowOff, int32(k))
	}
	x.Lines = append(x.Lines, l)
	return nil
}

// sameText reports whether line has l's length, label and tail where l
// had them: the row of the same IRQ, chip and actions, its counts unread.
func (l *Line) sameText(line []byte) bool {
	if len(line) != int(l.rawLen) || int(l.colon) >= len(line) || line[l.colon] != ':' {
		return false
	}
	if string(bytes.TrimSpace(line[:l.colon])) != l.Name {
		return false
	}
	end := int(l.tailOff) + len(l.tail)
	if end > len(line) || string(line[l.tailOff:end]) != l.tail {
		return false
	}
	return len(bytes.TrimSpace(line[end:])) == 0
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
	if len(line) > math.MaxInt32 {
		return Line{}, errf("row %q too long", clip(name))
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
	l.rawLen, l.colon, l.tailOff = int32(len(line)), int32(colon), int32(len(line))
	if len(tail) > 0 {
		l.tailOff = int32(colon + 1 + i + cap(rest[i:]) - cap(tail))
	}
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
