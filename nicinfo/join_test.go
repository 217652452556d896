package nicinfo

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
)

func netFiles(base string) map[string]string {
	return map[string]string{
		base + "/ifindex":              "3\n",
		base + "/address":              "00:e0:4c:68:00:01\n",
		base + "/mtu":                  "1500\n",
		base + "/operstate":            "up\n",
		base + "/speed":                "1000\n",
		base + "/duplex":               "full\n",
		base + "/queues/rx-0/rps_cpus": "0\n",
		base + "/queues/tx-0/xps_cpus": "0\n",
	}
}

// A USB NIC: the netdev sits under the interface 2-1:1.0 of the USB device
// 2-1, whose speed file holds the bus speed.
func TestUSBJoin(t *testing.T) {
	usb := "sys/devices/pci0000:00/0000:00:14.0/usb2/2-1"
	files := netFiles(usb + "/2-1:1.0/net/enx00e04c680001")
	for k, v := range map[string]string{
		"sys/class/net/enx00e04c680001":             "->../../devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/net/enx00e04c680001",
		usb + "/2-1:1.0/net/enx00e04c680001/device": "->../../../2-1:1.0",
		usb + "/2-1:1.0/driver":                     "->../../../../../../bus/usb/drivers/r8152",
		usb + "/idVendor":                           "0bda\n",
		usb + "/idProduct":                          "8156\n",
		usb + "/speed":                              "480\n",
		usb + "/../idVendor":                        "1d6b\n", // root hub usb2
		usb + "/../speed":                           "5000\n",
	} {
		files[k] = v
	}
	dir := snaptest.Write(t, files)
	nics, err := List(context.Background(), option.Root(dir), WithEthtool(nil), WithPCIIDs(filepath.Join(dir, "none")))
	if err != nil || len(nics) != 1 {
		t.Fatalf("List: %v %v", nics, err)
	}
	n := nics[0]
	if n.Bus != BusUSB || n.USB == nil || n.PCI != nil {
		t.Fatalf("bus %q usb %+v pci %+v", n.Bus, n.USB, n.PCI)
	}
	if n.USB.SpeedMbps != 480 || n.USB.VendorID != 0x0bda || n.USB.ProductID != 0x8156 || n.USB.Path != "2-1" || n.USB.Driver != "r8152" || n.Driver != "r8152" {
		t.Errorf("usb %+v driver %q", n.USB, n.Driver)
	}
	if n.Link.SpeedMbps != 1000 {
		t.Errorf("speed %d", n.Link.SpeedMbps)
	}
	t.Logf("missing %q", n.Missing)
}

// A netdev whose device link points at a directory the snapshot lacks is
// not virtual: the join failed, and Missing says so.
func TestDanglingDeviceLink(t *testing.T) {
	pci := "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0"
	files := netFiles(pci + "/net/eth0")
	files["sys/class/net/eth0"] = "->../../devices/pci0000:00/0000:00:1c.0/0000:01:00.0/net/eth0"
	// The function 0000:01:00.1 the link names was not captured.
	files[pci+"/net/eth0/device"] = "->../../../0000:01:00.1"
	dir := snaptest.Write(t, files)
	n, err := Get(context.Background(), "eth0", option.Root(dir), WithEthtool(nil), WithPCIIDs(filepath.Join(dir, "none")))
	if err != nil {
		t.Fatal(err)
	}
	if n.Bus == BusVirtual || !n.Physical() {
		t.Errorf("dangling device link made eth0 %q", n.Bus)
	}
	if !slices.ContainsFunc(n.Missing, func(m string) bool { return strings.HasPrefix(m, "device: ") }) {
		t.Errorf("no device entry in Missing %q", n.Missing)
	}
}

// A USB speed file that cannot be read as a number is named in Missing.
func TestUSBSpeedMalformed(t *testing.T) {
	usb := "sys/devices/pci0000:00/0000:00:14.0/usb1/1-4"
	for _, c := range []struct {
		speed string
		want  int
		bad   bool
	}{{"480\n", 480, false}, {"1.5\n", 1, false}, {"12\n", 12, false}, {"fast\n", 0, true}, {"unknown\n", 0, true}} {
		files := netFiles(usb + "/1-4:1.0/net/usb0")
		files["sys/class/net/usb0"] = "->../../devices/pci0000:00/0000:00:14.0/usb1/1-4/1-4:1.0/net/usb0"
		files[usb+"/1-4:1.0/net/usb0/device"] = "->../../../1-4:1.0"
		files[usb+"/idVendor"] = "0b95\n"
		files[usb+"/idProduct"] = "1790\n"
		files[usb+"/speed"] = c.speed
		dir := snaptest.Write(t, files)
		n, err := Get(context.Background(), "usb0", option.Root(dir), WithEthtool(nil), WithPCIIDs(filepath.Join(dir, "none")))
		if err != nil {
			t.Fatal(err)
		}
		if n.USB == nil || n.USB.SpeedMbps != c.want {
			t.Errorf("speed %q: usb %+v", c.speed, n.USB)
			continue
		}
		has := slices.ContainsFunc(n.Missing, func(m string) bool { return strings.HasPrefix(m, "usb.speed: ") })
		if has != c.bad {
			t.Errorf("speed %q: Missing %q", c.speed, n.Missing)
		}
	}
}

// ethtool/IFACE.json written by another tool may carry the kernel's raw
// SPEED_UNKNOWN (0xffffffff) or the old 16-bit 0xffff: they read as unknown,
// as they do from sysfs and from the ioctl, never as a 4 Tb/s link.
func TestEthtoolAnswersSpeedSentinels(t *testing.T) {
	for in, want := range map[string]int{"4294967295": SpeedUnknown, "65535": SpeedUnknown, "0": SpeedUnknown, "-1": SpeedUnknown, "25000": 25000} {
		a, err := parseEthtoolAnswers([]byte(`{"schema":1,"link":{"speed_mbps":` + in + `,"duplex":"full"}}`))
		if err != nil || a.Link.SpeedMbps != want {
			t.Errorf("speed %s: %+v %v", in, a, err)
		}
	}
	if _, err := parseEthtoolAnswers([]byte(`{"schema":1,"link":{"speed_mbps":3000000000}}`)); err == nil {
		t.Error("speed above the kernel's range accepted")
	}
}
