package nicinfo

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

// The platform signals of captured trees: the QEMU lab guest (DMI QEMU,
// CPU flag), the Firecracker guest (CPU flag only: Firecracker writes no
// SMBIOS), a server snapshot without any of the files (no VM).
func TestReadPlatformSnapshots(t *testing.T) {
	for _, tc := range []struct {
		tree       string
		want       Platform
		wantVendor bool
	}{
		{"qemu-lab-links", Platform{VM: true, Hypervisor: HypervisorQEMU, SysVendor: "QEMU",
			ProductName: "Standard PC (Q35 + ICH9, 2009)", CPUFlag: true, CPUs: 2}, true},
		{"qemu-lab-igb-vfs", Platform{VM: true, Hypervisor: HypervisorQEMU, SysVendor: "QEMU",
			ProductName: "Standard PC (Q35 + ICH9, 2009)", CPUFlag: true, CPUs: 2}, true},
		{"firecracker-virtio-vm", Platform{VM: true, CPUFlag: true, CPUs: 2}, false},
		{"i219-optiplex", Platform{}, false},
	} {
		t.Run(tc.tree, func(t *testing.T) {
			p := ReadPlatform(context.Background(), option.Root(needSnap(t, tc.tree)))
			if p != tc.want {
				t.Errorf("got %+v, want %+v", p, tc.want)
			}
		})
	}
}

// What each hypervisor's firmware writes, and its look-alikes: an EC2 bare
// metal instance and a Surface laptop are not VMs; Xen says so in
// /sys/hypervisor.
func TestClassifyPlatform(t *testing.T) {
	for _, tc := range []struct {
		files map[string]string
		name  string
		vm    bool
	}{
		{map[string]string{"sys_vendor": "QEMU\n", "product_name": "Standard PC (i440FX + PIIX, 1996)\n"}, HypervisorQEMU, true},
		{map[string]string{"sys_vendor": "VMware, Inc.\n", "product_name": "VMware Virtual Platform\n"}, HypervisorVMware, true},
		{map[string]string{"sys_vendor": "Microsoft Corporation\n", "product_name": "Virtual Machine\n"}, HypervisorHyperV, true},
		{map[string]string{"sys_vendor": "Microsoft Corporation\n", "product_name": "Surface Pro 7\n"}, "", false},
		{map[string]string{"sys_vendor": "Amazon EC2\n", "product_name": "m5.large\n"}, HypervisorEC2, true},
		{map[string]string{"sys_vendor": "Amazon EC2\n", "product_name": "m5.metal\n"}, "", false},
		{map[string]string{"sys_vendor": "Google\n", "product_name": "Google Compute Engine\n"}, HypervisorGCE, true},
		{map[string]string{"sys_vendor": "innotek GmbH\n", "product_name": "VirtualBox\n"}, HypervisorVirtualBox, true},
		{map[string]string{"sys_vendor": "OpenStack Foundation\n", "product_name": "OpenStack Nova\n"}, HypervisorOpenStack, true},
		{map[string]string{"sys_vendor": "Dell Inc.\n", "product_name": "PowerEdge R610\n"}, "", false},
		{map[string]string{"hypervisor": "xen\n"}, HypervisorXen, true},
	} {
		files := map[string]string{}
		for k, v := range tc.files {
			if k == "hypervisor" {
				files["sys/hypervisor/type"] = v
				continue
			}
			files["sys/devices/virtual/dmi/id/"+k] = v
		}
		files["sys/class/dmi/id"] = "->../../devices/virtual/dmi/id"
		p := ReadPlatform(context.Background(), option.Root(snaptest.Write(t, files)))
		if p.Hypervisor != tc.name || p.VM != tc.vm {
			t.Errorf("%v: %q vm %v, want %q vm %v", tc.files, p.Hypervisor, p.VM, tc.name, tc.vm)
		}
	}
}

func TestParseCPUInfo(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(snapDir, "firecracker-virtio-vm", "proc", "cpuinfo"))
	if err != nil {
		t.Fatal(err)
	}
	if flag, n := parseCPUInfo(string(b)); !flag || n != 2 {
		t.Errorf("firecracker cpuinfo: flag %v, %d CPUs; want true, 2", flag, n)
	}
	// aarch64 has no flags line and no hypervisor bit; "hypervisorx" is
	// not the flag.
	arm := "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd\n\nprocessor\t: 1\nFeatures\t: fp hypervisorx\n"
	if flag, n := parseCPUInfo(arm); flag || n != 2 {
		t.Errorf("arm cpuinfo: flag %v, %d CPUs", flag, n)
	}
}

