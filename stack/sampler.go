package stack

import (
	"cmp"
	"context"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Sampler reads the stack at each Read and returns the interval since the
// previous one. It keeps files and netlink sockets open between readings:
// Close releases them. It is not safe for concurrent use.
type Sampler struct {
	o        options
	pid      int
	scan     *scanner
	run      *runReader
	last     time.Time
	lastScan time.Time
	scanWait time.Duration    // the least time to the next scan, from the last one's cost
	tree     []int            // the run's processes at the last scan
	owners   map[uint32]owner // the run's sockets by inode, this reading
	ns       map[uint64]*nsState
	selfNS   uint64 // the caller's namespace
	gen      uint32
	buf      []byte
	dents    []byte
}

// owner is a process of the run holding a socket.
type owner struct {
	pid  int
	comm string
}

// NewSampler takes a first reading and returns a Sampler whose Read
// returns the stack since the previous reading.
func NewSampler(ctx context.Context, opts ...Option) (*Sampler, error) {
	o := newOptions(opts)
	s := &Sampler{o: o, pid: o.pid, scan: newScanner(o.root), run: newRunReader(o.root), owners: map[uint32]owner{}, ns: map[uint64]*nsState{}}
	if o.root.Live() {
		s.selfNS, _ = nsInode("/proc/self/ns/net")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := o.root.Err(); err != nil {
		return nil, err
	}
	s.read(new(Sample))
	return s, nil
}

// Watch makes the run the process pid and those below it from the next
// reading on (0: none). The tree is found at the next process scan, which
// the next reading makes.
func (s *Sampler) Watch(pid int) {
	if pid = max(pid, 0); pid != s.pid {
		s.pid = pid
		s.tree = s.tree[:0]
		s.lastScan = time.Time{}
	}
}

// Read reads every source and returns the interval since the previous
// reading. What could not be read is named in Sample.Missing; Read fails
// only when ctx is done or the root's read deadline has passed before it
// starts: a reading, once started, runs to its end (each netlink request
// gives up after 5 s), so that every source's interval is the same.
func (s *Sampler) Read(ctx context.Context) (Sample, error) {
	if err := ctx.Err(); err != nil {
		return Sample{}, err
	}
	if err := s.o.root.Err(); err != nil {
		return Sample{}, err
	}
	var x Sample
	s.read(&x)
	return x, nil
}

// Close closes the files and sockets the sampler holds.
func (s *Sampler) Close() error {
	for id, n := range s.ns {
		n.close()
		delete(s.ns, id)
	}
	s.scan.close()
	return nil
}

// read takes a reading into x.
func (s *Sampler) read(x *Sample) {
	now := s.o.now()
	x.Time = now
	if !s.last.IsZero() {
		x.IntervalS = now.Sub(s.last).Seconds()
	}
	s.last = now
	s.gen++
	x.RunPID = s.pid
	// The counters first, right after the reading's clock, the process
	// scan (whose time varies with the host's load) after them: a slow
	// scan must not shift the counters' readings off the interval.
	s.followTree()
	s.readSockets(x)
	for _, n := range s.targets(x) {
		s.readNamespace(n, x)
	}
	for id, n := range s.ns {
		if n.gen != s.gen {
			n.close()
			delete(s.ns, id)
		}
	}
	s.readProcesses(now, x)
	s.finish(x)
}

// scanShare bounds the time the process scan takes: a scan that took d
// waits d ÷ scanShare before the next (2 %: a 40 ms scan of a host of
// thousands of processes runs every 2 s at most).
const scanShare = 0.02

// readProcesses reads the run's threads' work (its tree followed first,
// by followTree), and scans the process table when a scan is due (the other work on each CPU;
// the run's tree as the parents link it, joined to the one followed).
func (s *Sampler) readProcesses(now time.Time, x *Sample) {
	if s.lastScan.IsZero() || s.o.scanEvery <= 0 || now.Sub(s.lastScan) >= max(s.o.scanEvery, s.scanWait) {
		s.lastScan = now
		start := time.Now()
		cpus, dt, err := s.scan.scan(now, s.pid, s.tree)
		s.scanWait = time.Duration(float64(time.Since(start)) / scanShare)
		if err != nil {
			x.Missing = append(x.Missing, "process scan: "+err.Error())
		} else {
			x.CPUs, x.CPUIntervalS = cpus, dt
			s.tree = s.tree[:0]
			for pid := range s.scan.tree {
				s.tree = append(s.tree, pid)
			}
			slices.Sort(s.tree)
		}
	}
	if s.pid > 0 {
		x.Run = s.run.read(s.tree, x.IntervalS)
	}
}

// followTree adds to the run's tree the processes the kernel lists as
// children of its tasks (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN),
// from the root down, and drops those gone. Without children files the
// tree stays the last scan's.
func (s *Sampler) followTree() {
	if s.pid == 0 {
		return
	}
	seen := map[int]bool{s.pid: true}
	queue := []int{s.pid}
	for len(queue) > 0 && len(seen) < maxScanThreads {
		pid := queue[0]
		queue = queue[1:]
		dir := "/proc/" + strconv.Itoa(pid) + "/task"
		d, err := s.o.root.OpenDir(dir)
		if err != nil {
			delete(seen, pid) // gone
			continue
		}
		s.dents, _ = numericEntries(d, s.dents, func(tid int) {
			var err error
			if s.buf, err = s.o.root.ReadInto(dir+"/"+strconv.Itoa(tid)+"/children", s.buf, maxProcFile); err != nil {
				return
			}
			for f, rest := nextField(s.buf); len(f) > 0; f, rest = nextField(rest) {
				if c, ok := decimal(f); ok && !seen[c] {
					seen[c] = true
					queue = append(queue, c)
				}
			}
		})
		d.Close()
	}
	for _, pid := range s.tree { // the scan's, where the children files are not
		if !seen[pid] && s.o.root.Exists("/proc/"+strconv.Itoa(pid)) {
			seen[pid] = true
		}
	}
	s.tree = s.tree[:0]
	for pid := range seen {
		s.tree = append(s.tree, pid)
	}
	slices.Sort(s.tree)
}

// readSockets finds the sockets of the run's processes: the inodes behind
// their /proc/PID/fd links ("socket:[N]").
func (s *Sampler) readSockets(x *Sample) {
	clear(s.owners)
	for _, pid := range s.tree {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		d, err := s.o.root.OpenDir(dir)
		if err != nil {
			continue // gone
		}
		comm := s.scan.prev[pid].comm
		s.dents, err = numericEntries(d, s.dents, func(fd int) {
			t, err := s.o.root.Readlink(dir + "/" + strconv.Itoa(fd))
			if ino, ok := socketInode(t); err == nil && ok {
				s.owners[ino] = owner{pid: pid, comm: comm}
			}
		})
		d.Close()
		if err != nil {
			x.Missing = append(x.Missing, dir+": "+err.Error())
		}
	}
}

// socketInode parses "socket:[12345]".
func socketInode(t string) (uint32, bool) {
	v, ok := strings.CutPrefix(t, "socket:[")
	if !ok || !strings.HasSuffix(v, "]") {
		return 0, false
	}
	n, err := strconv.ParseUint(v[:len(v)-1], 10, 32)
	return uint32(n), err == nil
}

// target is a namespace to read and the file it is opened by.
type target struct {
	id   uint64
	path string // "" for the caller's
	main bool   // WithInterfaces's namespace
}

// targets returns the namespaces of this reading, each opened (or
// found) in s.ns: WithNetns's, the run's processes', else the caller's.
func (s *Sampler) targets(x *Sample) []*nsState {
	var ts []target
	live := s.o.root.Live()
	if !live {
		ts = append(ts, target{main: true})
	}
	for i, p := range s.o.netns {
		if !live {
			break
		}
		id, err := nsInode(p)
		if err != nil {
			x.Missing = append(x.Missing, "network namespace "+p+": "+err.Error())
			continue
		}
		ts = append(ts, target{id: id, path: p, main: i == 0})
	}
	if live && len(s.o.netns) == 0 && (len(s.o.ifaces) > 0 || s.pid == 0) {
		ts = append(ts, target{id: s.selfNS, main: true})
	}
	for _, pid := range s.tree {
		if !live {
			break
		}
		p := "/proc/" + strconv.Itoa(pid) + "/ns/net"
		if id, err := nsInode(p); err == nil {
			ts = append(ts, target{id: id, path: p})
		}
	}
	if len(ts) == 0 {
		ts = append(ts, target{id: s.selfNS, main: true})
	}
	var out []*nsState
	for _, t := range ts {
		if t.id == s.selfNS && s.o.root.Live() {
			t.path = ""
		}
		n := s.ns[t.id]
		if n == nil {
			var err error
			if n, err = s.openNS(t); err != nil {
				x.Missing = append(x.Missing, err.Error())
				continue
			}
			s.ns[t.id] = n
		}
		n.main = n.main || t.main
		if n.gen != s.gen {
			n.gen = s.gen
			out = append(out, n)
		}
	}
	return out
}

// nsInode returns the inode number of the network namespace file at p
// (a /proc/PID/ns/net link, a /run/netns bind mount): its id.
func nsInode(p string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return 0, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	return st.Ino, nil
}

// finish orders and caps the sample's lists.
func (s *Sampler) finish(x *Sample) {
	slices.SortFunc(x.Flows, func(a, b Flow) int {
		ta, tb := a.BytesSent+a.BytesReceived, b.BytesSent+b.BytesReceived
		switch {
		case ta > tb:
			return -1
		case ta < tb:
			return 1
		}
		return cmp.Compare(a.Cookie, b.Cookie)
	})
	if len(x.Flows) > MaxFlows {
		x.FlowsOmitted = len(x.Flows) - MaxFlows
		x.Flows = x.Flows[:MaxFlows]
	}
	slices.SortFunc(x.Namespaces, func(a, b Namespace) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(x.Interfaces, func(a, b Interface) int {
		if a.Netns != b.Netns {
			return cmp.Compare(a.Netns, b.Netns)
		}
		return a.Index - b.Index
	})
}
