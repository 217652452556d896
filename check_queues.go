package nicdiag

import (
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// queuesCheck: queue IRQs piled on one CPU (irq.affinity_concentrated) and
// one receive queue without RPS (nic.single_queue), from the queue map and
// steering Inspect read.
var queuesCheck = Checker{
	Name:  "queues",
	Codes: []finding.Code{finding.IRQAffinityConcentrate, finding.NICSingleQueue},
	Run: func(h *Host) []finding.Finding {
		var out []finding.Finding
		for _, n := range h.Selected {
			if !n.Netdev() || !n.Physical() {
				continue
			}
			var nq irq.NICQueues
			if n.Queues != nil {
				nq = *n.Queues
			}
			out = append(out, irq.CheckQueues(n.NIC, nq, n.Steering, h.Interrupts)...)
		}
		return out
	},
}
