package nicinfo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

func boolp(b bool) *bool { return &b }

var (
	gigModes  = []string{"10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full", "1000baseT/Full"}
	fastModes = []string{"10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full"}
)

// ccr2004 builds the seed-000 host's four functions (docs/field-reports.md: lspci,
// dmesg and ethtool of enp1s0f0; LnkCap 8 GT/s x8 as the review gives it).
func ccr2004() []NIC {
	var nics []NIC
	for fn := range 4 {
		nics = append(nics, NIC{
			Name: "enp1s0f" + string(rune('0'+fn)), Bus: BusPCI, Driver: "atl1c", OperState: "up",
			PCI: &PCIFunction{Address: pcie.Address("0000:01:00." + string(rune('0'+fn))), VendorID: 0x1969,
				DeviceID: 0x1083, Driver: "atl1c",
				Link: &pcie.LinkAttrs{CurrentSpeed: 8, CurrentWidth: 8, MaxSpeed: 8, MaxWidth: 8}},
			Link: Link{SpeedMbps: 25000, Duplex: "full", Autoneg: boolp(true), Supported: fastModes},
		})
	}
	return nics
}

// ar8151 is a genuine desktop AR8151 v2.0 (Gigabyte board, subsystem
// 1458:e000 as pci.ids gives it): one function, 2.5 GT/s x1, gigabit.
func ar8151(sv, sd uint16) NIC {
	return NIC{Name: "enp3s0", Bus: BusPCI, Driver: "atl1c", OperState: "up",
		PCI: &PCIFunction{Address: "0000:03:00.0", VendorID: 0x1969, DeviceID: 0x1083,
			SubsystemVendor: sv, SubsystemDevice: sd, Driver: "atl1c",
			Link: &pcie.LinkAttrs{CurrentSpeed: 2.5, CurrentWidth: 1, MaxSpeed: 2.5, MaxWidth: 1}},
		Link: Link{SpeedMbps: 1000, Duplex: "full", Autoneg: boolp(true), Supported: gigModes, Advertised: gigModes}}
}

// e1000eFixture is the node_exporter ethtool fixture: e1000e at
// 0000:00:1f.6, 1000 Mb/s, 10000baseT/Full among its supported modes. The
// fixture has no PCI ID; id 0 leaves it out.
func e1000eFixture(device uint16) NIC {
	n := NIC{Name: "eth0", Bus: BusPCI, Driver: "e1000e", OperState: "up",
		Link: Link{SpeedMbps: 1000, Duplex: "full", Autoneg: boolp(true),
			Supported:  append(slices.Clone(gigModes), "10000baseT/Full"),
			Advertised: gigModes}}
	if device != 0 {
		n.PCI = &PCIFunction{Address: "0000:00:1f.6", VendorID: 0x8086, DeviceID: device, Driver: "e1000e"}
	} else {
		n.Bus = BusOther
	}
	return n
}

func rulesOf(f finding.Finding) []string { return strings.Fields(f.Evidence["rules"]) }

func onlyCode(fs []finding.Finding, code finding.Code) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

func TestIdentityCCR2004(t *testing.T) {
	fs := CheckIdentity(ccr2004())
	if len(fs) != 1 {
		t.Fatalf("want one finding for the card, got %d: %v", len(fs), fs)
	}
	f := fs[0]
	if f.Code != finding.NICMisidentified || f.Severity != finding.Warn || f.Subject != "0000:01:00.0" {
		t.Errorf("got %v", f)
	}
	want := []string{"speed_above_modes", "speed_above_chip", "pcie_beyond_chip", "functions_above_chip"}
	if got := rulesOf(f); !slices.Equal(got, want) {
		t.Errorf("rules = %v, want %v", got, want)
	}
	for _, s := range []string{"not a genuine AR8151 v2.0 (a 2.5 GT/s x1 gigabit chip)",
		"MikroTik CCR2004-1G-2XS-PCIe", "CPU forwarding", "PCIe 8 GT/s x8 link", "25000 Mb/s"} {
		if !strings.Contains(f.Summary, s) {
			t.Errorf("summary lacks %q: %s", s, f.Summary)
		}
	}
	for k, v := range map[string]string{"functions": "4", "chip_max_functions": "1", "lnkcap": "8 GT/s x8",
		"chip_pcie": "2.5 GT/s x1", "speed_mbps": "25000", "supported_max": "100baseT/Full",
		"interfaces": "enp1s0f0 enp1s0f1 enp1s0f2 enp1s0f3", "pcie_link_raw_mbps": "63015"} {
		if f.Evidence[k] != v {
			t.Errorf("evidence[%s] = %q, want %q", k, f.Evidence[k], v)
		}
	}
	if f.CapacityMbps != nil {
		t.Errorf("capacity %v: the card's CPU, not a number we know, bounds it", *f.CapacityMbps)
	}
	// No link-mode verdict: nothing is advertised and 25000 is not below anything.
	if got := CheckLinkModes(ccr2004()); len(got) != 0 {
		t.Errorf("link modes: %v", got)
	}
}

