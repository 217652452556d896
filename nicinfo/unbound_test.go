package nicinfo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jaypipes/ghw"
	"github.com/jaypipes/ghw/pkg/pci"
	"github.com/jaypipes/pcidb"

	"github.com/nicdiag/nicdiag/option"
)

// The DPDK tree: 01:00.0 on igb with a netdev, 01:00.1 on vfio-pci without.
func TestNoNetdevVFIO(t *testing.T) {
	dir := needSnap(t, "i350-dpdk-vfio")
	fs, err := NoNetdev(context.Background(), option.Root(dir), WithPCIIDs("testdata/pci.ids"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 {
		t.Fatalf("got %d functions, want only 0000:01:00.1: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Address != "0000:01:00.1" || f.VendorID != 0x8086 || f.DeviceID != 0x1521 ||
		f.SubsystemVendor != 0x8086 || f.SubsystemDevice != 0x0002 || f.Class != 0x020000 || f.Revision != 1 {
		t.Errorf("identity: %+v", f.PCIFunction)
	}
	if f.VendorName != "Intel Corporation" || f.DeviceName != "I350 Gigabit Network Connection" || f.ClassName != "Ethernet controller" {
		t.Errorf("names: %q %q %q", f.VendorName, f.DeviceName, f.ClassName)
	}
	if f.Driver != "vfio-pci" || f.Note() != "no netdev (vfio-pci)" {
		t.Errorf("driver %q, note %q", f.Driver, f.Note())
	}
	if l := f.Link; l == nil || l.CurrentSpeed != 5 || l.CurrentWidth != 1 || l.MaxSpeed != 5 || l.MaxWidth != 4 {
		t.Errorf("PCIe link %+v, want 5 GT/s x1 of 5 GT/s x4", l)
	}
	if !slices.Equal(f.IRQs, []int{29}) || f.TotalVFs != 7 || f.NUMANode != -1 || f.LocalCPUs != "0-1" || f.IOMMUGroup != "0" {
		t.Errorf("irqs %v, totalvfs %d, numa %d, cpus %q, iommu group %q", f.IRQs, f.TotalVFs, f.NUMANode, f.LocalCPUs, f.IOMMUGroup)
	}
	if len(f.Missing) != 0 {
		t.Errorf("missing %v", f.Missing)
	}
	// List still sees only the igb port.
	nics, err := List(context.Background(), option.Root(dir), WithPCIIDs("testdata/pci.ids"))
	if err != nil || len(nics) != 1 || nics[0].Name != "enp1s0f0" {
		t.Fatalf("List: %v %+v", err, nics)
	}
}

// Trees whose NICs all have a netdev (virtio's under virtioN included) have
// no function to report.
func TestNoNetdevNoneInNetdevTrees(t *testing.T) {
	ents, err := os.ReadDir(snapDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() || e.Name() == "src" || e.Name() == "i350-dpdk-vfio" {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			fs, err := NoNetdev(context.Background(), option.Root(filepath.Join(snapDir, e.Name())), WithPCIIDs("testdata/pci.ids"))
			if err != nil || len(fs) != 0 {
				t.Fatalf("got %+v, %v; want none", fs, err)
			}
		})
	}
}

// ghw's trap, one reason it is off this path: one device with an empty
// modalias empties its whole list. NoNetdev does not read modalias.
func TestNoNetdevBadModalias(t *testing.T) {
	dir := copyTree(t, needSnap(t, "i350-dpdk-vfio"))
	rp := filepath.Join(dir, "sys/devices/pci0000:00/0000:00:1c.0/modalias")
	if err := os.WriteFile(rp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := pci.New(context.Background(), ghw.WithChroot(dir), ghw.WithPCIDB(&pcidb.PCIDB{}),
		ghw.WithDisableTopology(), ghw.WithDisableWarnings())
	if err != nil || len(info.Devices) != 0 {
		t.Fatalf("premise: ghw should list nothing here, got %v devices, %v", info, err)
	}
	fs, err := NoNetdev(context.Background(), option.Root(dir), WithPCIIDs("testdata/pci.ids"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Address != "0000:01:00.1" || fs[0].Driver != "vfio-pci" || fs[0].DeviceID != 0x1521 || fs[0].IOMMUGroup != "0" {
		t.Fatalf("found %+v", fs)
	}
}

// ghw is the oracle of the enumeration: on every bundled snapshot and on
// this host, the network-class functions and IOMMU groups pciCandidates
// finds are the ones ghw's pci package finds.
func TestNoNetdevMatchesGHW(t *testing.T) {
	roots := map[string]string{"live": "/"}
	ents, err := os.ReadDir(snapDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() && e.Name() != "src" {
			roots[e.Name()] = filepath.Join(snapDir, e.Name())
		}
	}
	compared := 0
	for name, dir := range roots {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, "sys/bus/pci/devices")); err != nil {
				t.Skip("no PCI bus in sysfs")
			}
			info, err := pci.New(context.Background(), ghw.WithChroot(dir), ghw.WithPCIDB(&pcidb.PCIDB{}),
				ghw.WithDisableTopology(), ghw.WithDisableTools(), ghw.WithDisableWarnings())
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Devices) == 0 {
				t.Skip("ghw lists no device here (its empty-modalias trap)")
			}
			var want []string
			for _, d := range info.Devices {
				if d.Class != nil && d.Class.ID == "02" {
					want = append(want, strings.ToLower(d.Address)+" group "+d.IOMMUGroup)
				}
			}
			cands, err := pciCandidates(buildOptions([]Option{option.Root(dir)}))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cands {
				got = append(got, string(c.Address)+" group "+c.IOMMUGroup)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got %q, ghw %q", got, want)
			}
			compared++
		})
	}
	if compared < 10 {
		t.Errorf("only %d roots compared with ghw", compared)
	}
}

// A function bound to no driver at all, and one whose netdev has gone
// while the driver stays (the function is reported with that driver).
func TestNoNetdevUnboundAndNoDriver(t *testing.T) {
	dir := copyTree(t, needSnap(t, "i350-minipcie-x1"))
	fn1 := filepath.Join(dir, "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.1")
	for _, p := range []string{fn1 + "/driver", fn1 + "/net", filepath.Join(dir, "sys/class/net/enp1s0f1")} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := NoNetdev(context.Background(), option.Root(dir), WithPCIIDs("testdata/pci.ids"))
	if err != nil || len(fs) != 1 || fs[0].Address != "0000:01:00.1" || fs[0].Driver != "" || fs[0].Note() != "no driver" {
		t.Fatalf("got %+v, %v", fs, err)
	}
}

func TestNoNetdevNoPCIBus(t *testing.T) {
	fs, err := NoNetdev(context.Background(), option.Root(t.TempDir()))
	if err != nil || fs == nil || len(fs) != 0 {
		t.Fatalf("got %#v, %v; want an empty list", fs, err)
	}
}

func TestNoNetdevCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NoNetdev(ctx, option.Root(needSnap(t, "i350-dpdk-vfio"))); err == nil {
		t.Fatal("no error from a canceled context")
	}
}

