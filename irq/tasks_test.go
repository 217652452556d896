package irq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/prometheus/procfs"

	"github.com/nicdiag/nicdiag/option"
)

// fakeTask is one task of a fixture /proc.
type fakeTask struct {
	pid, tid, ppid int
	comm           string
	utime, stime   uint64
	start          uint64
	cpu            int
}

// statLine renders t as Linux 6.x writes /proc/PID/task/TID/stat (52
// fields; those not used are plausible constants).
func (t fakeTask) statLine() string {
	f := []string{
		strconv.Itoa(t.tid), "(" + t.comm + ")", "S", strconv.Itoa(t.ppid), "1", "1", "0", "-1", "4194560",
		"0", "0", "0", "0", fmt.Sprint(t.utime), fmt.Sprint(t.stime), "0", "0", "20", "0", "1", "0",
		fmt.Sprint(t.start), "1000", "100", "18446744073709551615", "1", "1", "0", "0", "0", "0", "0",
		"0", "0", "0", "0", "0", "17", strconv.Itoa(t.cpu),
	}
	for len(f) < 52 {
		f = append(f, "0")
	}
	return strings.Join(f, " ") + "\n"
}

// writeProcs writes tasks as a /proc under root: proc/PID/stat (the main
// thread's), proc/PID/task/TID/stat, and, when children is set, each main
// thread's children file listing the processes whose ppid is its PID.
// Processes present at an earlier write and absent from tasks are removed.
func writeProcs(t testing.TB, root string, tasks []fakeTask, children bool) {
	t.Helper()
	procs := map[int]bool{}
	kids := map[int][]string{}
	for _, x := range tasks {
		procs[x.pid] = true
		if x.tid == x.pid {
			kids[x.ppid] = append(kids[x.ppid], strconv.Itoa(x.pid))
		}
	}
	ents, _ := os.ReadDir(filepath.Join(root, "proc"))
	for _, e := range ents {
		if id, ok := pidName(e.Name()); ok && !procs[id] {
			os.RemoveAll(filepath.Join(root, "proc", e.Name()))
		}
	}
	for pid := range procs {
		os.RemoveAll(filepath.Join(root, "proc", strconv.Itoa(pid), "task"))
	}
	write := func(p, s string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range tasks {
		dir := fmt.Sprintf("proc/%d/task/%d/", x.pid, x.tid)
		write(dir+"stat", x.statLine())
		if x.tid == x.pid {
			write(fmt.Sprintf("proc/%d/stat", x.pid), x.statLine())
			if children {
				c := strings.Join(kids[x.pid], " ")
				if c != "" {
					c += " "
				}
				write(dir+"children", c)
			}
		}
	}
}

// watchedHost writes the files NewSampler needs under a temp root and
// returns the root and a sampler on it whose clock the caller steps.
func watchedHost(t *testing.T, opts ...Option) (string, *Sampler, *time.Time) {
	t.Helper()
	root := t.TempDir()
	hostState{cpus: []int{0, 1}, irq38: []uint64{0, 0}, stat: [][3]int{{0, 1, 0}, {0, 1, 0}},
		netRX: []uint64{0, 0, 0}, softnet: [][3]uint32{{}, {}}}.write(t, root)
	now := time.Unix(1000, 0)
	opts = append([]Option{option.Root(root), WithInterval(time.Millisecond), withClock(func() time.Time { return now })}, opts...)
	s, err := NewSampler(context.Background(), nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return root, s, &now
}

// The tree of pid 100: a shell, a child with two threads whose comm has
// ") (" in it, a grandchild; 400 is not in the tree. Between the readings
// 250 exits, 260 starts and TID 301 is reused by a new thread.
var (
	treeA = []fakeTask{
		{pid: 100, tid: 100, ppid: 1, comm: "sh", utime: 10, stime: 5, start: 50, cpu: 0},
		{pid: 200, tid: 200, ppid: 100, comm: "my (app) ) (x", utime: 1000, stime: 100, start: 60, cpu: 1},
		{pid: 200, tid: 201, ppid: 100, comm: "worker 1", utime: 7, stime: 7, start: 61, cpu: 0},
		{pid: 250, tid: 250, ppid: 100, comm: "short", utime: 1, stime: 1, start: 62, cpu: 0},
		{pid: 300, tid: 300, ppid: 200, comm: "busy", utime: 0, stime: 0, start: 70, cpu: 1},
		{pid: 300, tid: 301, ppid: 200, comm: "old", utime: 90, stime: 0, start: 71, cpu: 1},
		{pid: 400, tid: 400, ppid: 1, comm: "other", utime: 0, stime: 0, start: 80, cpu: 0},
	}
	treeB = []fakeTask{
		{pid: 100, tid: 100, ppid: 1, comm: "sh", utime: 12, stime: 5, start: 50, cpu: 1},
		{pid: 200, tid: 200, ppid: 100, comm: "my (app) ) (x", utime: 1150, stime: 110, start: 60, cpu: 1},
		{pid: 200, tid: 201, ppid: 100, comm: "worker 1", utime: 7, stime: 7, start: 61, cpu: 0},
		{pid: 260, tid: 260, ppid: 100, comm: "new", utime: 5, stime: 5, start: 250, cpu: 0},
		{pid: 300, tid: 300, ppid: 200, comm: "busy", utime: 200, stime: 0, start: 70, cpu: 0},
		{pid: 300, tid: 301, ppid: 200, comm: "reused", utime: 1, stime: 0, start: 240, cpu: 1},
		{pid: 400, tid: 400, ppid: 1, comm: "other", utime: 200, stime: 0, start: 80, cpu: 0},
	}
)

func TestWatchTree(t *testing.T) {
	for _, mode := range []struct {
		name     string
		children bool
		want     childMode
	}{{"children", true, modeChildren}, {"ppid-scan", false, modeScan}} {
		t.Run(mode.name, func(t *testing.T) {
			root, s, now := watchedHost(t)
			writeProcs(t, root, treeA, mode.children)
			s.Watch(100)
			*now = now.Add(time.Second)
			x, err := s.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(x.Threads) != 0 || s.watch.mode != mode.want {
				t.Fatalf("first reading of the tree: threads %+v, mode %v", x.Threads, s.watch.mode)
			}
			writeProcs(t, root, treeB, mode.children)
			*now = now.Add(2 * time.Second)
			if x, err = s.Next(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := []ThreadRate{
				{PID: 100, TID: 100, Comm: "sh", UserPct: 1, SystemPct: 0, CPU: 1},
				{PID: 200, TID: 200, Comm: "my (app) ) (x", UserPct: 75, SystemPct: 5, CPU: 1},
				{PID: 200, TID: 201, Comm: "worker 1", CPU: 0},
				{PID: 300, TID: 300, Comm: "busy", UserPct: 100, CPU: 0},
			}
			if fmt.Sprint(x.Threads) != fmt.Sprint(want) {
				t.Errorf("threads\n got %+v\nwant %+v", x.Threads, want)
			}
			if len(x.Missing) != 0 {
				t.Errorf("missing = %q", x.Missing)
			}
			// The comm string of an unchanged task is the previous reading's.
			if a, b := s.prev.tasks.tasks[200].comm, s.cur.tasks.tasks[200].comm; a != b || unsafe.StringData(a) != unsafe.StringData(b) {
				t.Errorf("comm %q %q", a, b)
			}
			s.Watch(0)
			*now = now.Add(time.Second)
			if x, err = s.Next(context.Background()); err != nil || len(x.Threads) != 0 {
				t.Errorf("after Watch(0): %+v, %v", x.Threads, err)
			}
		})
	}
}

func TestWatchRootGone(t *testing.T) {
	root, s, now := watchedHost(t)
	writeProcs(t, root, treeA, true)
	s.Watch(300)
	*now = now.Add(time.Second)
	if _, err := s.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeProcs(t, root, treeA[:4], true) // 300 exits
	*now = now.Add(time.Second)
	x, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Threads) != 0 || len(x.Missing) != 1 || x.Missing[0] != "/proc/300: watched process not found" {
		t.Errorf("threads %+v missing %q", x.Threads, x.Missing)
	}
}

// A tree of 4100 tasks, one with a malformed stat file: 4096 are read, the
// bad one is named and the other 3 counted, each in one Missing line.
func TestWatchCapAndBadFile(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 4100 files")
	}
	root, s, now := watchedHost(t)
	var tasks []fakeTask
	for i := range maxTasks + 4 {
		tasks = append(tasks, fakeTask{pid: 10, tid: 10 + i, ppid: 1, comm: "t", start: 5})
	}
	writeProcs(t, root, tasks, true)
	if err := os.WriteFile(filepath.Join(root, "proc/10/task/11/stat"), []byte("11 (t) S"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Watch(10)
	*now = now.Add(time.Second)
	x, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.prev.tasks.tasks); n != maxTasks {
		t.Errorf("%d tasks read, want %d", n, maxTasks)
	}
	if len(x.Missing) != 2 || x.Missing[0] != "/proc/10: watched tree over 4096 tasks: 3 not read" ||
		x.Missing[1] != "/proc/10: watched tree: 1 unreadable file, first /proc/10/task/11/stat: 3 fields, want at least 39" {
		t.Errorf("missing = %q", x.Missing)
	}
}

func TestParseTaskStat(t *testing.T) {
	x := fakeTask{tid: 42, ppid: 7, comm: ") (a) (", utime: 1 << 40, stime: 3, start: 99, cpu: 127}
	st, err := parseTaskStat([]byte(x.statLine()), "")
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != 7 || st.comm != ") (a) (" || st.utime != 1<<40 || st.stime != 3 || st.start != 99 || st.cpu != 127 {
		t.Errorf("parsed %+v", st)
	}
	// A comm with a newline, and the 39 fields of the oldest layout.
	line := x.statLine()
	cut := strings.Join(strings.Fields(line[strings.LastIndexByte(line, ')')+1:])[:37], " ")
	if st, err := parseTaskStat([]byte("42 (a\nb) "+cut), ""); err != nil || st.comm != "a\nb" || st.cpu != 127 {
		t.Errorf("39 fields: %+v, %v", st, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "no (comm)"},
		{"1 (x)", "2 fields, want at least 39"}, // procfs panics here
		{"1 )x(", "no (comm)"},
		{"(x) S 1", "no pid"},
		{"-1 (x) S 1", "pid"},
		{"0 (x) S 1", "pid"},
		{"1 (x)S 1", "no space"},
		{"1 (x) S  1", "field 4 empty"},
		{"1 (x) S -5", "field 4"},
		{"1 (x) S 1 1 1 0 -1 0 0 0 0 0 x", "field 14"},
		{"1 (x) S 1 1 1 0 -1 0 0 0 0 0 99999999999999999999", "field 14"},
		{strings.Replace(x.statLine(), " 127 ", " 4294967296 ", 1), "field 39"},
	} {
		_, err := parseTaskStat([]byte(tc.in), "")
		var pe *ParseError
		if err == nil || !errors.Is(err, ErrMalformed) || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a ParseError with %q", tc.in, err, tc.want)
		}
	}
}

func FuzzTaskStat(f *testing.F) {
	x := fakeTask{tid: 42, ppid: 7, comm: "a) (b", utime: 5, stime: 6, start: 9, cpu: 3}
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{x.statLine(), "", "1 (x)", "1 )x(", "1 (x) S", "1 (()) S 2", strings.Repeat("(", 50)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseTaskStat(b, "a) (b")
		if err != nil {
			var pe *ParseError
			if !errors.Is(err, ErrMalformed) || !errors.As(err, &pe) || st != (taskStat{}) {
				t.Fatalf("%q: %+v, %v", b, st, err)
			}
			return
		}
		if st.cpu < 0 || st.ppid < 0 || !strings.Contains(string(b), "("+st.comm+")") {
			t.Fatalf("%q: %+v", b, st)
		}
	})
}

