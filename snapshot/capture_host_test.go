package snapshot

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// A capture keeps the host audit's facts: each online CPU's idle states
// and PM QoS resume latency, cpuidle's driver and governor, the kernel
// command line's idle parameters (nothing else of it) and release, the
// connection-tracking files, br_netfilter's sysctls, and
// netlink/IFACE.json for an interface with an XDP program or a tunnel (not
// only VFs). The source is xeon-i350-sriov-bcm5709 with
// those files added in the kernel's formats (reconstructed).
func TestCaptureHostFacts(t *testing.T) {
	src := snaptest.Copy(t, filepath.Join("..", "testdata", "snapshots", "xeon-i350-sriov-bcm5709"))
	files := map[string]string{
		"sys/devices/system/cpu/online":                              "0-1\n",
		"sys/devices/system/cpu/cpuidle/current_driver":              "intel_idle\n",
		"sys/devices/system/cpu/cpuidle/current_governor":            "menu\n",
		"sys/devices/system/cpu/cpu1/power/pm_qos_resume_latency_us": "10\n",
		"sys/module/intel_idle/parameters/max_cstate":                "9\n",
		"proc/cmdline":                                 "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_idle.max_cstate=9 quiet ds=nocloud-net;s=http://user:secret@10.0.0.1/ iscsi_initiator=iqn.2024-01.example:host\n",
		"proc/sys/kernel/osrelease":                    "6.1.0-18-amd64\n",
		"proc/sys/net/netfilter/nf_conntrack_count":    "12\n",
		"proc/sys/net/netfilter/nf_conntrack_max":      "262144\n",
		"proc/net/stat/nf_conntrack":                   "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n0000000c  00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000002 00000000 00000003 00000000 00000000  00000000 00000000 00000000 00000000\n",
		"proc/sys/net/bridge/bridge-nf-call-iptables":  "1\n",
		"proc/sys/net/bridge/bridge-nf-call-ip6tables": "0\n",
		"netlink/eno1.json":                            `{"schema": 1, "xdp": {"mode": "generic", "prog_id": 7}}`,
	}
	for _, c := range []string{"cpu0", "cpu1"} {
		for k, st := range [][2]string{{"POLL", "0"}, {"C1", "2"}, {"C6", "133"}} {
			d := "sys/devices/system/cpu/" + c + "/cpuidle/state" + string(rune('0'+k)) + "/"
			files[d+"name"], files[d+"latency"], files[d+"residency"] = st[0]+"\n", st[1]+"\n", "600\n"
			files[d+"disable"], files[d+"usage"], files[d+"desc"] = "0\n", "99\n", "MWAIT\n"
			files[d+"power"] = "0\n" // not read: not copied
		}
	}
	snaptest.Add(t, src, files)
	dst := filepath.Join(t.TempDir(), "copy")
	if _, err := Capture(context.Background(), dst, FromRoot(src)); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func(string) (any, error){
		func(r string) (any, error) { return nicinfo.ReadIdle([]int{0, 1}, option.Root(r)) },
		func(r string) (any, error) { return nicinfo.ReadConntrack(option.Root(r)) },
		func(r string) (any, error) { return nicinfo.ReadBridgeNF(option.Root(r)) },
		func(r string) (any, error) { return nicinfo.ReadKernelRelease(option.Root(r)), nil },
		func(r string) (any, error) { return nicinfo.NetlinkFacts(context.Background(), option.Root(r)) },
	} {
		want, err1 := read(src)
		got, err2 := read(dst)
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		if err1 != nil || err2 != nil || string(w) != string(g) || string(g) == "null" {
			t.Errorf("captured %s (%v)\nsource %s (%v)", g, err2, w, err1)
		}
	}
	// Of the command line, only the idle parameters: no credentials.
	if b, err := os.ReadFile(filepath.Join(dst, "proc/cmdline")); err != nil || string(b) != "intel_idle.max_cstate=9\n" {
		t.Errorf("captured proc/cmdline %q, %v; want the idle parameters alone", b, err)
	}
	if _, err := os.Stat(filepath.Join(dst, "sys/devices/system/cpu/cpu0/cpuidle/state0/power")); err == nil {
		t.Error("cpuidle state power copied")
	}
	x, _ := nicinfo.ReadIdle([]int{1}, option.Root(dst))
	if x == nil || len(x.CPUs) != 1 || x.CPUs[0].ResumeLatencyUs == nil || *x.CPUs[0].ResumeLatencyUs != 10 || len(x.Cmdline) != 1 {
		t.Errorf("idle %+v", x)
	}
}