// The live host: whatever it finds is a network-class function that no
// netdev sits on. (The development VM has none: an empty list, no error.)
func TestNoNetdevLive(t *testing.T) {
	if _, err := os.Stat("/sys/bus/pci/devices"); err != nil {
		t.Skip("no PCI bus in sysfs")
	}
	fs, err := NoNetdev(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	nics, err := List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Class>>16 != 0x02 {
			t.Errorf("%s: class %06x is not network", f.Address, f.Class)
		}
		for _, n := range nics {
			if n.PCI != nil && n.PCI.Address == f.Address {
				t.Errorf("%s has netdev %s", f.Address, n.Name)
			}
		}
	}
	t.Logf("%d network-class PCI function(s) without a netdev", len(fs))
}

func BenchmarkNoNetdev(b *testing.B) {
	dir := needSnap(b, "xeon-i350-sriov-bcm5709")
	ctx := context.Background()
	for b.Loop() {
		if _, err := NoNetdev(ctx, option.Root(dir), WithPCIIDs("testdata/pci.ids")); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNoNetdevLive(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		if _, err := NoNetdev(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// A function whose netdev lives in another network namespace: sysfs keeps
// its net directory, empty, in the namespace looking (the i350 tree with
// enp1s0f1's entries taken out, as a container's sysfs shows it). Its note
// says so; one whose net directory is gone is "no netdev" as before.
func TestNoNetdevOtherNamespace(t *testing.T) {
	dir := copyTree(t, needSnap(t, "i350-minipcie-x1"))
	fn1 := filepath.Join(dir, "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.1")
	for _, p := range []string{fn1 + "/net/enp1s0f1", filepath.Join(dir, "sys/class/net/enp1s0f1")} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := NoNetdev(context.Background(), option.Root(dir), WithPCIIDs("testdata/pci.ids"))
	if err != nil || len(fs) != 1 || !fs[0].OtherNetns || fs[0].Note() != "netdev in another network namespace (igb)" {
		t.Fatalf("got %+v, %v", fs, err)
	}
	if err := os.Remove(fn1 + "/net"); err != nil {
		t.Fatal(err)
	}
	fs, err = NoNetdev(context.Background(), option.Root(dir), WithPCIIDs("testdata/pci.ids"))
	if err != nil || len(fs) != 1 || fs[0].OtherNetns || fs[0].Note() != "no netdev (igb)" {
		t.Fatalf("without a net directory: %+v, %v", fs, err)
	}
}
