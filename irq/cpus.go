package irq

import (
	"slices"
	"strconv"

	"github.com/nicdiag/nicdiag/internal/fsroot"
)

// CPU is what sysfs says about one online CPU: its SMT siblings and its
// frequency scaling (cpufreq). Empty strings and zero values are files
// that do not exist or could not be read (a VM without cpufreq, a kernel
// without topology).
type CPU struct {
	ID int `json:"id"`
	// Siblings are the hardware threads of its physical core, itself
	// included (topology/core_cpus_list, or thread_siblings_list on kernels
	// before 5.6); nil when unknown.
	Siblings []int `json:"siblings,omitempty"`
	// Driver, Governor and EPP are cpufreq/scaling_driver,
	// scaling_governor and energy_performance_preference.
	Driver   string `json:"driver,omitempty"`
	Governor string `json:"governor,omitempty"`
	EPP      string `json:"epp,omitempty"`
	// CurKHz, MinKHz and MaxKHz are scaling_cur_freq, scaling_min_freq and
	// scaling_max_freq; 0 when unknown.
	CurKHz int64 `json:"cur_khz,omitempty"`
	MinKHz int64 `json:"min_khz,omitempty"`
	MaxKHz int64 `json:"max_khz,omitempty"`
}

// Core is the CPU's physical core, named by its lowest thread; the CPU's
// own id when its siblings are unknown.
func (c *CPU) Core() int {
	if len(c.Siblings) > 0 {
		return c.Siblings[0]
	}
	return c.ID
}

// CPUs is the host's online CPUs, sorted by id.
type CPUs struct {
	CPUs []CPU `json:"cpus"`
}

// Get returns CPU id, or nil when it is not online (or was not read).
func (x *CPUs) Get(id int) *CPU {
	if x == nil {
		return nil
	}
	i, ok := slices.BinarySearchFunc(x.CPUs, id, func(c CPU, id int) int { return c.ID - id })
	if !ok {
		return nil
	}
	return &x.CPUs[i]
}

// Cores counts the distinct physical cores of the given CPUs (of every
// online CPU when cpus is nil); CPUs not online are left out.
func (x *CPUs) Cores(cpus []int) int {
	seen := map[int]bool{}
	if cpus == nil && x != nil {
		for i := range x.CPUs {
			seen[x.CPUs[i].Core()] = true
		}
	}
	for _, id := range cpus {
		if c := x.Get(id); c != nil {
			seen[c.Core()] = true
		}
	}
	return len(seen)
}

// SMTKnown reports whether the siblings of every online CPU were read.
func (x *CPUs) SMTKnown() bool {
	if x == nil || len(x.CPUs) == 0 {
		return false
	}
	for i := range x.CPUs {
		if len(x.CPUs[i].Siblings) == 0 {
			return false
		}
	}
	return true
}

// maxOnline bounds how many CPUs ReadCPUs reads (NR_CPUS tops out at 8192).
const maxOnline = 8192

const cpuDir = "/sys/devices/system/cpu/"

// ReadCPUs reads /sys/devices/system/cpu/online and, for each online CPU,
// topology/core_cpus_list (or thread_siblings_list) and the cpufreq
// attributes of CPU. It fails only when the online list cannot be read or
// parsed; a CPU's missing files leave its fields empty.
func ReadCPUs(opts ...Option) (*CPUs, error) {
	o := newOptions(opts)
	return readCPUs(o.root)
}

func readCPUs(r fsroot.Root) (*CPUs, error) {
	s, err := r.ReadString(cpuDir + "online")
	if err != nil {
		return nil, err
	}
	ids, err := ParseCPUList(s)
	if err != nil {
		return nil, err
	}
	if len(ids) > maxOnline {
		ids = ids[:maxOnline]
	}
	x := &CPUs{CPUs: make([]CPU, 0, len(ids))}
	for _, id := range ids {
		d := cpuDir + "cpu" + strconv.Itoa(id) + "/"
		c := CPU{ID: id}
		for _, f := range []string{"topology/core_cpus_list", "topology/thread_siblings_list"} {
			if v, err := r.ReadString(d + f); err == nil {
				if sib, err := ParseCPUList(v); err == nil && slices.Contains(sib, id) {
					c.Siblings = sib
					break
				}
			}
		}
		c.Driver, _ = r.ReadString(d + "cpufreq/scaling_driver")
		c.Governor, _ = r.ReadString(d + "cpufreq/scaling_governor")
		c.EPP, _ = r.ReadString(d + "cpufreq/energy_performance_preference")
		c.CurKHz = readKHz(r, d+"cpufreq/scaling_cur_freq")
		c.MinKHz = readKHz(r, d+"cpufreq/scaling_min_freq")
		c.MaxKHz = readKHz(r, d+"cpufreq/scaling_max_freq")
		x.CPUs = append(x.CPUs, c)
	}
	return x, nil
}

func readKHz(r fsroot.Root, p string) int64 {
	v, err := r.ReadInt(p)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// CPUFreqFiles returns the attributes ReadCPUs and the sampler read under
// each CPU's cpufreq/ (a link to cpufreq/policyN); TopologyFiles those
// under topology/. Snapshots copy these.
func CPUFreqFiles() []string {
	return []string{"scaling_driver", "scaling_governor", "energy_performance_preference", "scaling_cur_freq",
		"scaling_min_freq", "scaling_max_freq", "cpuinfo_max_freq"}
}

// TopologyFiles: see CPUFreqFiles.
func TopologyFiles() []string { return []string{"core_cpus_list", "thread_siblings_list"} }
