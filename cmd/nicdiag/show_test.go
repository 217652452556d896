package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/nicinfo"
)

func TestShowGolden(t *testing.T) {
	for _, c := range []struct{ snap, iface string }{
		{"xeon-i350-sriov-bcm5709", "enp5s16f5"},
		{"xeon-i350-sriov-bcm5709", "enp5s0f1"},
		{"ccr2004-host", "enp1s0f0"},
		{"virtio-kvm", "eth0"},
	} {
		t.Run(c.snap+"/"+c.iface, func(t *testing.T) {
			root := snapWithIDs(t, c.snap)
			out, stderr, code := runCLI(t, "--root", root, "show", c.iface)
			if code == exitFail {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, "show-"+c.snap+"-"+c.iface+".txt", out)
			out, _, _ = runCLI(t, "--root", root, "show", "--json", c.iface)
			golden(t, "show-"+c.snap+"-"+c.iface+".json", out)
			var doc showJSON
			if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Schema != jsonSchema || doc.NIC.Name != c.iface {
				t.Errorf("JSON %v: %+v", err, doc)
			}
			if code != exitFor(doc.Findings) {
				t.Errorf("exit %d does not follow the findings %v", code, doc.Findings)
			}
			if doc.NIC.PCI != nil && doc.Path == nil {
				t.Error("a PCI NIC's show has no PCIe path")
			}
		})
	}
}

func TestShowUnknown(t *testing.T) {
	_, stderr, code := runCLI(t, "--root", snaps+"virtio-kvm", "show", "nope0")
	if code != exitFail || !strings.Contains(stderr, `"nope0": no such network interface`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	_, _, code = runCLI(t, "show")
	if code != exitFail {
		t.Errorf("show without IFACE: exit %d", code)
	}
}

// Appended sections come after the inventory ones.
func TestRenderShowExtra(t *testing.T) {
	var b strings.Builder
	n := &nicinfo.NIC{Name: "x0", Bus: nicinfo.BusVirtual, Link: nicinfo.Link{SpeedMbps: nicinfo.SpeedUnknown}}
	err := renderShow(&b, n, showSection{Title: "Findings", Rows: [][2]string{{"pcie.bottleneck", "warn"}}})
	if err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if i, j := strings.Index(s, "Identity:"), strings.Index(s, "Findings:"); i < 0 || j < i || !strings.Contains(s, "Speed:            unknown") && !strings.Contains(s, "unknown") {
		t.Errorf("sections out of order:\n%s", s)
	}
}

func TestShowHelp(t *testing.T) {
	out, _, code := runCLI(t, "help", "show")
	if code != exitOK || !strings.Contains(out, "nicdiag show eth0") {
		t.Errorf("exit %d\n%s", code, out)
	}
}
