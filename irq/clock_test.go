package irq

import (
	"slices"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
)

// TestClock: each reading reads the clock of the four CPUs busiest in the
// interval before (not of every CPU); the maximum comes from
// cpuinfo_max_freq, else scaling_max_freq; a CPU without cpufreq has no
// clock.
func TestClock(t *testing.T) {
	cpu := "sys/devices/system/cpu/"
	dir := snaptest.Write(t, map[string]string{
		cpu + "cpu0/cpufreq/scaling_cur_freq": "3500000\n",
		cpu + "cpu2/cpufreq/scaling_cur_freq": "1200000\n",
		cpu + "cpu2/cpufreq/cpuinfo_max_freq": "3500000\n",
		cpu + "cpu3/cpufreq/scaling_cur_freq": "800000\n",
		cpu + "cpu3/cpufreq/scaling_max_freq": "2000000\n",
		cpu + "cpu6/cpufreq/scaling_cur_freq": "900000\n",
	})
	s := &Sampler{o: newOptions([]Option{option.Root(dir)})}
	before := []CPURate{{CPU: 0, BusyPct: 5}, {CPU: 2, BusyPct: 90}, {CPU: 3, BusyPct: 50}, {CPU: 5, BusyPct: 70},
		{CPU: 6, BusyPct: 1}, {CPU: 7}}
	s.pickClockCPUs(before)
	if !slices.Equal(s.clockCPUs, []int{2, 5, 3, 0}) {
		t.Fatalf("clock CPUs %v, want the four busiest, busiest first: [2 5 3 0]", s.clockCPUs)
	}
	r := new(reading)
	s.readClocks(r)
	cpus := []CPURate{{CPU: 0}, {CPU: 2}, {CPU: 3}, {CPU: 5}, {CPU: 6}}
	s.clockRates(r, cpus)
	if c := cpus[1]; c.MHz == nil || *c.MHz != 1200 || c.MaxMHz == nil || *c.MaxMHz != 3500 {
		t.Errorf("CPU 2: %v of %v MHz, want 1200 of 3500", c.MHz, c.MaxMHz)
	}
	if c := cpus[2]; c.MHz == nil || *c.MHz != 800 || c.MaxMHz == nil || *c.MaxMHz != 2000 {
		t.Errorf("CPU 3: %v of %v MHz, want 800 of 2000 (scaling_max_freq)", c.MHz, c.MaxMHz)
	}
	if c := cpus[0]; c.MHz == nil || *c.MHz != 3500 || c.MaxMHz != nil {
		t.Errorf("CPU 0: %v of %v MHz, want 3500 with no maximum known", c.MHz, c.MaxMHz)
	}
	if cpus[3].MHz != nil || cpus[4].MHz != nil {
		t.Errorf("CPU 5 (no cpufreq) or 6 (fifth busiest, not read) has a clock: %v %v", cpus[3].MHz, cpus[4].MHz)
	}
	// CPU 5 has no cpufreq: it is remembered, and not read again.
	if !s.noClock[5] || s.noClock[2] {
		t.Errorf("no-clock CPUs %v, want 5 only", s.noClock)
	}
}
