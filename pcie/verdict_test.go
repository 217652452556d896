package pcie

import (
	"slices"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/option"
)

// TestSplitChainHostBridgeParents: host bridges below platform devices (Arm
// and other device-tree SoCs such as the Raspberry Pi 5) or VMBus nodes
// (Hyper-V guests) are walked like those directly below /sys/devices.
func TestSplitChainHostBridgeParents(t *testing.T) {
	for in, want := range map[string]string{
		"/sys/devices/platform/axi/1000120000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0":                                         "/sys/devices/platform/axi/1000120000.pcie/pci0000:00",
		"/sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/7870a9e3-1e2f-4e0d-9b35-6f2c4a1e7870/pci7870:00/7870:00:02.0": "/sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/7870a9e3-1e2f-4e0d-9b35-6f2c4a1e7870/pci7870:00",
	} {
		base, chain, err := splitChain(in)
		if err != nil || base != want || len(chain) == 0 || !strings.HasSuffix(in, chain[len(chain)-1]) {
			t.Errorf("splitChain(%q) = %q %q %v", in, base, chain, err)
		}
	}
	for _, in := range []string{
		"/sys/devices/platform/0000:01:00.0",                    // no host bridge
		"/sys/devices/pci0000:00/0000:00:1c.0/net/0000:01:00.0", // not a PCI element below the bridge
		"/sys/devices/pcie:x/0000:01:00.0",                      // not a host bridge name
	} {
		if _, _, err := splitChain(in); err == nil {
			t.Errorf("splitChain(%q) accepted", in)
		}
	}
	// The whole walk on a Raspberry Pi 5-like layout.
	tr := newTree(t)
	base := []string{"platform", "axi", "1000120000.pcie", "pci0000:00", "0000:00:00.0"}
	tr.add(base, attrs("0x14e4", "0x2712", "0x060400", 5, 1, 5, 1), nil)
	tr.add(append(slices.Clone(base), "0000:01:00.0"), attrs("0x8086", "0x1533", "0x020000", 2.5, 1, 2.5, 1), nil)
	p, err := PathTo(bg, "0000:01:00.0", option.Root(tr.dir))
	if err != nil {
		t.Fatal(err)
	}
	if p.RootBus != "pci0000:00" || len(p.Hops) != 1 || p.Hops[0].Upstream.Address != "0000:00:00.0" || p.Hops[0].Verdict != VerdictOK {
		t.Errorf("path %+v", p)
	}
}

// TestFunctionsIgnoreLinks: a symlink named like a function inside a
// device directory (a loop back to the port) is not a function below it.
func TestFunctionsIgnoreLinks(t *testing.T) {
	tr := motivatingTree(t, false)
	tr.link("sys/devices/pci0000:00/0000:00:1c.1/0000:01:00.0/0000:02:00.0", "..")
	p, err := PathTo(bg, "0000:01:00.0", option.Root(tr.dir))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range p.Hops[0].Functions {
		got = append(got, string(f.Address))
	}
	if want := []string{"0000:01:00.0", "0000:01:00.1"}; !slices.Equal(got, want) {
		t.Errorf("functions %q, want %q", got, want)
	}
}

// TestEndIDsFromConfig: an ID file that is missing is filled from the config
// header, each on its own.
func TestEndIDsFromConfig(t *testing.T) {
	port := readDumps(t, "rtl8111-ich10.lspci")["00:1c.1"].Config
	tr := newTree(t)
	tr.add([]string{"pci0000:00", "0000:00:1c.1"}, map[string]string{"vendor": "0x8086", "device": "0x3a42"}, port)
	p, err := PathTo(bg, "0000:00:1c.1", option.Root(tr.dir))
	if err != nil {
		t.Fatal(err)
	}
	if p.Device.Class>>8 != 0x0604 || !strings.HasPrefix(p.Architectural, "a bridge on root bus") {
		t.Errorf("class %06x architectural %q", p.Device.Class, p.Architectural)
	}
}

// TestPhysFnMustBeAddress: a physfn link that names no function is ignored.
func TestPhysFnMustBeAddress(t *testing.T) {
	tr := motivatingTree(t, false)
	tr.link("sys/devices/pci0000:00/0000:00:1c.1/0000:01:00.1/physfn", "..")
	p, err := PathTo(bg, "0000:01:00.1", option.Root(tr.dir))
	if err != nil {
		t.Fatal(err)
	}
	if p.Device.PhysFn != "" || p.Hops[0].Downstream.Address != "0000:01:00.1" {
		t.Errorf("physfn %q, downstream %q", p.Device.PhysFn, p.Hops[0].Downstream.Address)
	}
}

func hopEnd(addr string, maxS float64, maxW int, curS float64, curW int, x *Express) End {
	e := End{Address: Address(addr), Link: LinkAttrs{CurrentSpeed: curS, CurrentWidth: curW, MaxSpeed: maxS, MaxWidth: maxW}}
	if x != nil {
		e.Config = &Config{CapsReadable: true, Express: x}
	}
	return e
}

// TestTargetSpeedIsThePorts: LnkCtl2's target speed caps the link in the
// downstream port (the hop's upstream end); in other functions than 0 of a
// multi-function device the field is reserved and says nothing.
func TestTargetSpeedIsThePorts(t *testing.T) {
	port := &Express{Version: 2, PortType: PortRootPort, HasLink: true, TargetSpeed: 8}
	dev := &Express{Version: 2, PortType: PortEndpoint, HasLink: true, TargetSpeed: 16}
	h := Hop{Upstream: hopEnd("0000:00:01.0", 16, 8, 8, 8, port), Downstream: hopEnd("0000:01:00.0", 16, 8, 8, 8, dev)}
	evaluate(&h)
	fs := h.Findings()
	if len(fs) != 1 || fs[0].Code != finding.PCIeLinkDowngraded || !strings.Contains(fs[0].Summary, "target speed to 8 GT/s") || fs[0].Evidence["target_speed"] != "8 GT/s" {
		t.Errorf("BIOS cap on the port: %+v", fs)
	}

	fn1 := &Express{Version: 2, PortType: PortEndpoint, HasLink: true, TargetSpeed: 2.5} // reserved 0
	h = Hop{Upstream: hopEnd("0000:00:01.0", 8, 8, 5, 8, nil), Downstream: hopEnd("0000:01:00.1", 8, 8, 5, 8, fn1)}
	evaluate(&h)
	fs = h.Findings()
	if len(fs) != 1 || strings.Contains(fs[0].Summary, "target speed") || !strings.Contains(fs[0].Evidence["target_speed"], "unknown") {
		t.Errorf("function 1's reserved LnkCtl2 taken for a cap: %+v", fs)
	}
}
