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
	famIdle = newFamily("nicdiag_cpu_idle_deepest_exit_latency_seconds", "gauge",
		"Exit latency of the deepest idle state each CPU that takes a NIC's queue interrupts may enter (cpuidle: enabled, within its PM QoS resume latency), in seconds; state is its name.",
		"iface", "cpu", "state")
	famConntrack = newFamily("nicdiag_conntrack_entries", "gauge",
		"Connection-tracking table: its entries (kind=count) and maximum (kind=max).", "kind")
	famConntrackStat = newFamily("nicdiag_conntrack_events_total", "counter",
		"Connection-tracking statistics since boot, summed over CPUs (/proc/net/stat/nf_conntrack): drop (packets dropped: the table full, or a protocol tracker refused them), early_drop (entries evicted to make room), insert_failed.",
		"event")
	famBridgeNF = newFamily("nicdiag_bridge_netfilter_enabled", "gauge",
		"br_netfilter: 1 when bridged frames go through that family's netfilter tables (net.bridge.bridge-nf-call-*), 0 when not; absent when the module is not loaded.",
		"family")
	famXDP = newFamily("nicdiag_nic_xdp_attached", "gauge",
		"An XDP program attached to the NIC: 1, with its mode (driver, generic, offload, multi).", "iface", "mode")
	famTunnel = newFamily("nicdiag_tunnel_info", "gauge",
		"A VXLAN or Geneve device: 1, with its kind, VNI, UDP port and underlay link (empty when it routes).",
		"iface", "kind", "vni", "port", "link")
	famLinkErr = newFamily("nicdiag_nic_damaged_frames_total", "counter",
		"Frames the NIC received damaged since its driver started counting, the largest counter of each kind (the interface statistics and the driver's counters of one kind count the same frames): crc, symbol, alignment (damage on the wire), and length (frames of a wrong length, mostly longer than the MTU: not damage on the wire).",
		"iface", "kind")
	famFEC = newFamily("nicdiag_nic_fec_blocks_total", "counter",
		"FEC blocks (codewords) since the driver started counting: kind=corrected (cost nothing) or uncorrectable (a frame lost).",
		"iface", "kind")
	famModTemp = newFamily("nicdiag_nic_module_temperature_celsius", "gauge",
		"A pluggable module's own temperature (its digital diagnostics).", "iface")
	famModVolt = newFamily("nicdiag_nic_module_supply_volts", "gauge",
		"A pluggable module's supply voltage (its digital diagnostics).", "iface")
	famModBias = newFamily("nicdiag_nic_module_bias_amperes", "gauge",
		"A pluggable module's laser bias current per lane (its digital diagnostics).", "iface", "lane")
	famModPower = newFamily("nicdiag_nic_module_optical_power_watts", "gauge",
		"A pluggable module's optical power per lane and direction (tx, rx), its digital diagnostics.", "iface", "lane", "direction")
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
	if x := n.XDP; x != nil {
		add(famXDP, 1, id, x.Mode)
	}
	addLinkHealth(add, n)
	if t := n.LossTotals; t != nil {
		for _, l := range t.Losses {
			if l.Class == irq.LossAllowance {
				name := strings.TrimSuffix(strings.TrimPrefix(l.Name, "ethtool:"), "_allowance_exceeded")
				add(famAllowance, float64(l.Value), id, name)
			}
		}
		if rx, tx, _, pause := t.Pause(); pause {
			add(famPause, float64(rx), id, "received")
			add(famPause, float64(tx), id, "sent")
		}
	}
}

// addHostFacts adds the host-wide series and, for each selected NIC, the
// idle states of its queue CPUs.
func addHostFacts(add func(*family, float64, ...string), h *nicdiag.Host) {
	f := h.Facts
	if c := f.Conntrack; c != nil {
		add(famConntrack, float64(c.Count), "count")
		add(famConntrack, float64(c.Max), "max")
		if c.Stats != nil {
			for _, e := range []string{"drop", "early_drop", "insert_failed"} {
				add(famConntrackStat, float64(c.Stats[e]), e)
			}
		}
	}
	if b := f.BridgeNF; b != nil {
		for _, x := range []struct {
			v    *bool
			name string
		}{{b.IPTables, "ipv4"}, {b.IP6Tables, "ipv6"}, {b.ARPTables, "arp"}} {
			if x.v != nil {
				add(famBridgeNF, boolValue(*x.v), x.name)
			}
		}
	}
	for _, n := range h.NICs {
		if t := n.Tunnel; t != nil {
			add(famTunnel, 1, n.Name, t.Kind, strconv.FormatUint(uint64(t.VNI), 10), strconv.Itoa(t.Port), t.Link)
		}
	}
	if f.Idle == nil {
		return
	}
	for _, n := range h.Selected {
		if n.Queues == nil {
			continue
		}
		want := map[int]bool{}
		for _, q := range n.Queues.DataQueues() {
			for _, c := range q.CPUs {
				want[c] = true
			}
		}
		for _, c := range f.Idle.CPUs {
			if st, ok := c.Deepest(); ok && want[c.CPU] {
				add(famIdle, float64(st.LatencyUs)/1e6, n.ID(), strconv.Itoa(c.CPU), st.Name)
			}
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// addLinkHealth adds a NIC's damaged frames, FEC blocks and module
// diagnostics.
func addLinkHealth(add func(*family, float64, ...string), n *nicdiag.NIC) {
	id := n.ID()
	if l := n.LinkErrors; l != nil {
		for kind, c := range l.ByKind() {
			add(famLinkErr, float64(c.Value), id, string(kind))
		}
	}
	if f := n.FEC; f != nil {
		if f.Corrected != nil {
			add(famFEC, float64(*f.Corrected), id, "corrected")
		}
		if f.Uncorrectable != nil {
			add(famFEC, float64(*f.Uncorrectable), id, "uncorrectable")
		}
	}
	if d := n.Module; d != nil {
		for _, m := range d.Measures {
			lane := strconv.Itoa(m.Lane)
			switch m.What {
			case "temperature":
				add(famModTemp, m.Value, id)
			case "voltage":
				add(famModVolt, m.Value, id)
			case "bias":
				add(famModBias, m.Value/1e3, id, lane)
			case "tx_power", "rx_power":
				add(famModPower, m.Value/1e3, id, lane, strings.TrimSuffix(m.What, "_power"))
			}
		}
	}
}
