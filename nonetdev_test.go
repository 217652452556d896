package nicdiag

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// Explain by PCI address for a vfio-pci function: the DPDK profile, the
// 1000 Mb/s of the I350's other port (its own speed is unknown), both
// ports on the x1 link.
func TestExplainNoNetdevByAddress(t *testing.T) {
	ctx := context.Background()
	for _, addr := range []string{"0000:01:00.1", "01:00.1"} {
		b, err := Explain(ctx, addr, budget.Workload{}, option.Root(snaps+"i350-dpdk-vfio"))
		if err != nil {
			t.Fatal(err)
		}
		if b.Interface != "0000:01:00.1" || b.Address != "0000:01:00.1" {
			t.Errorf("interface %q, address %q", b.Interface, b.Address)
		}
		if !strings.HasPrefix(b.Profile, "DPDK") || !strings.Contains(b.ProfileBasis, "DPDK") {
			t.Errorf("profile %q (%s)", b.Profile, b.ProfileBasis)
		}
		if b.PortSpeedSource != budget.FromSibling || b.Workload.PortMbps != 1000 || b.Workload.Ports != 2 {
			t.Errorf("port speed %v from %q, %d ports", b.Workload.PortMbps, b.PortSpeedSource, b.Workload.Ports)
		}
		if b.Bound != budget.BoundEthernet || b.LimitingHop != "0000:00:1c.0" {
			t.Errorf("bound %s at %s", b.Bound, b.LimitingHop)
		}
	}
	// The igb port next to it keeps its own profile and negotiated speed.
	b, err := Explain(ctx, "enp1s0f0", budget.Workload{}, option.Root(snaps+"i350-dpdk-vfio"))
	if err != nil || strings.HasPrefix(b.Profile, "DPDK") || b.PortSpeedSource != budget.FromDriver {
		t.Fatalf("enp1s0f0: %v %+v", err, b)
	}
	// 64-byte frames both ways: the Gen2 x1 link, not Ethernet, binds.
	b, err = Explain(ctx, "0000:01:00.1", budget.Workload{FrameBytes: 64}, option.Root(snaps+"i350-dpdk-vfio"))
	if err != nil || b.Bound != budget.BoundPCIe || b.CeilingMbps.Nominal >= b.EthernetMbps {
		t.Fatalf("64-byte frames: %v, %s-bound, %.0f of %.0f", err, b.Bound, b.CeilingMbps.Nominal, b.EthernetMbps)
	}
	if _, err := Explain(ctx, "0000:01:00.7", budget.Workload{}, option.Root(snaps+"i350-dpdk-vfio")); !errors.Is(err, nicinfo.ErrNoInterface) {
		t.Errorf("unknown address: %v", err)
	}
}

func TestCheckIncludesNoNetdev(t *testing.T) {
	ctx := context.Background()
	r, err := Check(ctx, option.Root(snaps+"i350-dpdk-vfio"))
	if err != nil {
		t.Fatal(err)
	}
	nics, bare := split(r)
	if len(nics) != 1 || len(bare) != 1 || bare[0].ID() != "0000:01:00.1" || bare[0].NoNetdev == nil {
		t.Fatalf("nics %d, no-netdev %+v", len(nics), bare)
	}
	if bare[0].Path == nil || bare[0].Budget == nil || !strings.HasPrefix(bare[0].Budget.Profile, "DPDK") {
		t.Errorf("path %v, budget %v", bare[0].Path, bare[0].Budget)
	}
	// Asked for by address only.
	r, err = Check(ctx, option.Root(snaps+"i350-dpdk-vfio"), WithInterfaces("0000:01:00.1"))
	if err != nil {
		t.Fatal(err)
	}
	if nics, bare := split(r); len(nics) != 0 || len(bare) != 1 {
		t.Fatalf("nics %d, no-netdev %d", len(nics), len(bare))
	}
	if len(r.Findings) == 0 || r.Findings[0].Code != finding.PCIeSlotLimited || r.Findings[0].Subject != "0000:01:00.1" {
		t.Errorf("findings %+v", r.Findings)
	}
	if _, err := Check(ctx, option.Root(snaps+"i350-dpdk-vfio"), WithInterfaces("enp1s0f1")); !errors.Is(err, nicinfo.ErrNoInterface) {
		t.Errorf("enp1s0f1 is gone: %v", err)
	}
	r, err = Check(ctx, option.Root(snaps+"i350-minipcie-x1"))
	if err != nil {
		t.Fatal(err)
	}
	nics, bare = split(r)
	if len(bare) != 0 || len(nics) != 2 || nics[0].Budget == nil || nics[1].Budget == nil {
		t.Fatalf("i350-minipcie-x1: %d no-netdev, %+v", len(bare), nics)
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
	r, err := Check(context.Background(), option.Root(dir), WithInterfaces("0000:01:00.1"))
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
		!strings.Contains(bn.Evidence["port_speed_source"], "another port of the same card") || bn.Evidence["limiting_hop"] != "0000:00:1c.0" {
		t.Errorf("%+v", bn)
	}
}

// split returns the selected NICs with a netdev and those without.
func split(r *Report) (nics, bare []*NIC) {
	for _, n := range r.Host.Selected {
		if n.Netdev() {
			nics = append(nics, n)
		} else {
			bare = append(bare, n)
		}
	}
	return nics, bare
}
