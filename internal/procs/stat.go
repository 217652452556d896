package procs

import (
	"bytes"

	"github.com/nicdiag/nicdiag/internal/text"
)

// PFKthread is the flag of a kernel thread in Stat.Flags (PF_KTHREAD,
// include/linux/sched.h).
const PFKthread = 0x00200000

// Stat is what /proc/PID/stat says of a process's CPU use, beside Proc.
type Stat struct {
	Proc
	// Comm is the command name, a slice of the parsed line.
	Comm []byte
	// Flags are the kernel's task flags (field 9); UTime and STime the
	// user and system time in clock ticks (fields 14, 15); Threads the
	// number of threads (field 20); CPU the CPU it last ran on (field 39),
	// -1 when the line stops before it.
	Flags        uint64
	UTime, STime uint64
	Threads      int
	CPU          int
}

// ParseStat parses a /proc/PID/stat line without allocating: "pid (comm)
// state ppid pgrp session ... utime(14) stime(15) ... num_threads(20) ...
// starttime(22) ... processor(39) ...". The comm may hold spaces and
// parentheses; the fields after it start past its last ')'. A line
// without the first 20 fields after the comm is refused.
func ParseStat(pid int, b []byte) (Stat, bool) {
	i := bytes.LastIndexByte(b, ')')
	j := bytes.IndexByte(b, '(')
	if i < 0 || j < 0 || j > i {
		return Stat{}, false
	}
	s := Stat{Proc: Proc{PID: pid}, Comm: b[j+1 : i], CPU: -1}
	rest := b[i+1:]
	var ok bool
	for n := 0; ; n++ {
		var f []byte
		f, rest = field(rest)
		if len(f) == 0 {
			return s, n >= 20
		}
		switch n {
		case 0:
			if len(f) != 1 {
				return Stat{}, false
			}
			s.State = f[0]
			continue
		case 1, 2, 6, 11, 12, 17, 19, 36:
		default:
			continue
		}
		v, good := text.Uint(f)
		if !good {
			if n == 1 || n == 2 || n == 19 {
				return Stat{}, false
			}
			continue // a field this reader does not need the value of
		}
		switch n {
		case 1:
			s.PPID = int(v)
		case 2:
			s.PGID = int(v)
		case 6:
			s.Flags = v
		case 11:
			s.UTime = v
		case 12:
			s.STime = v
		case 17:
			s.Threads = int(v)
		case 19:
			s.Start, ok = v, true
		case 36:
			s.CPU = int(v)
			return s, ok
		}
	}
}

// field returns the first space-separated field of b and the rest.
func field(b []byte) (f, rest []byte) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\n') {
		i++
	}
	j := i
	for j < len(b) && b[j] != ' ' && b[j] != '\n' {
		j++
	}
	return b[i:j], b[j:]
}