// One function alone (the host shows only enp1s0f0): still not an AR8151.
func TestIdentityCCR2004OneFunction(t *testing.T) {
	fs := CheckIdentity(ccr2004()[:1])
	if len(fs) != 1 || fs[0].Subject != "enp1s0f0" || slices.Contains(rulesOf(fs[0]), "functions_above_chip") {
		t.Fatalf("got %v", fs)
	}
	if !strings.Contains(fs[0].Summary, "MikroTik") {
		t.Errorf("summary: %s", fs[0].Summary)
	}
}

// The same ID with a LnkCap no known masquerade has: flagged, with no name
// guessed.
func TestIdentityUnknownMasquerade(t *testing.T) {
	nics := ccr2004()[:2]
	for i := range nics {
		nics[i].PCI.Link = &pcie.LinkAttrs{MaxSpeed: 5, MaxWidth: 4}
	}
	fs := CheckIdentity(nics)
	if len(fs) != 1 || strings.Contains(fs[0].Summary, "MikroTik") ||
		!strings.Contains(fs[0].Summary, "another device that reuses its ID") ||
		!strings.Contains(fs[0].Summary, "at most by the PCIe 5 GT/s x4 link") {
		t.Fatalf("got %v", fs)
	}
}

func TestIdentityGenuine(t *testing.T) {
	i350 := func(fn string) NIC { // hwloc fixture: I350 with Dell subsystem 1028:0000
		return NIC{Name: "eno" + fn, Bus: BusPCI, Driver: "igb",
			PCI: &PCIFunction{Address: pcie.Address("0000:02:00." + fn), VendorID: 0x8086, DeviceID: 0x1521,
				SubsystemVendor: 0x1028, Driver: "igb",
				Link: &pcie.LinkAttrs{MaxSpeed: 5, MaxWidth: 4, CurrentSpeed: 5, CurrentWidth: 4}},
			Link: Link{SpeedMbps: 1000, Duplex: "full", Supported: gigModes, Advertised: gigModes}}
	}
	cx3 := func(name string) NIC { // ConnectX-3 Pro: one function, two netdevs (pciutils fixture)
		return NIC{Name: name, Bus: BusPCI, Driver: "mlx4_en",
			PCI: &PCIFunction{Address: "0000:03:00.0", VendorID: 0x15b3, DeviceID: 0x1007, Driver: "mlx4_core",
				Link: &pcie.LinkAttrs{MaxSpeed: 8, MaxWidth: 8}},
			Link: Link{SpeedMbps: 40000, Duplex: "full",
				Supported: []string{"1000baseKX/Full", "10000baseKR/Full", "40000baseCR4/Full"}}}
	}
	x710 := func(fn string) NIC { // X710 partitioned into 8 PFs (NPAR): not extra ports
		return NIC{Name: "ens1f" + fn, Bus: BusPCI, Driver: "i40e",
			PCI:  &PCIFunction{Address: pcie.Address("0000:5e:00." + fn), VendorID: 0x8086, DeviceID: 0x1572, Driver: "i40e"},
			Link: Link{SpeedMbps: 10000, Duplex: "full", Supported: []string{"10000baseSR/Full"}}}
	}
	cases := map[string][]NIC{
		"AR8151 Gigabyte subsystem":    {ar8151(0x1458, 0xe000)},
		"AR8151 ASUS subsystem":        {ar8151(0x1043, 0x1851)},
		"AR8151 subsystem 0000":        {ar8151(0, 0)},
		"AR8151 subsystem MikroTik":    {ar8151(0x1969, 0x1083)},
		"I350 Dell OEM":                {i350("0"), i350("1"), i350("2"), i350("3")},
		"ConnectX-3 two netdevs":       {cx3("enp3s0"), cx3("enp3s0d1")},
		"X710 NPAR":                    {x710("0"), x710("1"), x710("2"), x710("3"), x710("4"), x710("5"), x710("6"), x710("7")},
		"AR8151 under vfio-pci":        {func() NIC { n := ar8151(0, 0); n.PCI.Driver = "vfio-pci"; n.Driver = ""; return n }()},
		"unknown ID, no speed":         {{Name: "eth9", Bus: BusPCI, PCI: &PCIFunction{Address: "0000:09:00.0", VendorID: 0x1234, DeviceID: 0x5678}, Link: Link{SpeedMbps: -1}}},
		"ConnectX-4 Lx legacy masks":   {{Name: "ens2f0", Bus: BusPCI, Driver: "mlx5_core", PCI: &PCIFunction{Address: "0000:3b:00.0", VendorID: 0x15b3, DeviceID: 0x1015, Driver: "mlx5_core"}, Link: Link{SpeedMbps: 25000, Supported: []string{"1000baseKX/Full", "10000baseKR/Full"}}}},
		"unknown 2.5G via legacy mask": {{Name: "eth5", Bus: BusPCI, Driver: "foo", PCI: &PCIFunction{Address: "0000:05:00.0", VendorID: 0x1234, DeviceID: 0x0001}, Link: Link{SpeedMbps: 2500, Supported: gigModes}}},
	}
	for name, nics := range cases {
		if fs := CheckIdentity(nics); len(fs) != 0 {
			t.Errorf("%s: want no finding, got %v", name, fs)
		}
	}
}

