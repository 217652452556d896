package nicinfo

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/pcie"
)

func TestEmbeddedTable(t *testing.T) {
	rows, err := parseDevices(bytes.NewReader(devicesTSV))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 300 {
		t.Errorf("only %d rows", len(rows))
	}
	fams := map[string]int{}
	for _, r := range rows {
		fams[r.Family]++
		if r.Kind == KindVF && (r.Ports != 0 || r.MaxPFs != 0) {
			t.Errorf("%04x:%04x: a VF counts no ports", r.VendorID, r.DeviceID)
		}
		if r.Kind == KindVirtual && (r.MaxMbps != 0 || r.PCIeGTs != 0) {
			t.Errorf("%04x:%04x: a virtual NIC has no real speed or link", r.VendorID, r.DeviceID)
		}
		if r.Integrated != Discrete && r.PCIeGTs != 0 {
			t.Errorf("%04x:%04x: an integrated MAC has no PCIe link of its own", r.VendorID, r.DeviceID)
		}
	}
	// The families the issue asks for.
	for _, f := range []string{"Intel 8254x", "Intel 8257x", "Intel 82576", "Intel 82580/I340", "Intel I350",
		"Intel I210/I211", "Intel I217-I219", "Intel I225/I226", "Intel 82599/X520", "Intel X540", "Intel X550",
		"Intel X710", "Intel XL710", "Intel XXV710", "Intel X722", "Intel E810", "Realtek 8101",
		"Realtek 8111/8168", "Realtek 8125", "Realtek 8126", "Realtek 8152/8153/8156 USB",
		"Qualcomm Atheros L1/AR813x/AR815x", "Qualcomm Atheros AR816x/AR817x", "Broadcom 5708/5709/5716",
		"Broadcom 5717/5719/5720", "Broadcom 57800/57810/57840", "Broadcom 5740x/5741x/5745x",
		"Mellanox ConnectX-3", "Mellanox ConnectX-4", "Mellanox ConnectX-5", "Mellanox ConnectX-6",
		"Mellanox ConnectX-7", "Aquantia AQC107", "Aquantia AQC113", "QLogic FastLinQ", "Chelsio T5",
		"Chelsio T6", "virtio", "AWS ENA", "VMware vmxnet3", "Google gVNIC"} {
		if fams[f] == 0 {
			t.Errorf("no row for family %q", f)
		}
	}
}

func TestLookupDevice(t *testing.T) {
	d, ok := LookupDevice(0x1969, 0x1083)
	if !ok || d.Chip != "AR8151 v2.0" || d.MaxMbps != 1000 || d.PCIeGTs != 2.5 || d.PCIeWidth != 1 ||
		d.MaxPFs != 1 || !slices.Equal(d.Drivers, []string{"atl1c"}) || d.Kind != KindPF {
		t.Errorf("AR8151: %+v %v", d, ok)
	}
	if d.Describe() != "a 2.5 GT/s x1 gigabit chip" {
		t.Errorf("describe: %q", d.Describe())
	}
	d.Drivers[0] = "changed"
	if again, _ := LookupDevice(0x1969, 0x1083); again.Drivers[0] != "atl1c" {
		t.Error("LookupDevice shares its slices")
	}
	if d, ok := LookupDevice(0x8086, 0x10c9); !ok || d.Chip != "82576" || d.PCIeGTs != 2.5 || d.PCIeWidth != 4 || d.Ports != 2 {
		t.Errorf("82576: %+v", d)
	}
	for _, id := range [][2]uint16{{0x1af4, 0x1000}, {0x1af4, 0x1041}, {0x15ad, 0x07b0}, {0x1d0f, 0xec20},
		{0x1d0f, 0xec21}, {0x1d0f, 0x0ec2}, {0x1ae0, 0x0042}} {
		if d, ok := LookupDevice(id[0], id[1]); !ok || d.Kind != KindVirtual {
			t.Errorf("%04x:%04x not virtual: %+v", id[0], id[1], d)
		}
	}
	for _, id := range [][2]uint16{{0x8086, 0x10ca}, {0x8086, 0x1520}, {0x8086, 0x10ed}, {0x8086, 0x154c},
		{0x8086, 0x1889}, {0x15b3, 0x1018}, {0x15b3, 0x101e}, {0x14e4, 0x16dc}} {
		if d, ok := LookupDevice(id[0], id[1]); !ok || d.Kind != KindVF {
			t.Errorf("%04x:%04x not a VF: %+v", id[0], id[1], d)
		}
	}
	if _, ok := LookupDevice(0x0bda, 0x8156); ok {
		t.Error("a USB ID found as PCI")
	}
	if d, ok := lookupUSBDevice(0x0bda, 0x8156); !ok || d.MaxMbps != 2500 || d.Bus != BusUSB {
		t.Errorf("RTL8156: %+v", d)
	}
	if len(knownDevices()) != len(loadDevices()) {
		t.Error("knownDevices")
	}
}

