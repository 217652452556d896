package nicdiag

import (
	"errors"
	"fmt"
	"github.com/nicdiag/nicdiag/internal/unit"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// PartLossTotals names a NIC's receive and drop counters
// (/sys/class/net/IFACE/statistics) in Host.Unread: nic.ring_drops was not
// judged.
const PartLossTotals Part = "drop counters (nic.ring_drops)"

// The thresholds of the rings check.
const (
	// ringDropsMin and ringDropsShare: NIC drops since boot that warn, at
	// least this many packets and this share of the packets offered
	// (received + dropped). One in 10^4 is where loss starts to cap TCP:
	// by Mathis et al. a flow's rate is at most MSS/RTT × 1.22/√p, so at
	// p = 10^-4 one flow of 1448-byte segments at 0.5 ms RTT tops out
	// near 2.8 Gb/s, at 10 ms near 140 Mb/s. The floor of 1000 packets
	// keeps out what a NIC drops while it resets (every `ethtool -G`,
	// `-L` and link flap restarts the rings) and a host that has
	// received little.
	ringDropsMin   = 1000
	ringDropsShare = 1e-4
	// ringHoldSeconds: an RX ring that holds less than this at line rate
	// of full-size frames (1518 bytes) is small. When the receive softirq
	// is handed to ksoftirqd, the packets wait for a scheduler slot (the
	// EEVDF base slice is 0.75 ms × (1 + log2 CPUs), at least 0.75 ms);
	// a ring shorter than 1 ms at line rate can overflow in one such
	// wait. At 1 Gb/s the usual default of 256 descriptors holds 3.1 ms.
	ringHoldSeconds = 1e-3
	// ringFrameBytes is the frame the hold time is counted in.
	ringFrameBytes = budget.DefaultFrameBytes
	// ringWireBytes is that frame on the wire: preamble, SFD and
	// inter-frame gap added.
	ringWireBytes = ringFrameBytes + 20
)

// ringsCheck: a NIC that dropped received packets itself since the driver
// started counting (nic.ring_drops, warn), with the fix that fits its RX
// ring: raise it to the maximum, or, at the maximum already, drain it
// faster; an RX ring that holds less than 1 ms of full-size frames at
// line rate on a NIC that has not dropped (nic.ring_small, info: it costs
// nothing until it drops). The drop counters are rx_missed_errors,
// rx_fifo_errors and rx_over_errors of the interface statistics and the
// driver's loss counters of class nic (irq.LossClassOf), the largest of
// them (they overlap: igb's rx_no_buffer_count and rx_missed_errors can
// count one frame twice). rx_dropped is not among them: the kernel adds
// its own drops to it (frames of a protocol no one listens to, such as
// LLDP), so it climbs on an idle host.
var ringsCheck = Checker{
	Name:  "rings",
	Codes: []finding.Code{finding.NICRingDrops, finding.NICRingSmall},
	Run:   func(h *Host) []finding.Finding { return perNIC(h, h.rings) },
}

// keptStat is what the live ethtool source keeps of the driver's
// statistics: its loss counters (irq.IsLossStat) and damaged-frame
// counters (nicinfo.IsLinkErrorStat).
func keptStat(name string) bool { return irq.IsLossStat(name) || nicinfo.IsLinkErrorStat(name) }

// keepLossStats makes the live host's ethtool source keep the driver's
// loss and damaged-frame counters (keptStat) unless WithEthtool chose the source;
// the returned function closes it.
func (o *options) keepLossStats() func() {
	if o.ethSet || !fsroot.New(o.root).Live() {
		return func() {}
	}
	src := nicinfo.LiveEthtool(nicinfo.KeepStats(keptStat))
	o.ethtool, o.ethSet = src, true
	return func() {
		if c, ok := src.(io.Closer); ok {
			c.Close()
		}
	}
}

// readLossTotals reads each selected netdev's receive and loss counters.
// A NIC without statistics files (a hand-made tree) has none and that is
// no error; other failures are in Unread for a physical NIC.
func (h *Host) readLossTotals(o options) {
	for _, n := range h.Selected {
		if !n.Netdev() {
			continue
		}
		if l, err := nicinfo.ReadLinkErrors(n.Name, n.LossStats, o.nicinfo()...); err == nil {
			n.LinkErrors = l
		} else if !errors.Is(err, fs.ErrNotExist) && n.Physical() {
			h.unread(PartLinkErrors, n.ID(), err)
		}
		t, err := irq.ReadLossTotals(n.Name, n.LossStats, o.irq()...)
		switch {
		case err == nil:
			n.LossTotals = t
		case errors.Is(err, fs.ErrNotExist) || !n.Physical():
		default:
			h.unread(PartLossTotals, n.ID(), err)
		}
	}
}

// nicDrops are the NIC's drops since boot: the largest drop counter.
type nicDrops struct {
	dropped  uint64
	counter  string            // the largest counter's name, source: prefix removed
	counters map[string]uint64 // every drop counter read, by LossTotal.Name
	offered  float64           // received + dropped
	share    float64           // dropped / offered; 0 when nothing was offered
}

// ringDropCounters are the interface statistics that count receive drops at
// the NIC.
var ringDropCounters = []string{"sysfs:rx_missed_errors", "sysfs:rx_fifo_errors", "sysfs:rx_over_errors"}

// drops sums up t's drop counters; ok is false without any.
func drops(t *irq.LossTotals) (d nicDrops, ok bool) {
	if t == nil {
		return d, false
	}
	d.counters = map[string]uint64{}
	for _, l := range t.Losses {
		nic := l.Class == irq.LossNIC && strings.HasPrefix(l.Name, "ethtool:")
		if !nic && !slices.Contains(ringDropCounters, l.Name) {
			continue
		}
		d.counters[l.Name] = l.Value
		if l.Value > d.dropped || d.counter == "" {
			d.dropped, d.counter = l.Value, l.Name
		}
	}
	if len(d.counters) == 0 {
		return d, false
	}
	_, d.counter, _ = strings.Cut(d.counter, ":")
	d.offered = float64(t.RXPackets) + float64(d.dropped)
	if d.offered > 0 {
		d.share = float64(d.dropped) / d.offered
	}
	return d, true
}

// ringState is what the check knows of the NIC's RX ring: nil rings when
// the driver gave none (or a maximum of 0, which says nothing).
func ringState(r *nicinfo.Rings) (rx, limit int, ok bool) {
	if r == nil || r.RXMax <= 0 {
		return 0, 0, false
	}
	return min(r.RX, r.RXMax), r.RXMax, true
}

// holdSeconds is how long rx descriptors last at speed Mb/s of full-size
// frames (one frame per descriptor).
func holdSeconds(rx int, speedMbps int) float64 {
	return float64(rx) * ringWireBytes * 8 / (float64(speedMbps) * 1e6)
}

// ringFor is the smallest power of two (capped at max) of descriptors that
// holds ringHoldSeconds at speed Mb/s: a size every driver accepts (they
// round to multiples of 8 or 16, or to powers of two).
func ringFor(speedMbps, limit int) int {
	need := math.Ceil(ringHoldSeconds * float64(speedMbps) * 1e6 / (ringWireBytes * 8))
	if need >= float64(limit) {
		return limit
	}
	n := 1 << bits.Len(uint(max(need, 8))-1)
	return min(n, limit)
}

// rings judges one NIC.
func (h *Host) rings(n *NIC) (finding.Finding, bool) {
	if !n.Netdev() {
		return finding.Finding{}, false
	}
	rx, rxMax, haveRing := ringState(n.Rings)
	ev := map[string]string{"counted": "since the driver started counting (boot or driver load)"}
	if haveRing {
		ev["rx_ring"], ev["rx_ring_max"] = strconv.Itoa(n.Rings.RX), strconv.Itoa(rxMax)
		ev["tx_ring"], ev["tx_ring_max"] = strconv.Itoa(n.Rings.TX), strconv.Itoa(n.Rings.TXMax)
	}
	d, haveDrops := drops(n.LossTotals)
	if haveDrops {
		ev["rx_packets"] = strconv.FormatUint(n.LossTotals.RXPackets, 10)
		ev["dropped"] = strconv.FormatUint(d.dropped, 10)
		if d.dropped > 0 {
			ev["drop_counter"] = d.counter
		}
		ev["drop_share_pct"] = strings.TrimSuffix(pct(d.share), " %")
		for name, v := range d.counters {
			ev[name] = strconv.FormatUint(v, 10)
		}
		if v, ok := n.LossTotals.Get("sysfs:rx_dropped"); ok {
			ev["sysfs:rx_dropped"] = strconv.FormatUint(v, 10)
		}
	}
	// Unknown or nominal: no hold time; no carrier yet: the port's fastest
	// mode, which it will run at once it has one.
	speed, basis := h.judgedSpeed(n)
	if speed == 0 && n.Virtual && n.Link.SpeedMbps > 0 && h.ident[n.Name] == nil {
		// A paravirtual NIC's speed is nominal, but its ring still empties
		// at the rate the hypervisor delivers: judged, info as always.
		speed, basis = n.Link.SpeedMbps, "the paravirtual NIC's nominal speed"
	}
	if speed > 0 {
		ev["link_mbps"] = strconv.Itoa(speed)
		if basis != "" {
			ev["link_mbps"] = strconv.Itoa(n.Link.SpeedMbps)
			ev["judged_mbps"] = strconv.Itoa(speed)
		}
	}
	if speed > 0 && haveRing {
		ev["rx_ring_ms"] = strconv.FormatFloat(1e3*holdSeconds(rx, speed), 'f', 2, 64)
	}

	if haveDrops && d.dropped >= ringDropsMin && d.share >= ringDropsShare {
		return h.ringDrops(n, d, rx, rxMax, haveRing, ev), true
	}
	if !haveRing || speed == 0 || rx >= rxMax || holdSeconds(rx, speed) >= ringHoldSeconds {
		return finding.Finding{}, false
	}
	want := ringFor(speed, rxMax)
	so := "its drop counters were not read"
	switch {
	case haveDrops && d.dropped == 0:
		so = "it has dropped no packets since boot"
	case haveDrops:
		so = fmt.Sprintf("it has dropped %d packets since boot (%s of those offered; %d and %s warn)", d.dropped, pct(d.share), ringDropsMin, pct(ringDropsShare))
	}
	return finding.Finding{
		Code:     finding.NICRingSmall,
		Severity: finding.Info,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s's RX ring of %d descriptors (the NIC takes up to %d) holds %.2f ms of %d-byte frames at %s, under the %g ms a stalled receive softirq can wait for a CPU; %s, so it has cost nothing yet.",
			n.Name, rx, rxMax, 1e3*holdSeconds(rx, speed), ringFrameBytes, atSpeed(speed, basis), 1e3*ringHoldSeconds, so),
		Fix: fmt.Sprintf("Only if it drops under load (`nicdiag monitor` shows run.nic_drops): `ethtool -G %s rx %d` (%.1f ms at line rate); keep it across reboots with RxBufferSize=%d in the [Link] section of a systemd .link file for the NIC (or NetworkManager's ethtool.ring-rx). A longer ring costs memory and cache, not throughput.",
			n.Name, want, 1e3*holdSeconds(want, speed), want),
		Evidence: ev,
	}, true
}

