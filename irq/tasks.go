package irq

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"syscall"

	"github.com/nicdiag/nicdiag/internal/fsroot"
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

// userHZ is USER_HZ, the unit of the times in /proc/PID/stat: 100 on every
// Linux architecture (procfs uses the same constant, unexported).
const userHZ = 100

// maxTasks caps the tasks of a watched tree read at one reading; the rest
// are counted in one Missing line.
const maxTasks = 4096

// maxTaskFile bounds one stat or children file (a stat line is under 1 KiB;
// a children file lists at most pid_max pids, but beyond the cap they are
// not read).
const maxTaskFile = 64 << 10

// taskStatFile names stat files in errors until the reader puts in the path.
const taskStatFile = "/proc/PID/task/TID/stat"

// Watch makes Sample.Threads, from the next reading on, hold every task of
// the process tree rooted at pid: the process, its threads, its descendants
// and their threads. A task has a rate once two readings saw it, so Threads
// fill from the second Next after Watch. Descendants come from the kernel's
// /proc/PID/task/TID/children files (CONFIG_PROC_CHILDREN) or, where there
// are none, from the parent pid of every process in /proc/*/stat. At most
// 4096 tasks are read at a reading; the others are counted in
// Sample.Missing. A process that exits between readings disappears; the
// root gone is noted in Missing. pid 0 stops watching.
func (s *Sampler) Watch(pid int) {
	if pid < 0 {
		pid = 0
	}
	if pid != s.watch.pid {
		s.watch.pid = pid
		s.watch.mode = modeUnknown
	}
}

// taskStat is the part of one /proc/PID/task/TID/stat a rate needs.
type taskStat struct {
	pid          int // thread group (process); set by the reader
	ppid         int // field 4
	comm         string
	utime, stime uint64 // fields 14, 15, in clock ticks
	start        uint64 // field 22, start time in ticks after boot: tells a reused TID
	cpu          int    // field 39
}

// taskReading is the watched tree at one reading, by TID.
type taskReading struct {
	tasks map[int]taskStat
}

// childMode is how a watch finds descendants.
type childMode uint8

const (
	modeUnknown  childMode = iota
	modeChildren           // /proc/PID/task/TID/children
	modeScan               // ppid of every /proc/*/stat
)

// taskWatch is the watched tree's state, the buffers its reads reuse and
// the files it keeps open between readings: each process's task
// directory, each task's stat and children files. A file of a task that
// exited fails its next read (ESRCH), and a reused pid is another task:
// its files are opened again by path; the files of the tasks a reading
// did not meet are closed.
type taskWatch struct {
	pid      int
	mode     childMode
	buf      []byte
	queue    []int
	seen     map[int]bool
	kids     map[int][]int // modeScan: ppid → pids
	tids     []int
	dirs     kfiles[int]     // /proc/PID/task by pid
	stats    kfiles[taskKey] // /proc/PID/task/TID/stat
	children kfiles[taskKey] // /proc/PID/task/TID/children
}

// taskKey names one task's files.
type taskKey struct{ pid, tid int }

// closeFiles closes every file it keeps open.
func (w *taskWatch) closeFiles() {
	w.dirs.closeAll()
	w.stats.closeAll()
	w.children.closeAll()
}

