package irq

import (
	"slices"
	"strconv"
)

// maxClockCPUs bounds the CPUs whose clock is read at each reading.
const maxClockCPUs = 256

// setClockCPUs picks the CPUs whose clock each reading reads: those the
// sampled NICs' data queues are routed to, where the packet work and so
// the hot core are (a few CPUs, not every one), and reads each one's
// maximum once (cpuinfo_max_freq, else scaling_max_freq).
func (s *Sampler) setClockCPUs() {
	s.clockCPUs = s.clockCPUs[:0]
	for _, nq := range s.queues {
		for _, q := range nq.DataQueues() {
			for _, c := range q.CPUs {
				if !slices.Contains(s.clockCPUs, c) && len(s.clockCPUs) < maxClockCPUs {
					s.clockCPUs = append(s.clockCPUs, c)
				}
			}
		}
	}
	slices.Sort(s.clockCPUs)
	if s.maxKHz == nil {
		s.maxKHz = map[int]int64{}
	}
	for _, c := range s.clockCPUs {
		if _, ok := s.maxKHz[c]; ok {
			continue
		}
		s.maxKHz[c] = 0
		for _, f := range []string{"cpuinfo_max_freq", "scaling_max_freq"} {
			if v := s.readKHz(c, f); v > 0 {
				s.maxKHz[c] = v
				break
			}
		}
	}
}

// readKHz reads /sys/devices/system/cpu/cpuN/cpufreq/file in kHz; 0 when
// it is absent (no cpufreq: most VMs) or not a positive number.
func (s *Sampler) readKHz(cpu int, file string) int64 {
	var v int64
	var err error
	v, s.clockBuf, err = s.o.root.ReadIntInto("/sys/devices/system/cpu/cpu"+strconv.Itoa(cpu)+"/cpufreq/"+file, s.clockBuf)
	if err != nil || v <= 0 {
		return 0
	}
	return v
}

// readClocks reads scaling_cur_freq of the clock CPUs into r.
func (s *Sampler) readClocks(r *reading) {
	if r.khz == nil {
		r.khz = map[int]int64{}
	}
	clear(r.khz)
	for _, c := range s.clockCPUs {
		if v := s.readKHz(c, "scaling_cur_freq"); v > 0 {
			r.khz[c] = v
		}
	}
}

// clockRates sets the clock of the CPUs read at reading b.
func (s *Sampler) clockRates(b *reading, cpus []CPURate) {
	for i := range cpus {
		if v, ok := b.khz[cpus[i].CPU]; ok {
			mhz := float64(v) / 1000
			cpus[i].MHz = &mhz
			if m := s.maxKHz[cpus[i].CPU]; m > 0 {
				max := float64(m) / 1000
				cpus[i].MaxMHz = &max
			}
		}
	}
}
