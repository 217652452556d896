package irq

import (
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"syscall"

	"github.com/nicdiag/nicdiag/internal/text"
)

// The watched process tree is read by hand, not with procfs (v0.23):
// procfs's Proc.Stat panics on a stat line cut after the comm ("1 (x)"
// slices past the end; so does a ')' before the '('), scans all 44 fields
// with fmt.Fscan, and allocates about 30 times a thread with AllThreads
// (BenchmarkSampleThreads: procfs reads 200 live threads' stat files in 2.5
// times the time this takes to read their stat and children files and
// compute the rates); it has no reader for the children files and does not
// export USER_HZ. parseTaskStat reads the fields it uses in place and copies
// only a comm that changed.

// procPath returns "/proc/PID", "/proc/PID/NAME" (tid 0) or
// "/proc/PID/task/TID/NAME".
func procPath(pid, tid int, name string) string {
	b := make([]byte, 0, 48)
	b = append(b, "/proc/"...)
	b = strconv.AppendInt(b, int64(pid), 10)
	if tid > 0 {
		b = append(b, "/task/"...)
		b = strconv.AppendInt(b, int64(tid), 10)
	}
	if name != "" {
		b = append(b, '/')
		b = append(b, name...)
	}
	return string(b)
}

// pidName parses a /proc directory name that is a pid.
func pidName(n string) (int, bool) { return pidBytes([]byte(n)) }

// pidBytes is pidName of a name in bytes.
func pidBytes(n []byte) (int, bool) {
	if len(n) == 0 || len(n) > 10 || n[0] == '0' {
		return 0, false
	}
	v := 0
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return 0, false
		}
		v = v*10 + int(n[i]-'0')
	}
	return v, v <= 1<<31-1
}

// gone reports whether err means the task exited: the file or directory is
// no longer there, or the kernel answers ESRCH for a task being reaped.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// eachPID calls f with each pid of a children file ("123 456 " or empty).
func eachPID(b []byte, file string, f func(int)) error {
	for i := 0; i < len(b); {
		if b[i] == ' ' || b[i] == '\n' {
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\n' {
			j++
		}
		v, ok := decimalInt(b[i:j])
		if !ok || v == 0 {
			return &ParseError{File: file, Err: errf("not a pid: %q", text.Clip(string(b[i:j])))}
		}
		f(v)
		i = j
	}
	return nil
}

// parseTaskStat parses a /proc/PID/stat or /proc/PID/task/TID/stat file:
// "PID (COMM) STATE PPID ...", where COMM, the task's name, may hold spaces
// and parentheses, so the fields start after the last ')'. It needs fields
// up to 39 (processor, in every kernel since 2.2). A COMM equal to prevComm
// is returned as prevComm, not copied. Errors are *ParseError and match
// ErrMalformed.
func parseTaskStat(b []byte, prevComm string) (taskStat, error) {
	bad := func(format string, args ...any) (taskStat, error) {
		return taskStat{}, &ParseError{File: taskStatFile, Err: errf(format, args...)}
	}
	l := -1
	for i, c := range b {
		if c == '(' {
			l = i
			break
		}
	}
	r := -1
	for i := len(b) - 1; i > l && l >= 0; i-- {
		if b[i] == ')' {
			r = i
			break
		}
	}
	if l < 0 || r < 0 {
		return bad("no (comm)")
	}
	if l < 2 || b[l-1] != ' ' {
		return bad("no pid before the comm")
	}
	if pid, ok := decimalInt(b[:l-1]); !ok || pid == 0 {
		return bad("pid %q", text.Clip(string(b[:l-1])))
	}
	var st taskStat
	if st.comm = prevComm; string(b[l+1:r]) != prevComm {
		st.comm = string(b[l+1 : r])
	}
	rest := b[r+1:]
	if n := len(rest); n > 0 && rest[n-1] == '\n' {
		rest = rest[:n-1]
	}
	field := 2 // the comm
	for len(rest) > 0 {
		if rest[0] != ' ' {
			return bad("field %d: no space before it", field+1)
		}
		rest = rest[1:]
		field++
		j := 0
		for j < len(rest) && rest[j] != ' ' {
			j++
		}
		tok := rest[:j]
		rest = rest[j:]
		if len(tok) == 0 {
			return bad("field %d empty", field)
		}
		var ok bool
		switch field {
		case 4:
			st.ppid, ok = decimalInt(tok)
		case 14:
			st.utime, ok = text.Uint(tok)
		case 15:
			st.stime, ok = text.Uint(tok)
		case 22:
			st.start, ok = text.Uint(tok)
		case 39:
			st.cpu, ok = decimalInt(tok)
		default:
			continue
		}
		if !ok {
			return bad("field %d: %q is not a count", field, text.Clip(string(tok)))
		}
		if field == 39 {
			return st, nil
		}
	}
	return bad("%d fields, want at least 39", field)
}

// decimalInt parses an unsigned decimal that fits an int32.
func decimalInt(b []byte) (int, bool) {
	v, ok := text.Uint(b)
	if !ok || v > 1<<31-1 {
		return 0, false
	}
	return int(v), true
}

// threadRates returns the tasks at both readings a and b, same process and
// same start time, with their CPU time over the interval; by PID, then TID.
func threadRates(a, b *reading, dt float64) []ThreadRate { return threadRatesInto(a, b, dt, nil) }

// threadRatesInto is threadRates appending to out.
func threadRatesInto(a, b *reading, dt float64, out []ThreadRate) []ThreadRate {
	if len(b.tasks.tasks) == 0 || len(a.tasks.tasks) == 0 {
		return out
	}
	if out == nil {
		out = make([]ThreadRate, 0, len(b.tasks.tasks))
	}
	pct := func(x, y uint64) float64 {
		if y < x {
			return 0
		}
		return clampPct(float64(y-x) / userHZ / dt * 100)
	}
	for tid, cur := range b.tasks.tasks {
		prev, ok := a.tasks.tasks[tid]
		if !ok || prev.pid != cur.pid || prev.start != cur.start {
			continue // new since a, or the TID was reused
		}
		out = append(out, ThreadRate{
			PID: cur.pid, TID: tid, Comm: cur.comm, CPU: cur.cpu,
			UserPct: pct(prev.utime, cur.utime), SystemPct: pct(prev.stime, cur.stime),
		})
	}
	slices.SortFunc(out, compareThread)
	return out
}

func compareThread(x, y ThreadRate) int {
	if x.PID != y.PID {
		return x.PID - y.PID
	}
	return x.TID - y.TID
}