// readTasks lists the watched tree and reads the stat of each of its tasks
// into r.tasks, keeping the comm strings of the other reading (the previous
// one) where unchanged.
func (s *Sampler) readTasks(r *reading) {
	prev := s.prev
	if r == s.prev {
		prev = s.cur
	}
	w := &s.watch
	if r.tasks.tasks == nil {
		r.tasks.tasks = make(map[int]taskStat)
	}
	clear(r.tasks.tasks)
	if w.pid <= 0 {
		w.closeFiles()
		return
	}
	defer func() { // close the files of the tasks not met
		w.dirs.sweep()
		w.stats.sweep()
		w.children.sweep()
	}()
	root := s.o.root
	if w.mode == modeUnknown {
		// Decided on the root's main thread; while the root is not there
		// (its listing fails below) it stays undecided.
		if root.Exists(procPath(w.pid, w.pid, "children")) {
			w.mode = modeChildren
		} else if root.Exists(procPath(w.pid, w.pid, "")) {
			w.mode = modeScan
		}
	}
	if w.mode == modeScan {
		w.scanParents(root)
	}
	if w.seen == nil {
		w.seen = make(map[int]bool)
	}
	clear(w.seen)
	w.queue = append(w.queue[:0], w.pid)
	w.seen[w.pid] = true
	over, bad := 0, 0
	var firstErr error
	fail := func(err error) {
		if bad++; firstErr == nil {
			firstErr = err
		}
	}
	for i := 0; i < len(w.queue); i++ {
		pid := w.queue[i]
		if err := w.listTasks(root, pid); err != nil {
			switch {
			case pid == w.pid && gone(err):
				r.missing = append(r.missing, fmt.Sprintf("/proc/%d: watched process not found", pid))
			case !gone(err):
				fail(err)
			}
			continue
		}
		for _, tid := range w.tids {
			if len(r.tasks.tasks) >= maxTasks {
				over++
			} else {
				st, err := w.readStat(root, pid, tid, prev.tasks.tasks[tid].comm)
				switch {
				case err == nil:
					st.pid = pid
					r.tasks.tasks[tid] = st
				case !gone(err):
					fail(err)
				}
			}
			if w.mode == modeChildren {
				if err := w.readChildren(root, pid, tid); err != nil && !gone(err) {
					fail(err)
				}
			}
		}
		if w.mode == modeScan {
			for _, c := range w.kids[pid] {
				w.enqueue(c)
			}
		}
	}
	if over > 0 {
		r.missing = append(r.missing, fmt.Sprintf("/proc/%d: watched tree over %d tasks: %d not read", w.pid, maxTasks, over))
	}
	if bad > 0 {
		files := "file"
		if bad > 1 {
			files = "files"
		}
		r.missing = append(r.missing, fmt.Sprintf("/proc/%d: watched tree: %d unreadable %s, first %v", w.pid, bad, files, firstErr))
	}
}

func (w *taskWatch) enqueue(pid int) {
	if !w.seen[pid] {
		w.seen[pid] = true
		w.queue = append(w.queue, pid)
	}
}

// listTasks puts the TIDs of process pid, sorted, in w.tids.
func (w *taskWatch) listTasks(root fsroot.Root, pid int) error {
	d := w.dirs.get(pid, func() string { return procPath(pid, 0, "task") }, false)
	var err error
	w.buf, w.tids, err = d.readDirIDs(root, w.buf, w.tids[:0])
	if err != nil {
		return err
	}
	slices.Sort(w.tids)
	return nil
}

// readStat reads and parses /proc/pid/task/tid/stat; comm is the task's
// name at the previous reading, kept when unchanged.
func (w *taskWatch) readStat(root fsroot.Root, pid, tid int, comm string) (taskStat, error) {
	k := w.stats.get(taskKey{pid, tid}, func() string { return procPath(pid, tid, "stat") }, true)
	var err error
	if w.buf, err = k.read(root, w.buf, maxTaskFile); err != nil {
		return taskStat{}, err
	}
	st, err := parseTaskStat(w.buf, comm)
	if pe, ok := err.(*ParseError); ok {
		pe.File = k.path
	}
	return st, err
}

// readChildren queues the pids in /proc/pid/task/tid/children.
func (w *taskWatch) readChildren(root fsroot.Root, pid, tid int) error {
	k := w.children.get(taskKey{pid, tid}, func() string { return procPath(pid, tid, "children") }, false)
	var err error
	if w.buf, err = k.read(root, w.buf, maxTaskFile); err != nil {
		return err
	}
	return eachPID(w.buf, k.path, w.enqueue)
}

// scanParents fills w.kids from the ppid of every process in /proc.
func (w *taskWatch) scanParents(root fsroot.Root) {
	if w.kids == nil {
		w.kids = make(map[int][]int)
	}
	for k, v := range w.kids {
		if len(v) == 0 {
			delete(w.kids, k) // no children at the last scan either
		} else {
			w.kids[k] = v[:0]
		}
	}
	names, err := root.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, n := range names {
		pid, ok := pidName(n)
		if !ok {
			continue
		}
		var err error
		if w.buf, err = root.ReadInto(procPath(pid, 0, "stat"), w.buf, maxTaskFile); err != nil {
			continue // exited, or not a process
		}
		if st, err := parseTaskStat(w.buf, ""); err == nil && st.ppid > 0 && st.ppid != pid {
			w.kids[st.ppid] = append(w.kids[st.ppid], pid)
		}
	}
}

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