// ringDrops is nic.ring_drops for a NIC that dropped d.
func (h *Host) ringDrops(n *NIC, d nicDrops, rx, rxMax int, haveRing bool, ev map[string]string) finding.Finding {
	var ring, fix string
	consumer := fasterConsumer(n)
	switch {
	case !haveRing:
		ring = "its ring sizes could not be read"
		fix = fmt.Sprintf("`ethtool -g %s` shows the RX ring and its maximum: below the maximum, raise it (`ethtool -G %s rx MAX`); at the maximum, %s", n.Name, n.Name, consumer)
	case rx < rxMax:
		ring = fmt.Sprintf("its RX ring at %d of the %d descriptors the NIC takes", rx, rxMax)
		fix = fmt.Sprintf("Raise the RX ring to its maximum: `ethtool -G %s rx %d` (the link resets once); keep it across reboots with RxBufferSize=%d in the [Link] section of a systemd .link file for the NIC (or NetworkManager's ethtool.ring-rx). If it still drops at the maximum, %s",
			n.Name, rxMax, rxMax, consumer)
	default:
		ring = fmt.Sprintf("its RX ring already at its maximum of %d descriptors", rxMax)
		fix = "A bigger ring is not possible: " + consumer
	}
	if b := n.Budget; b != nil && pathBound(b) && b.CeilingMbps.Nominal < b.EthernetMbps {
		fix += fmt.Sprintf(" Here the PCIe path carries less than line rate (pcie.bottleneck, about %s of %s Mb/s): near line rate the card drops what it cannot move over PCIe, which neither a bigger ring nor more queues prevents.",
			mbps(b.CeilingMbps.Nominal), mbps(b.EthernetMbps))
	}
	return finding.Finding{
		Code:     finding.NICRingDrops,
		Severity: finding.Warn,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s dropped %d received packets in the NIC since boot (%s of the %s offered; the largest drop counter is %s), with %s. Counted since boot, these drops say nothing about when: `nicdiag monitor` during a run shows whether it still drops.",
			n.Name, d.dropped, pct(d.share), unit.Count(d.offered), d.counter, ring),
		Fix:      fix,
		Evidence: ev,
	}
}