func TestEachPID(t *testing.T) {
	var got []int
	if err := eachPID([]byte("12 345 \n"), "c", func(p int) { got = append(got, p) }); err != nil || fmt.Sprint(got) != "[12 345]" {
		t.Errorf("%v, %v", got, err)
	}
	for _, in := range []string{"1 x", "0", "-1", "99999999999"} {
		if err := eachPID([]byte(in), "c", func(int) {}); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// On the live host: a shell with a busy-looping subshell and a sleeping
// child. The busy task must show at least half a CPU in one of up to ten
// half-second samples (unless every CPU was saturated throughout), the
// sleeper none.
func TestWatchLive(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	if _, err := os.Stat("/proc/interrupts"); err != nil {
		t.Skip("no /proc/interrupts")
	}
	cmd := exec.Command("sh", "-c", "while :; do :; done & sleep 60 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	for _, scan := range []bool{false, true} {
		t.Run(map[bool]string{false: "children", true: "ppid-scan"}[scan], func(t *testing.T) {
			s, err := NewSampler(context.Background(), nil, WithInterval(500*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			s.Watch(cmd.Process.Pid)
			if scan {
				s.watch.mode = modeScan
			}
			// The first sample lists the tree (the children may not have
			// started yet); rates come from then on.
			busy, sleeper := -1.0, -1.0
			saturated := true // every CPU at least 90% busy in every sample
			for i := 0; i < 10 && (busy < 50 || sleeper < 0); i++ {
				x, err := s.Next(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range x.CPUs {
					saturated = saturated && c.BusyPct >= 90
				}
				for _, th := range x.Threads {
					switch {
					case th.PID == cmd.Process.Pid:
					case th.Comm == "sleep":
						sleeper = max(sleeper, th.BusyPct())
					case th.Comm == "sh":
						busy = max(busy, th.BusyPct())
					}
				}
				t.Logf("sample %d: %+v %q", i, x.Threads, x.Missing)
			}
			switch {
			case busy < 50 && saturated:
				// Other work (parallel test packages) held every CPU: the
				// loop could not have a whole one.
				t.Skipf("busy loop at %.0f%% of a CPU on a saturated host", busy)
			case busy < 50:
				t.Errorf("busy loop at %.0f%% of a CPU, want >= 50", busy)
			}
			if sleeper < 0 || sleeper > 5 {
				t.Errorf("sleeper at %.0f%% (-1: not seen), want ~0", sleeper)
			}
		})
	}
}

// osThreads starts n goroutines each locked to its own OS thread and
// returns the func that ends them (a goroutine that exits locked takes its
// thread with it).
func osThreads(b *testing.B, n int) func() {
	stop := make(chan struct{})
	var ready sync.WaitGroup
	for range n {
		ready.Add(1)
		go func() {
			runtime.LockOSThread()
			ready.Done()
			<-stop
		}()
	}
	ready.Wait()
	return func() { close(stop) }
}

func TestMeanThreads(t *testing.T) {
	t0 := time.Unix(0, 0)
	samples := []Sample{
		{Time: t0.Add(time.Second), IntervalS: 1, Threads: []ThreadRate{
			{PID: 1, TID: 1, Comm: "a", UserPct: 10, CPU: 0},
			{PID: 1, TID: 2, Comm: "b", UserPct: 100, CPU: 3},
		}},
		{Time: t0.Add(4 * time.Second), IntervalS: 3, Threads: []ThreadRate{
			{PID: 1, TID: 1, Comm: "a2", UserPct: 50, SystemPct: 10, CPU: 1},
		}},
		{Time: t0.Add(5 * time.Second), IntervalS: 1, Threads: []ThreadRate{
			{PID: 1, TID: 1, Comm: "a2", UserPct: 30, CPU: 2},
			{PID: 9, TID: 9, Comm: "c", UserPct: 40, SystemPct: 20, CPU: 0},
		}},
	}
	got := Summarize(samples).Threads
	// TID 2: 100% over the 1 s it was seen, not 20% of the 5 s window.
	// TID 1: (10×1 + 50×3 + 30×1) / 5 = 38 user, 10×3 / 5 = 6 system, and
	// the comm and CPU of its last sample. Busiest first: 2, 9 (60), 1 (44).
	want := []ThreadRate{
		{PID: 1, TID: 2, Comm: "b", UserPct: 100, CPU: 3},
		{PID: 9, TID: 9, Comm: "c", UserPct: 40, SystemPct: 20, CPU: 0},
		{PID: 1, TID: 1, Comm: "a2", UserPct: 38, SystemPct: 6, CPU: 2},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("threads\n got %+v\nwant %+v", got, want)
	}
}

// Samples and summaries without watched threads or PCIe functions keep
// their JSON as it was: the new fields are omitted.
func TestThreadsPCIeOmitted(t *testing.T) {
	x := Sample{Time: time.Unix(1, 0), IntervalS: 1}
	for _, v := range []any{x, Summarize([]Sample{x})} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "threads") || strings.Contains(string(b), "pcie") {
			t.Errorf("%s", b)
		}
	}
}

// BenchmarkSampleThreads reads a watched tree of 200 tasks and computes
// its rates: what Watch adds to each reading. The fixture (a process of 10
// threads and 19 children of 10 threads each, among 100 other processes)
// sits under a temp root, so every open first resolves the path's symlinks
// inside it (fsroot's confinement, most of the cost); "live" watches this
// test process on the host, grown to over 200 threads.
func BenchmarkSampleThreads(b *testing.B) {
	tasks := benchTasks()
	root := b.TempDir()
	for _, mode := range []struct {
		name string
		mode childMode
		root string
		pid  int
		want int
	}{
		{"children", modeChildren, root, 1000, 200},
		{"ppid-scan", modeScan, root, 1000, 200},
		{"live", modeUnknown, "/", os.Getpid(), 200},
	} {
		b.Run(mode.name, func(b *testing.B) {
			if mode.root == root {
				writeProcs(b, root, tasks, mode.mode == modeChildren)
			} else if _, err := os.Stat("/proc/self/task"); err != nil {
				b.Skip("no /proc")
			} else {
				release := osThreads(b, 200)
				defer release()
			}
			s := &Sampler{o: newOptions([]Option{option.Root(mode.root)}), prev: new(reading), cur: new(reading)}
			s.Watch(mode.pid)
			s.watch.mode = mode.mode
			s.readTasks(s.prev)
			if n := len(s.prev.tasks.tasks); n < mode.want || len(s.prev.missing) > 0 {
				b.Fatalf("%d tasks read, %q", n, s.prev.missing)
			}
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				s.readTasks(s.cur)
				if len(threadRates(s.prev, s.cur, 1)) < mode.want {
					b.Fatal("tasks lost")
				}
				s.prev, s.cur = s.cur, s.prev
			}
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(s.prev.tasks.tasks)), "tasks")
		})
	}
	// procfs reading the same live threads' stat files (no children:
	// procfs has no reader for them), for comparison.
	b.Run("procfs-live", benchProcfsThreads)
}

