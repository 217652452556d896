package irq

// The tokenizers of /proc/interrupts: the CPU header, the count columns of
// a row, and the chip, hwirq, trigger and actions after them.

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
)

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
		return ids, errNoCPUs
	}
	return ids, nil
}

func clip(b []byte) string { return text.Clip(string(b)) }
