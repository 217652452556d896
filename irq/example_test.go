package irq_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// The sampler alone: the per-CPU load and each NIC's traffic since the
// reading before, every interval, with no verdict. The host here is a
// bundled snapshot, whose counters never move (every rate is 0); on a live
// host leave option.Root out.
func ExampleSampler() {
	ctx := context.Background()
	root := option.Root("../testdata/snapshots/82576-minipcie-x1")
	nics, err := nicinfo.List(ctx, root)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := irq.NewSampler(ctx, nics, root, irq.WithInterval(10*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	x, err := s.Next(ctx) // waits for the interval
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range x.CPUs {
		fmt.Printf("CPU %d: %.0f %% busy, %.0f %% softirq\n", c.CPU, c.BusyPct, c.SoftIRQPct)
	}
	for _, n := range x.NICs {
		fmt.Printf("%s: %.0f packets/s received, %d queue vectors\n", n.Name, n.RXPacketsPerS, len(n.Queues))
	}
	// Output:
	// CPU 0: 0 % busy, 0 % softirq
	// CPU 1: 0 % busy, 0 % softirq
	// enp1s0f0: 0 packets/s received, 3 queue vectors
	// enp1s0f1: 0 packets/s received, 3 queue vectors
}

// Map a virtio NIC's vectors to queues, reading a /proc/interrupts captured
// on a 2-vCPU VM.
func ExampleMapQueues() {
	x := new(irq.Interrupts)
	err := irq.ParseInterrupts([]byte(`           CPU0       CPU1
 37:          0          0 PCI-MSIX-0000:00:03.0   0-edge      virtio2-config
 38:          0        691 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
 39:        503          0 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0
`), x)
	if err != nil {
		fmt.Println(err)
		return
	}
	nic := nicinfo.NIC{Name: "eth0", PCI: &nicinfo.PCIFunction{Address: "0000:00:03.0", IRQs: []int{37, 38, 39}}}
	for _, q := range irq.MapQueues(nic, x, option.Root("testdata")).Queues {
		fmt.Println(q.IRQ, q.Kind, q.Index, q.Action)
	}
	// Output:
	// 37 other -1 virtio2-config
	// 38 rx 0 virtio2-input.0
	// 39 tx 0 virtio2-output.0
}
