package nicdiag

import (
	"fmt"
	"strconv"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
)

// queuesCheck: queue IRQs piled on one CPU (irq.affinity_concentrated) and
// one receive queue without RPS (nic.single_queue), from the queue map and
// steering Inspect read. nic.single_queue is not raised where the queue
// count is fixed elsewhere (queueCountFixed), and is judged by packet rate
// (singleQueueRate): warn only when the port's line rate of full-size
// frames is more than one slow core was seen to move.
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
				if f.Code == finding.NICSingleQueue {
					// A virtio NIC whose host offers one queue pair, or a VF
					// single-queue by design: the count is not this host's to
					// raise (check_virtual.go's queueCountFixed).
					if h.queueCountFixed(n) {
						continue
					}
					f = h.singleQueueRate(n, f)
				}
				out = append(out, f)
			}
		}
		return out
	},
}

// coreFramesPerSecond is the packet rate one core is taken to move through
// the receive path: PC Engines' apu1c (a 1 GHz AMD T40E) routed about 190
// kpps through one RTL8111E queue at about 80 % CPU (docs/field-reports.md,
// report 004). A port whose line rate of 1518-byte frames stays below it
// (81 kpps at 1 Gb/s) is not bound by one core; 2.5 Gb/s (203 kpps) and
// faster can be.
const coreFramesPerSecond = 190e3

// singleQueueRate judges nic.single_queue f by the packet rate the port
// needs at line rate of full-size frames against coreFramesPerSecond: warn
// above it, info at or below it; warn still when no speed is known.
func (h *Host) singleQueueRate(n *NIC, f finding.Finding) finding.Finding {
	speed, basis := h.judgedSpeed(n)
	f.Evidence["core_frames_per_s"] = strconv.Itoa(coreFramesPerSecond)
	if speed <= 0 {
		f.Summary += "; the link speed is unknown, so the packet rate it needs is too"
		return f
	}
	need := fullFramesPerSecond(speed)
	f.Evidence["full_frames_per_s"] = fmt.Sprintf("%.0f", need)
	f.Evidence["judged_mbps"] = strconv.Itoa(speed)
	if need <= coreFramesPerSecond {
		f.Severity = finding.Info
		f.Summary += fmt.Sprintf("; at %s line rate is %.0f k 1518-byte frames/s, which one core moves (a 1 GHz AMD T40E routed %.0f kpps), so the port is not bound by it; small packets or heavy per-packet work (firewall, tunnels) can still fill that core",
			atSpeed(speed, basis), need/1e3, coreFramesPerSecond/1e3)
		return f
	}
	f.Severity = finding.Warn
	f.Summary += fmt.Sprintf("; at %s line rate is %.0f k 1518-byte frames/s, more than one core can be counted on to move (a 1 GHz AMD T40E routed %.0f kpps)",
		atSpeed(speed, basis), need/1e3, coreFramesPerSecond/1e3)
	return f
}
