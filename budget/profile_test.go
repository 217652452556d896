package budget

import (
	"errors"
	"strings"
	"testing"
)

func TestProfileFor(t *testing.T) {
	cases := []struct {
		driver         string
		vendor, device uint16
		want           Profile
		basis          string // a word the basis must contain
	}{
		{"igb", 0x8086, 0x10c9, profIGB82576, "WTHRESH"},
		{"igb", 0x8086, 0x10e8, profIGB82576, "WTHRESH"},
		{"igb", 0x8086, 0x1526, profIGB82576, "WTHRESH"},
		{"igb", 0x8086, 0x150d, profIGB82576, "WTHRESH"},
		{"igb", 0x8086, 0x1521, profIGB, "WTHRESH"}, // I350
		{"igb", 0x8086, 0x150e, profIGB, "WTHRESH"}, // 82580
		{"igb", 0x8086, 0x1533, profIGB, "WTHRESH"}, // I210
		{"igb", 0x8086, 0x1539, profIGB, "WTHRESH"}, // I211
		{"", 0x8086, 0x10c9, profIGB82576, "WTHRESH"},
		{"igc", 0x8086, 0x15f3, profIGC, "assumed"},
		{"e1000e", 0x8086, 0x10d3, profE1000e, "datasheet"},
		{"r8169", 0x10ec, 0x8168, profR8169, "assumed"},
		{"ixgbe", 0x8086, 0x1528, profIXGBE, "niantic"},
		{"vfio-pci", 0x8086, 0x10fb, profDPDK, "DPDK"},
		{"mlx5_core", 0x15b3, 0x1015, profMLX5, "assumed"},
		{"atl1c", 0x1969, 0x1083, profATL1C, "assumed"},
		{"tg3", 0x14e4, 0x1657, profGeneric, "generic"},
		{"", 0, 0, profGeneric, "generic"},
	}
	for _, c := range cases {
		p, basis := ProfileFor(c.driver, c.vendor, c.device)
		if p != c.want || !strings.Contains(basis, c.basis) {
			t.Errorf("ProfileFor(%q, %04x:%04x) = %q / %q; want %q with %q", c.driver, c.vendor, c.device, p.Name, basis, c.want.Name, c.basis)
		}
	}
	// ixgbe-like guesses say so.
	for _, d := range []string{"i40e", "ice"} {
		p, basis := ProfileFor(d, 0x8086, 0x1583)
		if !strings.Contains(basis, "assumed like ixgbe") || !strings.Contains(p.Name, d) || p.TxFetchBatch != profIXGBE.TxFetchBatch {
			t.Errorf("%s: %q / %q", d, p.Name, basis)
		}
	}
	if p, basis := ProfileFor("mlx4_core", 0x15b3, 0x1003); !strings.Contains(basis, "like mlx5") || p.TxDescBytes != 64 {
		t.Errorf("mlx4: %+v %q", p, basis)
	}
	// Virtual devices are refused by the solver.
	for _, c := range []struct {
		driver         string
		vendor, device uint16
	}{{"virtio-pci", 0x1af4, 0x1041}, {"", 0x1af4, 0x1000}, {"vmxnet3", 0x15ad, 0x07b0}, {"", 0x15ad, 0x07b0}} {
		p, _ := ProfileFor(c.driver, c.vendor, c.device)
		if !p.Virtual {
			t.Errorf("%q %04x:%04x not virtual", c.driver, c.vendor, c.device)
		}
		if _, err := Solve([]LinkParams{{GTs: 2.5, Width: 1}}, p, Workload{Ports: 1, PortMbps: 1000}); !errors.Is(err, ErrVirtual) {
			t.Errorf("virtual: err %v", err)
		}
	}
}

// TestProfileValues pins the §3.2 table, so a typo in a profile fails here
// as well as in the worked examples.
func TestProfileValues(t *testing.T) {
	type row struct{ brf, btf, wrx, wtx, q, grx, gtx int }
	get := func(p Profile) row {
		return row{p.RxFetchBatch, p.TxFetchBatch, p.RxWriteBackBatch, p.TxWriteBackBatch, p.IRQEvery, p.RxDoorbellEvery, p.TxDoorbellEvery}
	}
	for _, c := range []struct {
		p    Profile
		want row
	}{
		{profIGB82576, row{8, 8, 1, 1, 8, 16, 1}},
		{profIGB, row{8, 8, 4, 16, 8, 16, 1}},
		{profIGC, row{8, 8, 4, 16, 8, 16, 1}},
		{profE1000e, row{4, 4, 4, 1, 8, 16, 1}},
		{profR8169, row{4, 4, 1, 1, 8, 1, 1}},
		{profIXGBE, row{1, 32, 1, 8, 32, 32, 1}},
		{profDPDK, row{1, 32, 1, 8, 0, 32, 32}},
		{profMLX5, row{8, 8, 1, 8, 64, 32, 8}},
		{profATL1C, row{8, 8, 1, 1, 32, 16, 1}},
	} {
		if got := get(c.p); got != c.want {
			t.Errorf("%s: %+v, note says %+v", c.p.Name, got, c.want)
		}
	}
	n, err := profMLX5.normalize()
	if err != nil || n.RxDescBytes != 16 || n.TxDescBytes != 64 || n.RxWriteBackBytes != 64 || n.TxWriteBackBytes != 64 || n.TxDescsPerPacket != 1 {
		t.Errorf("mlx5 normalized: %+v %v", n, err)
	}
	n, err = profIGB.normalize()
	if err != nil || n.RxDescBytes != 16 || n.RxWriteBackBytes != 16 || n.TxWriteBackBytes != 16 {
		t.Errorf("igb normalized: %+v %v", n, err)
	}
}

// The atl1c profile's basis is about the driver, not one device it may
// serve: an AR8151 on a desktop board (1969:1083) is told nothing about a
// MikroTik router card whose host side atl1c also binds.
func TestProfileBasisAR8151(t *testing.T) {
	_, basis := ProfileFor("atl1c", 0x1969, 0x1083)
	for _, w := range []string{"CCR2004", "MikroTik", "router card"} {
		if strings.Contains(basis, w) {
			t.Errorf("the AR8151's DMA profile basis names %q: %s", w, basis)
		}
	}
	if !strings.Contains(basis, "atl1c") {
		t.Errorf("basis %q does not say it is atl1c's", basis)
	}
}
