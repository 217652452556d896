package irq

import (
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
)

// maxCPU bounds CPU ids read from lists and masks (the kernel's NR_CPUS
// tops out at 8192).
const maxCPU = 1 << 16

// ParseCPUList parses a kernel CPU list such as "0-3,8,10-11" (the format of
// smp_affinity_list, effective_affinity_list and local_cpulist) into sorted,
// distinct CPU ids. An empty list gives nil.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := cpuID(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = cpuID(hi); err != nil {
				return nil, err
			}
			if b < a {
				return nil, &ParseError{File: "cpu list", Err: errf("CPU range %q runs backwards", part)}
			}
		}
		if len(out)+b-a >= maxCPU {
			return nil, &ParseError{File: "cpu list", Err: errf("more than %d CPUs in %q", maxCPU, text.Clip(s))}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return sortUnique(out), nil
}

func cpuID(s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 || v >= maxCPU {
		return 0, &ParseError{File: "cpu list", Err: errf("bad CPU id %q", s)}
	}
	return v, nil
}

// parseCPUMask parses a kernel hex CPU mask such as "ff" or
// "00000000,0000000f" (rps_cpus, xps_cpus, smp_affinity) into sorted CPU
// ids. All-zero gives nil.
func parseCPUMask(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	hex := strings.ReplaceAll(s, ",", "")
	if len(hex)*4 > maxCPU {
		return nil, &ParseError{File: "cpu mask", Err: errf("mask of %d digits is too long", len(hex))}
	}
	var out []int
	for i := len(hex) - 1; i >= 0; i-- {
		c := hex[i]
		v, ok := text.HexDigit(c)
		if !ok {
			return nil, &ParseError{File: "cpu mask", Err: errf("bad hex digit %q in %q", c, text.Clip(s))}
		}
		base := (len(hex) - 1 - i) * 4
		for bit := 0; bit < 4; bit++ {
			if v&(1<<bit) != 0 {
				out = append(out, base+bit)
			}
		}
	}
	return sortUnique(out), nil
}

func sortUnique(v []int) []int {
	if len(v) == 0 {
		return nil
	}
	slices.Sort(v)
	return slices.Compact(v)
}

// FormatCPUList renders sorted CPU ids as a kernel CPU list ("0-3,8").
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