func TestIdentityE1000eFixture(t *testing.T) {
	for _, dev := range []uint16{0x15d7, 0} { // I219-LM (as in the procfs fixture's 00:1f.6), and no ID
		fs := CheckIdentity([]NIC{e1000eFixture(dev)})
		if len(fs) != 1 {
			t.Fatalf("device %04x: got %v", dev, fs)
		}
		f := fs[0]
		if f.Severity != finding.Warn || f.Subject != "eth0" || !slices.Equal(rulesOf(f), []string{"modes_above_chip"}) ||
			f.Evidence["modes_above_chip"] != "10000baseT/Full" || f.CapacityMbps == nil || *f.CapacityMbps != 1000 {
			t.Errorf("device %04x: got %v %v", dev, f, f.Evidence)
		}
	}
	if fs := CheckLinkModes([]NIC{e1000eFixture(0x15d7)}); len(fs) != 0 {
		t.Errorf("linked at the best advertised mode, got %v", fs)
	}
}

func TestIdentitySpeedRules(t *testing.T) {
	// A gigabit-expressible speed above a 10/100 list: the list is not a
	// legacy-mask cut, so the contradiction stands even for an unknown ID.
	n := NIC{Name: "eth1", Bus: BusPCI, Driver: "foo", PCI: &PCIFunction{Address: "0000:04:00.0", VendorID: 0x1234, DeviceID: 0x0002},
		Link: Link{SpeedMbps: 1000, Supported: fastModes}}
	fs := CheckIdentity([]NIC{n})
	if len(fs) != 1 || !slices.Equal(rulesOf(fs[0]), []string{"speed_above_modes"}) || fs[0].Severity != finding.Warn {
		t.Fatalf("got %v", fs)
	}
	// An RTL8111 reporting 2500 Mb/s: above the chip.
	r := NIC{Name: "enp2s0", Bus: BusPCI, Driver: "r8169", PCI: &PCIFunction{Address: "0000:02:00.0", VendorID: 0x10ec, DeviceID: 0x8168, Driver: "r8169"},
		Link: Link{SpeedMbps: 2500, Supported: gigModes}}
	fs = CheckIdentity([]NIC{r})
	if len(fs) != 1 || !slices.Contains(rulesOf(fs[0]), "speed_above_chip") || *fs[0].CapacityMbps != 1000 {
		t.Fatalf("got %v", fs)
	}
}

