package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// The lines of show for the facts beyond the inventory basics: rings,
// offloads, coalescing, flow control, EEE, carrier counts, drops, virtio
// and VF settings, IOMMU, and the host's platform, forwarding and CPU
// frequency scaling. Every string that comes from the host or a snapshot
// goes through text.Clean (names and counter keys) or text.Clip.

// featureLabels are the short names `show` gives the judged offloads, in
// JudgedFeatures order.
var featureLabels = map[string]string{
	nicinfo.FeatureGRO:            "gro",
	nicinfo.FeatureLRO:            "lro",
	nicinfo.FeatureTSO:            "tso",
	nicinfo.FeatureTSO6:           "tso6",
	nicinfo.FeatureGSO:            "gso",
	nicinfo.FeatureRXChecksum:     "rx-checksum",
	nicinfo.FeatureTXChecksumIPv4: "tx-checksum-ipv4",
	nicinfo.FeatureTXChecksumIP:   "tx-checksum",
	nicinfo.FeatureTXChecksumIPv6: "tx-checksum-ipv6",
	nicinfo.FeatureScatterGather:  "sg",
}

// offloadsText renders the judged offloads ("gro on, lro off [fixed]"),
// the judged ones first in their order, any other name after, sorted.
func offloadsText(fs map[string]nicinfo.Feature) string {
	if len(fs) == 0 {
		return ""
	}
	names := make([]string, 0, len(fs))
	for _, k := range nicinfo.JudgedFeatures {
		if _, ok := fs[k]; ok {
			names = append(names, k)
		}
	}
	var other []string
	for k := range fs {
		if _, ok := featureLabels[k]; !ok {
			other = append(other, k)
		}
	}
	slices.Sort(other)
	parts := make([]string, 0, len(fs))
	for _, k := range append(names, other...) {
		f := fs[k]
		label, ok := featureLabels[k]
		if !ok {
			label = text.Clip(k)
		}
		s := label + " " + onOff(f.Active)
		if f.Requested && !f.Active {
			s += " (requested on)"
		}
		if f.Fixed {
			s += " [fixed]"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// ringsText renders the ring sizes as current/maximum.
func ringsText(r *nicinfo.Rings) string {
	if r == nil {
		return ""
	}
	parts := []string{fmt.Sprintf("rx %d/%d", r.RX, r.RXMax)}
	if r.RXMiniMax > 0 {
		parts = append(parts, fmt.Sprintf("rx-mini %d/%d", r.RXMini, r.RXMiniMax))
	}
	if r.RXJumboMax > 0 {
		parts = append(parts, fmt.Sprintf("rx-jumbo %d/%d", r.RXJumbo, r.RXJumboMax))
	}
	parts = append(parts, fmt.Sprintf("tx %d/%d", r.TX, r.TXMax))
	return strings.Join(parts, ", ") + " (current/max)"
}

// coalesceText renders the interrupt moderation the driver reported.
func coalesceText(c *nicinfo.Coalesce) string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, u := range []struct {
		name string
		v    *uint32
	}{{"rx-usecs", c.RXUsecs}, {"rx-frames", c.RXFrames}, {"tx-usecs", c.TXUsecs}, {"tx-frames", c.TXFrames}} {
		if u.v != nil {
			parts = append(parts, u.name+" "+strconv.FormatUint(uint64(*u.v), 10))
		}
	}
	for _, a := range []struct {
		name string
		v    *bool
	}{{"adaptive-rx", c.AdaptiveRX}, {"adaptive-tx", c.AdaptiveTX}} {
		if a.v != nil {
			parts = append(parts, a.name+" "+onOff(*a.v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, ", ")
	if c.Source != "" {
		s += " (" + text.Clip(c.Source) + ")"
	}
	return s
}

func pauseText(p *nicinfo.Pause) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("autoneg %s, rx %s, tx %s", onOff(p.Autoneg), onOff(p.RX), onOff(p.TX))
}

// eeeText renders EEE; a physical NIC whose driver answered the other
// ethtool queries of the same generation but not EEE has none.
func eeeText(n *nicinfo.NIC) string {
	e := n.EEE
	if e == nil {
		if n.Physical() && n.Virtio == nil && (n.Pause != nil || n.Rings != nil || n.Features != nil || n.Coalesce != nil) {
			return "not reported (the driver has no EEE)"
		}
		return ""
	}
	state := "inactive"
	if e.Active {
		state = "active"
	}
	en := "disabled"
	if e.Enabled {
		en = "enabled"
	}
	s := fmt.Sprintf("%s (%s, tx-lpi %s", state, en, onOff(e.TXLPIEnabled))
	if e.TXLPITimerUs > 0 {
		s += fmt.Sprintf(", lpi timer %d us", e.TXLPITimerUs)
	}
	return s + ")"
}

func carrierText(c *nicinfo.Carrier) string {
	if c == nil {
		return ""
	}
	var ud []string
	if c.Up != nil {
		ud = append(ud, fmt.Sprintf("%d up", *c.Up))
	}
	if c.Down != nil {
		ud = append(ud, fmt.Sprintf("%d down", *c.Down))
	}
	s := fmt.Sprintf("%d changes", c.Changes)
	if len(ud) > 0 {
		s = strings.Join(ud, ", ") + ", " + s
	}
	return s + " since the interface appeared"
}

func virtioText(v *nicinfo.VirtioDevice) string {
	if v == nil {
		return ""
	}
	s := text.Clip(v.Name)
	on, known := v.Feature(nicinfo.VirtioNetFMQ)
	switch {
	case !known:
		return s
	case on:
		return s + fmt.Sprintf(", multiqueue offered (VIRTIO_NET_F_MQ, bit %d)", nicinfo.VirtioNetFMQ)
	default:
		return s + fmt.Sprintf(", multiqueue not offered (bit %d clear: one queue pair)", nicinfo.VirtioNetFMQ)
	}
}

// vfText renders one VF's settings as its PF reports them.
func vfText(v nicinfo.VFConfig) string {
	var parts []string
	if v.Function != "" {
		parts = append(parts, text.Clip(string(v.Function)))
	}
	if v.MAC != "" {
		parts = append(parts, "mac "+text.Clip(v.MAC))
	}
	if v.VLAN != 0 {
		s := "vlan " + strconv.Itoa(v.VLAN)
		if v.QoS != 0 {
			s += " qos " + strconv.Itoa(v.QoS)
		}
		parts = append(parts, s)
	}
	if v.MaxTxRateMbps > 0 {
		parts = append(parts, fmt.Sprintf("max tx rate %d Mb/s", v.MaxTxRateMbps))
	}
	if v.MinTxRateMbps > 0 {
		parts = append(parts, fmt.Sprintf("min tx rate %d Mb/s", v.MinTxRateMbps))
	}
	parts = append(parts, "spoofchk "+onOff(v.SpoofCheck), "trust "+onOff(v.Trust))
	if v.LinkState != "" {
		parts = append(parts, "link "+text.Clip(v.LinkState))
	}
	return strings.Join(parts, ", ")
}

// counterList renders "name value" pairs, names cleaned, in the order given.
func counterList(names []string, value func(string) uint64) string {
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = text.Clip(k) + " " + strconv.FormatUint(value(k), 10)
	}
	return strings.Join(parts, ", ")
}

// dropSection is the NIC's drop counters since its driver started
// counting: the interface statistics and the driver's loss counters.
func dropSection(n *nicdiag.NIC) showSection {
	s := showSection{Title: "Drops (since the driver started counting, usually boot)"}
	if t := n.LossTotals; t != nil {
		var sys, drv []string
		vals := map[string]uint64{}
		for _, l := range t.Losses {
			src, name, ok := strings.Cut(l.Name, ":")
			if !ok {
				src, name = "", l.Name
			}
			vals[name] = l.Value
			if src == "sysfs" {
				sys = append(sys, name)
			} else {
				drv = append(drv, name)
			}
		}
		get := func(k string) uint64 { return vals[k] }
		s.add("RX packets", strconv.FormatUint(t.RXPackets, 10))
		if len(sys) > 0 {
			s.add("NIC counters", counterList(sys, get))
		}
		if len(drv) > 0 {
			s.add("Driver counters", counterList(drv, get))
		}
		return s
	}
	if len(n.LossStats) > 0 {
		names := make([]string, 0, len(n.LossStats))
		for k := range n.LossStats {
			names = append(names, k)
		}
		slices.Sort(names)
		s.add("Driver counters", counterList(names, func(k string) uint64 { return n.LossStats[k] }))
	}
	return s
}

// iommuText renders the IOMMU group and its default domain type.
func iommuText(n *nicdiag.NIC) string {
	var parts []string
	if n.IOMMUGroup != "" {
		parts = append(parts, "group "+text.Clip(n.IOMMUGroup))
	}
	if n.IOMMUDomain != "" {
		parts = append(parts, text.Clip(n.IOMMUDomain))
	}
	return strings.Join(parts, ", ")
}

// hostSection is what the host adds to the NIC's picture: whether it is a
// virtual machine, whether it forwards, and how the CPUs the NIC's IRQs
// land on scale their frequency.
func hostSection(h *nicdiag.Host, q *irq.NICQueues) showSection {
	s := showSection{Title: "Host"}
	s.add("Platform", platformText(h.Platform))
	if f := h.Forwarding; f != nil {
		var parts []string
		if f.IPv4 != nil {
			parts = append(parts, "ipv4 "+onOff(*f.IPv4))
		}
		if f.IPv6 != nil {
			parts = append(parts, "ipv6 "+onOff(*f.IPv6))
		}
		s.add("Forwarding", strings.Join(parts, ", "))
	}
	s.add("IRQ CPUs", irqCPUsText(h.CPUs, q))
	return s
}

// platformText says whether the host is a VM, and on what evidence; ""
// when nothing was read.
func platformText(p nicinfo.Platform) string {
	var ev []string
	if p.CPUFlag {
		ev = append(ev, "hypervisor CPU flag")
	}
	if dmi := strings.TrimSpace(text.Clip(p.SysVendor) + " " + text.Clip(p.ProductName)); dmi != "" {
		ev = append(ev, "DMI "+dmi)
	}
	if p.HypervisorType != "" {
		ev = append(ev, "/sys/hypervisor "+text.Clip(p.HypervisorType))
	}
	var s string
	switch {
	case p.VM && p.Hypervisor != "":
		s = text.Clip(p.Hypervisor) + " virtual machine"
	case p.VM:
		s = "virtual machine (hypervisor unknown)"
	case len(ev) > 0 || p.CPUs > 0:
		s = "no virtual machine seen"
		if p.CPUs > 0 && !p.CPUFlag {
			ev = append([]string{"no hypervisor CPU flag"}, ev...)
		}
	default:
		return ""
	}
	if len(ev) > 0 {
		s += " (" + strings.Join(ev, ", ") + ")"
	}
	return s
}

// irqCPUsText lists the CPUs the NIC's queue IRQs land on, with their
// cores and frequency scaling where read ("7 (1 core): governor
// powersave, EPP balance_performance"); "" when nothing about them is
// known beyond the queue table.
func irqCPUsText(c *irq.CPUs, q *irq.NICQueues) string {
	if c == nil || q == nil {
		return ""
	}
	var ids []int
	for _, x := range q.Queues {
		ids = append(ids, x.CPUs...)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return ""
	}
	type scaling struct{ gov, epp string }
	var order []scaling
	by := map[scaling][]int{}
	for _, id := range ids {
		cpu := c.Get(id)
		if cpu == nil || cpu.Governor == "" && cpu.EPP == "" {
			continue
		}
		k := scaling{text.Clip(cpu.Governor), text.Clip(cpu.EPP)}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], id)
	}
	smt := c.SMTKnown()
	if len(order) == 0 && !smt {
		return ""
	}
	s := irq.FormatCPUList(ids)
	if smt {
		n := c.Cores(ids)
		s += fmt.Sprintf(" (%d core%s)", n, plural(n))
	}
	var groups []string
	for _, k := range order {
		var g []string
		if k.gov != "" {
			g = append(g, "governor "+k.gov)
		}
		if k.epp != "" {
			g = append(g, "EPP "+k.epp)
		}
		t := strings.Join(g, ", ")
		if len(order) > 1 {
			t += " on " + irq.FormatCPUList(by[k])
		}
		groups = append(groups, t)
	}
	if len(groups) > 0 {
		s += ": " + strings.Join(groups, "; ")
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
