package irq

import (
	"bytes"
	"encoding/binary"
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

// splitTail splits the text after a numbered row's counts into chip, hwirq,
// trigger and actions. Layouts seen:
//
//	PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0    (x86, 6.x)
//	PCI-MSI 114689-edge      virtio5-req.0                 (x86, 4.x-5.x)
//	IR-PCI-MSI-edge      iwlwifi                           (x86, 3.x)
//	GICv3  27 Level     arch_timer                         (arm64)
//	GICv3  27 Level     -fasteoi  foo                      (GENERIC_IRQ_SHOW_LEVEL with a flow name)
//	RISC-V INTC   5 Edge      riscv-timer                  (a chip name with a space)
func splitTail(t string) (chip, hwirq, trigger, actions string) {
	full := t
	chip, t = cutField(t)
	if before, after, ok := cutLast(chip, "-"); ok && isTrigger(after) {
		chip, trigger = before, after // old "IR-PCI-MSI-edge"
		return chip, "", trigger, t
	}
	if n := spacedChip(t); n > 0 {
		t = t[n:]
		chip = strings.TrimRight(full[:len(full)-len(t)], " \t")
	}
	f, r := cutField(t)
	if d := leadingDigits(f); d > 0 {
		switch {
		case d == len(f):
			hwirq, t = f, r
		case f[d] == '-':
			hwirq, trigger, t = f[:d], f[d+1:], r
		}
	}
	f, r = cutField(t)
	if f == "Edge" || f == "Level" {
		trigger, t = f, r
		f, r = cutField(t)
	}
	if len(f) > 1 && f[0] == '-' {
		trigger, t = f[1:], r
	}
	return chip, hwirq, trigger, t
}

// spacedChip returns how far into t (the text after a chip's first word)
// the chip name runs when it holds spaces ("RISC-V INTC", "SiFive PLIC"):
// up to a hwirq printed as "5 Edge", "5 Level" or "5-edge" within the next
// two words. 0 when t starts with the hwirq or none is found.
func spacedChip(t string) int {
	if leadingDigits(t) > 0 {
		return 0
	}
	rest := t
	for range 2 {
		_, rest = cutField(rest)
		f, r := cutField(rest)
		d := leadingDigits(f)
		if d == 0 {
			continue
		}
		g, _ := cutField(r)
		if (d == len(f) && (g == "Edge" || g == "Level")) || (d < len(f) && f[d] == '-' && isTrigger(f[d+1:])) {
			return len(t) - len(rest)
		}
		return 0
	}
	return 0
}

func isTrigger(s string) bool {
	switch s {
	case "edge", "level", "fasteoi", "simple", "percpu", "eoi":
		return true
	}
	return false
}

// cutField returns the first space-separated field of s and the rest,
// trimmed of leading space.
func cutField(s string) (string, string) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	s = s[i:]
	j := 0
	for j < len(s) && s[j] != ' ' && s[j] != '\t' {
		j++
	}
	r := s[j:]
	k := 0
	for k < len(r) && (r[k] == ' ' || r[k] == '\t') {
		k++
	}
	return s[:j], r[k:]
}

func cutLast(s, sep string) (string, string, bool) {
	i := len(s) - 1
	for i >= 0 && s[i] != sep[0] {
		i--
	}
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

func leadingDigits(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// parseCounts reads up to len(counts) decimal counts from the start of
// rest and returns where it stopped and how many it read (-1: overflow).
// It stops early at a token that is not a plain number. This loop is the
// whole cost of a sample on a large host, hence its shape.
func parseCounts(rest []byte, counts []uint64) (int, int) {
	i, col := 0, 0
	for col < len(counts) {
		// Fast paths: the kernel writes each count as " %10u", and on a big
		// host most are 0 or a single digit (a vector counts on its own CPU
		// only). One window, two overlapping 8-byte loads per column.
		if len(rest)-i >= 12 {
			w := rest[i : i+12 : i+12]
			if binary.LittleEndian.Uint64(w[0:8]) == spaces8 && w[11] == ' ' {
				if binary.LittleEndian.Uint64(w[3:11]) == spaces7zero {
					col++ // counts are zeroed already
					i += 11
					continue
				}
				if d := w[10] - '0'; w[8] == ' ' && w[9] == ' ' && d <= 9 {
					counts[col] = uint64(d)
					col++
					i += 11
					continue
				}
			}
		}
		for i+8 <= len(rest) && binary.LittleEndian.Uint64(rest[i:]) == spaces8 {
			i += 8
		}
		for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t') {
			i++
		}
		if i >= len(rest) {
			break
		}
		d := rest[i] - '0'
		if d > 9 {
			break
		}
		v, j := uint64(d), i+1
		for ; j < len(rest); j++ {
			d = rest[j] - '0'
			if d > 9 {
				break
			}
			v = v*10 + uint64(d)
		}
		if j-i > 19 { // may have overflowed: check the slow way
			u, err := strconv.ParseUint(string(rest[i:j]), 10, 64)
			if err != nil {
				return i, -1
			}
			v = u
		}
		if j < len(rest) && rest[j] != ' ' && rest[j] != '\t' {
			break // a token that starts with digits: a hwirq, not a count
		}
		counts[col] = v
		col++
		i = j
	}
	return i, col
}

const spaces8 = 0x2020202020202020

// spaces7zero is "       0" read as a little-endian uint64.
const spaces7zero = 0x3020202020202020

// skipSpaces returns the index of the first non-space byte at or after i.
// Rows are mostly padding, so it steps eight bytes at a time.
func skipSpaces(b []byte, i int) int {
	for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:]) == spaces8 {
		i += 8
	}
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// parseCPUHeader parses "CPU0 CPU1 CPU3" into CPU ids, appending to ids.
func parseCPUHeader(h []byte, ids []int) ([]int, error) {
	for i := 0; ; {
		i = skipSpaces(h, i)
		if i >= len(h) || h[i] == '\n' || h[i] == '\r' {
			break
		}
		j := i
		for j < len(h) && h[j] != ' ' && h[j] != '\t' && h[j] != '\r' {
			j++
		}
		tok := h[i:j]
		i = j
		if !bytes.HasPrefix(tok, []byte("CPU")) || len(tok) == 3 || len(tok) > 9 {
			return ids, errf("header token %q is not CPUn", clip(tok))
		}
		id := 0
		for _, c := range tok[3:] {
			if c < '0' || c > '9' {
				return ids, errf("header token %q is not CPUn", clip(tok))
			}
			id = id*10 + int(c-'0')
		}
		if len(ids) > 0 && id <= ids[len(ids)-1] {
			return ids, errf("header CPU ids not ascending at %q", clip(tok))
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return ids, ErrNoCPUs
	}
	return ids, nil
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