func TestIdentityDriverMismatch(t *testing.T) {
	n := ar8151(0x1458, 0xe000)
	n.Driver, n.PCI.Driver = "alx", "alx"
	fs := CheckIdentity([]NIC{n})
	if len(fs) != 1 || fs[0].Severity != finding.Info || !slices.Equal(rulesOf(fs[0]), []string{"driver_mismatch"}) ||
		fs[0].Evidence["driver"] != "alx" {
		t.Fatalf("got %v", fs)
	}
	// One witness naming a listed driver outweighs the other: a dangling
	// driver link in a snapshot, with ethtool saying atl1c, is no finding.
	for _, drv := range [][2]string{{"does-not-exist", "atl1c"}, {"atl1c", "does-not-exist"}} {
		n.PCI.Driver, n.Driver = drv[0], drv[1]
		if fs := CheckIdentity([]NIC{n}); len(fs) != 0 {
			t.Errorf("PCI driver %s, ethtool %s: %v; want no finding", drv[0], drv[1], fs)
		}
	}
}

func TestIdentityVirtualAndVF(t *testing.T) {
	virtio := NIC{Name: "eth0", Bus: BusPCI, Driver: "virtio_net", // virtio-net-kvm ghw fixture
		PCI: &PCIFunction{Address: "0000:01:00.0", VendorID: 0x1af4, DeviceID: 0x1041, Driver: "virtio-pci",
			Link: &pcie.LinkAttrs{MaxSpeed: 2.5, MaxWidth: 1}}, Link: Link{SpeedMbps: -1}}
	netvsc := NIC{Name: "eth1", Bus: BusOther, Driver: "hv_netvsc", Link: Link{SpeedMbps: 100000}}
	qemuE1000 := NIC{Name: "ens3", Bus: BusPCI, Driver: "e1000", // QEMU's 82540EM: subsystem 1af4:1100
		PCI: &PCIFunction{Address: "0000:00:03.0", VendorID: 0x8086, DeviceID: 0x100e,
			SubsystemVendor: 0x1af4, SubsystemDevice: 0x1100, Driver: "e1000"},
		Link: Link{SpeedMbps: 10000, Supported: gigModes}}
	vfs := []NIC{}
	for _, a := range []string{"0000:05:10.0", "0000:05:10.4", "0000:05:11.0", "0000:05:11.4"} { // xeon ghw fixture
		vfs = append(vfs, NIC{Name: "vf" + a[8:], Bus: BusPCI, Driver: "igbvf",
			PCI:  &PCIFunction{Address: pcie.Address(a), VendorID: 0x8086, DeviceID: 0x1520, Driver: "igbvf", PhysFn: "0000:05:00.0"},
			Link: Link{SpeedMbps: 1000, Duplex: "full"}})
	}
	for n, want := range map[*NIC]string{&virtio: LabelVirtual, &netvsc: LabelVirtual, &qemuE1000: LabelEmulated, &vfs[0]: LabelVF} {
		if got := Label(*n); got != want {
			t.Errorf("%s: label %q, want %q", n.Name, got, want)
		}
	}
	all := append([]NIC{virtio, netvsc, qemuE1000}, vfs...)
	if fs := append(CheckIdentity(all), CheckLinkModes(all)...); len(fs) != 0 {
		t.Errorf("want nothing, got %v", fs)
	}
	if got := Label(ar8151(0, 0)); got != "" {
		t.Errorf("genuine PF label %q", got)
	}
}

