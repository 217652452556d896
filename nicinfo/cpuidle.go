package nicinfo

import (
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/text"
)

// Idle is what the kernel's cpuidle says about some CPUs: the driver and
// governor that pick idle states, the states each CPU may enter with their
// exit latencies, and what limits them (a per-CPU PM QoS resume latency,
// intel_idle.max_cstate and the like on the kernel command line). Files of
// Documentation/ABI/testing/sysfs-devices-system-cpu and
// Documentation/admin-guide/pm/cpuidle.rst.
type Idle struct {
	// Driver and Governor are cpuidle/current_driver and
	// current_governor (current_governor_ro on older kernels): "intel_idle",
	// "acpi_idle", "haltpoll"; "menu", "teo", "ladder". Driver "none" (or
	// absent) means no idle states beyond the architecture's default.
	Driver   string `json:"driver,omitempty"`
	Governor string `json:"governor,omitempty"`
	// MaxCState is /sys/module/intel_idle/parameters/max_cstate; nil when
	// intel_idle is not loaded.
	MaxCState *int `json:"intel_idle_max_cstate,omitempty"`
	// Cmdline are the kernel command line's idle parameters
	// (intel_idle.max_cstate=, processor.max_cstate=, idle=, cpuidle.off=,
	// cpuidle.governor=), as given.
	Cmdline []string `json:"cmdline,omitempty"`
	// CPUs are the CPUs asked for that have a cpuidle directory, by id.
	CPUs []CPUIdle `json:"cpus,omitempty"`
}

// CPUIdle is one CPU's idle states and its PM QoS resume latency.
type CPUIdle struct {
	CPU    int         `json:"cpu"`
	States []IdleState `json:"states"`
	// ResumeLatencyUs is power/pm_qos_resume_latency_us: states with a
	// longer exit latency are not used; -1 when "n/a" (no idle state at
	// all), nil when the file is absent or 0 (no limit).
	ResumeLatencyUs *int64 `json:"pm_qos_resume_latency_us,omitempty"`
}

// IdleState is cpuN/cpuidle/stateK.
type IdleState struct {
	Name string `json:"name"`
	Desc string `json:"desc,omitempty"`
	// LatencyUs is the exit latency in µs; ResidencyUs the target
	// residency.
	LatencyUs   int64 `json:"latency_us"`
	ResidencyUs int64 `json:"residency_us"`
	// Disabled is "disable" = 1 (by a person or tool, on this CPU).
	Disabled bool `json:"disabled,omitempty"`
	// Usage is how often the CPU entered it since boot.
	Usage uint64 `json:"usage"`
}

// Deepest returns the enabled state with the longest exit latency that the
// CPU's resume latency allows; ok is false when there is none (only POLL,
// or nothing read).
func (c CPUIdle) Deepest() (IdleState, bool) {
	var best IdleState
	found := false
	for _, s := range c.States {
		if s.Disabled || strings.EqualFold(s.Name, "POLL") {
			continue
		}
		if l := c.ResumeLatencyUs; l != nil && (*l < 0 || s.LatencyUs > *l) {
			continue
		}
		if !found || s.LatencyUs > best.LatencyUs {
			best, found = s, true
		}
	}
	return best, found
}

// Files and limits of the cpuidle reader; snapshot.Capture copies the
// same files.
const (
	CPUIdleDir      = "/sys/devices/system/cpu/cpuidle"
	IntelMaxCState  = "/sys/module/intel_idle/parameters/max_cstate"
	CmdlineFile     = "/proc/cmdline"
	maxIdleStates   = 16
	idleParamPrefix = "intel_idle. processor.max_cstate idle= cpuidle."
)

// IdleStateFiles are the files of one cpuN/cpuidle/stateK nicdiag reads.
func IdleStateFiles() []string {
	return []string{"name", "desc", "latency", "residency", "disable", "usage"}
}