// FuzzParseCPUInfo: any /proc/cpuinfo text is read without panic, and
// never counts more CPUs than it has lines.
func FuzzParseCPUInfo(f *testing.F) {
	f.Add("processor\t: 0\nflags\t\t: fpu hypervisor\n")
	f.Add("flags:hypervisor")
	f.Add("\n\n:::\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, n := parseCPUInfo(s)
		if n > strings.Count(s, "\n")+1 {
			t.Fatalf("%d CPUs from %q", n, s)
		}
		classifyPlatform(Platform{SysVendor: s, ProductName: s, HypervisorType: s})
	})
}

// The virtio device of each virtio_net interface and its MQ bit, as the
// QEMU lab guest's kernel wrote them: eth3 without mq, eth4 with mq=on.
func TestVirtioFeatures(t *testing.T) {
	nics, err := List(context.Background(), option.Root(needSnap(t, "qemu-lab-links")), WithPCIIDs("testdata/pci.ids"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		dev string
		mq  bool
	}{"eth3": {"virtio0", false}, "eth4": {"virtio1", true}}
	for _, n := range nics {
		w, ok := want[n.Name]
		if !ok {
			if n.Virtio != nil {
				t.Errorf("%s (%s): virtio %+v", n.Name, n.Driver, *n.Virtio)
			}
			continue
		}
		mq, known := n.Virtio.Feature(VirtioNetFMQ)
		if n.Virtio == nil || n.Virtio.Name != w.dev || !known || mq != w.mq || len(n.Virtio.Features) != 64 {
			t.Errorf("%s: virtio %+v, MQ %v (known %v); want %s, MQ %v", n.Name, n.Virtio, mq, known, w.dev, w.mq)
		}
	}
}

// An old snapshot without the features file still names the device, with
// the bits unknown and nothing missing; a damaged file is named in
// Missing.
func TestVirtioFeaturesAbsentOrBad(t *testing.T) {
	dir := copyTree(t, needSnap(t, "firecracker-virtio-vm"))
	f := filepath.Join(dir, "sys/devices/pci0000:00/0000:00:03.0/virtio2/features")
	for _, tc := range []struct {
		content string // "" removes the file
		missing bool
	}{{"", false}, {"10x1\n", true}, {strings.Repeat("1", maxVirtioFeatures+1), true}} {
		if tc.content == "" {
			os.Remove(f)
		} else if err := os.WriteFile(f, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		n, err := Get(context.Background(), "eth0", option.Root(dir), WithPCIIDs("testdata/pci.ids"))
		if err != nil {
			t.Fatal(err)
		}
		_, known := n.Virtio.Feature(VirtioNetFMQ)
		got := strings.Contains(strings.Join(n.Missing, "\n"), "virtio.features")
		if n.Virtio == nil || n.Virtio.Name != "virtio2" || known || got != tc.missing {
			t.Errorf("features %q: virtio %+v known %v, missing %v", tc.content, n.Virtio, known, n.Missing)
		}
	}
}

func FuzzVirtioFeatures(f *testing.F) {
	f.Add("1110010111111111111101010000110010000000100000000000000000000000\n")
	f.Add("")
	f.Add(" 01 ")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseVirtioFeatures(s)
		if err != nil {
			return
		}
		if v == "" || len(v) > maxVirtioFeatures || strings.Trim(v, "01") != "" {
			t.Fatalf("accepted %q as %q", s, v)
		}
		d := &VirtioDevice{Features: v}
		for _, b := range []int{-1, 0, VirtioNetFMQ, len(v), 1 << 20} {
			on, known := d.Feature(b)
			if known != (b >= 0 && b < len(v)) || on && !known {
				t.Fatalf("Feature(%d) of %q: %v %v", b, v, on, known)
			}
		}
	})
}

