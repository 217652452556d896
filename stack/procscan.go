package stack

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/procs"
)

// userHZ is USER_HZ, the unit of the times in /proc/PID/stat: 100 on every
// Linux architecture.
const userHZ = 100

// Bounds of one process scan.
const (
	maxScanProcs   = 1 << 16 // processes read
	maxScanThreads = 4096    // threads read to split busy processes by CPU
	maxCPUID       = 8191
	maxStatFile    = 4 << 10 // a stat line is under 1 KiB
)

// procPrev is a process's (or thread's) CPU time at the previous scan.
type procPrev struct {
	start, ticks uint64
	delay        uint64 // ns waited for a CPU (runReader)
	gen          uint32
	comm         string
}

// procCur is a process at the current scan.
type procCur struct {
	pid, ppid    int
	cpu, threads int
	start, ticks uint64
	kernel       bool
	comm         string
}

// scanner reads every process's CPU time from /proc/PID/stat at a scan
// and turns two scans into CPUWork: a process's time goes to the CPU it
// last ran on, and a process of several threads that ran is split by
// its threads' CPUs.
type scanner struct {
	root    fsroot.Root
	dir     *os.File // /proc, held open
	dents   []byte
	tdents  []byte
	buf     []byte
	gen     uint32
	last    time.Time
	prev    map[int]procPrev // by pid
	threads map[int]procPrev // by tid, of the processes split
	cur     []procCur
	list    []procs.Proc
	tree    map[int]bool // the run's processes at the last scan
	self    int          // this process (live only): the observer, not other work
	work    []workItem
	pids    []int
	tids    []int
}

// workItem is time a process took on a CPU, in ticks.
type workItem struct {
	cpu, pid int
	ticks    uint64
	class    int // classPacket, classOther
	comm     string
	kernel   bool
}

const (
	classPacket = iota
	classOther
)

func newScanner(r fsroot.Root) *scanner {
	s := &scanner{root: r, prev: map[int]procPrev{}, threads: map[int]procPrev{}, tree: map[int]bool{}}
	if r.Live() {
		s.self = os.Getpid()
	}
	return s
}

// close releases the held directory.
func (s *scanner) close() {
	if s.dir != nil {
		s.dir.Close()
		s.dir = nil
	}
}

// scan reads every process, finds the run's tree (rootPID and the
// processes below it, and those of also), and returns the work of every
// other process on each CPU since the previous scan and the seconds it
// covers (nil and 0 at the first scan). The run's own time is runReader's;
// this process's own (the sampling) is neither.
func (s *scanner) scan(now time.Time, rootPID int, also []int) ([]CPUWork, float64, error) {
	if err := s.readAll(); err != nil {
		return nil, 0, err
	}
	s.findTree(rootPID)
	for _, pid := range also {
		s.tree[pid] = true
	}
	first := s.last.IsZero()
	dt := now.Sub(s.last).Seconds()
	s.last = now
	s.work = s.work[:0]
	for _, c := range s.cur {
		p, seen := s.prev[c.pid]
		d := c.ticks
		if seen && p.start == c.start {
			d = c.ticks - min(c.ticks, p.ticks)
		}
		s.prev[c.pid] = procPrev{start: c.start, ticks: c.ticks, gen: s.gen, comm: c.comm}
		if first || d == 0 || s.tree[c.pid] || c.pid == s.self {
			continue
		}
		class := classOther
		if c.kernel && packetThread(c.comm) {
			class = classPacket
		}
		if c.threads > 1 {
			s.split(c, d, class)
			continue
		}
		s.work = append(s.work, workItem{cpu: c.cpu, pid: c.pid, ticks: d, class: class, comm: c.comm, kernel: c.kernel})
	}
	for pid, p := range s.prev {
		if p.gen != s.gen {
			delete(s.prev, pid)
		}
	}
	for tid, p := range s.threads {
		if p.gen != s.gen {
			delete(s.threads, tid)
		}
	}
	if first || dt <= 0 {
		return nil, 0, nil
	}
	return s.cpuWork(dt), dt, nil
}

// readAll reads the stat of every process into s.cur.
func (s *scanner) readAll() error {
	s.gen++
	if s.dir == nil {
		d, err := s.root.OpenDir("/proc")
		if err != nil {
			return err
		}
		s.dir = d
	}
	s.pids = s.pids[:0]
	var err error
	s.dents, err = numericEntries(s.dir, s.dents, func(pid int) {
		if len(s.pids) < maxScanProcs {
			s.pids = append(s.pids, pid)
		}
	})
	if err != nil {
		s.close()
		return err
	}
	s.cur = s.cur[:0]
	for _, pid := range s.pids {
		st, ok := s.readStat("/proc/" + strconv.Itoa(pid) + "/stat")
		if !ok || st.PID != pid {
			continue // gone since the listing, or not a stat line
		}
		s.cur = append(s.cur, procCur{pid: pid, ppid: st.PPID, cpu: st.CPU, threads: st.Threads, start: st.Start,
			ticks: st.UTime + st.STime, kernel: st.Flags&procs.PFKthread != 0, comm: s.comm(s.prev, pid, st)})
	}
	return nil
}

