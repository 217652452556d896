package nicdiag

import (
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// queuesCheck: queue IRQs piled on one CPU (irq.affinity_concentrated) and
// one receive queue without RPS (nic.single_queue), from the queue map and
// steering Inspect read. nic.single_queue is not raised where the queue
// count is fixed elsewhere (queueCountFixed).
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
			for _, f := range irq.CheckQueues(n.NIC, nq, n.Steering, h.Interrupts) {
				// A virtio NIC whose host offers one queue pair, or a VF
				// single-queue by design: the count is not this host's to
				// raise (check_virtual.go's queueCountFixed).
				if f.Code == finding.NICSingleQueue && h.queueCountFixed(n) {
					continue
				}
				out = append(out, f)
			}
		}
		return out
	},
}
