package irq_test

import (
	"fmt"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
)

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
	for _, q := range irq.MapQueues(nic, x, irq.WithRoot("testdata")).Queues {
		fmt.Println(q.IRQ, q.Kind, q.Index, q.Action)
	}
	// Output:
	// 37 other -1 virtio2-config
	// 38 rx 0 virtio2-input.0
	// 39 tx 0 virtio2-output.0
}
