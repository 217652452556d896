package irq

import (
	"bytes"
	"slices"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/prometheus/procfs"
)

// cpuTimes is one CPU's line of /proc/stat, in seconds. user holds user
// and nice time.
type cpuTimes struct {
	total, user, system, idle, iowait, steal, irq, softirq float64
}

// readStat reads /proc/stat with procfs, keyed by CPU id (only online CPUs
// have a line). accounted is false when no CPU has any irq time since boot:
// IRQ time accounting is off, and 0 would be a lie.
func readStat(p procfs.FS) (map[int]cpuTimes, bool, error) {
	st, err := p.Stat()
	if err != nil {
		return nil, false, err
	}
	out := make(map[int]cpuTimes, len(st.CPU))
	accounted := false
	for id, c := range st.CPU {
		// guest and guest_nice are already inside user and nice.
		t := c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
		out[int(id)] = cpuTimes{total: t, user: c.User + c.Nice, system: c.System, idle: c.Idle, iowait: c.Iowait,
			steal: c.Steal, irq: c.IRQ, softirq: c.SoftIRQ}
		if c.IRQ > 0 {
			accounted = true
		}
	}
	return out, accounted, nil
}

// netSoftirqs is the NET_RX and NET_TX rows of /proc/softirqs by CPU id.
type netSoftirqs struct{ rx, tx map[int]uint64 }

// readSoftirqs reads /proc/softirqs with procfs. procfs drops the header, so
// the CPU id of each column comes from the header read here (the columns are
// the possible CPUs, fixed at boot, unlike /proc/interrupts' online CPUs).
func readSoftirqs(r fsroot.Root, p procfs.FS, cpus *[]int) (netSoftirqs, error) {
	const file = "/proc/softirqs"
	for try := 0; ; try++ {
		if len(*cpus) == 0 {
			b, err := r.ReadFile(file)
			if err != nil {
				return netSoftirqs{}, err
			}
			h, _, _ := bytes.Cut(b, []byte("\n"))
			ids, err := parseCPUHeader(h, nil)
			if err != nil {
				return netSoftirqs{}, &ParseError{File: file, Line: 1, Err: err}
			}
			*cpus = ids
		}
		s, err := p.Softirqs()
		if err != nil {
			return netSoftirqs{}, err
		}
		if len(s.NetRx) == len(*cpus) && len(s.NetTx) == len(*cpus) {
			out := netSoftirqs{rx: make(map[int]uint64, len(*cpus)), tx: make(map[int]uint64, len(*cpus))}
			for i, id := range *cpus {
				out.rx[id], out.tx[id] = s.NetRx[i], s.NetTx[i]
			}
			return out, nil
		}
		if try > 0 {
			return netSoftirqs{}, &ParseError{File: file, Err: errf("%d NET_RX and %d NET_TX columns under %d CPU headers", len(s.NetRx), len(s.NetTx), len(*cpus))}
		}
		*cpus = nil // the header changed: read it again
	}
}

// softnet is one CPU's line of /proc/net/softnet_stat (uint32 counters).
type softnet struct{ processed, dropped, squeezed uint32 }

// readSoftnet reads /proc/net/softnet_stat with procfs, keyed by CPU id. Its
// lines are the online CPUs; kernels since 5.10 print the CPU id in column
// 13 (Width >= 13), older ones do not, and then line i is the i-th online
// CPU (online lists the /proc/stat CPU ids, sorted).
func readSoftnet(p procfs.FS, online []int) (map[int]softnet, error) {
	st, err := p.NetSoftnetStat()
	if err != nil {
		return nil, err
	}
	out := make(map[int]softnet, len(st))
	for i, s := range st {
		id := i
		switch {
		case s.Width >= 13:
			id = int(s.Index)
		case i < len(online):
			id = online[i]
		}
		out[id] = softnet{s.Processed, s.Dropped, s.TimeSqueezed}
	}
	return out, nil
}

func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
