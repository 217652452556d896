package nicinfo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

const snapDir = "../testdata/snapshots"

// want is what a snapshot's README says about one interface.
type want struct {
	snap, iface, bdf            string
	vendor, device, sv, sd      uint16
	driver, pciDriver           string
	speed, rxq, txq, numa, irqs int
	physfn                      string
	vfs                         int
	curGTs, maxGTs              float64
	curW, maxW                  int
}

// Values from each tree's README.md (testdata/snapshots/*/README.md).
var wants = []want{
	{"82576-minipcie-x1", "enp1s0f0", "0000:01:00.0", 0x8086, 0x10c9, 0x8086, 0xa03c, "igb", "igb", 1000, 2, 2, -1, 3, "", 0, 2.5, 2.5, 1, 4},
	{"i350-minipcie-x1", "enp1s0f1", "0000:01:00.1", 0x8086, 0x1521, 0x8086, 0x0002, "igb", "igb", 1000, 2, 2, -1, 3, "", 0, 5, 5, 1, 4},
	{"ccr2004-host", "enp1s0f3", "0000:01:00.3", 0x1969, 0x1083, 0x1969, 0x1083, "atl1c", "atl1c", 25000, 4, 4, -1, 1, "", 0, 8, 8, 8, 8},
	{"connectx3pro-haswell", "enp3s0", "0000:03:00.0", 0x15b3, 0x1007, 0x1ae0, 0x0034, "mlx4_en", "mlx4_core", 40000, 12, 12, -1, 13, "", 0, 8, 8, 8, 8},
	{"i225-nonroot", "enp4s0", "0000:04:00.0", 0x8086, 0x15f3, 0x1043, 0x87d2, "igc", "igc", 2500, 4, 4, -1, 5, "", 0, 5, 5, 1, 1},
	{"rtl8111-ich10-x58", "enp8s0", "0000:08:00.0", 0x10ec, 0x8168, 0x1043, 0x8367, "r8169", "r8169", 1000, 1, 1, -1, 1, "", 0, 2.5, 2.5, 1, 1},
	{"virtio-kvm", "eth0", "0000:01:00.0", 0x1af4, 0x1041, 0x1af4, 0x1100, "virtio_net", "virtio-pci", SpeedUnknown, 1, 1, -1, 3, "", 0, 2.5, 2.5, 1, 1},
	{"xeon-i350-sriov-bcm5709", "eno1", "0000:01:00.0", 0x14e4, 0x1639, 0x1028, 0x0236, "bnx2", "bnx2", 1000, 8, 8, -1, 9, "", 0, 5, 5, 4, 4},
	{"xeon-i350-sriov-bcm5709", "enp5s0f1", "0000:05:00.1", 0x8086, 0x1521, 0xffff, 0x0000, "igb", "igb", 1000, 1, 1, 1, 2, "", 4, 5, 5, 4, 4},
	{"xeon-i350-sriov-bcm5709", "enp5s16f5", "0000:05:10.5", 0x8086, 0x1520, 0xffff, 0x0000, "igbvf", "igbvf", 1000, 1, 1, 1, 3, "0000:05:00.1", 0, 0, 0, 0, 0},
	{"e810-ice-numa1", "enp162s0f0", "0000:a2:00.0", 0x8086, 0x159b, 0x8086, 0x0003, "ice", "ice", 25000, 64, 64, 1, 65, "", 0, 16, 16, 8, 8},
}

func needSnap(t testing.TB, name string) string {
	t.Helper()
	d := filepath.Join(snapDir, name)
	if _, err := os.Stat(d); err != nil {
		t.Skipf("snapshot %s not generated yet", name)
	}
	return d
}

