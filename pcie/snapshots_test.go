package pcie

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSnapshots runs Links and PathTo over the machine snapshots in
// ../testdata/snapshots (generated from shared/fixtures by gen.py). The
// expected findings restate each tree's README: the 82576 and I350 on the
// mini-PCIe x1 adapter are slot-limited, the NVMe trained one generation
// down, and nothing else is to be reported (empty ports, Gen1 devices on
// Gen2 ports, virtual links, non-root views included).
func TestSnapshots(t *testing.T) {
	cases := []struct {
		name     string
		findings []string // "code subject"
		hops     int
		arch     map[string]string // function -> substring of Path.Architectural or hop Reason
	}{
		{"82576-minipcie-x1", []string{"pcie.slot_limited 0000:01:00.0"}, 1, nil},
		{"i350-minipcie-x1", []string{"pcie.slot_limited 0000:01:00.0"}, 1, nil},
		{"nvme-gen5-at-gen4", []string{"pcie.link_downgraded 0000:2e:00.0"}, 1, nil},
		{"connectx3pro-haswell", nil, 1, nil},
		{"rtl8111-ich10-x58", nil, 2, nil},
		{"empty-ports-x0", nil, -1, nil},
		{"ar8151-desktop", nil, 1, nil},
		{"ccr2004-host", nil, 1, nil},
		{"i225-nonroot", nil, 2, nil},
		{"ryzen-i350-rtl8168", nil, 4, nil},
		{"xeon-i350-sriov-bcm5709", nil, -1, nil},
		{"e1000e-10gclaim", nil, 0, map[string]string{"0000:00:1f.6": "no upstream port: on root bus 0000:00"}},
		{"virtio-kvm", nil, 1, map[string]string{"0000:01:00.0": "vendor 1af4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := "../testdata/snapshots/" + tc.name
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("snapshot not generated yet: %v", err)
			}
			hops, err := Links(bg, WithRoot(dir))
			if err != nil {
				t.Fatal(err)
			}
			if tc.hops >= 0 && len(hops) != tc.hops {
				t.Errorf("%d links, want %d", len(hops), tc.hops)
			}
			var got []string
			for _, h := range hops {
				for _, f := range h.Findings() {
					got = append(got, string(f.Code)+" "+f.Subject)
				}
			}
			if !slices.Equal(got, tc.findings) {
				t.Errorf("findings %q, want %q", got, tc.findings)
			}
			for fn, want := range tc.arch {
				p, err := PathTo(bg, Address(fn), WithRoot(dir))
				if err != nil {
					t.Fatal(err)
				}
				why := p.Architectural
				for _, h := range p.Hops {
					why += h.Reason
				}
				if !strings.Contains(why, want) {
					t.Errorf("%s: %q lacks %q", fn, why, want)
				}
			}
			// Every function resolves to a path without error.
			names, err := os.ReadDir(dir + "/sys/bus/pci/devices")
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				if _, err := PathTo(bg, Address(n.Name()), WithRoot(dir)); err != nil {
					t.Errorf("%s: %v", n.Name(), err)
				}
			}
		})
	}
}

// TestSnapshotNonRoot: the I225 tree holds only 64-byte configs. MPS and
// MRRS are unknown, port types are assumed from position, and the link
// facts still come from sysfs.
func TestSnapshotNonRoot(t *testing.T) {
	dir := "../testdata/snapshots/i225-nonroot"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("snapshot not generated yet: %v", err)
	}
	p, err := PathTo(bg, "0000:04:00.0", WithRoot(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hops) != 2 || p.Hops[0].Upstream.Address != "0000:02:05.0" {
		t.Fatalf("hops %+v", p.Hops)
	}
	d := p.Hops[0].Downstream
	if d.MaxPayload != 0 || d.Config == nil || d.Config.CapsReadable || d.ConfigNote != NotReadableNote || d.Link.MaxSpeed == 0 {
		t.Errorf("non-root device end %+v", d)
	}
	if !slices.ContainsFunc(p.Notes, func(s string) bool { return strings.Contains(s, "assumed") }) {
		t.Errorf("notes %q", p.Notes)
	}
}

// TestLiveHost walks the running kernel's sysfs: every PCI function must
// give a path, and Links must not fail. (On the Firecracker test VM, eth0
// is virtio on conventional PCI at 0000:00:03.0, on the root bus.)
func TestLiveHost(t *testing.T) {
	names, err := os.ReadDir("/sys/bus/pci/devices")
	if err != nil || len(names) == 0 {
		t.Skip("no PCI devices on this host")
	}
	for _, n := range names {
		p, err := PathTo(bg, Address(n.Name()))
		if err != nil {
			t.Errorf("%s: %v", n.Name(), err)
			continue
		}
		if len(p.Hops) == 0 && p.Architectural == "" {
			t.Errorf("%s: no hops and no reason", n.Name())
		}
		if os.Geteuid() != 0 && p.Device.Config != nil && p.Device.Config.CapsReadable && p.Device.Config.Size > 64 {
			t.Errorf("%s: non-root read %d config bytes", n.Name(), p.Device.Config.Size)
		}
	}
	if _, err := Links(bg); err != nil {
		t.Fatal(err)
	}
}