// The one-line lookup finds every row of the full parse, equal to it, and
// nothing for IDs next to them or for the header.
func TestLookupEveryRow(t *testing.T) {
	rows := knownDevices()
	if len(rows) < 100 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, want := range rows {
		got, ok := lookup(want.Bus, want.VendorID, want.DeviceID)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s %04x:%04x: got %+v, %v; want %+v", want.Bus, want.VendorID, want.DeviceID, got, ok, want)
		}
	}
	for _, id := range [][2]uint16{{0, 0}, {0xffff, 0xffff}, {0x8086, 0x0001}} {
		if d, ok := LookupDevice(id[0], id[1]); ok {
			t.Errorf("%04x:%04x found: %+v", id[0], id[1], d)
		}
	}
}

func BenchmarkLookupDevice(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := LookupDevice(0x8086, 0x10c9); !ok {
			b.Fatal("82576 not found")
		}
	}
}

// pciIDs reads the vendor:device names of a pci.ids file.
func pciIDs(t *testing.T, path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("no pci.ids: %v", err)
	}
	defer f.Close()
	names := map[string]string{}
	vendor := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "C "):
			return names
		case l == "" || l[0] == '#' || strings.HasPrefix(l, "\t\t"):
		case l[0] == '\t' && len(l) > 7:
			names[vendor+":"+l[1:5]] = l[7:]
		case l[0] != '\t' && len(l) > 6:
			vendor = l[:4]
		}
	}
	return names
}

// TestTableAgainstPCIIDs checks every PCI row against the system's pci.ids:
// the ID exists and its name contains the row's chip, unless the row says
// it is not in pci.ids (it then cites the kernel driver).
func TestTableAgainstPCIIDs(t *testing.T) {
	names := pciIDs(t, "/usr/share/misc/pci.ids")
	for _, d := range knownDevices() {
		if d.Bus != BusPCI {
			continue
		}
		id := fmt.Sprintf("%04x:%04x", d.VendorID, d.DeviceID)
		name, ok := names[id]
		switch {
		case !ok && strings.Contains(d.Source, "not in pci.ids"):
		case !ok:
			t.Errorf("%s (%s) is not in pci.ids", id, d.Chip)
		case !strings.Contains(strings.ToLower(name), strings.ToLower(d.Chip)):
			t.Errorf("%s: chip %q, pci.ids says %q", id, d.Chip, name)
		}
	}
}

