package nicdiag

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nicdiag/nicdiag/option"
)

// TestLimitsNUMA: on a host of two NUMA nodes the NIC's Limits carry its
// node and CPUs (for run.command_remote_node); on a one-node host they do
// not, since nothing is remote there.
func TestLimitsNUMA(t *testing.T) {
	for _, tc := range []struct {
		snap, nic string
		node      int
		cpus      string
	}{
		{"e810-ice-numa1", "enp162s0f0", 1, "64-127"},
		{"82576-minipcie-x1", "enp1s0f0", 0, ""},
	} {
		h, err := Inspect(context.Background(), option.Root(filepath.Join("testdata", "snapshots", tc.snap)))
		if err != nil {
			t.Fatal(err)
		}
		nics, limits := h.Monitored()
		if len(nics) != len(limits) {
			t.Fatalf("%s: %d interfaces, %d limits", tc.snap, len(nics), len(limits))
		}
		for i := range nics {
			if nics[i].Name != limits[i].NIC {
				t.Errorf("%s: interface %d is %s, its limits %s's", tc.snap, i, nics[i].Name, limits[i].NIC)
			}
		}
		found := false
		for _, l := range limits {
			if l.NIC != tc.nic {
				continue
			}
			found = true
			if l.NUMANode != tc.node || l.LocalCPUs != tc.cpus {
				t.Errorf("%s: node %d cpus %q, want %d %q", tc.snap, l.NUMANode, l.LocalCPUs, tc.node, tc.cpus)
			}
		}
		if !found {
			t.Errorf("%s: no limits for %s", tc.snap, tc.nic)
		}
	}
}

// An emulated NIC (QEMU's e1000 and e1000e) reports a nominal 1000 Mb/s:
// the run verdict gets no line rate for it, as for a virtual one.
func TestMonitoredEmulated(t *testing.T) {
	h, err := Inspect(context.Background(), option.Root(filepath.Join("testdata", "snapshots", "qemu-lab-links")), WithInterfaces("eth0", "eth1"))
	if err != nil {
		t.Fatal(err)
	}
	_, limits := h.Monitored()
	seen := 0
	for _, l := range limits {
		switch l.NIC {
		case "eth0", "eth1": // e1000, subsystem 1af4:1100; e1000e, 8086:0000 on a QEMU guest
			seen++
			if !l.Virtual || l.PortMbps != 0 {
				t.Errorf("emulated %s: %+v; want virtual, no port speed", l.NIC, l)
			}
		}
	}
	if seen != 2 {
		t.Errorf("limits for %d of eth0, eth1", seen)
	}
}
