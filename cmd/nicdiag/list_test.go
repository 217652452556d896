package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/nicinfo"
)

var goldenSnaps = []string{"xeon-i350-sriov-bcm5709", "ccr2004-host", "virtio-kvm"}

func TestListGolden(t *testing.T) {
	for _, s := range goldenSnaps {
		t.Run(s, func(t *testing.T) {
			root := snapWithIDs(t, s)
			out, stderr, code := runCLI(t, "--root", root, "list")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, "list-"+s+".txt", out)
			out, _, code = runCLI(t, "--root", root, "list", "--json")
			if code != exitOK {
				t.Fatalf("exit %d", code)
			}
			golden(t, "list-"+s+".json", out)
		})
	}
}

type listDoc struct {
	Schema string        `json:"schema"`
	NICs   []nicinfo.NIC `json:"nics"`
}

func TestListJSONShape(t *testing.T) {
	out, _, code := runCLI(t, "--root", snapWithIDs(t, "xeon-i350-sriov-bcm5709"), "--json", "list")
	var doc listDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if doc.Schema != jsonSchema || len(doc.NICs) != 14 {
		t.Fatalf("schema %q, %d NICs; want %q and 14", doc.Schema, len(doc.NICs), jsonSchema)
	}
	for _, n := range doc.NICs {
		if n.PCI == nil || n.Bus != nicinfo.BusPCI {
			t.Errorf("%s: not joined to PCI", n.Name)
		}
	}
}

// Physical by default, virtual ones too with --all (the live host always
// has lo).
func TestListAll(t *testing.T) {
	if _, err := os.Stat("/sys/class/net/lo"); err != nil {
		t.Skip("no lo")
	}
	def, _, _ := runCLI(t, "--json", "list")
	all, _, code := runCLI(t, "--json", "list", "--all")
	var d, a listDoc
	if json.Unmarshal([]byte(def), &d) != nil || json.Unmarshal([]byte(all), &a) != nil || code != exitOK {
		t.Fatalf("bad output:\n%s\n%s", def, all)
	}
	has := func(doc listDoc, name string) bool {
		for _, n := range doc.NICs {
			if n.Name == name {
				return true
			}
		}
		return false
	}
	if has(d, "lo") || !has(a, "lo") {
		t.Errorf("lo in default list: %v, in --all: %v", has(d, "lo"), has(a, "lo"))
	}
	for _, n := range a.NICs {
		if n.Name == "lo" && n.Kind == "device" {
			t.Errorf("lo is called a device: kind %q", n.Kind)
		}
	}
	text, _, _ := runCLI(t, "list", "--all")
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "lo" && strings.Contains(line, "device") {
			t.Errorf("lo is called a device: %q", line)
		}
	}
	for _, n := range d.NICs {
		if n.Bus == nicinfo.BusVirtual {
			t.Errorf("default list has virtual %s", n.Name)
		}
	}
}

// On this machine eth0 is virtio_net under virtioN under PCI 0000:00:03.0.
func TestListLiveVirtio(t *testing.T) {
	drv, err := os.Readlink("/sys/class/net/eth0/device/driver")
	if err != nil || !strings.HasSuffix(drv, "/virtio_net") {
		t.Skip("eth0 is not virtio_net here")
	}
	out, _, _ := runCLI(t, "list", "--json")
	var doc listDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, n := range doc.NICs {
		if n.Name == "eth0" {
			want, _ := os.Readlink("/sys/class/net/eth0/device")
			if n.Driver != "virtio_net" || n.PCI == nil || !strings.HasPrefix(string(n.PCI.Address), "0000:") || n.PCI.Driver != "virtio-pci" {
				t.Errorf("eth0 = %+v pci %+v (device link %s)", n, n.PCI, want)
			}
			return
		}
	}
	t.Fatal("eth0 not listed")
}

// A veth pair with 4 queues in a throwaway network namespace: both ends
// listed with --all as virtual, driver veth, 4 queues. ip netns exec mounts
// the namespace's own /sys for the binary.
func TestVethInNetns(t *testing.T) {
	ns, ip := throwawayNetns(t, "nicdiag-test")
	bin := binary(t)
	ip("-n", ns, "link", "add", "tv0", "numtxqueues", "4", "numrxqueues", "4", "type", "veth",
		"peer", "name", "tv1", "numtxqueues", "4", "numrxqueues", "4")
	ip("-n", ns, "link", "set", "tv0", "up")
	ip("-n", ns, "link", "set", "tv1", "up")
	out, err := exec.Command("ip", "netns", "exec", ns, bin, "--json", "list", "--all").Output()
	if err != nil {
		t.Fatalf("nicdiag in %s: %v", ns, err)
	}
	var doc listDoc
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, n := range doc.NICs {
		if n.Name != "tv0" && n.Name != "tv1" {
			continue
		}
		seen++
		if n.Bus != nicinfo.BusVirtual || n.Driver != "veth" || n.Kind != "veth" || n.Queues.RX != 4 || n.Queues.TX != 4 {
			t.Errorf("%s: bus %s driver %q kind %q queues %d/%d; want virtual veth 4/4", n.Name, n.Bus, n.Driver, n.Kind, n.Queues.RX, n.Queues.TX)
		}
		if c := n.Queues.Channels; c == nil || c.RX != 4 || c.TX != 4 {
			t.Errorf("%s: ethtool channels %+v; want rx/tx 4", n.Name, c)
		}
	}
	if seen != 2 {
		t.Fatalf("saw %d of tv0/tv1 in\n%s", seen, out)
	}
	def, _ := exec.Command("ip", "netns", "exec", ns, bin, "list").Output()
	if strings.Contains(string(def), "tv0") {
		t.Errorf("default list shows a veth:\n%s", def)
	}
}

func TestListHelp(t *testing.T) {
	out, _, code := runCLI(t, "list", "--help")
	if code != exitOK || !strings.Contains(out, "nicdiag list --all --json") || !strings.Contains(out, "--all") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// PCI IDs are also lspci-style strings in JSON, for functions with and
// without a netdev, and the document still decodes.
func TestListJSONPCIIDStrings(t *testing.T) {
	out, _, code := runCLI(t, "--root", snaps+"82576-minipcie-x1", "--json", "list")
	var d listDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != exitOK || len(d.NICs) == 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	f := d.NICs[0].PCI
	if f == nil || f.PCIID != "8086:10c9" || f.SubsystemID != "8086:a03c" || f.VendorID != 0x8086 || f.DeviceID != 0x10c9 {
		t.Errorf("enp1s0f0's PCI function: %+v", f)
	}
	if !strings.Contains(out, `"pci_id": "8086:10c9"`) || !strings.Contains(out, `"subsystem_id": "8086:a03c"`) {
		t.Errorf("no lspci-style IDs:\n%s", out)
	}
	out, _, _ = runCLI(t, "--root", snaps+"i350-dpdk-vfio", "--json", "list")
	if !strings.Contains(out, `"pci_id": "8086:1521"`) {
		t.Errorf("no lspci-style ID on the function without a netdev:\n%s", out)
	}
}
