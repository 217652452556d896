package exporter

import (
	"strings"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/irq"
)

// The series of the host audit's counters and facts: what throttled a
// NIC since boot, its link errors and module diagnostics, the host's idle
// states, connection tracking, overlays and XDP. Each family is left out
// where its facts were not read.
var (
	famPause = newFamily("nicdiag_nic_pause_frames_total", "counter",
		"Pause frames the NIC counted since its driver started counting (usually boot), summed over the driver's pause counters: direction=received (the link partner asked this host to stop sending) or sent (this host asked the partner to stop).",
		"iface", "direction")
	famAllowance = newFamily("nicdiag_nic_allowance_exceeded_total", "counter",
		"Packets a cloud platform queued or dropped since boot because an instance allowance was exceeded (ENA's *_allowance_exceeded counters), by allowance: bw_in, bw_out, pps, conntrack, linklocal.",
		"iface", "allowance")
)

// addNICFacts adds the series of one selected NIC.
func addNICFacts(add func(*family, float64, ...string), n *nicdiag.NIC) {
	id := n.ID()
	if t := n.LossTotals; t != nil {
		var rx, tx float64
		var pause bool
		for _, l := range t.Losses {
			switch l.Class {
			case irq.LossPauseRX:
				rx, pause = rx+float64(l.Value), true
			case irq.LossPauseTX:
				tx, pause = tx+float64(l.Value), true
			case irq.LossAllowance:
				name := strings.TrimSuffix(strings.TrimPrefix(l.Name, "ethtool:"), "_allowance_exceeded")
				add(famAllowance, float64(l.Value), id, name)
			}
		}
		if pause {
			add(famPause, rx, id, "received")
			add(famPause, tx, id, "sent")
		}
	}
}
