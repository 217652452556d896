package exporter

import (
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/irq"
)

// The series of the host audit's counters and facts: what throttled a
// NIC since boot, its link errors and module diagnostics, the host's idle
// states, connection tracking, overlays and XDP. Each family is left out
// where its facts were not read.
var (
	famShared = newFamily("nicdiag_pcie_shared_device_bytes_per_second", "gauge",
		"A device behind a hop of the NIC's PCIe path that is not a function of the NIC's card (an NVMe, a GPU, another NIC): the most it can take of the hop, its own link's bandwidth per direction after encoding, in bytes per second. hop is the hop's upstream end (0000:00:00.0, the CPU's host bridge, for a modelled chipset uplink).",
		"iface", "hop", "device", "kind")
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
	if b := n.Budget; b != nil {
		for _, sh := range b.Sharers {
			if sh.Gbps > 0 {
				add(famShared, sh.Gbps*1e9/8, id, string(sh.Hop), string(sh.Address), sh.Kind)
			}
		}
	}
	if p := n.Path; p != nil && p.Chipset != nil && n.Judged() {
		c := p.Chipset
		hop, up, down := strconv.Itoa(len(p.Hops)), string(c.Upstream.Address), string(c.Downstream.Address)
		add(famHopSpeed, c.Speed*1e9, id, hop, up, down, "modelled")
		add(famHopWidth, float64(c.Width), id, hop, up, down, "modelled")
	}
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
