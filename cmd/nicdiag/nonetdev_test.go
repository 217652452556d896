package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/nicinfo"
)

// A port bound to vfio-pci has no netdev: list shows it as a row, explain
// and check take its PCI address.
func TestNoNetdevCLI(t *testing.T) {
	root := snapWithIDs(t, "i350-dpdk-vfio")
	out, stderr, code := runCLI(t, "--root", root, "list")
	if code != exitOK {
		t.Fatalf("list: exit %d: %s", code, stderr)
	}
	golden(t, "list-i350-dpdk-vfio.txt", out)
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "0000:01:00.1") {
			row = l
		}
	}
	if f := strings.Fields(row); len(f) < 9 || f[0] != "-" || f[2] != "vfio-pci" || !strings.Contains(row, "no netdev (vfio-pci)") {
		t.Errorf("row %q", row)
	}

	out, _, code = runCLI(t, "--root", root, "list", "--json")
	var doc struct {
		NICs     []nicinfo.NIC              `json:"nics"`
		NoNetdev []nicinfo.NoNetdevFunction `json:"no_netdev"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK {
		t.Fatalf("list --json: exit %d, %v", code, err)
	}
	if len(doc.NICs) != 1 || len(doc.NoNetdev) != 1 || doc.NoNetdev[0].Address != "0000:01:00.1" ||
		doc.NoNetdev[0].Driver != "vfio-pci" || doc.NoNetdev[0].Link == nil || doc.NoNetdev[0].DeviceName == "" {
		t.Errorf("list --json: %s", out)
	}

	out, stderr, code = runCLI(t, "--root", root, "explain", "0000:01:00.1")
	if code != exitOK {
		t.Fatalf("explain: exit %d: %s", code, stderr)
	}
	for _, s := range []string{"PCI function 0000:01:00.1 (no netdev), DMA profile DPDK", "2 port(s) at 1000 Mb/s",
		"port speed: link speed of another port of the same card", "Ethernet-bound"} {
		if !strings.Contains(out, s) {
			t.Errorf("explain lacks %q:\n%s", s, out)
		}
	}
	out, _, code = runCLI(t, "--root", root, "explain", "--json", "--frame-size", "64", "01:00.1")
	var b struct {
		Bound       string `json:"bound"`
		LimitingHop string `json:"limiting_hop"`
		Source      string `json:"port_speed_source"`
	}
	if err := json.Unmarshal([]byte(out), &b); err != nil || code != exitOK || b.Bound != "pcie" || b.LimitingHop != "0000:00:1c.0" {
		t.Errorf("explain --json 64: exit %d, %v, %+v", code, err, b)
	}

	out, _, code = runCLI(t, "--root", root, "check")
	if code != exitOK || !strings.Contains(out, "checked 1 interface(s): enp1s0f0\nchecked 1 PCI function(s) without a netdev: 0000:01:00.1\n") {
		t.Errorf("check: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "--root", root, "check", "--json", "0000:01:00.1")
	var c checkJSON
	if err := json.Unmarshal([]byte(out), &c); err != nil || code != exitOK || len(c.Interfaces) != 0 ||
		len(c.NoNetdev) != 1 || len(c.Findings) == 0 || c.Findings[0].Subject != "0000:01:00.1" {
		t.Errorf("check --json 0000:01:00.1: exit %d, %v\n%s", code, err, out)
	}
}
