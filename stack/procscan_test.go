package stack

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// statLine is a /proc/PID/stat line as this VM's kernel writes it (Linux
// 6.18; the fields after the processor are cut), with the comm, parent,
// flags, utime, stime, threads, start time and processor set.
func statLine(pid int, comm string, ppid int, flags uint64, utime, stime uint64, threads int, start uint64, cpu int) string {
	return fmt.Sprintf("%d (%s) S %d %d %d 0 -1 %d 100 0 0 0 %d %d 0 0 20 0 %d 0 %d 3133440 390 18446744073709551615 1 1 1 0 0 0 0 0 0 0 0 0 17 %d 0 0 0 0 0\n",
		pid, comm, ppid, ppid, ppid, flags, utime, stime, threads, start, cpu)
}

// procTree writes a /proc under root: init (1), the run (100, a shell, and
// its child 101, iperf3 with two threads 101 and 102), ksoftirqd/1 (10, a
// kernel thread), and yes (200), with ticks scaled by k.
func procTree(t *testing.T, root string, k uint64) {
	t.Helper()
	write := func(p, s string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/1/stat", statLine(1, "init", 0, 0x400100, 5, 5, 1, 1, 0))
	write("proc/10/stat", statLine(10, "ksoftirqd/1", 2, 0x04208040, 0, 10*k, 1, 5, 1))
	write("proc/100/stat", statLine(100, "sh", 1, 0x400000, 1, 1, 1, 900, 0))
	write("proc/100/task/100/stat", statLine(100, "sh", 1, 0x400000, 1, 1, 1, 900, 0))
	write("proc/100/task/100/schedstat", "1000 0 3\n")
	write("proc/101/stat", statLine(101, "iperf3", 100, 0x400000, 20*k, 20*k, 2, 901, 0))
	write("proc/101/task/101/stat", statLine(101, "iperf3", 100, 0x400000, 5*k, 5*k, 2, 901, 0))
	write("proc/101/task/101/schedstat", fmt.Sprintf("1 %d 1\n", 100e6*k))
	write("proc/101/task/102/stat", statLine(102, "iperf3", 100, 0x400000, 15*k, 15*k, 2, 902, 1))
	write("proc/101/task/102/schedstat", fmt.Sprintf("1 %d 1\n", 300e6*k))
	write("proc/200/stat", statLine(200, "yes", 1, 0x400000, 60*k, 0, 1, 950, 1))
}

// Two scans a second apart: each process's ticks on the CPU it (or, for
// a process of several threads, each thread) last ran on; the run's tree
// (100 and below) is left out, ksoftirqd is packet work, yes other work.
// The run's reader puts iperf3's threads on their CPUs with their waits.
func TestScan(t *testing.T) {
	root := t.TempDir()
	procTree(t, root, 1)
	r := fsroot.New(root)
	s, rr := newScanner(r), newRunReader(r)
	defer s.close()
	now := time.Unix(100, 0)
	if cpus, dt, err := s.scan(now, 100, nil); err != nil || cpus != nil || dt != 0 {
		t.Fatalf("first scan: %v %v %v", cpus, dt, err)
	}
	if run := rr.read([]int{100, 101}, 0); run != nil {
		t.Fatalf("first run reading: %+v", run)
	}
	procTree(t, root, 2) // every counted tick doubled
	cpus, dt, err := s.scan(now.Add(time.Second), 100, []int{555})
	if err != nil || dt != 1 || len(cpus) != 1 {
		t.Fatalf("%+v %v %v", cpus, dt, err)
	}
	if !s.tree[100] || !s.tree[101] || !s.tree[555] || s.tree[200] || s.tree[1] {
		t.Errorf("tree %v", s.tree)
	}
	// CPU 1: ksoftirqd 10 ticks, yes 60; the run is not other work.
	if g := cpus[0]; g.CPU != 1 || !near(g.PacketPct, 10) || !near(g.OtherPct, 60) || len(g.Top) != 1 || g.Top[0].PID != 200 || g.Top[0].Comm != "yes" {
		t.Errorf("%+v", g)
	}
	// The run: thread 101 10 ticks and 100 ms waiting on CPU 0, thread 102
	// 30 ticks and 300 ms on CPU 1.
	run := rr.read([]int{100, 101}, 1)
	want := []RunCPU{{CPU: 0, Pct: 10, WaitPct: 10}, {CPU: 1, Pct: 30, WaitPct: 30}}
	if len(run) != 2 || run[0].CPU != 0 || !near(run[0].Pct, 10) || !near(run[0].WaitPct, 10) ||
		run[1].CPU != 1 || !near(run[1].Pct, 30) || !near(run[1].WaitPct, 30) {
		t.Errorf("run %+v, want %+v", run, want)
	}
	// yes exits: its entry goes.
	os.RemoveAll(filepath.Join(root, "proc/200"))
	if _, _, err := s.scan(now.Add(2*time.Second), 100, nil); err != nil || len(s.prev) != 4 {
		t.Errorf("%v, %d kept", err, len(s.prev))
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