// fasterConsumer is the fix for drops with the ring at its maximum: drain
// it faster.
func fasterConsumer(n *NIC) string {
	return "make the receive side drain the ring faster: " + drainWays(n) + "."
}

// drainWays lists the ways to drain a NIC's receive rings faster: more
// queues, their IRQs spread, shorter interrupt moderation.
func drainWays(n *NIC) string {
	var ways []string
	if c := n.NIC.Queues.Channels; c != nil {
		switch {
		case c.MaxCombined > c.Combined && c.Combined > 0:
			ways = append(ways, fmt.Sprintf("more queues (`ethtool -L %s combined %d`)", n.Name, c.MaxCombined))
		case c.MaxRX > c.RX && c.RX > 0:
			ways = append(ways, fmt.Sprintf("more queues (`ethtool -L %s rx %d`)", n.Name, c.MaxRX))
		}
	}
	if len(ways) == 0 {
		ways = append(ways, fmt.Sprintf("more queues where the NIC has them (`ethtool -l %s`)", n.Name))
	}
	ways = append(ways, "their IRQs spread over cores that have time (irqbalance, or /proc/irq/N/smp_affinity_list; RPS for a single-queue NIC)",
		fmt.Sprintf("shorter interrupt moderation so the ring is drained sooner (`ethtool -C %s rx-usecs 8`, or adaptive-rx on)", n.Name))
	return strings.Join(ways, ", ")
}

// pct renders a share as a percentage (unit.Share): "0.16 %", "37 %".
func pct(share float64) string { return unit.Share(share) }
