package nicdiag

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/option"
)

// smtFiles lays out the CPU topology of the E810 host (numaTree): 128
// online CPUs, node 0 = 0-63 and node 1 = 64-127 as the snapshot's
// local_cpulist says, each node 32 cores of two threads with CPU c's
// sibling at c+32 within its node (core 64 = CPUs 64 and 96). The layout is
// synthetic: the snapshot has no topology files; it follows the kernel's
// file format (core_cpus_list, thread_siblings_list as "64,96").
func smtFiles() map[string]string {
	files := map[string]string{"sys/devices/system/cpu/online": "0-127\n"}
	for c := 0; c < 128; c++ {
		first := c
		if c%64 >= 32 {
			first = c - 32
		}
		sib := fmt.Sprintf("%d,%d\n", first, first+32)
		files[fmt.Sprintf("sys/devices/system/cpu/cpu%d/topology/core_cpus_list", c)] = sib
		files[fmt.Sprintf("sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c)] = sib
	}
	return files
}

// cpufreqFiles gives every CPU the cpufreq policy of the kernel's layout
// (cpuN/cpufreq a link to ../cpufreq/policyN) with driver, governor and,
// when epp is not "", energy_performance_preference.
func cpufreqFiles(driver, governor, epp string) map[string]string {
	files := map[string]string{}
	for c := 0; c < 128; c++ {
		p := fmt.Sprintf("sys/devices/system/cpu/cpufreq/policy%d/", c)
		files[fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq", c)] = fmt.Sprintf("->../cpufreq/policy%d", c)
		files[p+"scaling_driver"] = driver + "\n"
		files[p+"scaling_governor"] = governor + "\n"
		files[p+"scaling_min_freq"] = "800000\n"
		files[p+"scaling_max_freq"] = "3500000\n"
		files[p+"scaling_cur_freq"] = "800000\n"
		if epp != "" {
			files[p+"energy_performance_preference"] = epp + "\n"
		}
	}
	return files
}

func cpuTree(t *testing.T, cpuOf func(q int) int, extra ...map[string]string) string {
	dir := numaTree(t, cpuOf)
	snaptest.Add(t, dir, smtFiles())
	for _, e := range extra {
		snaptest.Add(t, dir, e)
	}
	return dir
}

func findCode(t *testing.T, root string, code finding.Code) *finding.Finding {
	t.Helper()
	r, err := Check(context.Background(), option.Root(root), WithInterfaces("enp162s0f0"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Findings {
		if r.Findings[i].Code == code {
			return &r.Findings[i]
		}
	}
	return nil
}

func TestSMTSiblings(t *testing.T) {
	// 32 queue CPUs on 16 cores: CPUs 64-79 and their siblings 96-111.
	paired := func(q int) int {
		if (q/16)%2 == 0 {
			return 64 + q%16
		}
		return 96 + q%16
	}
	for _, tc := range []struct {
		name   string
		cpuOf  func(q int) int
		want   finding.Severity // -1: no finding
		ev     map[string]string
		fixHas string
	}{
		{"one thread per core", func(q int) int { return 64 + q%32 }, -1, nil, ""},
		{"32 queue CPUs on 16 of the node's 32 cores", paired, finding.Warn,
			map[string]string{"queue_cpu_count": "32", "queue_cores": "16", "pool_cores": "32", "pool_cpus": "64-127", "queue_cpus": "64-79,96-111"},
			"one thread per core of NUMA node 1 (CPUs 64-95)"},
		{"64 queues on the node's 64 threads", func(q int) int { return 64 + q }, finding.Info,
			map[string]string{"queue_cpu_count": "64", "queue_cores": "32", "pool_cores": "32"},
			"ethtool -L enp162s0f0 combined 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := findCode(t, cpuTree(t, tc.cpuOf), finding.IRQSMTSiblings)
			switch {
			case tc.want < 0 && got != nil:
				t.Fatalf("unexpected %s", got)
			case tc.want < 0:
				return
			case got == nil:
				t.Fatal("no irq.smt_siblings")
			}
			if got.Severity != tc.want || got.Subject != "enp162s0f0" || !strings.Contains(got.Fix, tc.fixHas) {
				t.Errorf("%s\nfix: %s", got, got.Fix)
			}
			for k, v := range tc.ev {
				if got.Evidence[k] != v {
					t.Errorf("evidence %s = %q, want %q", k, got.Evidence[k], v)
				}
			}
			if !strings.Contains(got.Evidence["shared_cores"], "CPU 64 (IRQ 301") {
				t.Errorf("shared %q", got.Evidence["shared_cores"])
			}
		})
	}
}

// Without topology files (the snapshot as published, a kernel without
// them) there is no answer: no finding, even with queues that share cores.
func TestSMTSiblingsUnknown(t *testing.T) {
	if f := findCode(t, numaTree(t, func(q int) int { return 64 + q }), finding.IRQSMTSiblings); f != nil {
		t.Errorf("unexpected %s", f)
	}
	// Hostile siblings files (garbage, a list without the CPU itself) read
	// as unknown.
	dir := numaTree(t, func(q int) int { return 64 + q })
	files := smtFiles()
	files["sys/devices/system/cpu/cpu64/topology/core_cpus_list"] = "zz\n"
	files["sys/devices/system/cpu/cpu64/topology/thread_siblings_list"] = "1-3\n"
	snaptest.Add(t, dir, files)
	if f := findCode(t, dir, finding.IRQSMTSiblings); f != nil {
		t.Errorf("unexpected %s", f)
	}
}

func TestCPUPowersave(t *testing.T) {
	local := func(q int) int { return 64 + q%32 }
	for _, tc := range []struct {
		name                  string
		driver, governor, epp string
		want                  finding.Severity
		has                   string
	}{
		{"acpi-cpufreq powersave: lowest clock", "acpi-cpufreq", "powersave", "", finding.Warn, "cpupower -c 64-95 frequency-set -g performance"},
		{"intel_pstate passive (intel_cpufreq) powersave", "intel_cpufreq", "powersave", "", finding.Warn, "cpupower -c 64-95"},
		{"intel_pstate active, HWP, balance_performance", "intel_pstate", "powersave", "balance_performance", -1, ""},
		{"intel_pstate active, default EPP", "intel_pstate", "powersave", "default", -1, ""},
		{"intel_pstate active without HWP", "intel_pstate", "powersave", "", -1, ""},
		{"intel_pstate active, EPP power", "intel_pstate", "powersave", "power", finding.Info, "echo balance_performance | tee /sys/devices/system/cpu/cpu{64,65,"},
		{"amd-pstate-epp balance_power", "amd-pstate-epp", "powersave", "balance_power", finding.Info, "energy_performance_preference"},
		{"acpi-cpufreq schedutil", "acpi-cpufreq", "schedutil", "", -1, ""},
		{"performance", "intel_pstate", "performance", "performance", -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := findCode(t, cpuTree(t, local, cpufreqFiles(tc.driver, tc.governor, tc.epp)), finding.CPUPowersave)
			switch {
			case tc.want < 0 && got != nil:
				t.Fatalf("unexpected %s", got)
			case tc.want < 0:
				return
			case got == nil:
				t.Fatal("no cpu.powersave")
			}
			if got.Severity != tc.want || got.Subject != "enp162s0f0" || !strings.Contains(got.Fix, tc.has) ||
				got.Evidence["slow_cpus"] != "64-95" || !strings.HasPrefix(got.Evidence["settings"], tc.driver+"/"+tc.governor) {
				t.Errorf("%s\nfix: %s\n%v", got, got.Fix, got.Evidence)
			}
			if tc.want == finding.Warn && (!strings.Contains(got.Summary, "(800 of 3500 MHz)") || got.Evidence["scaling_min_khz"] != "800000") {
				t.Errorf("clock: %s %v", got.Summary, got.Evidence)
			}
		})
	}
}

// Only the CPUs that take the NIC's IRQs count: powersave on node 0 while
// every queue is on node 1 is not the NIC's.
func TestCPUPowersaveOtherCPUs(t *testing.T) {
	files := cpufreqFiles("acpi-cpufreq", "powersave", "")
	for c := 64; c < 128; c++ {
		files[fmt.Sprintf("sys/devices/system/cpu/cpufreq/policy%d/scaling_governor", c)] = "performance\n"
	}
	if f := findCode(t, cpuTree(t, func(q int) int { return 64 + q }, files), finding.CPUPowersave); f != nil {
		t.Errorf("unexpected %s", f)
	}
	files[fmt.Sprintf("sys/devices/system/cpu/cpufreq/policy%d/scaling_governor", 70)] = "powersave\n"
	f := findCode(t, cpuTree(t, func(q int) int { return 64 + q }, files), finding.CPUPowersave)
	if f == nil || f.Evidence["slow_cpus"] != "70" || f.Evidence["queue_cpus"] != "64-127" || !strings.Contains(f.Summary, "1 of the 64 CPUs") {
		t.Errorf("got %v", f)
	}
}

// This machine's own /sys: whatever it has reads without error, and a CPU
// without cpufreq files (a VM) has no governor and gives no cpu.powersave.
func TestCPUsLive(t *testing.T) {
	x, err := irq.ReadCPUs()
	if err != nil {
		if os.IsNotExist(err) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	if len(x.CPUs) == 0 {
		t.Fatal("no online CPUs")
	}
	for _, c := range x.CPUs {
		if _, err := os.Stat(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c.ID)); err == nil && len(c.Siblings) == 0 {
			t.Errorf("cpu%d: siblings not read", c.ID)
		}
		if _, err := os.Stat(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", c.ID)); err != nil && c.Governor != "" {
			t.Errorf("cpu%d: governor %q without the file", c.ID, c.Governor)
		}
		t.Logf("cpu%d siblings %v driver %q governor %q epp %q cur %d kHz", c.ID, c.Siblings, c.Driver, c.Governor, c.EPP, c.CurKHz)
	}
	r, err := Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		if f.Code == finding.CPUPowersave {
			if c := x.Get(1); c != nil && c.Governor == "" && x.CPUs[0].Governor == "" {
				t.Errorf("cpu.powersave without cpufreq: %s", f)
			}
			t.Logf("%s", f)
		}
	}
}

// TestCPUPowersaveMixed: when some queue CPUs are pinned low by the
// powersave governor (warn) and others only lean to power by their EPP
// (info), the warning counts and names the pinned ones alone.
func TestCPUPowersaveMixed(t *testing.T) {
	files := cpufreqFiles("intel_pstate", "powersave", "balance_power") // info-level everywhere
	for _, c := range []int{64, 65} {
		p := fmt.Sprintf("sys/devices/system/cpu/cpufreq/policy%d/", c)
		files[p+"scaling_driver"] = "acpi-cpufreq\n" // the generic powersave: warn-level
		files[p+"scaling_min_freq"] = "1200000\n"
		delete(files, p+"energy_performance_preference")
	}
	f := findCode(t, cpuTree(t, func(q int) int { return 64 + q }, files), finding.CPUPowersave)
	if f == nil || f.Severity != finding.Warn || !strings.Contains(f.Summary, "2 of the 64 CPUs") ||
		!strings.Contains(f.Summary, "(1200 of 3500 MHz)") || !strings.Contains(f.Fix, "cpupower -c 64-65 ") {
		t.Errorf("got %v", f)
	}
	if f != nil && f.Evidence["slow_cpus"] != "64-127" {
		t.Errorf("slow_cpus %q: the evidence still lists every slow CPU", f.Evidence["slow_cpus"])
	}
}