// readStat reads and parses the stat file at p, which is named for its
// pid's directory.
func (s *scanner) readStat(p string) (procs.Stat, bool) {
	var err error
	if s.buf, err = s.root.ReadInto(p, s.buf, maxStatFile); err != nil {
		return procs.Stat{}, false
	}
	sp := bytes.IndexByte(s.buf, ' ')
	if sp <= 0 {
		return procs.Stat{}, false
	}
	id, err := strconv.Atoi(string(s.buf[:sp]))
	if err != nil {
		return procs.Stat{}, false
	}
	return procs.ParseStat(id, s.buf)
}

// comm returns st's command name, the one prev holds for the same
// process when unchanged (no allocation).
func (s *scanner) comm(prev map[int]procPrev, id int, st procs.Stat) string {
	if p, ok := prev[id]; ok && p.start == st.Start && p.comm == string(st.Comm) {
		return p.comm
	}
	return string(st.Comm)
}

// findTree sets s.tree to rootPID and the processes below it.
func (s *scanner) findTree(rootPID int) {
	clear(s.tree)
	if rootPID <= 0 {
		return
	}
	s.list = s.list[:0]
	for _, c := range s.cur {
		s.list = append(s.list, procs.Proc{PID: c.pid, PPID: c.ppid, Start: c.start})
	}
	s.tree[rootPID] = true
	for _, p := range procs.Descendants(s.list, map[int]bool{rootPID: true}) {
		s.tree[p.PID] = true
	}
}

// split puts a process's d ticks on the CPUs its threads ran on: each
// thread seen at the previous scan by its own time, the rest (threads
// new or gone since) on the process's CPU.
func (s *scanner) split(c procCur, d uint64, class int) {
	put := func(cpu int, t uint64) {
		if t > 0 {
			s.work = append(s.work, workItem{cpu: cpu, pid: c.pid, ticks: t, class: class, comm: c.comm, kernel: c.kernel})
		}
	}
	rest := d
	var err error
	s.tdents, s.tids, err = taskIDs(s.root, c.pid, s.tdents, s.tids, maxScanThreads-len(s.threads))
	if err != nil {
		put(c.cpu, d)
		return
	}
	for _, tid := range s.tids {
		st, ok := s.readStat(taskFile(c.pid, tid, "stat"))
		if !ok {
			continue
		}
		ticks := st.UTime + st.STime
		p, seen := s.threads[tid]
		s.threads[tid] = procPrev{start: st.Start, ticks: ticks, gen: s.gen}
		if !seen || p.start != st.Start {
			continue
		}
		t := min(rest, ticks-min(ticks, p.ticks))
		put(st.CPU, t)
		rest -= t
	}
	put(c.cpu, rest)
}

// taskIDs lists the threads of process pid, at most limit, into tids.
func taskIDs(r fsroot.Root, pid int, dents []byte, tids []int, limit int) ([]byte, []int, error) {
	tids = tids[:0]
	dir, err := r.OpenDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return dents, tids, err
	}
	defer dir.Close()
	dents, err = numericEntries(dir, dents, func(tid int) {
		if len(tids) < limit {
			tids = append(tids, tid)
		}
	})
	return dents, tids, err
}

// taskFile names a file of thread tid of process pid.
func taskFile(pid, tid int, name string) string {
	return "/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/" + name
}

// packetThread reports whether a kernel thread's name is one of the
// kernel's packet workers: ksoftirqd/N, a threaded IRQ handler
// (irq/N-name), a threaded NAPI poller (napi/name-N).
func packetThread(comm string) bool {
	for _, p := range []string{"ksoftirqd/", "irq/", "napi/"} {
		if len(comm) >= len(p) && comm[:len(p)] == p {
			return true
		}
	}
	return false
}

// cpuWork sums s.work per CPU over dt seconds.
func (s *scanner) cpuWork(dt float64) []CPUWork {
	slices.SortFunc(s.work, func(a, b workItem) int {
		if a.cpu != b.cpu {
			return a.cpu - b.cpu
		}
		return a.pid - b.pid
	})
	pct := func(t uint64) float64 { return float64(t) / userHZ / dt * 100 }
	var out []CPUWork
	for i := 0; i < len(s.work); {
		cpu := s.work[i].cpu
		w := CPUWork{CPU: cpu}
		var top []ProcWork
		for ; i < len(s.work) && s.work[i].cpu == cpu; i++ {
			it := s.work[i]
			switch it.class {
			case classPacket:
				w.PacketPct += pct(it.ticks)
			default:
				w.OtherPct += pct(it.ticks)
				if n := len(top); n > 0 && top[n-1].PID == it.pid {
					top[n-1].Pct += pct(it.ticks)
				} else {
					top = append(top, ProcWork{PID: it.pid, Comm: it.comm, Pct: pct(it.ticks), Kernel: it.kernel})
				}
			}
		}
		slices.SortStableFunc(top, func(a, b ProcWork) int {
			switch {
			case a.Pct > b.Pct:
				return -1
			case a.Pct < b.Pct:
				return 1
			}
			return 0
		})
		w.Top = top[:min(len(top), TopProcs)]
		if cpu >= 0 && cpu <= maxCPUID {
			out = append(out, w)
		}
	}
	return out
}

// decimal parses a positive decimal of up to 9 digits, which may end at a
// NUL (a directory entry's name).
func decimal(name []byte) (int, bool) {
	v, n := 0, 0
	for _, c := range name {
		if c == 0 {
			break
		}
		if c < '0' || c > '9' || n == 9 {
			return 0, false
		}
		v = v*10 + int(c-'0')
		n++
	}
	return v, n > 0 && v > 0
}