// benchTasks are BenchmarkSampleThreads's fixture: process 1000 of 10
// threads with 19 children of 10 threads each, and 100 other processes.
func benchTasks() []fakeTask {
	var tasks []fakeTask
	for p := 1000; p < 1020; p++ {
		ppid := 1000
		if p == 1000 {
			ppid = 1
		}
		for i := range 10 {
			tasks = append(tasks, fakeTask{pid: p, tid: p*100 + i, ppid: ppid, comm: "worker " + strconv.Itoa(i), utime: 100, stime: 10, start: 7})
		}
		tasks[len(tasks)-10].tid = p // the main thread
	}
	for p := 2000; p < 2100; p++ {
		tasks = append(tasks, fakeTask{pid: p, tid: p, ppid: 1, comm: "other", start: 7})
	}
	return tasks
}

// benchProcfsThreads reads this process's threads' stat files with procfs.
func benchProcfsThreads(b *testing.B) {
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		b.Skip(err)
	}
	release := osThreads(b, 200)
	defer release()
	b.ReportAllocs()
	cpu := cpuTime()
	n := 0
	for b.Loop() {
		ts, err := fs.AllThreads(os.Getpid())
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		for _, th := range ts {
			if _, err := th.Stat(); err == nil {
				n++
			}
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(n), "tasks")
}