// The PF's VF settings from the igb guest's netlink/eth0.json, tied to the
// VFs' PCI functions through virtfnN; the VFs themselves have none.
func TestVFConfigSnapshot(t *testing.T) {
	dir := needSnap(t, "qemu-lab-igb-vfs")
	nics, err := List(context.Background(), option.Root(dir), WithPCIIDs("testdata/pci.ids"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nics {
		switch n.Name {
		case "eth0":
			want := []VFConfig{
				{VF: 0, Function: "0000:01:10.0", MaxTxRateMbps: 100, SpoofCheck: true, LinkState: VFLinkAuto},
				{VF: 1, Function: "0000:01:10.2", SpoofCheck: true, LinkState: VFLinkAuto},
			}
			if len(n.VFConfig) != 2 || n.VFConfig[0] != want[0] || n.VFConfig[1] != want[1] {
				t.Errorf("eth0 VF config %+v, want %+v", n.VFConfig, want)
			}
		default:
			if n.VFConfig != nil {
				t.Errorf("%s: VF config %+v", n.Name, n.VFConfig)
			}
		}
	}
	m, err := VFConfigs(context.Background(), option.Root(dir))
	if err != nil || len(m) != 1 || len(m["eth0"]) != 2 || m["eth0"][0].Function != "" {
		t.Errorf("VFConfigs: %v %+v", err, m)
	}
	// A snapshot from before netlink/ has no VF settings, and says nothing.
	x, err := Get(context.Background(), "enp5s0f0", option.Root(needSnap(t, "xeon-i350-sriov-bcm5709")), WithPCIIDs("testdata/pci.ids"))
	if err != nil || x.VFConfig != nil || strings.Contains(strings.Join(x.Missing, " "), "netlink") {
		t.Errorf("xeon PF: %v %+v %v", err, x.VFConfig, x.Missing)
	}
}

// A damaged netlink file is named in Missing and read as no VF settings.
func TestVFConfigBadFile(t *testing.T) {
	dir := copyTree(t, needSnap(t, "qemu-lab-igb-vfs"))
	for _, bad := range []string{`{"schema":1,"vfs":[{"vf":0},{"vf":0}]}`, `{"schema":9}`, `{"schema":1,"vfs":[{"vf":0,"vlan":5000}]}`, `[`} {
		if err := os.WriteFile(filepath.Join(dir, "netlink/eth0.json"), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		n, err := Get(context.Background(), "eth0", option.Root(dir), WithPCIIDs("testdata/pci.ids"))
		if err != nil {
			t.Fatal(err)
		}
		if n.VFConfig != nil || !strings.Contains(strings.Join(n.Missing, "\n"), "netlink.vfs: ") {
			t.Errorf("%s: VF config %+v, missing %v", bad, n.VFConfig, n.Missing)
		}
		if _, err := VFConfigs(context.Background(), option.Root(dir)); err == nil {
			t.Errorf("%s: VFConfigs accepted it", bad)
		}
	}
}

// FuzzNetlinkAnswers: hostile netlink/IFACE.json never panics, and what it
// accepts is in the kernel's ranges.
func FuzzNetlinkAnswers(f *testing.F) {
	b, _ := json.Marshal(NetlinkAnswers{Schema: 1, VFs: []VFConfig{{VF: 0, MaxTxRateMbps: 100, SpoofCheck: true, LinkState: "auto"}}})
	f.Add(b)
	f.Add([]byte(`{"schema":1,"vfs":[{"vf":-1}]}`))
	f.Add([]byte(`{"schema":1,"vfs":[{"vf":0,"function":"zz","mac":"\u001b[31m"}]}`))
	f.Add([]byte(`{"schema":1,"xdp":{"mode":"generic","prog_id":42},"tunnel":{"kind":"vxlan","vni":4096,"port":4789,"link":"eth0"}}`))
	f.Add([]byte(`{"schema":1,"tunnel":{"kind":"geneve","vni":16777216,"link":"a/b"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseNetlinkAnswers(b)
		if err != nil {
			return
		}
		if x := a.XDP; x != nil && x.Mode != XDPDriver && x.Mode != XDPGeneric && x.Mode != XDPOffload && x.Mode != XDPMulti {
			t.Fatalf("accepted XDP %+v", x)
		}
		if u := a.Tunnel; u != nil && (u.VNI >= 1<<24 || u.Port < 0 || u.Port > 65535 || u.Link != "" && !validIfaceName(u.Link)) {
			t.Fatalf("accepted tunnel %+v", u)
		}
		for _, v := range a.VFs {
			if v.VF < 0 || v.VLAN < 0 || v.VLAN > 4095 || v.QoS < 0 || v.QoS > 7 || v.MaxTxRateMbps < 0 || v.MinTxRateMbps < 0 ||
				v.Function != "" && !pcie.Address(v.Function).Valid() || strings.ContainsAny(v.MAC, "\x1b\n") {
				t.Fatalf("accepted %+v", v)
			}
		}
	})
}
