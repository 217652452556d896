package irq

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
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
	s, err := NewSampler(context.Background(), nil, WithRoot(root), WithInterval(time.Millisecond),
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
