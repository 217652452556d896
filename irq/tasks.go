package irq

import (
	"fmt"
	"slices"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

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
	var p taskProblems
	w.walk(root, r, prev, &p)
	if p.over > 0 {
		r.missing = append(r.missing, fmt.Sprintf("/proc/%d: watched tree over %d tasks: %d not read", w.pid, maxTasks, p.over))
	}
	if p.bad > 0 {
		files := "file"
		if p.bad > 1 {
			files = "files"
		}
		r.missing = append(r.missing, fmt.Sprintf("/proc/%d: watched tree: %d unreadable %s, first %v", w.pid, p.bad, files, p.first))
	}
}

// taskProblems counts what a walk of the watched tree could not read: the
// tasks over maxTasks, and the files that failed, with the first error.
type taskProblems struct {
	over, bad int
	first     error
}

func (p *taskProblems) fail(err error) {
	if p.bad++; p.first == nil {
		p.first = err
	}
}

// walk reads the watched tree breadth first from its root process into
// r.tasks: each process's tasks, their stat files, and the processes
// below.
func (w *taskWatch) walk(root fsroot.Root, r, prev *reading, p *taskProblems) {
	if w.seen == nil {
		w.seen = make(map[int]bool)
	}
	clear(w.seen)
	w.queue = append(w.queue[:0], w.pid)
	w.seen[w.pid] = true
	for i := 0; i < len(w.queue); i++ {
		pid := w.queue[i]
		if err := w.listTasks(root, pid); err != nil {
			switch {
			case pid == w.pid && gone(err):
				r.missing = append(r.missing, fmt.Sprintf("/proc/%d: watched process not found", pid))
			case !gone(err):
				p.fail(err)
			}
			continue
		}
		for _, tid := range w.tids {
			w.readTask(root, r, prev, pid, tid, p)
		}
		if w.mode == modeScan {
			for _, c := range w.kids[pid] {
				w.enqueue(c)
			}
		}
	}
}

// readTask reads task tid of process pid into r.tasks (unless over
// maxTasks) and, in modeChildren, queues its children.
func (w *taskWatch) readTask(root fsroot.Root, r, prev *reading, pid, tid int, p *taskProblems) {
	if len(r.tasks.tasks) >= maxTasks {
		p.over++
	} else {
		st, err := w.readStat(root, pid, tid, prev.tasks.tasks[tid].comm)
		switch {
		case err == nil:
			st.pid = pid
			r.tasks.tasks[tid] = st
		case !gone(err):
			p.fail(err)
		}
	}
	if w.mode == modeChildren {
		if err := w.readChildren(root, pid, tid); err != nil && !gone(err) {
			p.fail(err)
		}
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
