package nicdiag

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// The thresholds of the idle check.
const (
	// idleDeepUs: an idle state whose exit latency is at least this is
	// deep: beyond C1 and C1E (1-10 µs on Intel servers; intel_idle's
	// skx_cstates give C1 2, C1E 10, C6 133 µs).
	idleDeepUs = 20
	// idleRingShare: frames arriving at line rate during one exit, as a
	// share of the RX ring, that warn: a burst can fill half the ring
	// before the core runs the receive softirq.
	idleRingShare = 0.5
	// idleDefaultRing stands for an RX ring that was not read.
	idleDefaultRing = 256
)

// idleCheck: deep idle states enabled on the CPUs that take a NIC's queue
// interrupts (cpu.idle_deep). The cpuidle governor (menu, teo) puts an idle
// core into the deepest state its prediction allows; a packet that arrives
// then waits the state's exit latency before the interrupt handler and
// the receive softirq run, and a request-response or a single TCP flow's
// round trip grows by as much. Info from idleDeepUs; warn when the frames
// that arrive at line rate during one exit (1518-byte frames, at the link
// speed or the fastest supported mode) reach half the RX ring: a burst
// can then overflow the ring while the core wakes. States limited by a
// per-CPU PM QoS resume latency or disabled do not count. A host without
// cpuidle (a VM, driver none) has no answer.
var idleCheck = Checker{
	Name:  "idle states",
	Codes: []finding.Code{finding.CPUIdleDeep},
	Run:   func(h *Host) []finding.Finding { return perNIC(h, h.idleDeep) },
}

func (h *Host) idleDeep(n *NIC) (finding.Finding, bool) {
	x := h.Facts.Idle
	if x == nil || !n.Netdev() || n.Queues == nil || x.Driver == "none" || x.Driver == "haltpoll" {
		return finding.Finding{}, false
	}
	cpus, _ := queueCPUs(n, false)
	var deep []int
	var worst nicinfo.IdleState
	for _, c := range x.CPUs {
		if !slices.Contains(cpus, c.CPU) {
			continue
		}
		s, ok := c.Deepest()
		if !ok || s.LatencyUs < idleDeepUs {
			continue
		}
		deep = append(deep, c.CPU)
		if s.LatencyUs > worst.LatencyUs {
			worst = s
		}
	}
	if len(deep) == 0 {
		return finding.Finding{}, false
	}
	ev := map[string]string{
		"driver": x.Driver, "governor": x.Governor, "queue_cpus": irq.FormatCPUList(cpus),
		"deep_cpus": irq.FormatCPUList(deep), "deepest_state": worst.Name,
		"exit_latency_us": strconv.FormatInt(worst.LatencyUs, 10), "deep_at_us": strconv.Itoa(idleDeepUs),
	}
	if x.MaxCState != nil {
		ev["intel_idle_max_cstate"] = strconv.Itoa(*x.MaxCState)
	}
	if len(x.Cmdline) > 0 {
		ev["cmdline"] = strings.Join(x.Cmdline, " ")
	}
	if c := h.CPUs.Get(deep[0]); c != nil && c.Governor != "" {
		ev["cpufreq_governor"] = c.Governor
	}
	sev := finding.Info
	cost := ""
	if speed, basis := h.judgedSpeed(n); speed > 0 {
		frames := fullFramesPerSecond(speed) * float64(worst.LatencyUs) / 1e6
		ring := idleDefaultRing
		if rx, _, ok := ringState(n.Rings); ok {
			ring = rx
		}
		ev["frames_per_exit"] = fmt.Sprintf("%.0f", frames)
		ev["rx_ring"] = strconv.Itoa(ring)
		cost = fmt.Sprintf("; at %s line rate %.0f 1518-byte frames arrive during one exit, %s of the %d-descriptor RX ring", atSpeed(speed, basis), frames, pct(frames/float64(ring)), ring)
		if frames >= idleRingShare*float64(ring) {
			sev = finding.Warn
			cost += ": a burst can overflow the ring while the core wakes"
		}
	}
	tuned := ""
	if ev["cpufreq_governor"] == "performance" {
		tuned = " (their frequency governor is performance: tuned for speed, but not for wake-up)"
	}
	list := irq.FormatCPUList(deep)
	return finding.Finding{
		Code:     finding.CPUIdleDeep,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%d of the %d CPUs that take %s's queue interrupts may enter %s (%s), whose exit latency is %d µs%s: the %s governor puts an idle core there, and a packet that arrives then waits %d µs before the receive softirq runs, adding as much to every round trip that wakes it%s.",
			len(deep), len(cpus), n.Name, worst.Name, worst.Desc, worst.LatencyUs, tuned, x.Governor, worst.LatencyUs, cost),
		Fix: fmt.Sprintf("Keep the packet cores out of deep states: `cpupower -c %s idle-set -D %d` (disables the states with a longer exit latency, until reboot), or for these CPUs only `echo %d | tee /sys/devices/system/cpu/cpu%s/power/pm_qos_resume_latency_us`; for every CPU, tuned-adm profile network-latency, or intel_idle.max_cstate=1 on the kernel command line (costs idle power).",
			list, idleDeepUs, idleDeepUs-1, cpuGlob(deep)),
		Evidence: ev,
	}, true
}

// cpuGlob renders CPUs for a shell path: "7" or "{64,65,66}".
func cpuGlob(cpus []int) string {
	if len(cpus) == 1 {
		return strconv.Itoa(cpus[0])
	}
	return "{" + joinInts(cpus) + "}"
}
