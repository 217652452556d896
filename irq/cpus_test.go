package irq

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/option"
)

// writeCPUTree lays out /sys/devices/system/cpu under a new directory.
func writeCPUTree(t testing.TB, files map[string]string) string {
	dir := t.TempDir()
	for p, c := range files {
		dst := filepath.Join(dir, "sys/devices/system/cpu", p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Two cores of two threads (siblings "0,2" and "1,3", the layout lscpu
// shows on a 2-core Intel client part), cpufreq on CPU 0 only, an old
// kernel's thread_siblings_list on CPU 3.
func TestReadCPUs(t *testing.T) {
	dir := writeCPUTree(t, map[string]string{
		"online":                              "0-3\n",
		"cpu0/topology/core_cpus_list":        "0,2\n",
		"cpu1/topology/core_cpus_list":        "1,3\n",
		"cpu2/topology/core_cpus_list":        "0,2\n",
		"cpu3/topology/thread_siblings_list":  "1,3\n",
		"cpu0/cpufreq/scaling_driver":         "acpi-cpufreq\n",
		"cpu0/cpufreq/scaling_governor":       "powersave\n",
		"cpu0/cpufreq/scaling_min_freq":       "800000\n",
		"cpu0/cpufreq/scaling_max_freq":       "garbage\n",
		"cpu0/cpufreq/energy_performance_pre": "x",
	})
	x, err := ReadCPUs(option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(x.CPUs) != 4 || !x.SMTKnown() || x.Cores(nil) != 2 || x.Cores([]int{0, 2, 9}) != 1 || x.Get(9) != nil {
		t.Fatalf("%+v", x)
	}
	c := x.Get(0)
	if c.Driver != "acpi-cpufreq" || c.Governor != "powersave" || c.MinKHz != 800000 || c.MaxKHz != 0 || c.EPP != "" || c.Core() != 0 {
		t.Errorf("%+v", c)
	}
	if c := x.Get(3); !slices.Equal(c.Siblings, []int{1, 3}) || c.Core() != 1 || c.Governor != "" {
		t.Errorf("%+v", c)
	}
}

// No online list: no answer. Online without topology: SMT unknown.
func TestReadCPUsMissing(t *testing.T) {
	if _, err := ReadCPUs(option.Root(writeCPUTree(t, map[string]string{"possible": "0\n"}))); err == nil {
		t.Error("no error without online")
	}
	x, err := ReadCPUs(option.Root(writeCPUTree(t, map[string]string{"online": "0-1\n"})))
	if err != nil || len(x.CPUs) != 2 || x.SMTKnown() {
		t.Errorf("%+v %v", x, err)
	}
	var none *CPUs
	if none.Get(0) != nil || none.SMTKnown() || none.Cores([]int{0}) != 0 {
		t.Error("nil CPUs")
	}
}

// Hostile files never panic and a siblings list that leaves out the CPU
// itself is not taken.
func FuzzReadCPUs(f *testing.F) {
	f.Add("0-3", "0,2", "powersave", "800000")
	f.Add("0", "1-3", "", "-5")
	f.Add("0-65535", "0", "performance", "0x10")
	f.Fuzz(func(t *testing.T, online, sib, gov, khz string) {
		dir := writeCPUTree(t, map[string]string{
			"online":                        online,
			"cpu0/topology/core_cpus_list":  sib,
			"cpu0/cpufreq/scaling_governor": gov,
			"cpu0/cpufreq/scaling_cur_freq": khz,
		})
		x, err := readCPUs(fsroot.New(dir))
		if err != nil {
			return
		}
		if len(x.CPUs) > maxOnline {
			t.Fatalf("%d CPUs", len(x.CPUs))
		}
		for _, c := range x.CPUs {
			if len(c.Siblings) > 0 && !slices.Contains(c.Siblings, c.ID) {
				t.Fatalf("cpu%d siblings %v", c.ID, c.Siblings)
			}
			if c.CurKHz < 0 {
				t.Fatal("negative clock")
			}
		}
		x.Cores(nil)
		x.SMTKnown()
	})
}
