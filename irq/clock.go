package irq

import (
	"cmp"
	"slices"
	"strconv"
)

// clockCPUs is how many CPUs have their clock read at each reading: the
// busiest of the previous interval, where the hot core is. Reading every
// CPU's would cost a file read per CPU per sample.
const clockCPUs = 4

// pickClockCPUs chooses the CPUs whose clock the next reading reads: the
// clockCPUs busiest of cpus (the interval just sampled), busiest first.
func (s *Sampler) pickClockCPUs(cpus []CPURate) {
	s.clockCPUs = s.clockCPUs[:0]
	for i := range cpus {
		if cpus[i].BusyPct > 0 {
			s.clockCPUs = append(s.clockCPUs, i) // indexes into cpus for now
		}
	}
	slices.SortStableFunc(s.clockCPUs, func(a, b int) int { return cmp.Compare(cpus[b].BusyPct, cpus[a].BusyPct) })
	s.clockCPUs = s.clockCPUs[:min(len(s.clockCPUs), clockCPUs)]
	for i, j := range s.clockCPUs {
		s.clockCPUs[i] = cpus[j].CPU
	}
}

// maxClock returns cpu's maximum clock in kHz (cpuinfo_max_freq, else
// scaling_max_freq), read once; 0 when unknown.
func (s *Sampler) maxClock(cpu int) int64 {
	if v, ok := s.maxKHz[cpu]; ok {
		return v
	}
	if s.maxKHz == nil {
		s.maxKHz = map[int]int64{}
	}
	var v int64
	for _, f := range []string{"cpuinfo_max_freq", "scaling_max_freq"} {
		if v = s.readKHz(cpu, f); v > 0 {
			break
		}
	}
	if len(s.maxKHz) < maxCPUsKnown {
		s.maxKHz[cpu] = v
	}
	return v
}

// maxCPUsKnown bounds the maxima kept.
const maxCPUsKnown = 8192

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

// readClocks reads scaling_cur_freq of the clock CPUs into r, keeping the
// files open (as many as CPUs were ever among the busiest). A CPU without
// it (no cpufreq: most VMs) is not asked again.
func (s *Sampler) readClocks(r *reading) {
	if r.khz == nil {
		r.khz = map[int]int64{}
	}
	clear(r.khz)
	for _, c := range s.clockCPUs {
		if s.noClock[c] {
			continue
		}
		k := s.clockFiles.get(c, func() string {
			return "/sys/devices/system/cpu/cpu" + strconv.Itoa(c) + "/cpufreq/scaling_cur_freq"
		}, true)
		var v int64
		var err error
		if v, s.clockBuf, err = readIntAttr(s.o.root, k, s.clockBuf); err == nil && v > 0 {
			r.khz[c] = v
			continue
		}
		k.close()
		if len(s.noClock) < maxCPUsKnown {
			if s.noClock == nil {
				s.noClock = map[int]bool{}
			}
			s.noClock[c] = true
		}
	}
}

// clockRates sets the clock of the CPUs read at reading b (reusing the
// pointers cpus hold) and clears it elsewhere, and picks those the next
// reading reads.
func (s *Sampler) clockRates(b *reading, cpus []CPURate) {
	for i := range cpus {
		c := &cpus[i]
		v, ok := b.khz[c.CPU]
		if !ok {
			c.MHz, c.MaxMHz = nil, nil
			continue
		}
		c.MHz = s.putF(c.MHz, float64(v)/1000)
		if m := s.maxClock(c.CPU); m > 0 {
			c.MaxMHz = s.putF(c.MaxMHz, float64(m)/1000)
		} else {
			c.MaxMHz = nil
		}
	}
	s.pickClockCPUs(cpus)
}
