package irq

import (
	"bytes"
	"slices"

	"github.com/nicdiag/nicdiag/internal/text"
)

// /proc/stat, /proc/softirqs and /proc/net/softnet_stat are parsed by hand
// from one buffer the sampler reuses, into slices it reuses, by CPU id
// ascending: procfs (v0.23)
// reads each into a new buffer, splits every line into strings, scans each
// /proc/stat CPU line with fmt.Sscanf and parses the whole intr line (one
// count per IRQ number) that the sampler does not use; at 128 CPUs that
// was 0.5 ms and 1,700 allocations for /proc/stat alone (BenchmarkSample).
// The parsers accept what procfs accepts from a kernel and read the fields
// procfs read; they ignore the lines the sampler does not use.

// The files, as the kernel lays them out.
const (
	statFile     = "/proc/stat"
	softirqsFile = "/proc/softirqs"
	softnetFile  = "/proc/net/softnet_stat"
)

// maxProcFile bounds a read of one of them (/proc/stat at 8192 CPUs is
// under 1 MiB).
const maxProcFile = 64 << 20

// cpuTimes is one CPU's line of /proc/stat, in seconds. user holds user
// and nice time.
type cpuTimes struct {
	total, user, system, idle, iowait, steal, irq, softirq float64
}

// cpuStat is one online CPU's line of /proc/stat.
type cpuStat struct {
	cpu int
	cpuTimes
}

// parseStat parses /proc/stat into dst's storage and returns it, by CPU id
// ascending: the "cpuN" lines, whose fields are user nice system idle
// iowait irq softirq steal guest guest_nice in USER_HZ ticks (older kernels
// print fewer; the missing ones are 0). Only online CPUs have a line; one
// without fields is skipped, as procfs does; of two lines of one CPU the
// last counts. accounted is false when no CPU has any irq time since
// boot: IRQ time accounting is off, and 0 would be a lie. Errors are
// *ParseError.
func parseStat(b []byte, dst []cpuStat) (out []cpuStat, accounted bool, err error) {
	dst = dst[:0]
	for line := 1; len(b) > 0; line++ {
		var l []byte
		l, b = cutLine(b)
		name, i := nextField(l, 0)
		if len(name) <= 3 || !bytes.HasPrefix(name, []byte("cpu")) {
			continue // the "cpu" total, intr, ctxt, softirq...
		}
		id, ok := decimalInt(name[3:])
		if !ok {
			return dst[:0], false, &ParseError{File: statFile, Line: line, Err: errf("%q is not cpuN", clip(name))}
		}
		var v [10]float64
		n := 0
		for ; n < len(v); n++ {
			var tok []byte
			if tok, i = nextField(l, i); len(tok) == 0 {
				break
			}
			x, ok := text.Uint(tok)
			if !ok {
				return dst[:0], false, &ParseError{File: statFile, Line: line, Err: errf("field %d: %q is not a count", n+2, clip(tok))}
			}
			v[n] = float64(x) / userHZ
		}
		if n == 0 {
			continue
		}
		user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		// guest and guest_nice are already inside user and nice.
		dst = append(dst, cpuStat{id, cpuTimes{total: user + nice + system + idle + iowait + irq + softirq + steal, user: user + nice,
			system: system, idle: idle, iowait: iowait, steal: steal, irq: irq, softirq: softirq}})
		if irq > 0 {
			accounted = true
		}
	}
	return byCPU(dst, func(c cpuStat) int { return c.cpu }), accounted, nil
}

// byCPU sorts s by the CPU id of cpu (the kernel writes them ascending:
// then nothing moves) and keeps the last of several of one CPU.
func byCPU[T any](s []T, cpu func(T) int) []T {
	sorted := true
	for i := 1; i < len(s); i++ {
		if cpu(s[i-1]) >= cpu(s[i]) {
			sorted = false
			break
		}
	}
	if sorted {
		return s
	}
	slices.SortStableFunc(s, func(a, b T) int { return cpu(a) - cpu(b) })
	out := s[:0]
	for i, v := range s {
		if i+1 < len(s) && cpu(s[i+1]) == cpu(v) {
			continue // a later line of the same CPU
		}
		out = append(out, v)
	}
	return out
}

// statOf returns the index of cpu in s (ascending), or -1.
func statOf(s []cpuStat, cpu int) int {
	i, ok := slices.BinarySearchFunc(s, cpu, func(c cpuStat, id int) int { return c.cpu - id })
	if !ok {
		return -1
	}
	return i
}

// netSoftirqs is the NET_RX and NET_TX rows of /proc/softirqs: column k is
// CPU cpus[k]'s (the header's ids, ascending). Empty when unread.
type netSoftirqs struct {
	cpus   []int
	rx, tx []uint64
}

// at returns CPU cpu's counts; ok is false when the reading has no column
// of it.
func (n *netSoftirqs) at(cpu int) (rx, tx uint64, ok bool) {
	k, ok := slices.BinarySearch(n.cpus, cpu)
	if !ok || k >= len(n.rx) || k >= len(n.tx) {
		return 0, 0, false
	}
	return n.rx[k], n.tx[k], true
}