func TestSnapshots(t *testing.T) {
	ctx := context.Background()
	for _, w := range wants {
		t.Run(w.snap+"/"+w.iface, func(t *testing.T) {
			dir := needSnap(t, w.snap)
			n, err := Get(ctx, w.iface, option.Root(dir), WithPCIIDs("testdata/pci.ids"))
			if err != nil {
				t.Fatal(err)
			}
			if n.Bus != BusPCI || n.PCI == nil {
				t.Fatalf("bus %q, pci %v; want a PCI NIC", n.Bus, n.PCI)
			}
			f := n.PCI
			if string(f.Address) != w.bdf || f.VendorID != w.vendor || f.DeviceID != w.device || f.SubsystemVendor != w.sv || f.SubsystemDevice != w.sd {
				t.Errorf("PCI %s %04x:%04x sub %04x:%04x; want %s %04x:%04x sub %04x:%04x",
					f.Address, f.VendorID, f.DeviceID, f.SubsystemVendor, f.SubsystemDevice, w.bdf, w.vendor, w.device, w.sv, w.sd)
			}
			if n.Driver != w.driver || f.Driver != w.pciDriver {
				t.Errorf("drivers %s/%s; want %s/%s", n.Driver, f.Driver, w.driver, w.pciDriver)
			}
			if n.Link.SpeedMbps != w.speed {
				t.Errorf("speed %d; want %d", n.Link.SpeedMbps, w.speed)
			}
			if n.Queues.RX != w.rxq || n.Queues.TX != w.txq {
				t.Errorf("queues %d/%d; want %d/%d", n.Queues.RX, n.Queues.TX, w.rxq, w.txq)
			}
			if n.NUMANode != w.numa {
				t.Errorf("numa %d; want %d", n.NUMANode, w.numa)
			}
			if len(f.IRQs) != w.irqs || !slices.IsSorted(f.IRQs) {
				t.Errorf("irqs %v; want %d sorted", f.IRQs, w.irqs)
			}
			if string(f.PhysFn) != w.physfn || len(f.VFs) != w.vfs {
				t.Errorf("physfn %q vfs %v; want %q and %d VFs", f.PhysFn, f.VFs, w.physfn, w.vfs)
			}
			if w.curGTs == 0 {
				if f.Link != nil {
					t.Errorf("link %+v; want none (VF)", f.Link)
				}
			} else if l := f.Link; l == nil || l.CurrentSpeed != w.curGTs || l.MaxSpeed != w.maxGTs || l.CurrentWidth != w.curW || l.MaxWidth != w.maxW {
				t.Errorf("link %+v; want %v x%d / %v x%d", l, w.curGTs, w.curW, w.maxGTs, w.maxW)
			}
			if f.VendorName == "" || f.DeviceName == "" || f.ClassName != "Ethernet controller" {
				t.Errorf("names %q %q class %q; want names from testdata/pci.ids", f.VendorName, f.DeviceName, f.ClassName)
			}
		})
	}
}

// The VFs a PF lists are exactly the functions whose physfn is that PF.
func TestSRIOVRelation(t *testing.T) {
	dir := needSnap(t, "xeon-i350-sriov-bcm5709")
	nics, err := List(context.Background(), option.Root(dir), WithPCIIDs("testdata/pci.ids"))
	if err != nil {
		t.Fatal(err)
	}
	if len(nics) < 8 {
		t.Fatalf("%d NICs; the tree has 14", len(nics))
	}
	byAddr := map[pcie.Address]*NIC{}
	for i := range nics {
		byAddr[nics[i].PCI.Address] = &nics[i]
	}
	checked := 0
	for _, n := range nics {
		for _, vf := range n.PCI.VFs {
			v, ok := byAddr[vf]
			if !ok {
				continue
			}
			checked++
			if v.PCI.PhysFn != n.PCI.Address {
				t.Errorf("%s lists VF %s whose physfn is %q", n.PCI.Address, vf, v.PCI.PhysFn)
			}
		}
	}
	if checked != 8 {
		t.Errorf("checked %d VF links; want 8", checked)
	}
}

// Subsystem names match the subsystem vendor too: the I350 VFs' ffff:0000
// must not borrow a name from another vendor's 0000 entry, and 8086:a03c is
// Intel's own card.
func TestSubsystemNeedsVendor(t *testing.T) {
	var q PCIQuery
	q.Add(0x8086, 0x1572, 0x8086, 0x0000, 0x020000) // X710, Intel-branded
	q.Add(0x8086, 0x1572, 0x1028, 0x0000, 0x020000) // X710, Dell rNDC
	f, err := os.Open("testdata/pci.ids")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := readPCIIDs(f, f.Name(), &q)
	if err != nil {
		t.Fatal(err)
	}
	if s := n.subsystem(0x8086, 0x1572, 0x8086, 0x0000); strings.Contains(s, "rNDC") || s == n.subsystem(0x8086, 0x1572, 0x1028, 0x0000) {
		t.Errorf("Intel X710 8086:0000 named %q, Dell's name", s)
	}
	if s := n.subsystem(0x8086, 0x1572, 0x1028, 0x0000); !strings.Contains(s, "X710") {
		t.Errorf("Dell X710 1028:0000 named %q", s)
	}
}

