package nicdiag

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
)

// idleFiles gives CPUs 0-127 of the E810 host (numaTree) the cpuidle
// states intel_idle registers on Skylake-SP (drivers/idle/intel_idle.c
// skx_cstates: C1 2/2 µs, C1E 10/20, C6 133/600; POLL first, as the
// cpuidle core adds it), with disable set per state name in off and, when
// qos is not "", power/pm_qos_resume_latency_us. Reconstructed: the
// snapshot has no cpuidle files.
func idleFiles(off map[string]bool, qos string) map[string]string {
	files := map[string]string{
		"sys/devices/system/cpu/cpuidle/current_driver":   "intel_idle\n",
		"sys/devices/system/cpu/cpuidle/current_governor": "menu\n",
		"sys/module/intel_idle/parameters/max_cstate":     "9\n",
	}
	states := []struct {
		name, desc string
		lat, res   int
	}{{"POLL", "CPUIDLE CORE POLL IDLE", 0, 0}, {"C1", "MWAIT 0x00", 2, 2}, {"C1E", "MWAIT 0x01", 10, 20}, {"C6", "MWAIT 0x20", 133, 600}}
	for c := 0; c < 128; c++ {
		for k, s := range states {
			d := fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpuidle/state%d/", c, k)
			dis := "0\n"
			if off[s.name] {
				dis = "1\n"
			}
			files[d+"name"], files[d+"desc"] = s.name+"\n", s.desc+"\n"
			files[d+"latency"], files[d+"residency"] = fmt.Sprintf("%d\n", s.lat), fmt.Sprintf("%d\n", s.res)
			files[d+"disable"], files[d+"usage"] = dis, "123456\n"
		}
		if qos != "" {
			files[fmt.Sprintf("sys/devices/system/cpu/cpu%d/power/pm_qos_resume_latency_us", c)] = qos + "\n"
		}
	}
	return files
}

// The E810 host (25 Gb/s, queue IRQs on CPUs 64-95) with Skylake-SP idle
// states: C6 (133 µs) enabled is cpu.idle_deep; at 25 Gb/s 270 frames
// arrive during one exit, over half the default 256-descriptor ring the
// snapshot does not record: warn. C6 disabled, or a PM QoS resume latency
// of 10 µs on the CPUs, leaves C1E (10 µs): silent, the tuned host.
func TestIdleDeep(t *testing.T) {
	local := func(q int) int { return 64 + q }
	f := findCode(t, cpuTree(t, local, idleFiles(nil, "")), finding.CPUIdleDeep)
	if f == nil || f.Severity != finding.Warn || f.Evidence["deepest_state"] != "C6" || f.Evidence["exit_latency_us"] != "133" ||
		!strings.Contains(f.Summary, "may enter C6 (MWAIT 0x20), whose exit latency is 133 µs") ||
		!strings.Contains(f.Summary, "the menu governor") || !strings.Contains(f.Fix, "idle-set -D 20") ||
		f.Evidence["frames_per_exit"] != "270" {
		t.Fatalf("C6 on: %v\n%v", f, f.Evidence)
	}
	for name, files := range map[string]map[string]string{
		"C6 disabled": idleFiles(map[string]bool{"C6": true}, ""),
		"PM QoS 10":   idleFiles(nil, "10"),
	} {
		if f := findCode(t, cpuTree(t, local, files), finding.CPUIdleDeep); f != nil {
			t.Errorf("%s: %s", name, f)
		}
	}
	// No cpuidle files (every bundled snapshot): no answer.
	if f := findCode(t, cpuTree(t, local), finding.CPUIdleDeep); f != nil {
		t.Errorf("no cpuidle: %s", f)
	}
}
