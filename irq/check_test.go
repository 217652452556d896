package irq

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/pcie"
)

func TestCheck(t *testing.T) {
	root := snaptest.Write(t, map[string]string{
		"proc/interrupts": `      CPU0 CPU1 CPU2 CPU3
 40:  1 0 0 0  IR-PCI-MSIX-0000:01:00.0  0-edge  eth0-TxRx-0
 41:  1 0 0 0  IR-PCI-MSIX-0000:01:00.0  1-edge  eth0-TxRx-1
 42:  1 0 0 0  IR-PCI-MSIX-0000:01:00.0  2-edge  eth0
 50:  1 0 0 0  IR-PCI-MSI-0000:03:00.0  0-edge  r8169-0000:03:00.0-300
 60:  1 0 0 0  IR-PCI-MSIX-0000:04:00.0  0-edge  eth2-TxRx-0
 61:  1 0 0 0  IR-PCI-MSIX-0000:04:00.0  1-edge  eth2-TxRx-1
`,
		"proc/irq/40/effective_affinity_list":     "0\n",
		"proc/irq/41/effective_affinity_list":     "0\n",
		"proc/irq/42/effective_affinity_list":     "2\n",
		"proc/irq/50/effective_affinity_list":     "0\n",
		"proc/irq/60/effective_affinity_list":     "0\n",
		"proc/irq/61/effective_affinity_list":     "1\n",
		"sys/class/net/eth1/queues/rx-0/rps_cpus": "0\n",
		"sys/class/net/eth3/queues/rx-0/rps_cpus": "e\n",
	})
	pci := func(a string, irqs ...int) *nicinfo.PCIFunction {
		return &nicinfo.PCIFunction{Address: pcie.Address(a), IRQs: irqs}
	}
	nics := []nicinfo.NIC{
		{Name: "eth0", Bus: nicinfo.BusPCI, PCI: pci("0000:01:00.0", 40, 41, 42), Queues: nicinfo.Queues{RX: 2, TX: 2}},
		{Name: "eth1", Bus: nicinfo.BusPCI, PCI: pci("0000:03:00.0", 50), Queues: nicinfo.Queues{RX: 1, TX: 1}, Link: nicinfo.Link{SpeedMbps: 1000}},
		{Name: "eth2", Bus: nicinfo.BusPCI, PCI: pci("0000:04:00.0", 60, 61), Queues: nicinfo.Queues{RX: 2, TX: 2}},
		{Name: "eth3", Bus: nicinfo.BusPCI, PCI: pci("0000:05:00.0"), Queues: nicinfo.Queues{RX: 1, TX: 1}},
		{Name: "veth0", Bus: nicinfo.BusVirtual, Queues: nicinfo.Queues{RX: 1, TX: 1}},
	}
	fs, err := checkNICs(context.Background(), nics, option.Root(root))
	if err != nil {
		t.Fatal(err)
	}
	if got := codes(fs); got != "warn irq.affinity_concentrated eth0; warn nic.single_queue eth1" {
		t.Fatalf("findings = %s", got)
	}
	if fs[0].Evidence["cpu"] != "0" || fs[0].Evidence["source"] != SourceEffective {
		t.Errorf("evidence = %v", fs[0].Evidence)
	}
	if fs[1].Evidence["irq"] != "50 (r8169-0000:03:00.0-300) on CPU 0" {
		t.Errorf("single queue evidence = %v", fs[1].Evidence)
	}
	// A 100 Mb/s single-queue NIC is only informational.
	nics[1].Link.SpeedMbps = 100
	fs, _ = checkNICs(context.Background(), nics[1:2], option.Root(root))
	if len(fs) != 1 || fs[0].Severity != finding.Info {
		t.Errorf("100M: %s", codes(fs))
	}
}

// On a one-CPU host there is no other core to spread receive work to.
func TestCheckSingleCPUHasNoSingleQueueVerdict(t *testing.T) {
	root := snaptest.Write(t, map[string]string{
		"proc/interrupts": `           CPU0
 50:        123  IR-PCI-MSI-0000:03:00.0  0-edge  r8169-0000:03:00.0-300
`,
		"proc/irq/50/effective_affinity_list": "0\n",
	})
	nic := nicinfo.NIC{Name: "eth1", Bus: nicinfo.BusPCI, PCI: &nicinfo.PCIFunction{Address: "0000:03:00.0", IRQs: []int{50}},
		Queues: nicinfo.Queues{RX: 1, TX: 1}, Link: nicinfo.Link{SpeedMbps: 1000}}
	fs, err := checkNICs(context.Background(), []nicinfo.NIC{nic}, option.Root(root))
	if err != nil || len(fs) != 0 {
		t.Errorf("one CPU: %s, %v; want no finding", codes(fs), err)
	}
}

// checkNICs returns the static verdicts (what the root package's
// checkers compute from a Host) for nics, from their queues and where
// their IRQs are routed now: irq.affinity_concentrated (every data vector of
// a multi-queue NIC effective on one CPU) and nic.single_queue (one receive
// queue and no RPS, so one core does all the receive work). Virtual
// interfaces (veth, bridge) have no IRQs and are skipped. A missing
// /proc/interrupts only skips the affinity verdict.
func checkNICs(ctx context.Context, nics []nicinfo.NIC, opts ...Option) ([]finding.Finding, error) {
	o := newOptions(opts)
	var x *Interrupts
	b, err := o.root.ReadFile(interruptsFile)
	switch {
	case err == nil:
		x = new(Interrupts)
		if err := ParseInterrupts(b, x); err != nil {
			return nil, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	var out []finding.Finding
	for _, n := range nics {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !n.Physical() {
			continue
		}
		var nq NICQueues
		if x != nil {
			nq = mapQueues(o.root, n, x)
		}
		st, _ := readSteering(o.root, n.Name)
		out = append(out, CheckQueues(n, nq, st, x)...)
	}
	finding.Sort(out)
	return out, nil
}

// A NIC whose queues/ could not be read and whose driver reports no
// channels has an unknown queue count: no nic.single_queue from it.
func TestSingleQueueNeedsACount(t *testing.T) {
	n := nicinfo.NIC{Name: "eth0", Bus: nicinfo.BusPCI, Link: nicinfo.Link{SpeedMbps: 10000}, Missing: []string{"queues: absent"}}
	if f, ok := singleQueue(n, NICQueues{}, Steering{}); ok {
		t.Errorf("unknown queue count judged: %v", f)
	}
	n.Queues.RX = 1
	if _, ok := singleQueue(n, NICQueues{}, Steering{}); !ok {
		t.Error("one known queue not judged")
	}
}
