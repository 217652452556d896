package nicdiag

import (
	"context"
	"path/filepath"
	"testing"
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
		h, err := Inspect(context.Background(), WithRoot(filepath.Join("testdata", "snapshots", tc.snap)))
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