func TestVirtioJoin(t *testing.T) {
	dir := needSnap(t, "virtio-kvm")
	dev, err := os.Readlink(filepath.Join(dir, "sys/class/net/eth0"))
	if err != nil || !strings.Contains(dev, "/virtio") {
		t.Fatalf("fixture: eth0 -> %q (%v); want it under virtioN", dev, err)
	}
	n, err := Get(context.Background(), "eth0", option.Root(dir), WithEthtool(nil), WithPCIIDs("testdata/pci.ids"))
	if err != nil {
		t.Fatal(err)
	}
	// Without ethtool the join comes from sysfs alone.
	if n.PCI == nil || n.PCI.Address != "0000:01:00.0" || n.Driver != "virtio_net" || n.PCI.Driver != "virtio-pci" {
		t.Fatalf("got %+v; want eth0 on 0000:01:00.0, virtio_net over virtio-pci", n.PCI)
	}
	if !slices.Contains(n.Missing, "ethtool: disabled") {
		t.Errorf("missing %v lacks ethtool", n.Missing)
	}
}

func TestLiveHost(t *testing.T) {
	if _, err := os.Stat("/sys/class/net/eth0/device"); err != nil {
		t.Skip("no eth0 with a device on this host")
	}
	drv, _ := os.Readlink("/sys/class/net/eth0/device/driver")
	if filepath.Base(drv) != "virtio_net" {
		t.Skip("eth0 is not virtio_net here")
	}
	n, err := Get(context.Background(), "eth0")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks("/sys/class/net/eth0/device/..")
	if n.Bus != BusPCI || n.PCI == nil || string(n.PCI.Address) != filepath.Base(want) || n.Driver != "virtio_net" || n.PCI.Driver != "virtio-pci" {
		t.Fatalf("eth0: bus %s pci %+v driver %s; want PCI %s, virtio_net over virtio-pci", n.Bus, n.PCI, n.Driver, filepath.Base(want))
	}
	if n.BusInfo != string(n.PCI.Address) {
		t.Errorf("ethtool bus-info %q != %s", n.BusInfo, n.PCI.Address)
	}
	if n.Link.SpeedMbps != SpeedUnknown && n.Link.SpeedMbps <= 0 {
		t.Errorf("speed %d", n.Link.SpeedMbps)
	}
}

func TestGetUnknown(t *testing.T) {
	dir := needSnap(t, "virtio-kvm")
	for _, name := range []string{"nope0", "../../etc", ""} {
		_, err := Get(context.Background(), name, option.Root(dir))
		if !errors.Is(err, ErrNoInterface) || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Get(%q) = %v; want ErrNoInterface and os.ErrNotExist", name, err)
		}
	}
}

func TestNoPCIIDs(t *testing.T) {
	dir := needSnap(t, "virtio-kvm")
	n, err := Get(context.Background(), "eth0", option.Root(dir), WithPCIIDs(filepath.Join(t.TempDir(), "none")))
	if err != nil {
		t.Fatal(err)
	}
	if n.PCI.VendorID != 0x1af4 || n.PCI.VendorName != "" {
		t.Errorf("vendor %04x %q; want the numeric ID and no name", n.PCI.VendorID, n.PCI.VendorName)
	}
	found := false
	for _, m := range n.Missing {
		found = found || strings.HasPrefix(m, "pci.names: ")
	}
	if !found {
		t.Errorf("missing %v names no pci.names entry", n.Missing)
	}
}

func TestSnapshotShipsPCIIDs(t *testing.T) {
	src := needSnap(t, "virtio-kvm")
	dir := copyTree(t, src)
	ids := "1af4  Snapshot Vendor\n\t1041  Snapshot NIC\nC 02  Network controller\n\t00  Ethernet controller\n"
	if err := os.MkdirAll(filepath.Join(dir, "usr/share/misc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "usr/share/misc/pci.ids"), []byte(ids), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := Get(context.Background(), "eth0", option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	if n.PCI.DeviceName != "Snapshot NIC" {
		t.Errorf("device name %q; want the snapshot's own pci.ids", n.PCI.DeviceName)
	}
}

func BenchmarkList(b *testing.B) {
	dir := needSnap(b, "xeon-i350-sriov-bcm5709")
	ctx := context.Background()
	for b.Loop() {
		nics, err := List(ctx, option.Root(dir), WithPCIIDs("testdata/pci.ids"))
		if err != nil || len(nics) < 8 {
			b.Fatal(len(nics), err)
		}
	}
}

func BenchmarkListLive(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		if _, err := List(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