func TestUSBBus(t *testing.T) {
	usb := func(product uint16, bus int) NIC {
		return NIC{Name: "enx0", Bus: BusUSB, Driver: "r8152",
			USB:  &USBDevice{Path: "2-1", VendorID: 0x0bda, ProductID: product, SpeedMbps: bus, Driver: "r8152"},
			Link: Link{SpeedMbps: 1000, Duplex: "full"}}
	}
	cases := []struct {
		product  uint16
		bus      int
		sev      finding.Severity
		capacity float64
	}{
		{0x8156, 480, finding.Warn, 426},   // 2.5G adapter on USB 2
		{0x8156, 5000, finding.Info, 4000}, // on a 5 Gb/s port
		{0x8153, 480, finding.Warn, 426},   // gigabit on USB 2
		{0x8153, 10000, finding.Info, 9697},
		{0x8152, 480, finding.Info, 426}, // 100 Mb/s adapter: USB 2 is plenty
	}
	for _, c := range cases {
		fs := onlyCode(CheckIdentity([]NIC{usb(c.product, c.bus)}), finding.NICUSBBus)
		if len(fs) != 1 || fs[0].Severity != c.sev || fs[0].CapacityMbps == nil || *fs[0].CapacityMbps != c.capacity {
			t.Errorf("%04x on %d: got %v", c.product, c.bus, fs)
		}
	}
	fs := CheckIdentity([]NIC{usb(0x8156, 0)})
	if len(fs) != 1 || fs[0].Severity != finding.Info || fs[0].CapacityMbps != nil {
		t.Errorf("unknown bus speed: %v", fs)
	}
	if Label(usb(0x8156, 480)) != LabelUSB {
		t.Error("USB label")
	}
}

func TestLinkModes(t *testing.T) {
	slow := ar8151(0, 0)
	slow.Link.SpeedMbps = 100
	half := ar8151(0, 0)
	half.Link.Duplex = "half"
	down := ar8151(0, 0)
	down.Link.SpeedMbps = -1
	sfp := NIC{Name: "ens1f0", Bus: BusPCI, Driver: "ixgbe",
		Link: Link{SpeedMbps: 1000, Duplex: "full", Supported: []string{"1000baseX/Full", "10000baseSR/Full"},
			Advertised: []string{"1000baseX/Full", "10000baseSR/Full"}}}
	fs := CheckLinkModes([]NIC{slow, half, down, ar8151(0, 0), sfp})
	if len(fs) != 3 {
		t.Fatalf("got %d: %v", len(fs), fs)
	}
	by := map[string]finding.Finding{}
	for _, f := range fs {
		if f.Code != finding.NICLinkBelowCapability || f.Severity != finding.Warn {
			t.Errorf("got %v", f)
		}
		by[f.Subject+" "+f.Evidence["duplex"]] = f
	}
	if f := by["enp3s0 full"]; f.Evidence["best_common_mode"] != "1000baseT/Full" || !strings.Contains(f.Fix, "4 pairs") ||
		*f.CapacityMbps != 100 {
		t.Errorf("slow: %v %q", f, f.Fix)
	}
	if f := by["enp3s0 half"]; !strings.Contains(f.Summary, "half duplex") || *f.CapacityMbps != 500 {
		t.Errorf("half: %v", f)
	}
	if f := by["ens1f0 full"]; !strings.Contains(f.Fix, "transceiver") {
		t.Errorf("sfp: %v", f)
	}
}

func TestLinkModeSpeed(t *testing.T) {
	for mode, want := range map[string]int{"10baseT/Half": 10, "10000baseT/Full": 10000, "2500baseX/Full": 2500,
		"25000baseCR/Full": 25000, "100000baseSR4/Full": 100000, "1000baseKX/Full": 1000,
		"800000baseDR8_2/Full": 800000, "10baseT1L/Full": 10} {
		if got, ok := linkModeSpeed(mode); !ok || got != want {
			t.Errorf("%s: %d %v", mode, got, ok)
		}
	}
	for _, mode := range []string{"Autoneg", "TP", "bit 99", "baseT/Full", "0baseT/Full", "12345678baseT/Full", ""} {
		if got, ok := linkModeSpeed(mode); ok {
			t.Errorf("%q: %d", mode, got)
		}
	}
}

