package nicdiag

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// find returns the finding with code on subject, or nil.
func find(fs []finding.Finding, code finding.Code, subject string) *finding.Finding {
	for i := range fs {
		if fs[i].Code == code && fs[i].Subject == subject {
			return &fs[i]
		}
	}
	return nil
}

func checkTree(t *testing.T, dir string, opts ...Option) []finding.Finding {
	t.Helper()
	r, err := Check(context.Background(), append([]Option{option.Root(dir)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r.Findings
}

// The verdicts on captured trees. qemu-lab-links is the QEMU lab guest:
// e1000 (eth0) and e1000e (eth1) are QEMU's models, vmxnet3 (eth2) is
// paravirtual, eth3 is virtio-net without mq, eth4 with mq=on and 4 queue
// pairs. qemu-lab-igb-vfs has VF 0 capped at 100 Mb/s by its PF. The
// Firecracker guest's virtio device offers no MQ; virtio-kvm (2 CPUs by
// its local_cpulist, no /proc) neither. On the bare-metal Xeon the igbvf
// VFs are single-queue by design; its PFs keep nic.single_queue.
func TestVirtualSnapshots(t *testing.T) {
	type want struct {
		code    finding.Code
		subject string
		sev     finding.Severity // -1: must be absent
		text    string           // in the summary, or in the fix when it starts with "fix:"
	}
	const absent = finding.Severity(-1)
	for _, tc := range []struct {
		tree string
		want []want
	}{
		{"qemu-lab-links", []want{
			{finding.NICEmulated, "eth0", finding.Warn, "emulated Intel 82540EM (driver e1000) on a QEMU virtual machine"},
			{finding.NICEmulated, "eth1", finding.Warn, "82574L"},
			{finding.NICEmulated, "eth1", finding.Warn, "fix:<model type='virtio'/>"},
			{finding.NICEmulated, "eth2", absent, ""},
			{finding.NICEmulated, "eth3", absent, ""},
			{finding.NICEmulated, "eth4", absent, ""},
			{finding.NICVirtioSingleQueue, "eth3", finding.Warn, "VIRTIO_NET_F_MQ, feature bit 22, is clear"},
			{finding.NICVirtioSingleQueue, "eth3", finding.Warn, "fix:queues=2 -device virtio-net-pci,netdev=ID,mq=on,vectors=6"},
			{finding.NICVirtioSingleQueue, "eth3", finding.Warn, "fix:<driver name='vhost' queues='2'/>"},
			{finding.NICVirtioSingleQueue, "eth4", absent, ""},
			{finding.NICSingleQueue, "eth3", absent, ""},
			// An emulated chip's one queue is still one queue; at its
			// nominal 1000 Mb/s one core keeps up: info.
			{finding.NICSingleQueue, "eth0", finding.Info, "81 k 1518-byte frames/s, which one core moves"},
		}},
		{"qemu-lab-igb-vfs", []want{
			{finding.NICVFRateLimited, "eth1", finding.Warn, "eth1 (VF 0 of eth0, 0000:01:10.0) may send at most 100 Mb/s"},
			{finding.NICVFRateLimited, "eth1", finding.Warn, "fix:ip link set eth0 vf 0 max_tx_rate 0"},
			{finding.NICVFRateLimited, "eth2", absent, ""},
			{finding.NICVFRateLimited, "eth0", absent, ""},
			{finding.NICSingleQueue, "eth1", absent, ""},
			{finding.NICSingleQueue, "eth2", absent, ""},
			{finding.NICEmulated, "eth0", finding.Warn, "emulated Intel 82576"}, // QEMU's igb, subsystem 1af4:1100
		}},
		{"firecracker-virtio-vm", []want{
			{finding.NICVirtioSingleQueue, "eth0", finding.Warn, "virtio device virtio2 does not offer multiqueue"},
			{finding.NICSingleQueue, "eth0", absent, ""},
			{finding.NICEmulated, "eth0", absent, ""},
		}},
		{"virtio-kvm", []want{
			{finding.NICVirtioSingleQueue, "eth0", finding.Warn, "2-vCPU"},
			{finding.NICSingleQueue, "eth0", absent, ""},
		}},
		{"xeon-i350-sriov-bcm5709", []want{
			{finding.NICSingleQueue, "enp5s16", absent, ""},
			{finding.NICSingleQueue, "enp5s17f5", absent, ""},
			{finding.NICSingleQueue, "enp5s0f0", finding.Info, "not bound by it"}, // 1 GbE
			{finding.NICVFRateLimited, "enp5s16", absent, ""},
			{finding.NICEmulated, "enp5s16", absent, ""},
		}},
		{"e1000e-10gclaim", []want{{finding.NICEmulated, "eth0", absent, ""}}},
		{"82576-minipcie-x1", []want{{finding.NICEmulated, "enp1s0f0", absent, ""}}},
	} {
		t.Run(tc.tree, func(t *testing.T) {
			fs := checkTree(t, snaps+tc.tree)
			for _, w := range tc.want {
				f := find(fs, w.code, w.subject)
				switch {
				case w.sev == absent && f != nil:
					t.Errorf("unexpected %s", f)
				case w.sev == absent:
				case f == nil:
					t.Errorf("no %s on %s in %v", w.code, w.subject, fs)
				case f.Severity != w.sev:
					t.Errorf("%s: severity %s, want %s", f, f.Severity, w.sev)
				case strings.HasPrefix(w.text, "fix:") && !strings.Contains(f.Fix, w.text[4:]):
					t.Errorf("%s: fix %q lacks %q", f.Code, f.Fix, w.text[4:])
				case !strings.HasPrefix(w.text, "fix:") && !strings.Contains(f.Summary, w.text):
					t.Errorf("%s: summary %q lacks %q", f.Code, f.Summary, w.text)
				}
			}
		})
	}
}

// The evidence each verdict rests on.
func TestVirtualEvidence(t *testing.T) {
	fs := checkTree(t, snaps+"qemu-lab-links")
	e := find(fs, finding.NICEmulated, "eth0")
	if e == nil || e.Evidence["hypervisor"] != "QEMU" || e.Evidence["subsystem"] != "1af4:1100" || e.Evidence["paravirtual"] != "virtio-net" ||
		!strings.Contains(e.Evidence["vm_signals"], `sys_vendor "QEMU"`) || !strings.Contains(e.Evidence["vm_signals"], "cpuinfo flag hypervisor") {
		t.Errorf("nic.emulated eth0: %+v", e)
	}
	v := find(fs, finding.NICVirtioSingleQueue, "eth3")
	if v == nil || v.Evidence["virtio_mq"] != "not offered" || v.Evidence["vcpus"] != "2" || v.Evidence["virtio_device"] != "virtio0" ||
		v.Evidence["channels"] != "combined 1 (max 1)" || v.Evidence["rps"] != "off" {
		t.Errorf("nic.virtio_single_queue eth3: %+v", v)
	}
	r := find(checkTree(t, snaps+"qemu-lab-igb-vfs"), finding.NICVFRateLimited, "eth1")
	if r == nil || *r.CapacityMbps != 100 || *r.DemandMbps != 1000 || r.Direction != "tx" || r.Evidence["function"] != "0000:01:10.0" ||
		r.Evidence["pf"] != "eth0" || r.Evidence["vf"] != "0" || r.Evidence["link_mbps"] != "1000 (the VF's link)" {
		t.Errorf("nic.vf_rate_limited eth1: %+v", r)
	}
}

// Variations of the QEMU guest: whether the chip is emulated rests on the
// subsystem ID and the platform, not on the driver's name.
func TestEmulatedVariants(t *testing.T) {
	// Not a VM by any signal: QEMU's e1000 still says 1af4:1100; the e1000e's
	// 8086:0000 alone proves nothing.
	dir := snaptest.Copy(t, snaps+"qemu-lab-links")
	os.RemoveAll(filepath.Join(dir, "sys/devices/virtual/dmi"))
	os.Remove(filepath.Join(dir, "sys/class/dmi/id"))
	cpuinfo := filepath.Join(dir, "proc/cpuinfo")
	b, _ := os.ReadFile(cpuinfo)
	os.WriteFile(cpuinfo, []byte(strings.ReplaceAll(string(b), " hypervisor", "")), 0o644)
	fs := checkTree(t, dir)
	if f := find(fs, finding.NICEmulated, "eth0"); f == nil || f.Evidence["vm_signals"] != "none" {
		t.Errorf("e1000 with QEMU's subsystem off a VM: %+v", f)
	}
	if f := find(fs, finding.NICEmulated, "eth1"); f != nil {
		t.Errorf("e1000e 8086:0000 off a VM: %s", f)
	}

	// A real 82574L passed through to the QEMU guest keeps its card's
	// subsystem (Intel Gigabit CT, 8086:a01f): not emulated. A down
	// emulated NIC is info.
	dir = snaptest.Copy(t, snaps+"qemu-lab-links")
	os.WriteFile(filepath.Join(dir, "sys/devices/pci0000:00/0000:00:10.0/0000:01:00.0/subsystem_device"), []byte("0xa01f\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "sys/devices/pci0000:00/0000:00:13.0/net/eth0/operstate"), []byte("down\n"), 0o644)
	fs = checkTree(t, dir)
	if f := find(fs, finding.NICEmulated, "eth1"); f != nil {
		t.Errorf("passed-through 82574L: %s", f)
	}
	if f := find(fs, finding.NICEmulated, "eth0"); f == nil || f.Severity != finding.Info {
		t.Errorf("down e1000: %+v", f)
	}
}

// Each hypervisor's paravirtual NIC and how to get it.
func TestParavirtualFix(t *testing.T) {
	for hv, want := range map[string]string{
		nicinfo.HypervisorVMware:     "vmxnet3",
		nicinfo.HypervisorHyperV:     "hv_netvsc",
		nicinfo.HypervisorEC2:        "ena",
		nicinfo.HypervisorGCE:        "GVNIC",
		nicinfo.HypervisorVirtualBox: "--nictype1 virtio",
		nicinfo.HypervisorXen:        "xen-netfront",
		nicinfo.HypervisorQEMU:       "virtio-net-pci",
		"":                           "<model type='virtio'/>",
	} {
		if _, fix := paravirtual(nicinfo.Platform{Hypervisor: hv, VM: true}); !strings.Contains(fix, want) {
			t.Errorf("%q: fix %q lacks %q", hv, fix, want)
		}
	}
}

// virtio variations on the Firecracker guest: a device that offers MQ but
// one queue pair (QEMU mq=on,queues=1) is the host's to fix too; a device
// with more queue pairs than the guest uses is not this check's; an old
// snapshot without the features file is judged by the channel maximum,
// and without either nic.single_queue speaks as before; one vCPU is
// nothing.
func TestVirtioVariants(t *testing.T) {
	const features = "sys/devices/pci0000:00/0000:00:03.0/virtio2/features"
	mq := strings.Repeat("0", 22) + "1" + strings.Repeat("0", 105)
	ethtool := func(max, cur int) string {
		return `{"schema":1,"driver":"virtio_net","bus_info":"0000:00:03.0","link":{"speed_mbps":-1,"duplex":"unknown"},` +
			`"channels":{"max_combined":` + strconv.Itoa(max) + `,"combined":` + strconv.Itoa(cur) + `}}`
	}
	for _, tc := range []struct {
		name  string
		files map[string]string // "" removes
		code  finding.Code      // the one of the two that must be there ("" neither)
		text  string
	}{
		{"MQ offered, one pair", map[string]string{features: mq, "ethtool/eth0.json": ethtool(1, 1)}, finding.NICVirtioSingleQueue, "offers one queue pair"},
		{"MQ offered, four pairs", map[string]string{features: mq, "ethtool/eth0.json": ethtool(4, 4)}, "", ""},
		{"no features file", map[string]string{features: ""}, finding.NICVirtioSingleQueue, "combined maximum 1"},
		{"no features, no channels", map[string]string{features: "", "ethtool/eth0.json": ""}, finding.NICSingleQueue, "enable RPS"},
		{"one vCPU", map[string]string{"proc/interrupts": "           CPU0\n 38:       6331  PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := snaptest.Copy(t, snaps+"firecracker-virtio-vm")
			for p, c := range tc.files {
				if c == "" {
					os.Remove(filepath.Join(dir, p))
				} else if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fs := checkTree(t, dir)
			v, s := find(fs, finding.NICVirtioSingleQueue, "eth0"), find(fs, finding.NICSingleQueue, "eth0")
			switch tc.code {
			case "":
				if v != nil || s != nil && tc.name == "one vCPU" {
					t.Errorf("unexpected %v %v", v, s)
				}
			case finding.NICVirtioSingleQueue:
				if v == nil || s != nil || !strings.Contains(v.Summary, tc.text) {
					t.Errorf("virtio %+v, single %v", v, s)
				}
			case finding.NICSingleQueue:
				if v != nil || s == nil || !strings.Contains(s.Fix, tc.text) {
					t.Errorf("virtio %v, single %+v", v, s)
				}
			}
		})
	}
}

// The VF's cap against the link it sends on: at or above it, info; the
// VF not on this host (no virtfnN for its index), judged against the PF's
// link, on the PF; selecting only the VF keeps its finding, selecting the
// other VF does not.
func TestVFRateVariants(t *testing.T) {
	for _, tc := range []struct {
		netlink string
		subject string
		sev     finding.Severity
		text    string
	}{
		{`{"schema":1,"vfs":[{"vf":0,"max_tx_rate_mbps":1000}]}`, "eth1", finding.Info, "does not bind"},
		{`{"schema":1,"vfs":[{"vf":5,"max_tx_rate_mbps":250}]}`, "eth0", finding.Warn, "VF 5 of eth0 may send at most 250 Mb/s"},
		{`{"schema":1,"vfs":[{"vf":0,"max_tx_rate_mbps":0,"min_tx_rate_mbps":50}]}`, "", 0, ""},
	} {
		dir := snaptest.Copy(t, snaps+"qemu-lab-igb-vfs")
		os.WriteFile(filepath.Join(dir, "netlink/eth0.json"), []byte(tc.netlink), 0o644)
		var got []finding.Finding
		for _, f := range checkTree(t, dir) {
			if f.Code == finding.NICVFRateLimited {
				got = append(got, f)
			}
		}
		switch {
		case tc.subject == "" && len(got) != 0:
			t.Errorf("%s: %v", tc.netlink, got)
		case tc.subject == "":
		case len(got) != 1 || got[0].Subject != tc.subject || got[0].Severity != tc.sev || !strings.Contains(got[0].Summary, tc.text):
			t.Errorf("%s: %v, want %s on %s with %q", tc.netlink, got, tc.sev, tc.subject, tc.text)
		}
	}
	if f := find(checkTree(t, snaps+"qemu-lab-igb-vfs", WithInterfaces("eth1")), finding.NICVFRateLimited, "eth1"); f == nil {
		t.Error("selecting the VF dropped its finding")
	}
	if f := find(checkTree(t, snaps+"qemu-lab-igb-vfs", WithInterfaces("eth2")), finding.NICVFRateLimited, "eth1"); f != nil {
		t.Errorf("selecting the other VF kept %s", f)
	}
}

// Which VFs are single-queue by design.
func TestVFSingleByDesign(t *testing.T) {
	vf := func(driver string, dev uint16, ch *nicinfo.Channels) *NIC {
		n := &NIC{NIC: nicinfo.NIC{Name: "vf0", Driver: driver, Bus: nicinfo.BusPCI,
			PCI: &nicinfo.PCIFunction{VendorID: 0x8086, DeviceID: dev, PhysFn: "0000:01:00.0"}}}
		n.NIC.Queues.Channels = ch
		return n
	}
	for _, tc := range []struct {
		n    *NIC
		want bool
	}{
		{vf("igbvf", 0x1520, nil), true},
		{vf("ixgbevf", 0x10ed, nil), true},
		{vf("iavf", 0x1889, &nicinfo.Channels{MaxCombined: 16, Combined: 1}), false},
		{vf("iavf", 0x1889, &nicinfo.Channels{MaxCombined: 1, Combined: 1}), true},
		{&NIC{NIC: nicinfo.NIC{Name: "pf", Driver: "igb", Bus: nicinfo.BusPCI, PCI: &nicinfo.PCIFunction{VendorID: 0x8086, DeviceID: 0x1521}}}, false},
	} {
		if got := vfSingleByDesign(tc.n); got != tc.want {
			t.Errorf("%s %04x %+v: %v, want %v", tc.n.Driver, tc.n.PCI.DeviceID, tc.n.NIC.Queues.Channels, got, tc.want)
		}
	}
}
