package main

import (
	"strings"
	"testing"
)

// QEMU's e1000e (82574L, subsystem 8086:0000) on the QEMU lab guest is
// listed and shown as emulated, like the e1000 beside it.
func TestListShowQEMUE1000e(t *testing.T) {
	out, stderr, code := runCLI(t, "--root", snaps+"qemu-lab-links", "list")
	if code != exitOK {
		t.Fatalf("list: exit %d: %s", code, stderr)
	}
	for _, name := range []string{"eth0", "eth1"} {
		var row string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, name+" ") {
				row = l
			}
		}
		if !strings.Contains(row, " emulated ") {
			t.Errorf("list row of %s: %q", name, row)
		}
	}
	out, stderr, code = runCLI(t, "--root", snaps+"qemu-lab-links", "show", "eth1")
	if code == exitFail {
		t.Fatalf("show: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "Judged: no: an emulated NIC's PCIe link is emulated and its speed nominal") ||
		!strings.Contains(out, "PCIe:    none to model: eth1 is an emulated NIC") {
		t.Errorf("show eth1:\n%s", out)
	}
}