// clear empties n: no rates from an older reading's counts.
func (n *netSoftirqs) clear() {
	n.cpus, n.rx, n.tx = n.cpus[:0], n.rx[:0], n.tx[:0]
}

// parseSoftirqs parses /proc/softirqs into dst, reusing its storage. The
// CPU id of each column comes from the header (the columns are the
// possible CPUs, fixed at boot, unlike /proc/interrupts' online CPUs). On
// error dst is empty. Errors are *ParseError.
func parseSoftirqs(b []byte, dst *netSoftirqs) error {
	err := parseSoftirqRows(b, dst)
	if err != nil {
		dst.clear()
	}
	return err
}

func parseSoftirqRows(b []byte, dst *netSoftirqs) error {
	dst.clear()
	h, b := cutLine(b)
	ids, err := parseCPUHeader(h, dst.cpus)
	dst.cpus = ids
	if err != nil {
		return &ParseError{File: softirqsFile, Line: 1, Err: err}
	}
	nrx, ntx := 0, 0
	for line := 2; len(b) > 0; line++ {
		var l []byte
		l, b = cutLine(b)
		name, i := nextField(l, 0)
		var m *[]uint64
		var n *int
		switch string(name) {
		case "NET_RX:":
			m, n = &dst.rx, &nrx
		case "NET_TX:":
			m, n = &dst.tx, &ntx
		default:
			continue
		}
		*n = 0
		*m = (*m)[:0]
		for {
			var tok []byte
			if tok, i = nextField(l, i); len(tok) == 0 {
				break
			}
			v, ok := text.Uint(tok)
			if !ok {
				return &ParseError{File: softirqsFile, Line: line, Err: errf("column %d: %q is not a count", *n+1, clip(tok))}
			}
			if *n < len(ids) {
				*m = append(*m, v)
			}
			*n++
		}
	}
	if nrx != len(ids) || ntx != len(ids) {
		return &ParseError{File: softirqsFile, Err: errf("%d NET_RX and %d NET_TX columns under %d CPU headers", nrx, ntx, len(ids))}
	}
	return nil
}

// softnet is one CPU's line of /proc/net/softnet_stat (uint32 counters).
type softnet struct{ processed, dropped, squeezed uint32 }

// cpuSoftnet is softnet of CPU cpu.
type cpuSoftnet struct {
	cpu int
	softnet
}

// parseSoftnet parses /proc/net/softnet_stat into dst's storage and
// returns it, by CPU id ascending. Its lines are the online CPUs, of at
// least 9 hex columns; kernels since 5.10 print the CPU id in column 13,
// older ones do not, and then line i is the i-th online CPU: the i-th CPU
// of stat (the same reading's /proc/stat), in order. The first 13 columns
// must be hex uint32s, as procfs requires; of two lines of one CPU the
// last counts. On error dst is empty. Errors are *ParseError.
func parseSoftnet(b []byte, stat []cpuStat, dst []cpuSoftnet) ([]cpuSoftnet, error) {
	dst = dst[:0]
	for line := 1; len(b) > 0; line++ {
		var l []byte
		l, b = cutLine(b)
		var col [13]uint32
		w := 0
		for i := 0; ; w++ {
			var tok []byte
			if tok, i = nextField(l, i); len(tok) == 0 {
				break
			}
			if w < len(col) {
				v, ok := hex32(tok)
				if !ok {
					return dst[:0], &ParseError{File: softnetFile, Line: line, Err: errf("column %d: %q is not a hex count", w+1, clip(tok))}
				}
				col[w] = v
			}
		}
		if w < 9 {
			return dst[:0], &ParseError{File: softnetFile, Line: line, Err: errf("%d columns, want at least 9", w)}
		}
		id := line - 1
		if w >= 13 {
			id = int(col[12])
		} else if line-1 < len(stat) {
			id = stat[line-1].cpu
		}
		dst = append(dst, cpuSoftnet{id, softnet{col[0], col[1], col[2]}})
	}
	return byCPU(dst, func(c cpuSoftnet) int { return c.cpu }), nil
}

// softnetOf returns the index of cpu in s (ascending), or -1.
func softnetOf(s []cpuSoftnet, cpu int) int {
	i, ok := slices.BinarySearchFunc(s, cpu, func(c cpuSoftnet, id int) int { return c.cpu - id })
	if !ok {
		return -1
	}
	return i
}

// cutLine returns b's first line, without its newline, and the rest.
func cutLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// nextField returns the first field of l at or after i (fields are
// separated by spaces, tabs and carriage returns), empty when there is
// none, and the index after it.
func nextField(l []byte, i int) ([]byte, int) {
	for i < len(l) && (l[i] == ' ' || l[i] == '\t' || l[i] == '\r') {
		i++
	}
	j := i
	for j < len(l) && l[j] != ' ' && l[j] != '\t' && l[j] != '\r' {
		j++
	}
	return l[i:j], j
}

// hex32 parses hex digits (no prefix) into a uint32.
func hex32(b []byte) (uint32, bool) {
	v, ok := text.Hex(b)
	if !ok || v > 1<<32-1 {
		return 0, false
	}
	return uint32(v), true
}
