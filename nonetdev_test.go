package nicdiag

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/pcie"
)

// Explain by PCI address for a vfio-pci function: the DPDK profile, the
// I350's 1000 Mb/s from the known-device table, both ports on the x1 link.
func TestExplainNoNetdevByAddress(t *testing.T) {
	ctx := context.Background()
	for _, addr := range []string{"0000:01:00.1", "01:00.1"} {
		b, err := Explain(ctx, addr, pcie.Workload{}, WithRoot(snaps+"i350-dpdk-vfio"))
		if err != nil {
			t.Fatal(err)
		}
		if b.Interface != "0000:01:00.1" || b.Address != "0000:01:00.1" {
			t.Errorf("interface %q, address %q", b.Interface, b.Address)
		}
		if !strings.HasPrefix(b.Profile, "DPDK") || !strings.Contains(b.ProfileBasis, "DPDK") {
			t.Errorf("profile %q (%s)", b.Profile, b.ProfileBasis)
		}
		if !strings.Contains(b.PortSpeedSource, "chip maximum") || b.Workload.PortMbps != 1000 || b.Workload.Ports != 2 {
			t.Errorf("port speed %v from %q, %d ports", b.Workload.PortMbps, b.PortSpeedSource, b.Workload.Ports)
		}
		if b.Bound != pcie.BoundEthernet || b.LimitingHop != "0000:00:1c.0" {
			t.Errorf("bound %s at %s", b.Bound, b.LimitingHop)
		}
	}
	// The igb port next to it keeps its own profile and negotiated speed.
	b, err := Explain(ctx, "enp1s0f0", pcie.Workload{}, WithRoot(snaps+"i350-dpdk-vfio"))
	if err != nil || strings.HasPrefix(b.Profile, "DPDK") || !strings.Contains(b.PortSpeedSource, "driver") {
		t.Fatalf("enp1s0f0: %v %+v", err, b)
	}
	// 64-byte frames both ways: the Gen2 x1 link, not Ethernet, binds.
	b, err = Explain(ctx, "0000:01:00.1", pcie.Workload{FrameBytes: 64}, WithRoot(snaps+"i350-dpdk-vfio"))
	if err != nil || b.Bound != pcie.BoundPCIe || b.CeilingMbps.Nominal >= b.EthernetMbps {
		t.Fatalf("64-byte frames: %v, %s-bound, %.0f of %.0f", err, b.Bound, b.CeilingMbps.Nominal, b.EthernetMbps)
	}
	if _, err := Explain(ctx, "0000:01:00.7", pcie.Workload{}, WithRoot(snaps+"i350-dpdk-vfio")); !errors.Is(err, nicinfo.ErrNoInterface) {
		t.Errorf("unknown address: %v", err)
	}
}

func TestCheckIncludesNoNetdev(t *testing.T) {
	ctx := context.Background()
	r, err := Check(ctx, WithRoot(snaps+"i350-dpdk-vfio"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.NICs) != 1 || len(r.NoNetdev) != 1 || r.NoNetdev[0].Address != "0000:01:00.1" {
		t.Fatalf("nics %d, no-netdev %+v", len(r.NICs), r.NoNetdev)
	}
	if r.Paths["0000:01:00.1"] == nil || r.Budgets["0000:01:00.1"] == nil || !strings.HasPrefix(r.Budgets["0000:01:00.1"].Profile, "DPDK") {
		t.Errorf("paths %v, budgets %v", r.Paths, r.Budgets)
	}
	// Asked for by address only.
	r, err = Check(ctx, WithRoot(snaps+"i350-dpdk-vfio"), WithInterfaces("0000:01:00.1"))
	if err != nil || len(r.NICs) != 0 || len(r.NoNetdev) != 1 {
		t.Fatalf("%v: nics %d, no-netdev %d", err, len(r.NICs), len(r.NoNetdev))
	}
	if len(r.Findings) == 0 || r.Findings[0].Code != finding.PCIeSlotLimited || r.Findings[0].Subject != "0000:01:00.1" {
		t.Errorf("findings %+v", r.Findings)
	}
	if _, err := Check(ctx, WithRoot(snaps+"i350-dpdk-vfio"), WithInterfaces("enp1s0f1")); !errors.Is(err, nicinfo.ErrNoInterface) {
		t.Errorf("enp1s0f1 is gone: %v", err)
	}
	r, err = Check(ctx, WithRoot(snaps+"i350-minipcie-x1"))
	if err != nil || len(r.NoNetdev) != 0 || len(r.Budgets) != 2 {
		t.Fatalf("i350-minipcie-x1: %v, %d no-netdev, %d budgets", err, len(r.NoNetdev), len(r.Budgets))
	}
}

// The seed's 82576 at 2.5 GT/s x1 with port 1 handed to vfio-pci: checking
// that function alone reports the bottleneck, with the DPDK profile.
func TestCheckNoNetdevBottleneck(t *testing.T) {
	dir := snaptest.Copy(t, snaps+"82576-minipcie-x1")
	fn1 := filepath.Join(dir, "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.1")
	for _, p := range []string{fn1 + "/driver", fn1 + "/net", filepath.Join(dir, "sys/class/net/enp1s0f1")} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "sys/bus/pci/drivers/vfio-pci"), 0o755)
	if err := os.Symlink("../../../../bus/pci/drivers/vfio-pci", fn1+"/driver"); err != nil {
		t.Fatal(err)
	}
	r, err := Check(context.Background(), WithRoot(dir), WithInterfaces("0000:01:00.1"))
	if err != nil {
		t.Fatal(err)
	}
	var bn *finding.Finding
	for i := range r.Findings {
		if r.Findings[i].Code == finding.PCIeBottleneck {
			bn = &r.Findings[i]
		}
	}
	if bn == nil {
		t.Fatalf("no pcie.bottleneck in %+v", r.Findings)
	}
	if bn.Subject != "0000:01:00.1" || !strings.HasPrefix(bn.Evidence["profile"], "DPDK") ||
		!strings.Contains(bn.Evidence["port_speed_source"], "chip maximum") || bn.Evidence["limiting_hop"] != "0000:00:1c.0" {
		t.Errorf("%+v", bn)
	}
}