// ReadIdle reads cpuidle for cpus under the root (option.Root). It returns
// nil, and an error matching fs.ErrNotExist, when the host has no cpuidle
// (a kernel without it, an old snapshot); a CPU without a cpuidle
// directory is left out; a state whose latency is not a number is left
// out too.
func ReadIdle(cpus []int, opts ...Option) (*Idle, error) {
	o := applyOptions(opts)
	r := o.root
	x := &Idle{}
	x.Driver, _ = r.ReadString(CPUIdleDir + "/current_driver")
	if g, err := r.ReadString(CPUIdleDir + "/current_governor"); err == nil {
		x.Governor = g
	} else {
		x.Governor, _ = r.ReadString(CPUIdleDir + "/current_governor_ro")
	}
	x.Driver, x.Governor = text.Clip(x.Driver), text.Clip(x.Governor)
	if v, err := r.ReadInt(IntelMaxCState); err == nil {
		m := int(v)
		x.MaxCState = &m
	}
	if b, err := r.ReadFileMax(CmdlineFile, 4096); err == nil {
		x.Cmdline = idleParams(string(b))
	}
	for _, id := range cpus {
		if c, ok := readCPUIdle(r, id); ok {
			x.CPUs = append(x.CPUs, c)
		}
	}
	if x.Driver == "" && len(x.CPUs) == 0 {
		return nil, wrapErr(errors.Join(errors.New("no cpuidle"), fs.ErrNotExist))
	}
	return x, nil
}

// idleParams picks the idle parameters out of a kernel command line,
// clipped for output.
func idleParams(cmdline string) []string {
	out := idleWords(cmdline)
	for i, w := range out {
		out[i] = text.Clip(w)
	}
	return out
}

// idleWords are the words of a kernel command line with an idle prefix
// (idleParamPrefix), the first eight.
func idleWords(cmdline string) []string {
	var out []string
	for _, f := range strings.Fields(cmdline) {
		for _, p := range strings.Fields(idleParamPrefix) {
			if strings.HasPrefix(f, p) && len(out) < 8 {
				out = append(out, f)
			}
		}
	}
	return out
}

// IdleCmdline is what a snapshot keeps of a kernel command line
// (CmdlineFile): the idle parameters ReadIdle reads, and nothing else (a
// command line may carry credentials: an iSCSI secret, a cloud-init ds=
// URL), as one line.
func IdleCmdline(cmdline string) string {
	return strings.Join(idleWords(cmdline), " ") + "\n"
}

// readCPUIdle reads cpuN's states.
func readCPUIdle(r fsroot.Root, id int) (CPUIdle, bool) {
	base := "/sys/devices/system/cpu/cpu" + strconv.Itoa(id)
	names, err := r.ReadDir(base + "/cpuidle")
	if err != nil {
		return CPUIdle{}, false
	}
	c := CPUIdle{CPU: id, States: []IdleState{}}
	slices.SortFunc(names, func(a, b string) int { return stateIndex(a) - stateIndex(b) })
	for _, n := range names {
		if stateIndex(n) < 0 || len(c.States) >= maxIdleStates {
			continue
		}
		d := base + "/cpuidle/" + n + "/"
		lat, err := r.ReadInt(d + "latency")
		if err != nil || lat < 0 {
			continue
		}
		s := IdleState{LatencyUs: lat}
		s.Name, _ = r.ReadString(d + "name")
		s.Desc, _ = r.ReadString(d + "desc")
		s.Name, s.Desc = text.Clip(s.Name), text.Clip(s.Desc)
		s.ResidencyUs, _ = r.ReadInt(d + "residency")
		if v, err := r.ReadInt(d + "disable"); err == nil {
			s.Disabled = v != 0
		}
		if v, err := r.ReadInt(d + "usage"); err == nil && v > 0 {
			s.Usage = uint64(v)
		}
		c.States = append(c.States, s)
	}
	if v, err := r.ReadString(base + "/power/pm_qos_resume_latency_us"); err == nil {
		switch n, perr := strconv.ParseInt(v, 10, 64); {
		case v == "n/a":
			na := int64(-1)
			c.ResumeLatencyUs = &na
		case perr == nil && n > 0:
			c.ResumeLatencyUs = &n
		}
	}
	return c, true
}

// stateIndex is K of "stateK", -1 for any other name.
func stateIndex(name string) int {
	k, ok := strings.CutPrefix(name, "state")
	if !ok {
		return -1
	}
	v, err := strconv.Atoi(k)
	if err != nil || v < 0 || v > 64 {
		return -1
	}
	return v
}
