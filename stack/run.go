package stack

import (
	"bytes"
	"slices"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/procs"
	"github.com/nicdiag/nicdiag/internal/text"
)

// runReader reads the run's threads at every reading: the CPU time each
// took and the time it waited, ready, for a CPU (schedstat's run_delay),
// on the CPU it last ran on. A thread counts from its second reading.
type runReader struct {
	root  fsroot.Root
	prev  map[int]procPrev // by tid
	gen   uint32
	buf   []byte
	dents []byte
	tids  []int
	acc   map[int]*[2]uint64 // per CPU: ticks, ns waited
}

func newRunReader(r fsroot.Root) *runReader {
	return &runReader{root: r, prev: map[int]procPrev{}, acc: map[int]*[2]uint64{}}
}

// read reads the threads of the processes of tree and returns their work
// per CPU over the dt seconds since the previous reading (nil when dt is
// 0: the first reading).
func (r *runReader) read(tree []int, dt float64) []RunCPU {
	r.gen++
	clear(r.acc)
	n := 0
	for _, pid := range tree {
		var err error
		if r.dents, r.tids, err = taskIDs(r.root, pid, r.dents, r.tids, maxScanThreads-n); err != nil {
			continue // gone
		}
		n += len(r.tids)
		for _, tid := range r.tids {
			r.readThread(pid, tid)
		}
	}
	for tid, p := range r.prev {
		if p.gen != r.gen {
			delete(r.prev, tid)
		}
	}
	if dt <= 0 || len(r.acc) == 0 {
		return nil
	}
	out := make([]RunCPU, 0, len(r.acc))
	for cpu, a := range r.acc {
		out = append(out, RunCPU{CPU: cpu, Pct: float64(a[0]) / userHZ / dt * 100, WaitPct: float64(a[1]) / 1e9 / dt * 100})
	}
	slices.SortFunc(out, func(x, y RunCPU) int { return x.CPU - y.CPU })
	return out
}

// readThread reads one thread's stat and schedstat and adds what it did
// since the previous reading to its CPU.
func (r *runReader) readThread(pid, tid int) {
	var err error
	if r.buf, err = r.root.ReadInto(taskFile(pid, tid, "stat"), r.buf, maxStatFile); err != nil {
		return
	}
	st, ok := procs.ParseStat(tid, r.buf)
	if !ok || st.CPU < 0 || st.CPU > maxCPUID {
		return
	}
	ticks := st.UTime + st.STime
	var delay uint64
	if r.buf, err = r.root.ReadInto(taskFile(pid, tid, "schedstat"), r.buf, maxStatFile); err == nil {
		_, rest := nextField(bytes.TrimSpace(r.buf)) // "cputime run_delay timeslices"
		f, _ := nextField(rest)
		delay, _ = text.Uint(f)
	}
	p, seen := r.prev[tid]
	r.prev[tid] = procPrev{start: st.Start, ticks: ticks, delay: delay, gen: r.gen}
	if !seen || p.start != st.Start {
		return
	}
	a := r.acc[st.CPU]
	if a == nil {
		a = new([2]uint64)
		r.acc[st.CPU] = a
	}
	a[0] += ticks - min(ticks, p.ticks)
	a[1] += delay - min(delay, p.delay)
}
