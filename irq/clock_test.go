package irq

import (
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
)

// TestClock: the clock is read for the CPUs the NIC's data queues land on
// (here CPU 2), not for a CPU that only takes its other vector (CPU 0);
// the maximum comes from cpuinfo_max_freq, else scaling_max_freq; a CPU
// without cpufreq has no clock.
func TestClock(t *testing.T) {
	cpu := "sys/devices/system/cpu/"
	dir := snaptest.Write(t, map[string]string{
		cpu + "cpu0/cpufreq/scaling_cur_freq": "3500000\n",
		cpu + "cpu2/cpufreq/scaling_cur_freq": "1200000\n",
		cpu + "cpu2/cpufreq/cpuinfo_max_freq": "3500000\n",
		cpu + "cpu3/cpufreq/scaling_cur_freq": "800000\n",
		cpu + "cpu3/cpufreq/scaling_max_freq": "2000000\n",
	})
	s := &Sampler{o: newOptions([]Option{WithRoot(dir)}), queues: []NICQueues{{NIC: "eth0", Queues: []QueueIRQ{
		{Kind: KindOther, CPUs: []int{0}},
		{Kind: KindTxRx, Index: 0, CPUs: []int{2}},
		{Kind: KindTxRx, Index: 1, CPUs: []int{3}},
		{Kind: KindTxRx, Index: 2, CPUs: []int{5}}, // no cpufreq
	}}}}
	s.setClockCPUs()
	r := new(reading)
	s.readClocks(r)
	cpus := []CPURate{{CPU: 0}, {CPU: 2}, {CPU: 3}, {CPU: 5}}
	s.clockRates(r, cpus)
	if cpus[0].MHz != nil || cpus[3].MHz != nil {
		t.Errorf("CPU 0 (not a data queue's) or 5 (no cpufreq) has a clock: %v %v", cpus[0].MHz, cpus[3].MHz)
	}
	if c := cpus[1]; c.MHz == nil || *c.MHz != 1200 || c.MaxMHz == nil || *c.MaxMHz != 3500 {
		t.Errorf("CPU 2: %v of %v MHz, want 1200 of 3500", c.MHz, c.MaxMHz)
	}
	if c := cpus[2]; c.MHz == nil || *c.MHz != 800 || c.MaxMHz == nil || *c.MaxMHz != 2000 {
		t.Errorf("CPU 3: %v of %v MHz, want 800 of 2000 (scaling_max_freq)", c.MHz, c.MaxMHz)
	}
}
