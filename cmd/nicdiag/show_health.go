package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// healthSection is what held the NIC's traffic back or damaged it since
// its driver started counting: pause frames both ways and a cloud NIC's
// allowance counters.
func healthSection(n *nicdiag.NIC) showSection {
	s := showSection{Title: "Throttled (since the driver started counting, usually boot)"}
	t := n.LossTotals
	if t == nil {
		return s
	}
	var allow []string
	for _, l := range t.Losses {
		if l.Class == irq.LossAllowance {
			allow = append(allow, text.Clip(strings.TrimPrefix(l.Name, "ethtool:"))+" "+strconv.FormatUint(l.Value, 10))
		}
	}
	if rx, tx, _, pause := t.Pause(); pause {
		s.add("Pause frames", fmt.Sprintf("received %d (the partner stopped this host), sent %d (this host stopped the partner); frames sent %d, received %d", rx, tx, t.TXPackets, t.RXPackets))
	}
	s.add("Allowances", strings.Join(allow, ", "))
	return s
}

// linkHealthSection is the NIC's damaged frames, FEC and module
// diagnostics.
func linkHealthSection(n *nicdiag.NIC) showSection {
	s := showSection{Title: "Link health"}
	if l := n.LinkErrors; l != nil {
		var parts []string
		for _, c := range l.Counters {
			parts = append(parts, text.Clip(c.Name)+" "+strconv.FormatUint(c.Value, 10))
		}
		if len(parts) > 0 {
			s.add("Damaged frames", strings.Join(parts, ", ")+fmt.Sprintf(" (of %d received, since the driver started counting)", l.RXPackets))
		}
	}
	if f := n.FEC; f != nil {
		v := "active " + text.Clip(f.Active)
		for _, c := range []struct {
			p    *uint64
			name string
		}{{f.Corrected, "corrected blocks"}, {f.Uncorrectable, "uncorrectable blocks"}, {f.CorrectedBits, "corrected bits"}} {
			if c.p != nil {
				v += fmt.Sprintf(", %s %d", c.name, *c.p)
			}
		}
		s.add("FEC", v)
	}
	if d := n.Module; d != nil {
		var parts []string
		for _, m := range d.Measures {
			name := m.What
			if m.Lane > 0 {
				name += strconv.Itoa(m.Lane)
			}
			v := name + " " + strconv.FormatFloat(m.Value, 'g', 4, 64)
			if t := m.Thresholds; t != nil {
				v += fmt.Sprintf(" [%g..%g]", t[1], t[0])
			}
			parts = append(parts, v)
		}
		s.add("Module", d.Standard+": "+strings.Join(parts, ", ")+" (°C, V, mA, mW; [low..high alarm])")
	}
	return s
}

// overlaySection is the NIC's XDP program and, for a VXLAN or Geneve
// device, its setup.
func overlaySection(n *nicinfo.NIC) showSection {
	s := showSection{Title: "XDP and tunnel"}
	if x := n.XDP; x != nil {
		s.add("XDP", fmt.Sprintf("program %d, %s mode", x.ProgID, x.Mode))
	}
	if t := n.Tunnel; t != nil {
		v := fmt.Sprintf("%s VNI %d, port %d", t.Kind, t.VNI, t.Port)
		if t.Link != "" {
			v += ", over " + t.Link
		}
		s.add("Tunnel", v)
	}
	return s
}

// hostAuditSection is what the host's stack adds: the idle states of the
// CPUs that take the NIC's queue interrupts, connection tracking, bridge
// netfilter and the kernel.
func hostAuditSection(h *nicdiag.Host, q *irq.NICQueues) showSection {
	s := showSection{Title: "Host stack"}
	f := h.Facts
	s.add("Kernel", f.KernelRelease)
	if x := f.Idle; x != nil {
		s.add("CPU idle", idleText(x, q))
	}
	if c := f.Conntrack; c != nil {
		v := fmt.Sprintf("%d of %d entries", c.Count, c.Max)
		if c.Stats != nil {
			v += fmt.Sprintf("; since boot drop %d, early_drop %d, insert_failed %d", c.Stats["drop"], c.Stats["early_drop"], c.Stats["insert_failed"])
		}
		s.add("Conntrack", v)
	}
	if b := f.BridgeNF; b != nil {
		var parts []string
		for _, x := range []struct {
			v    *bool
			name string
		}{{b.IPTables, "iptables"}, {b.IP6Tables, "ip6tables"}, {b.ARPTables, "arptables"}} {
			if x.v != nil {
				parts = append(parts, x.name+" "+onOff(*x.v))
			}
		}
		s.add("br_netfilter", "loaded: bridged frames through "+strings.Join(parts, ", "))
	}
	return s
}

// idleText sums up cpuidle for the queue CPUs: "intel_idle/menu; CPUs
// 64-95: C6 (133 µs) deepest".
func idleText(x *nicinfo.Idle, q *irq.NICQueues) string {
	v := text.Clip(x.Driver)
	if x.Governor != "" {
		v += "/" + text.Clip(x.Governor)
	}
	if x.MaxCState != nil {
		v += fmt.Sprintf(", intel_idle.max_cstate %d", *x.MaxCState)
	}
	if len(x.Cmdline) > 0 {
		v += ", " + strings.Join(x.Cmdline, " ")
	}
	if q == nil {
		return v
	}
	want := map[int]bool{}
	for _, d := range q.DataQueues() {
		for _, c := range d.CPUs {
			want[c] = true
		}
	}
	by := map[string][]int{}
	var order []string
	for _, c := range x.CPUs {
		if !want[c.CPU] {
			continue
		}
		k := "no idle state"
		if st, ok := c.Deepest(); ok {
			k = fmt.Sprintf("%s (%d µs) deepest", text.Clip(st.Name), st.LatencyUs)
		}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], c.CPU)
	}
	for _, k := range order {
		v += fmt.Sprintf("; CPU %s: %s", irq.FormatCPUList(by[k]), k)
	}
	return v
}
