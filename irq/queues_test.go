package irq

import (
	"os"
	"slices"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		action, iface, virtio, bdf string
		kind                       QueueKind
		idx                        int
		ok                         bool
	}{
		{"eth0-TxRx-3", "eth0", "", "", KindTxRx, 3, true},
		{"eth0-rx-0", "eth0", "", "", KindRX, 0, true},
		{"eth0-tx-1", "eth0", "", "", KindTX, 1, true},
		{"eth0", "eth0", "", "", kindBare, -1, true},
		{"eth10-TxRx-0", "eth1", "", "", "", 0, false},
		{"i40e-ens1f0-TxRx-7", "ens1f0", "", "", KindTxRx, 7, true},
		{"eth0-Tx-Rx-2", "eth0", "", "", KindTxRx, 2, true},
		{"virtio2-input.0", "eth0", "virtio2", "", KindRX, 0, true},
		{"virtio2-output.3", "eth0", "virtio2", "", KindTX, 3, true},
		{"virtio2-config", "eth0", "virtio2", "", KindOther, -1, true},
		{"virtio5-req.0", "eth0", "virtio2", "", "", 0, false},
		{"mlx5_comp3@pci:0000:3b:00.0", "ens1", "", "0000:3b:00.0", KindTxRx, 3, true},
		{"mlx5_comp3@pci:0000:3b:00.1", "ens1", "", "0000:3b:00.0", "", 0, false},
		{"ena-mgmnt@pci:0000:00:05.0", "eth0", "", anyPCI, KindOther, -1, true},
		{"ahci[0000:00:1f.2]", "eth0", "", "", "", 0, false},
	} {
		k, i, ok := classify(tc.action, tc.iface, tc.virtio, tc.bdf)
		if ok != tc.ok || (ok && (k != tc.kind || i != tc.idx)) {
			t.Errorf("classify(%q, %q) = %q %d %v; want %q %d %v", tc.action, tc.iface, k, i, ok, tc.kind, tc.idx, tc.ok)
		}
	}
}

func TestMapQueuesVirtioByMSI(t *testing.T) {
	b, err := os.ReadFile("testdata/vm-2cpu-6.18-interrupts.txt")
	if err != nil {
		t.Fatal(err)
	}
	root := snaptest.Write(t, map[string]string{
		"proc/irq/38/smp_affinity_list":                       "0-1\n",
		"proc/irq/38/effective_affinity_list":                 "1\n",
		"proc/irq/39/smp_affinity_list":                       "0\n",
		"sys/bus/pci/devices/0000:00:03.0/virtio2/net/eth0/x": "",
	})
	x := mustParse(t, string(b))
	nic := nicinfo.NIC{Name: "eth0", Bus: nicinfo.BusPCI, PCI: &nicinfo.PCIFunction{Address: "0000:00:03.0", IRQs: []int{37, 38, 39}}}
	nq := MapQueues(nic, x, option.Root(root))
	if nq.MatchedBy != MatchMSI || len(nq.Queues) != 3 {
		t.Fatalf("MapQueues = %+v", nq)
	}
	rx := nq.Queues[1]
	if rx.IRQ != 38 || rx.Kind != KindRX || rx.Index != 0 || !slices.Equal(rx.CPUs, []int{1}) || rx.CPUSource != SourceEffective {
		t.Errorf("rx queue = %+v", rx)
	}
	tx := nq.Queues[2]
	if tx.Kind != KindTX || !slices.Equal(tx.CPUs, []int{0}) || tx.CPUSource != SourceSMP {
		t.Errorf("tx queue = %+v (fallback to smp_affinity_list)", tx)
	}
	if nq.Queues[0].Kind != KindOther {
		t.Errorf("config vector = %+v", nq.Queues[0])
	}
	// Without msi_irqs the chip name (PCI-MSIX-BDF) and action names find the same vectors.
	nic.PCI.IRQs = nil
	nq = MapQueues(nic, x, option.Root(root))
	if nq.MatchedBy != MatchName || len(nq.Queues) != 3 || nq.Queues[1].Kind != KindRX {
		t.Errorf("by name: %+v", nq)
	}
}

func TestMapQueuesSingleVector(t *testing.T) {
	// Old r8169 named its one MSI vector after the interface; igb names a
	// link vector "eth0" beside its queues.
	x := mustParse(t, `      CPU0 CPU1
 30:  5 0  PCI-MSI 524288-edge      enp3s0
 31:  1 0  PCI-MSI 1-edge      eth0
 32:  1 0  PCI-MSI 2-edge      eth0-TxRx-0
 33:  1 0  PCI-MSI 3-edge      eth0-TxRx-1
`)
	root := t.TempDir()
	rt := nicinfo.NIC{Name: "enp3s0", Bus: nicinfo.BusPCI, PCI: &nicinfo.PCIFunction{Address: "0000:03:00.0", IRQs: []int{30}}}
	nq := MapQueues(rt, x, option.Root(root))
	if len(nq.Queues) != 1 || nq.Queues[0].Kind != KindTxRx || nq.Queues[0].Index != 0 {
		t.Errorf("single vector: %+v", nq)
	}
	igb := nicinfo.NIC{Name: "eth0", Bus: nicinfo.BusPCI}
	nq = MapQueues(igb, x, option.Root(root))
	if len(nq.Queues) != 3 || nq.Queues[0].Kind != KindOther || len(nq.DataQueues()) != 2 {
		t.Errorf("igb by name: %+v", nq)
	}
}