// TestIdentitySnapshots runs the checks over the snapshot trees of real
// machines in testdata/snapshots.
func TestIdentitySnapshots(t *testing.T) {
	root := filepath.Join("..", "testdata", "snapshots")
	want := map[string][]string{ // snapshot: the identity rules expected, per finding
		"ccr2004-host":            {"speed_above_modes speed_above_chip pcie_beyond_chip functions_above_chip"},
		"ccr2004-gen1-x1":         {"speed_above_modes speed_above_chip pcie_beyond_chip functions_above_chip"},
		"e1000e-10gclaim":         {"modes_above_chip"},
		"ar8151-desktop":          nil,
		"virtio-kvm":              nil,
		"xeon-i350-sriov-bcm5709": nil,
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Skipf("no snapshots: %v", err)
	}
	seen := 0
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(root, e.Name(), "sys")); err != nil {
			continue
		}
		nics, err := List(context.Background(), option.Root(filepath.Join(root, e.Name())))
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		var got []string
		for _, f := range onlyCode(CheckIdentity(nics), finding.NICMisidentified) {
			got = append(got, f.Evidence["rules"])
		}
		if w, ok := want[e.Name()]; ok {
			seen++
			if !slices.Equal(got, w) {
				t.Errorf("%s: rules %q, want %q", e.Name(), got, w)
			}
		} else if len(got) != 0 { // every other real machine is genuine
			t.Errorf("%s: unexpected %q", e.Name(), got)
		}
		switch e.Name() {
		case "virtio-kvm":
			if len(nics) == 0 || Label(nics[0]) != LabelVirtual {
				t.Errorf("virtio not labelled virtual: %v", nics)
			}
		case "xeon-i350-sriov-bcm5709":
			vfs := 0
			for _, n := range nics {
				if Label(n) == LabelVF {
					vfs++
				}
			}
			if vfs != 8 {
				t.Errorf("want 8 VFs labelled, got %d", vfs)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d expected snapshots", seen, len(want))
	}
}

// The partner's advertised modes tell a switch port that offers less from a
// cable or PHY that downshifted; without them the message stays as it was.
func TestLinkModesPartner(t *testing.T) {
	nic := func(partner ...string) NIC {
		n := ar8151(0, 0)
		n.Link.SpeedMbps = 100
		n.Link.PartnerAdvertised = partner
		return n
	}
	less := CheckLinkModes([]NIC{nic("10baseT/Half", "10baseT/Full", "100baseT/Half", "100baseT/Full")})
	if len(less) != 1 || !strings.Contains(less[0].Summary, "the link partner offers only up to 100baseT/Full") ||
		less[0].Evidence["partner_best_mode"] != "100baseT/Full" || !strings.Contains(less[0].Fix, "switch port") ||
		strings.Contains(less[0].Fix, "4 pairs") || less[0].Severity != finding.Info ||
		!strings.Contains(less[0].Summary, "the best speed both ends share") {
		t.Errorf("partner offers less: %+v", less)
	}
	more := CheckLinkModes([]NIC{nic("100baseT/Full", "1000baseT/Full")})
	if len(more) != 1 || !strings.Contains(more[0].Summary, "both ends advertise 1000baseT/Full") ||
		!strings.Contains(more[0].Summary, "downshifted") || !strings.Contains(more[0].Fix, "4 pairs") ||
		more[0].Evidence["partner_advertised"] != "100baseT/Full 1000baseT/Full" {
		t.Errorf("downshift: %+v", more)
	}
	none := CheckLinkModes([]NIC{nic()})
	if len(none) != 1 || !strings.Contains(none[0].Summary, "both supported and advertised modes reach") ||
		none[0].Evidence["partner_best_mode"] != "" {
		t.Errorf("no partner modes: %+v", none)
	}
	// A partner with nothing in common (another medium): no verdict.
	odd := CheckLinkModes([]NIC{nic("10000baseSR/Full")})
	if len(odd) != 1 || !strings.Contains(odd[0].Summary, "both supported and advertised modes reach") {
		t.Errorf("odd partner: %+v", odd)
	}
}
