package snapshot

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/option"
)

// A capture keeps what irq.ReadCPUs reads: each online CPU's siblings and
// its cpufreq attributes, with cpuN/cpufreq kept as the kernel's relative
// link to cpufreq/policyN. The source is xeon-i350-sriov-bcm5709 with a
// synthetic 2-core, 4-thread topology and an acpi-cpufreq policy per CPU.
func TestCaptureCPUs(t *testing.T) {
	src := snaptest.Copy(t, filepath.Join("..", "testdata", "snapshots", "xeon-i350-sriov-bcm5709"))
	files := map[string]string{"sys/devices/system/cpu/online": "0-3\n"}
	for c, sib := range []string{"0,2", "1,3", "0,2", "1,3"} {
		d := "sys/devices/system/cpu/cpu" + string(rune('0'+c))
		p := "sys/devices/system/cpu/cpufreq/policy" + string(rune('0'+c))
		files[d+"/topology/core_cpus_list"] = sib + "\n"
		files[d+"/topology/thread_siblings_list"] = sib + "\n"
		files[d+"/topology/core_id"] = "0\n" // not read: not copied
		files[d+"/cpufreq"] = "->../cpufreq/policy" + string(rune('0'+c))
		files[p+"/scaling_driver"] = "acpi-cpufreq\n"
		files[p+"/scaling_governor"] = "powersave\n"
		files[p+"/scaling_min_freq"] = "1200000\n"
		files[p+"/scaling_max_freq"] = "2400000\n"
		files[p+"/scaling_available_governors"] = "performance powersave\n" // not read: not copied
	}
	snaptest.Add(t, src, files)
	dst := filepath.Join(t.TempDir(), "copy")
	if _, err := Capture(context.Background(), dst, FromRoot(src)); err != nil {
		t.Fatal(err)
	}
	want, err := irq.ReadCPUs(option.Root(src))
	if err != nil {
		t.Fatal(err)
	}
	got, err := irq.ReadCPUs(option.Root(dst))
	if err != nil {
		t.Fatal(err)
	}
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	if string(w) != string(g) || got.Get(1).Governor != "powersave" || got.Cores(nil) != 2 {
		t.Errorf("captured %s\nsource %s", g, w)
	}
	if l, err := os.Readlink(filepath.Join(dst, "sys/devices/system/cpu/cpu1/cpufreq")); err != nil || l != "../cpufreq/policy1" {
		t.Errorf("cpufreq link %q %v", l, err)
	}
	for _, p := range []string{"cpu0/topology/core_id", "cpufreq/policy0/scaling_available_governors"} {
		if _, err := os.Stat(filepath.Join(dst, "sys/devices/system/cpu", p)); err == nil {
			t.Errorf("%s copied", p)
		}
	}
}