func TestParseDevicesErrors(t *testing.T) {
	hdr := strings.Join(deviceColumns, "\t") + "\n"
	good := "pci\t1969\t1083\tAR8151 v2.0\tQCA\tpf\t1\t1\t1000\t2.5\t1\tno\tatl1c\tpci.ids"
	row := func(i int, v string) string {
		f := strings.Split(good, "\t")
		f[i] = v
		return strings.Join(f, "\t")
	}
	cases := []struct{ in, want string }{
		{"", "no header"},
		{"# only a comment\n", "no header"},
		{"bus\tvendor\n", "line 1: header"},
		{hdr + "\n# c\n" + row(0, "isa"), "line 4: bus"},
		{hdr + row(1, "1969x"), "line 2: vendor"},
		{hdr + row(1, "19G9"), "line 2: vendor"},
		{hdr + row(2, "108A"), "line 2: device"},
		{hdr + row(3, ""), "line 2: chip"},
		{hdr + row(3, "AR\x01"), "line 2: chip"},
		{hdr + row(5, "phys"), "line 2: kind"},
		{hdr + row(6, "0"), "line 2: ports"},
		{hdr + row(6, "-1"), "line 2: ports"},
		{hdr + row(7, "x"), "line 2: max_pfs"},
		{hdr + row(8, "1234"), "line 2: max_mbps 1234"},
		{hdr + row(9, "3"), "line 2: pcie_gts"},
		{hdr + row(9, "NaN"), "line 2: pcie_gts"},
		{hdr + row(10, "3"), "line 2: pcie_width 3"},
		{hdr + row(11, "yes"), "line 2: integrated"},
		{hdr + row(12, "atl1c,"), "line 2: drivers"},
		{hdr + row(12, "At1c"), "line 2: drivers"},
		{hdr + row(13, " "), "line 2: source"},
		{hdr + good + "\t", "line 2: 15 columns"},
		{hdr + "pci\t1969", "line 2: 2 columns"},
		{hdr + row(0, "usb"), "line 2: a usb row"},
		{hdr + good + "\n" + good, "line 3: pci 1969:1083 already on line 2"},
	}
	for _, c := range cases {
		_, err := parseDevices(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
	rows, err := parseDevices(strings.NewReader(hdr + good + "\r\n" + row(2, "1073")))
	if err != nil || len(rows) != 2 || rows[1].DeviceID != 0x1073 {
		t.Errorf("CRLF rows: %v %v", rows, err)
	}
}

// formatDevice writes d back as a table row.
func formatDevice(d KnownDevice) string {
	num := func(v int) string {
		if v == 0 {
			return ""
		}
		return strconv.Itoa(v)
	}
	gts := ""
	if d.PCIeGTs != 0 {
		gts = pcie.FormatGTs(d.PCIeGTs)
	}
	return strings.Join([]string{string(d.Bus), fmt.Sprintf("%04x", d.VendorID), fmt.Sprintf("%04x", d.DeviceID),
		d.Chip, d.Family, string(d.Kind), num(d.Ports), num(d.MaxPFs), num(d.MaxMbps), gts, num(d.PCIeWidth),
		string(d.Integrated), strings.Join(d.Drivers, ","), d.Source}, "\t")
}

func FuzzParseDevices(f *testing.F) {
	f.Add(devicesTSV)
	hdr := strings.Join(deviceColumns, "\t") + "\n"
	f.Add([]byte(hdr + "pci\t1969\t1083\tAR8151 v2.0\tQCA\tpf\t1\t1\t1000\t2.5\t1\tno\tatl1c\tpci.ids\n"))
	f.Add([]byte(hdr + "usb\t0bda\t8156\tRTL8156\tR\tpf\t1\t\t2500\t\t\tno\tr8152,cdc_ncm\tr8152.c\n"))
	f.Add([]byte(hdr + "pci\t1af4\t1041\tVirtio\tvirtio\tvirtual\t\t\t\t\t\tno\tvirtio-pci\tspec\n#x\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parseDevices(bytes.NewReader(b))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "devices.tsv") {
				t.Fatalf("error without location: %v", err)
			}
			return
		}
		// Whatever parses writes back to the same rows.
		var buf strings.Builder
		buf.WriteString(hdr)
		for _, d := range rows {
			buf.WriteString(formatDevice(d) + "\n")
		}
		again, err := parseDevices(strings.NewReader(buf.String()))
		if err != nil {
			t.Fatalf("reparse: %v\n%s", err, buf.String())
		}
		if len(again) != len(rows) {
			t.Fatalf("reparse: %d rows, want %d", len(again), len(rows))
		}
		for i := range rows {
			if formatDevice(again[i]) != formatDevice(rows[i]) {
				t.Fatalf("row %d: %q != %q", i, formatDevice(again[i]), formatDevice(rows[i]))
			}
		}
	})
}

func TestDescribe(t *testing.T) {
	for id, want := range map[[2]uint16]string{
		{0x15b3, 0x1015}: "an 8 GT/s x8 50 Gb/s chip",
		{0x8086, 0x15d7}: "a chipset-integrated gigabit chip",
		{0x10ec, 0x8136}: "a 2.5 GT/s x1 fast Ethernet chip",
		{0x1af4, 0x1041}: "a known chip",
	} {
		d, _ := LookupDevice(id[0], id[1])
		if got := d.Describe(); got != want {
			t.Errorf("%04x:%04x: %q, want %q", id[0], id[1], got, want)
		}
	}
}
