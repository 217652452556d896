package irq

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"github.com/nicdiag/nicdiag/option"
)

// writeStat replaces <root>/proc/stat with per-CPU lines (user nice system
// idle iowait irq softirq steal guest guest_nice, in ticks).
func writeStat(t *testing.T, root string, cpus ...string) {
	t.Helper()
	s := "cpu  1 0 1 1 0 0 1 0 0 0\n"
	for _, c := range cpus {
		s += c + "\n"
	}
	s += "intr 0\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n"
	if err := os.WriteFile(filepath.Join(root, "proc/stat"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSamplerCPUTimeSplit reads two /proc/stat readings with known deltas.
// CPU 0 spent 200 ticks: user 40 + nice 10, system 30, idle 80, iowait 10,
// irq 10, softirq 10, steal 10. CPU 1's idle went back 10 ticks (NO_HZ idle
// accounting can) while user rose 100: shares are clamped to 0..100.
func TestSamplerCPUTimeSplit(t *testing.T) {
	root := t.TempDir()
	hostState{cpus: []int{0, 1}, irq38: []uint64{0, 0}, stat: [][3]int{{0, 1, 0}, {0, 1, 0}},
		netRX: []uint64{0, 0, 0}, softnet: [][3]uint32{{}, {}}}.write(t, root)
	writeStat(t, root,
		"cpu0 1000 100 300 5000 50 20 40 60 7 0",
		"cpu1 10 0 0 500 0 0 0 0 0 0")
	now := time.Unix(1000, 0)
	s, err := NewSampler(context.Background(), nil, option.Root(root), WithInterval(time.Millisecond),
		withClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	writeStat(t, root,
		"cpu0 1040 110 330 5080 60 30 50 70 17 0", // guest +10 is inside user
		"cpu1 110 0 0 490 0 0 0 0 0 0")
	now = now.Add(2 * time.Second)
	x, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(x.CPUs) != 2 {
		t.Fatalf("CPUs = %+v", x.CPUs)
	}
	c := x.CPUs[0]
	for name, got := range map[string][2]float64{
		"user":    {c.UserPct, 25},
		"system":  {c.SystemPct, 15},
		"idle":    {c.IdlePct, 40},
		"iowait":  {c.IOWaitPct, 5},
		"steal":   {c.StealPct, 5},
		"irq":     {*c.IRQPct, 5},
		"softirq": {c.SoftIRQPct, 5},
		"busy":    {c.BusyPct, 50}, // 100 - idle - iowait - steal
	} {
		if !near(got[0], got[1]) {
			t.Errorf("cpu0 %s = %v%%, want %v%%", name, got[0], got[1])
		}
	}
	c = x.CPUs[1]
	if c.UserPct != 100 || c.IdlePct != 0 || c.BusyPct != 100 || c.SystemPct != 0 {
		t.Errorf("cpu1 (idle went back) = user %v idle %v busy %v system %v", c.UserPct, c.IdlePct, c.BusyPct, c.SystemPct)
	}
}

// TestSummarizeCPUTimeSplit checks that the window means of the time split
// weigh each sample by its interval.
func TestSummarizeCPUTimeSplit(t *testing.T) {
	t0 := time.Unix(0, 0)
	s := Summarize([]Sample{
		{Time: t0.Add(time.Second), IntervalS: 1, CPUs: []CPURate{{CPU: 0, UserPct: 10, SystemPct: 20, IdlePct: 70, IOWaitPct: 0, StealPct: 0}}},
		{Time: t0.Add(4 * time.Second), IntervalS: 3, CPUs: []CPURate{{CPU: 0, UserPct: 50, SystemPct: 20, IdlePct: 10, IOWaitPct: 8, StealPct: 12}}},
	})
	c := s.CPUs[0]
	if !near(c.UserPct, 40) || !near(c.SystemPct, 20) || !near(c.IdlePct, 25) || !near(c.IOWaitPct, 6) || !near(c.StealPct, 9) {
		t.Errorf("window means = user %v system %v idle %v iowait %v steal %v, want 40 20 25 6 9",
			c.UserPct, c.SystemPct, c.IdlePct, c.IOWaitPct, c.StealPct)
	}
}

// procFiles returns the corpus of the /proc/stat, /proc/softirqs and
// /proc/net/softnet_stat parsers: the captured files in testdata, the
// generated 128-CPU ones of BenchmarkSample, older kernels' layouts and,
// where there is a /proc, this host's.
func procFiles(t *testing.T) map[string][]string {
	t.Helper()
	files := map[string][]string{
		"stat": {string(genStat(benchCPUs, 1536)), string(genStat(3, 10)),
			"cpu  1 2 3 4\ncpu0 1 2 3 4\ncpu1 5 6 7 8 9 10 11\nintr 1\n",                                // 2.6-era: 4 and 7 fields
			"cpu  1 0 1 1 0 0 1 0 0 0\ncpu0 1 0 1 1 0 7 1 0 0 0\ncpu3\ncpu5 10 0 0 500 0 0 0 0 0 0 9\n", // a bare line; an 11th field
		},
		"softirqs": {string(genSoftirqs(benchCPUs))},
		"softnet": {string(genSoftnet(benchCPUs)),
			"00000001 00000002 00000003 00000000 00000000 00000000 00000000 00000000 00000004\n" + // 2.6.23: 9 columns
				"0000000a 0000000B 0000000c 00000000 00000000 00000000 00000000 00000000 00000000 00000001 00000002\n", // 4.18: 11
		},
	}
	for name, paths := range map[string][]string{
		"softirqs": {"testdata/vm-2cpu-6.18-softirqs.txt", "testdata/virtio4-softirqs.txt", "testdata/iwlwifi-softirqs.txt", "/proc/softirqs"},
		"softnet":  {"testdata/virtio4-net_softnet_stat.txt", "/proc/net/softnet_stat"},
		"stat":     {"/proc/stat"},
	} {
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				if !strings.HasPrefix(p, "/proc") {
					t.Fatal(err)
				}
				continue
			}
			files[name] = append(files[name], string(b))
		}
	}
	return files
}

// procfsAt returns procfs over a temporary /proc, and a function that
// writes one of its files.
func procfsAt(t *testing.T) (procfs.FS, func(name, s string)) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	pfs, err := procfs.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	return pfs, func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The /proc/stat corpus read by this package's parser and by procfs, its
// test oracle, gives the same values.
func TestStatAgainstProcfs(t *testing.T) {
	pfs, write := procfsAt(t)
	for i, f := range procFiles(t)["stat"] {
		write("stat", f)
		want, err := pfs.Stat()
		if err != nil {
			t.Fatalf("stat %d: procfs: %v", i, err)
		}
		got := map[int]cpuTimes{}
		st, accounted, err := parseStat([]byte(f), nil)
		for _, c := range st {
			got[c.cpu] = c.cpuTimes
		}
		if !isSortedBy(st, func(c cpuStat) int { return c.cpu }) {
			t.Errorf("stat %d: CPUs not ascending", i)
		}
		if err != nil {
			t.Fatalf("stat %d: %v", i, err)
		}
		wantAcc := false
		if len(got) != len(want.CPU) {
			t.Errorf("stat %d: %d CPUs, procfs %d", i, len(got), len(want.CPU))
		}
		for id, c := range want.CPU {
			w := cpuTimes{total: c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal, user: c.User + c.Nice,
				system: c.System, idle: c.Idle, iowait: c.Iowait, steal: c.Steal, irq: c.IRQ, softirq: c.SoftIRQ}
			if got[int(id)] != w {
				t.Errorf("stat %d cpu%d: %+v, procfs %+v", i, id, got[int(id)], w)
			}
			wantAcc = wantAcc || c.IRQ > 0
		}
		if accounted != wantAcc {
			t.Errorf("stat %d: accounted %v, procfs %v", i, accounted, wantAcc)
		}
	}
}

// The /proc/softirqs corpus read by this package's parser and by procfs
// gives the same NET_RX and NET_TX counts.
func TestSoftirqsAgainstProcfs(t *testing.T) {
	pfs, write := procfsAt(t)
	for i, f := range procFiles(t)["softirqs"] {
		write("softirqs", f)
		want, err := pfs.Softirqs()
		if err != nil {
			t.Fatalf("softirqs %d: procfs: %v", i, err)
		}
		var got netSoftirqs
		if err := parseSoftirqs([]byte(f), &got); err != nil {
			t.Fatalf("softirqs %d: %v", i, err)
		}
		for k, id := range got.cpus {
			rx, tx, _ := got.at(id)
			if rx != want.NetRx[k] || tx != want.NetTx[k] {
				t.Errorf("softirqs %d CPU%d: rx %d tx %d, procfs %d %d", i, id, rx, tx, want.NetRx[k], want.NetTx[k])
			}
		}
		if len(got.rx) != len(want.NetRx) || len(got.tx) != len(want.NetTx) {
			t.Errorf("softirqs %d: %d/%d columns, procfs %d/%d", i, len(got.rx), len(got.tx), len(want.NetRx), len(want.NetTx))
		}
	}
}

// The softnet_stat corpus read by this package's parser and by procfs
// gives the same counts, with and without a CPU id column.
func TestSoftnetAgainstProcfs(t *testing.T) {
	pfs, write := procfsAt(t)
	for i, f := range procFiles(t)["softnet"] {
		write("net/softnet_stat", f)
		want, err := pfs.NetSoftnetStat()
		if err != nil {
			t.Fatalf("softnet %d: procfs: %v", i, err)
		}
		online := []int{0, 2, 4, 6, 8} // line i is CPU 2i without a CPU id column
		var stat []cpuStat
		for _, id := range online {
			stat = append(stat, cpuStat{cpu: id})
		}
		sn, err := parseSoftnet([]byte(f), stat, nil)
		if err != nil {
			t.Fatalf("softnet %d: %v", i, err)
		}
		got := map[int]softnet{}
		for _, c := range sn {
			got[c.cpu] = c.softnet
		}
		if len(got) != len(want) {
			t.Errorf("softnet %d: %d lines, procfs %d", i, len(got), len(want))
		}
		for k, s := range want {
			id := int(s.Index)
			if s.Width < 13 {
				id = online[k]
			}
			if w := (softnet{s.Processed, s.Dropped, s.TimeSqueezed}); got[id] != w {
				t.Errorf("softnet %d cpu %d: %+v, procfs %+v", i, id, got[id], w)
			}
		}
	}
}

// TestProcFilesMalformed: a file the kernel would not write is a
// *ParseError naming the file and line.
func TestProcFilesMalformed(t *testing.T) {
	for _, c := range []struct {
		file, in, want string
	}{
		{statFile, "cpu  1 2 3 4\ncpuX 1 2 3 4\n", "/proc/stat line 2: \"cpuX\" is not cpuN"},
		{statFile, "cpu0 1 2 -3 4\n", "/proc/stat line 1: field 4: \"-3\" is not a count"},
		{softirqsFile, "", "/proc/softirqs line 1: no CPU columns"},
		{softirqsFile, "   CPU0  CPU1\n  NET_RX: 1 x\n  NET_TX: 1 2\n", "/proc/softirqs line 2: column 2: \"x\" is not a count"},
		{softirqsFile, "   CPU0  CPU1\n  NET_RX: 1 2 3\n  NET_TX: 1 2\n", "/proc/softirqs: 3 NET_RX and 2 NET_TX columns under 2 CPU headers"},
		{softirqsFile, "   CPU0  CPU1\n  NET_RX: 1 2\n", "/proc/softirqs: 2 NET_RX and 0 NET_TX columns under 2 CPU headers"},
		{softnetFile, "0 0 0 0 0 0 0 0\n", "/proc/net/softnet_stat line 1: 8 columns, want at least 9"},
		{softnetFile, "0 0 0 0 0 0 0 0 0\n\n", "/proc/net/softnet_stat line 2: 0 columns, want at least 9"},
		{softnetFile, "0 0 0 0 0 0 0 0 100000000\n", "/proc/net/softnet_stat line 1: column 9: \"100000000\" is not a hex count"},
		{softnetFile, "0 0 0 0 0 0 0 0 0x1\n", "/proc/net/softnet_stat line 1: column 9: \"0x1\" is not a hex count"},
	} {
		var err error
		switch c.file {
		case statFile:
			_, _, err = parseStat([]byte(c.in), nil)
		case softirqsFile:
			var m netSoftirqs
			err = parseSoftirqs([]byte(c.in), &m)
		case softnetFile:
			_, err = parseSoftnet([]byte(c.in), nil, nil)
		}
		if _, ok := err.(*ParseError); !ok || !errors.Is(err, ErrMalformed) || err.Error() != c.want {
			t.Errorf("%q: %v, want %s", c.in, err, c.want)
		}
	}
}

// TestSamplerMalformedSoftnet: a malformed softirqs or a softnet_stat gone
// is named in Missing and gives no rates, not rates against an older
// reading's counts; the sample stands.
func TestSamplerMalformedSoftnet(t *testing.T) {
	root, s, now := watchedHost(t)
	h := hostState{cpus: []int{0, 1}, irq38: []uint64{0, 0}, stat: [][3]int{{0, 1, 0}, {0, 1, 0}},
		netRX: []uint64{100, 100, 0}, softnet: [][3]uint32{{100, 0, 0}, {100, 0, 0}}}
	for i, bad := range []bool{false, false, true, false} {
		h.write(t, root)
		if bad {
			if err := os.WriteFile(filepath.Join(root, "proc/softirqs"), []byte("garbage\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(root, "proc/net/softnet_stat")); err != nil {
				t.Fatal(err)
			}
		}
		*now = now.Add(time.Second)
		x, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c := x.CPUs[1]
		switch {
		case bad && (len(x.Missing) != 2 || !strings.HasPrefix(x.Missing[0], "/proc/softirqs line 1: ") ||
			!strings.HasPrefix(x.Missing[1], "/proc/net/softnet_stat: ") || !strings.HasSuffix(x.Missing[1], "no such file or directory")):
			t.Errorf("reading %d: missing %q", i, x.Missing)
		case !bad && len(x.Missing) > 0:
			t.Errorf("reading %d: missing %q", i, x.Missing)
		}
		want := 0.0
		if i < 2 {
			want = 100 // both readings good
		}
		if c.SoftnetProcessedPerS != want || c.NetRXPerS != want {
			t.Errorf("reading %d: softnet %v/s, NET_RX %v/s, want %v", i, c.SoftnetProcessedPerS, c.NetRXPerS, want)
		}
		h.softnet[1][0] += 100
		h.netRX[1] += 100
	}
}

func isSortedBy[T any](s []T, key func(T) int) bool {
	for i := 1; i < len(s); i++ {
		if key(s[i-1]) >= key(s[i]) {
			return false
		}
	}
	return true
}
