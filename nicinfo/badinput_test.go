package nicinfo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/option"
)

// Damaged snapshot files give a partial record and a named Missing entry,
// never an error for the whole list and never a panic.
func TestBadInput(t *testing.T) {
	src := needSnap(t, "82576-minipcie-x1")
	pci := "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0"
	if _, err := os.Stat(filepath.Join(src, pci)); err != nil {
		t.Skipf("fixture layout changed: %v", err)
	}
	net := pci + "/net/enp1s0f0"
	cases := []struct {
		name, file string
		content    *string // nil removes the file
		missing    string  // prefix of the Missing entry
		check      func(n *NIC) bool
	}{
		{"vendor garbage", pci + "/vendor", ptr("0xzz\n"), "pci.vendor_id: ", func(n *NIC) bool { return n.PCI.VendorID == 0 && n.PCI.DeviceID == 0x10c9 }},
		{"vendor empty", pci + "/vendor", ptr(""), "pci.vendor_id: ", func(n *NIC) bool { return n.PCI.DeviceID == 0x10c9 }},
		{"device missing", pci + "/device", nil, "pci.device_id: absent", func(n *NIC) bool { return n.PCI.VendorID == 0x8086 }},
		{"class too wide", pci + "/class", ptr("0x1020000\n"), "pci.class: ", func(n *NIC) bool { return n.PCI.Class == 0 }},
		{"numa garbage", pci + "/numa_node", ptr("\x00\xff"), "numa_node: ", func(n *NIC) bool { return n.NUMANode == -1 }},
		{"mtu truncated", net + "/mtu", ptr("15"), "", func(n *NIC) bool { return n.MTU == 15 }},
		{"mtu garbage", net + "/mtu", ptr("lots"), "mtu: ", func(n *NIC) bool { return n.MTU == 0 && n.PCI != nil }},
		{"speed garbage", net + "/speed", ptr("fast"), "", func(n *NIC) bool { return n.Link.SpeedMbps == 1000 }}, // ethtool still answers
		{"link speed garbage", pci + "/current_link_speed", ptr("9000 GT/s"), "pci.link.current_link_speed: ", func(n *NIC) bool { return n.PCI.Link != nil && n.PCI.Link.MaxWidth == 4 }},
		{"msi_irqs gone", pci + "/msi_irqs", nil, "", func(n *NIC) bool { return len(n.PCI.IRQs) <= 1 }},
		{"ethtool truncated", "ethtool/enp1s0f0.json", ptr(`{"schema":1,"driver":"ig`), "ethtool: ", func(n *NIC) bool {
			return n.Driver == "igb" && (n.Link.SpeedMbps == SpeedUnknown || n.Link.SpeedMbps == 1000)
		}},
		{"ethtool future", "ethtool/enp1s0f0.json", ptr(`{"schema":99}`), "ethtool: ", func(n *NIC) bool { return n.PCI != nil }},
		{"ethtool gone", "ethtool/enp1s0f0.json", nil, "ethtool: not recorded", func(n *NIC) bool { return n.Driver == "igb" }},
		{"ethtool hostile", "ethtool/enp1s0f0.json", ptr(`{"schema":1,"link":{"speed_mbps":-7}}`), "ethtool: ", func(n *NIC) bool { return n.PCI != nil }},
		{"pci.ids garbage", "usr/share/misc/pci.ids", ptr("8086\n\t\t\n\tzzzz  x\nC"), "", func(n *NIC) bool { return n.PCI.DeviceName == "" && n.PCI.VendorID == 0x8086 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyTree(t, src)
			p := filepath.Join(dir, c.file)
			if c.content == nil {
				if err := os.RemoveAll(p); err != nil {
					t.Fatal(err)
				}
			} else {
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(*c.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			nics, err := List(context.Background(), option.Root(dir))
			if err != nil {
				t.Fatalf("List failed as a whole: %v", err)
			}
			i := slices.IndexFunc(nics, func(n NIC) bool { return n.Name == "enp1s0f0" })
			if i < 0 {
				t.Fatal("enp1s0f0 dropped")
			}
			n := &nics[i]
			if c.missing != "" && !slices.ContainsFunc(n.Missing, func(m string) bool { return strings.HasPrefix(m, c.missing) }) {
				t.Errorf("missing %q; want an entry starting %q", n.Missing, c.missing)
			}
			if !c.check(n) {
				t.Errorf("record %+v (pci %+v) lost more than the damaged field", n, n.PCI)
			}
			for _, m := range n.Missing {
				if strings.Contains(m, dir) {
					t.Errorf("missing entry %q names the snapshot's temp directory", m)
				}
			}
		})
	}
}

// A snapshot whose class/net entry points outside the tree is refused per
// interface, not followed: the interface is listed with nothing read, its
// Missing saying why (unknown, not absent); a plain file is no interface.
func TestEscapingSymlink(t *testing.T) {
	dir := copyTree(t, needSnap(t, "virtio-kvm"))
	link := filepath.Join(dir, "sys/class/net/evil")
	if err := os.Symlink("/sys/class/net/lo", link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sys/class/net/evil2"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	nics, err := List(context.Background(), option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nics {
		names = append(names, n.Name)
		if n.Name == "evil" && (n.MAC != "" || n.Index != 0 || n.Bus != BusOther || !slices.Contains(n.Missing, "sysfs: symlink leaves the root")) {
			t.Errorf("evil read through its link, or not said unread: %+v", n)
		}
	}
	if strings.Join(names, " ") != "eth0 evil" {
		t.Errorf("NICs %q; want eth0 and evil (unread)", names)
	}
}

func ptr(s string) *string { return &s }

// An interface whose ifindex is gone is still listed, with the loss named,
// not dropped without a word.
func TestListKeepsInterfaceWithoutIfindex(t *testing.T) {
	dir := copyTree(t, "../testdata/snapshots/82576-minipcie-x1")
	if err := os.Remove(filepath.Join(dir, "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/net/enp1s0f0/ifindex")); err != nil {
		t.Fatal(err)
	}
	nics, err := List(context.Background(), option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(nics) != 2 || nics[0].Name != "enp1s0f0" || !slices.ContainsFunc(nics[0].Missing, func(m string) bool { return strings.HasPrefix(m, "index: ") }) {
		t.Errorf("nics %+v", nics)
	}
}
