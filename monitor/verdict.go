package monitor

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/pcie"
)

// Bound names the layer that set the ceiling of a run.
type Bound string

// Bounds a Verdict names, and the layers of its Ceilings.
const (
	BoundEthernet Bound = "ethernet"  // a port at its line rate
	BoundPCIe     Bound = "pcie"      // a PCIe hop of the path full
	BoundTunnel   Bound = "tunnel"    // a Thunderbolt or USB4 tunnel full
	BoundUSB      Bound = "usb"       // the USB bus a NIC sits on full
	BoundCore     Bound = "core"      // a CPU saturated, mostly by packet work
	BoundCommand  Bound = "command"   // a thread of the command saturated its CPU
	BoundNICDrops Bound = "nic_drops" // the NIC dropped received packets, no ceiling reached
	BoundPause    Bound = "pause"     // pause frames throttled one end, no ceiling reached
	// BoundOutside: nothing in this host was near its limit: the peer,
	// the network, the load generator's settings, or the processor of a
	// card that is a computer of its own.
	BoundOutside Bound = "outside_host"
	BoundUnknown Bound = "unknown" // no traffic, or nothing to judge it by
	// LayerCard is a ceiling only, never a verdict: what a misidentified
	// card (a router on a PCIe card) is known to move. It is outside the
	// host.
	LayerCard Bound = "card"
)

// Thresholds of the run verdict. They are chosen not to cry wolf: a run at
// 60 % of every ceiling with idle cores is outside_host, whatever its
// absolute number.
const (
	// boundShare: a ceiling bound the run when the run moved at least this
	// share of it.
	boundShare = 0.90
	// physicalEdge: a physical ceiling (ethernet, pcie, tunnel, usb)
	// within this share of the busiest CPU is named first: a full link
	// stops any core from doing more.
	physicalEdge = 0.02
	// dropShare and dropPerS: NIC drops count when at least this share of
	// the packets offered and at least dropPerS per second.
	dropShare = 0.001
	dropPerS  = 10.0
	// pausePerS: pause frames count at this rate or more.
	pausePerS = 10.0
	// ownCPUShare: a CPU counts as the run's when the run's own work on it,
	// irq+softirq and the command's threads, is at least this share of its
	// busy time: the command's when its threads are the larger part, a
	// packet core otherwise.
	ownCPUShare = 0.5
	// saturatedOwnPct: with every CPU busy, the host bounds the run only
	// when the run's packet work and command threads add up to at least
	// this much of one CPU.
	saturatedOwnPct = 25.0
	// hotPacketPct: a core at this much irq+softirq has no other work to
	// give up; below it, the sentence says what it would carry at 100 %.
	hotPacketPct = 90.0
	// minMbps and minPPS: below both at its busiest, a run moved nothing
	// worth judging.
	minMbps = 1.0
	minPPS  = 1000.0
)

// Verdict is the judgement on a run: what it achieved against each
// ceiling at its own frame size and direction mix, and which one bound it.
// Mb/s are Ethernet frame bits (header and FCS, no preamble or gap), the
// budget model's unit. The JSON field names are a stable contract.
type Verdict struct {
	Bound Bound `json:"bound"`
	// Limit is the ceiling the run reached (nil for outside_host, unknown,
	// nic_drops and pause); Next is the one it would reach next.
	Limit *Ceiling `json:"limit,omitempty"`
	Next  *Ceiling `json:"next,omitempty"`
	// AchievedMbps and CeilingMbps are Limit's (else the nearest
	// ceiling's), per direction: the larger of the two directions of the
	// NICs it covers.
	AchievedMbps float64  `json:"achieved_mbps"`
	CeilingMbps  *float64 `json:"ceiling_mbps"`
	Share        *float64 `json:"share"`
	// Summary is the verdict in a sentence.
	Summary string `json:"summary"`
	// Ceilings are every ceiling judged, nearest first.
	Ceilings []Ceiling `json:"ceilings"`
	// Traffic is each NIC and direction over the active samples.
	Traffic []Traffic `json:"traffic"`
	// Losses are the loss counters that counted, per NIC.
	Losses []Loss `json:"losses,omitempty"`
	// BusiestCPU is the CPU with the most busy time in the window.
	BusiestCPU *CPULoad `json:"busiest_cpu,omitempty"`
	// Samples is the number of samples, ActiveSamples of them with
	// traffic (at least half the busiest sample's), ActiveSeconds their
	// length: the means are over those.
	Samples       int     `json:"samples"`
	ActiveSamples int     `json:"active_samples"`
	ActiveSeconds float64 `json:"active_seconds"`
	// Findings are the verdict's own finding and those of losses and link
	// changes beside it.
	Findings []finding.Finding `json:"findings"`
}

// Ceiling is one limit judged at the run's mix.
type Ceiling struct {
	Layer Bound `json:"layer"`
	// Subject is the NIC (ethernet, usb), the upstream port of the hop
	// (pcie, tunnel), "cpu N" (core), "TID (COMM) on cpu N" (command).
	Subject string   `json:"subject"`
	NICs    []string `json:"nics"`
	// What says it in words: "the 2.5 GT/s x1 link at 0000:00:1c.0".
	What string `json:"what"`
	// Direction is rx or tx for a port; up or down for a PCIe hop.
	Direction string `json:"direction,omitempty"`
	// AchievedMbps is what the NICs it covers moved, per direction (the
	// larger direction); CeilingMbps what they would move with it full at
	// the same mix; Share the first over the second.
	AchievedMbps float64 `json:"achieved_mbps"`
	CeilingMbps  float64 `json:"ceiling_mbps"`
	Share        float64 `json:"share"`
	// CPU and TID locate a core or command ceiling.
	CPU *int `json:"cpu,omitempty"`
	TID int  `json:"tid,omitempty"`
}

// Traffic is one NIC in one direction over the active samples.
type Traffic struct {
	NIC            string  `json:"nic"`
	Direction      string  `json:"direction"` // rx or tx
	FramesPerS     float64 `json:"frames_per_s"`
	AchievedMbps   float64 `json:"achieved_mbps"`
	MeanFrameBytes float64 `json:"mean_frame_bytes"`
	// CeilingMbps is what this NIC would move in this direction with its
	// nearest ceiling full, at the same mix; CeilingLayer names it.
	CeilingMbps  *float64 `json:"ceiling_mbps"`
	CeilingLayer Bound    `json:"ceiling_layer,omitempty"`
}

// Loss is one NIC's packets lost or held back, by class, over the run.
type Loss struct {
	NIC   string        `json:"nic"`
	Class irq.LossClass `json:"class"`
	// Counters names the counters summed.
	Counters []string `json:"counters"`
	Count    float64  `json:"count"`
	PerS     float64  `json:"per_s"`
	// OfferedShare, for NIC drops, is Count over the packets received
	// plus Count.
	OfferedShare *float64 `json:"offered_share,omitempty"`
}

// CPULoad is a CPU's mean load over the active samples.
type CPULoad struct {
	CPU        int      `json:"cpu"`
	BusyPct    float64  `json:"busy_pct"`
	PacketPct  float64  `json:"packet_pct"` // irq+softirq
	IRQPct     *float64 `json:"irq_pct"`
	SoftIRQPct float64  `json:"softirq_pct"`
	UserPct    float64  `json:"user_pct"`
	SystemPct  float64  `json:"system_pct"`
	StealPct   float64  `json:"steal_pct"`
	// MHz is its mean clock over the samples that read it, MaxMHz its
	// maximum; nil where cpufreq was not read (the sampler reads the four
	// busiest CPUs' only).
	MHz    *float64 `json:"mhz,omitempty"`
	MaxMHz *float64 `json:"max_mhz,omitempty"`
}

// Judge returns the verdict on a run from its samples and the Limits of
// its NICs (see Limits): the ceilings at the run's own frame sizes and
// direction mix, the layer that bound it, and its findings (the run.*
// codes of finding). The samples' means are taken over the active ones,
// those that moved at least half as much as the busiest.
func Judge(samples []irq.Sample, limits []Limits) Verdict {
	w := reduce(samples)
	v := Verdict{Samples: w.samples, ActiveSamples: w.active, ActiveSeconds: w.seconds}
	v.Traffic = traffic(w)
	v.Losses = losses(w)
	v.BusiestCPU = busiest(w)
	if w.active == 0 || (w.peakMbps < minMbps && w.peakPPS < minPPS) {
		v.Bound = BoundUnknown
		// No finding: an idle host is no news.
		v.Summary = fmt.Sprintf("the sampled NICs moved almost nothing (at most %.2f Mb/s, %.0f frames/s, in %d samples): there is no run to judge", w.peakMbps, w.peakPPS, w.samples)
		return v
	}
	limits = cleanLimits(limits)
	lim := limitsByName(limits)
	v.Ceilings = append(v.Ceilings, ethernetCeilings(w, lim)...)
	v.Ceilings = append(v.Ceilings, pcieCeilings(w, limits)...)
	v.Ceilings = append(v.Ceilings, usbCeilings(w, lim)...)
	v.Ceilings = append(v.Ceilings, cpuCeilings(w)...)
	v.Ceilings = append(v.Ceilings, cardCeilings(w, limits)...)
	// A ceiling whose numbers overflowed (absurd counters against a tiny
	// capacity) says nothing and would make the verdict unencodable.
	v.Ceilings = slices.DeleteFunc(v.Ceilings, func(c Ceiling) bool {
		return !finite(c.Share) || !finite(c.AchievedMbps) || !finite(c.CeilingMbps)
	})
	sortCeilings(v.Ceilings)
	fillTrafficCeilings(v.Traffic, v.Ceilings)
	v.decide(w, limits)
	v.Findings = append(v.Findings, v.verdictFinding())
	v.Findings = append(v.Findings, v.lossFindings()...)
	v.Findings = append(v.Findings, linkFindings(w, limits)...)
	v.Findings = append(v.Findings, placementFindings(w, limits, v.Bound)...)
	v.Findings = append(v.Findings, clockFindings(w, v.Limit)...)
	finding.Sort(v.Findings)
	return v
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// maxLimitMbps bounds a rate in Limits (1 Pb/s); cleanLimits drops rates
// above it, negative, NaN or infinite, as unknown.
const maxLimitMbps = 1e9

// cleanLimits returns ls with each rate that is not one (see
// maxLimitMbps) set to 0, unknown. ls itself is not changed.
func cleanLimits(ls []Limits) []Limits {
	out := slices.Clone(ls)
	for i := range out {
		l := &out[i]
		for _, p := range []*float64{&l.PortMbps, &l.USBMbps, &l.MovesMbps} {
			if !(*p > 0 && *p <= maxLimitMbps) {
				*p = 0
			}
		}
	}
	return out
}

// physical reports whether a layer is a physical path ceiling.
func physical(b Bound) bool {
	return b == BoundEthernet || b == BoundPCIe || b == BoundTunnel || b == BoundUSB
}

// sortCeilings orders ceilings nearest first; a physical ceiling within
// physicalEdge of a CPU one goes first.
func sortCeilings(cs []Ceiling) {
	slices.SortStableFunc(cs, func(a, b Ceiling) int {
		if d := a.Share - b.Share; math.Abs(d) > physicalEdge || physical(a.Layer) == physical(b.Layer) {
			if c := cmp.Compare(b.Share, a.Share); c != 0 {
				return c
			}
			return cmp.Compare(a.Subject, b.Subject)
		}
		if physical(a.Layer) {
			return -1
		}
		return 1
	})
}

// decide sets Bound, Limit, Next, the numbers and the summary.
func (v *Verdict) decide(w *window, limits []Limits) {
	var host []Ceiling // ceilings inside the host
	for _, c := range v.Ceilings {
		if c.Layer != LayerCard {
			host = append(host, c)
		}
	}
	if len(host) > 0 && host[0].Share >= boundShare {
		c := host[0]
		v.Bound, v.Limit = c.Layer, &c
		if len(host) > 1 {
			n := host[1]
			v.Next = &n
		}
		v.setNumbers(c)
		v.Summary = v.boundSentence(w)
		return
	}
	if len(host) > 0 {
		n := host[0]
		v.Next = &n
		v.setNumbers(n)
	} else {
		v.AchievedMbps = maxDirMbps(w, nicNames(w))
	}
	switch drops, pause, allowance := v.lossOf(irq.LossNIC), v.pauseLoss(), v.lossOf(irq.LossAllowance); {
	case drops != nil:
		v.Bound = BoundNICDrops
		v.Summary = fmt.Sprintf("%s dropped %s of the packets it was offered (%s/s, %s) before the stack saw them, while no ceiling was reached (%s): the run lost packets at the NIC",
			drops.NIC, pct(*drops.OfferedShare), num(drops.PerS), strings.Join(drops.Counters, ", "), v.nearest())
	case pause != nil:
		v.Bound = BoundPause
		who := "the peer throttled this host: it sent pause frames asking it to stop sending"
		if pause.Class == irq.LossPauseTX {
			who = "this host throttled the peer: its NIC sent pause frames because it could not take more"
		}
		v.Summary = fmt.Sprintf("%s counted %s pause frames/s (%s) while no ceiling was reached (%s): %s",
			pause.NIC, num(pause.PerS), strings.Join(pause.Counters, ", "), v.nearest(), who)
	case allowance != nil:
		v.Bound = BoundOutside
		v.Summary = fmt.Sprintf("%s exceeded its cloud allowance %s times (%s) while nothing in this host was near its limit (%s): the platform, outside this host, shaped the run",
			allowance.NIC, num(allowance.Count), strings.Join(allowance.Counters, ", "), v.nearest())
	case len(v.Ceilings) == 0 && v.BusiestCPU == nil:
		// Only nothing at all is unknown: a card's known rate, or CPUs
		// that were read and not saturated, are something to judge by.
		v.Bound = BoundUnknown
		v.Summary = fmt.Sprintf("%s moved %s, but nothing is known to judge it against: no line rate, PCIe path or CPU load was read", subjectOf(nicNames(w)), v.movedText(w, nicNames(w)))
	default:
		v.Bound = BoundOutside
		v.Summary = fmt.Sprintf("%s moved %s; nothing in this host was near its limit (%s): the limit is outside this host: %s",
			subjectOf(nicNames(w)), v.movedText(w, nicNames(w)), v.nearest(), outsideWhat(w, limits))
	}
}

// setNumbers takes the verdict's numbers from c.
func (v *Verdict) setNumbers(c Ceiling) {
	v.AchievedMbps = c.AchievedMbps
	ceil, share := c.CeilingMbps, c.Share
	v.CeilingMbps, v.Share = &ceil, &share
}

// outsideWhat says what outside the host is the likely limit.
func outsideWhat(w *window, limits []Limits) string {
	for _, l := range limits {
		if l.RealDevice != "" && w.nic(l.NIC) != nil {
			what := fmt.Sprintf("%s is probably %s, not the chip its PCI ID names", l.NIC, strings.TrimSuffix(l.RealDevice, " emulating it"))
			if l.BoundBy != "" {
				what += ", and is bound by " + l.BoundBy
			}
			if l.MovesMbps > 0 {
				what += fmt.Sprintf(" (the card is known to move %s; this run moved %s of it)", mbps(l.MovesMbps), pct(maxDirMbps(w, nicNames(w))/l.MovesMbps))
			}
			return what
		}
	}
	return "the peer, the network between, or the load generator's own settings (a rate limit, a window, too few streams)"
}

// nearest names the nearest ceiling and its share, and the busiest CPU.
func (v *Verdict) nearest() string {
	var parts []string
	for _, c := range v.Ceilings {
		if c.Layer != LayerCard {
			parts = append(parts, fmt.Sprintf("the nearest ceiling, %s, at %s", c.What, pct(c.Share)))
			break
		}
	}
	if b := v.BusiestCPU; b != nil {
		parts = append(parts, fmt.Sprintf("the busiest core, CPU %d, %.0f %% busy", b.CPU, b.BusyPct))
	}
	if len(parts) == 0 {
		return "no ceiling is known"
	}
	return strings.Join(parts, "; ")
}

// boundSentence words a run that reached its Limit.
func (v *Verdict) boundSentence(w *window) string {
	c := v.Limit
	moved := v.movedText(w, c.NICs)
	var s string
	switch c.Layer {
	case BoundCore:
		s = fmt.Sprintf("%s was %s busy", cpuName(*c.CPU), pct(c.Share))
		if u := w.cpu(*c.CPU); u != nil {
			s += fmt.Sprintf(", %.0f %% in irq+softirq,", u.packet)
		}
		s += fmt.Sprintf(" while %s moved %s: that core bound this run", subjectOf(c.NICs), moved)
		if !w.accounted {
			s += " (this kernel does not account hard-IRQ time: it hides in the time of what it interrupted, and irq+softirq reads low)"
		}
		if u := w.cpu(*c.CPU); u != nil && u.packet >= 1 && u.packet >= ownCPUShare*u.busy && u.packet < hotPacketPct {
			s += fmt.Sprintf(" (with only packet work on it, it would carry about %s)", mbps(c.AchievedMbps*100/u.packet))
		}
	case BoundCommand:
		s = c.What
		if t := w.thread(c.TID); t != nil {
			s += fmt.Sprintf(" used %.0f %% of a CPU (%.0f %% user, %.0f %% system)", t.busy(), t.user, t.system)
			if u := w.cpu(*c.CPU); u != nil {
				s += fmt.Sprintf(" with %s %.0f %% busy", cpuName(*c.CPU), u.busy+u.steal)
			}
		}
		s += fmt.Sprintf(" while %s moved %s: the command bound this run, not the network path", subjectOf(c.NICs), moved)
	default:
		s = fmt.Sprintf("%s moved %s, %s of the %s %s carries at this run's mix: %s bound this run",
			subjectOf(c.NICs), moved, pct(c.Share), mbps(c.CeilingMbps), c.What, layerWords(c.Layer))
		if b := v.BusiestCPU; b != nil {
			s += fmt.Sprintf("; the busiest core was %.0f %% busy", b.BusyPct)
		}
	}
	if n := v.Next; n != nil {
		s += fmt.Sprintf(". Next: %s at %s", n.What, pct(n.Share))
	}
	return s
}

func layerWords(b Bound) string {
	switch b {
	case BoundEthernet:
		return "the Ethernet link"
	case BoundPCIe:
		return "the PCIe path"
	case BoundTunnel:
		return "the tunnel"
	case BoundUSB:
		return "the USB bus"
	}
	return string(b)
}

// movedText is "1378 Mb/s per direction" or "940 Mb/s rx and 38 Mb/s tx"
// for the NICs named, over the active samples.
func (v *Verdict) movedText(w *window, names []string) string {
	var rx, tx, rxF, txF float64
	for _, n := range names {
		if u := w.nic(n); u != nil {
			rx += frameBits(u.rxBPS, u.rxPPS) / 1e6
			tx += frameBits(u.txBPS, u.txPPS) / 1e6
			rxF += u.rxPPS
			txF += u.txPPS
		}
	}
	hi := math.Max(rx, tx)
	if hi > 0 && math.Abs(rx-tx) <= 0.05*hi {
		return fmt.Sprintf("%s per direction (%s frames/s)", mbps(hi), num(math.Max(rxF, txF)))
	}
	return fmt.Sprintf("%s rx and %s tx (%s and %s frames/s)", mbps(rx), mbps(tx), num(rxF), num(txF))
}

// maxDirMbps is the larger direction of the NICs named, in frame Mb/s.
func maxDirMbps(w *window, names []string) float64 {
	var rx, tx float64
	for _, n := range names {
		if u := w.nic(n); u != nil {
			rx += frameBits(u.rxBPS, u.rxPPS) / 1e6
			tx += frameBits(u.txBPS, u.txPPS) / 1e6
		}
	}
	return math.Max(rx, tx)
}

func nicNames(w *window) []string {
	var out []string
	for _, u := range w.nics {
		if u.rxPPS+u.txPPS > 0 {
			out = append(out, u.name)
		}
	}
	if len(out) == 0 {
		for _, u := range w.nics {
			out = append(out, u.name)
		}
	}
	return out
}

func subjectOf(names []string) string {
	if len(names) == 0 {
		return "the host"
	}
	return strings.Join(names, "+")
}

func limitsByName(ls []Limits) map[string]Limits {
	m := make(map[string]Limits, len(ls))
	for _, l := range ls {
		m[l.NIC] = l
	}
	return m
}

// frameBytes is the mean frame size in bytes, FCS included, of a count.
func frameBytes(bps, pps float64) float64 {
	if pps <= 0 {
		return 0
	}
	// A few bytes counted over a fraction of a packet make no frame: the
	// mean is held to maxFrameBytes, finite.
	return math.Min(bps/pps+4, maxFrameBytes)
}

// maxFrameBytes bounds a mean frame size: no NIC counts a larger packet
// (a GSO packet counted as one is at most 64 KiB).
const maxFrameBytes = 1 << 20

// modelFrame clamps a mean frame size to what the model accepts.
func modelFrame(f float64) int {
	return int(math.Round(math.Min(math.Max(f, 64), 16384)))
}

// traffic lists each NIC and direction that moved.
func traffic(w *window) []Traffic {
	var out []Traffic
	for _, u := range w.nics {
		for _, d := range []struct {
			dir      string
			bps, pps float64
		}{{"rx", u.rxBPS, u.rxPPS}, {"tx", u.txBPS, u.txPPS}} {
			out = append(out, Traffic{NIC: u.name, Direction: d.dir, FramesPerS: d.pps,
				AchievedMbps: frameBits(d.bps, d.pps) / 1e6, MeanFrameBytes: frameBytes(d.bps, d.pps)})
		}
	}
	return out
}

// fillTrafficCeilings gives each NIC direction the nearest ceiling that
// covers it: what it would move with that ceiling full.
func fillTrafficCeilings(ts []Traffic, cs []Ceiling) {
	for i := range ts {
		t := &ts[i]
		if t.AchievedMbps <= 0 {
			continue
		}
		for _, c := range cs {
			if c.Share <= 0 || !slices.Contains(c.NICs, t.NIC) || (c.Layer == BoundEthernet && c.Direction != t.Direction) {
				continue
			}
			v := t.AchievedMbps / c.Share
			t.CeilingMbps, t.CeilingLayer = &v, c.Layer
			break
		}
	}
}

// ethernetCeilings: each port in each direction against its line rate at
// that direction's mean frame size.
func ethernetCeilings(w *window, lim map[string]Limits) []Ceiling {
	var out []Ceiling
	for _, u := range w.nics {
		l, ok := lim[u.name]
		if !ok || l.PortMbps <= 0 || l.Virtual || l.RealDevice != "" {
			continue
		}
		var best *Ceiling
		for _, d := range []struct {
			dir      string
			bps, pps float64
		}{{"rx", u.rxBPS, u.rxPPS}, {"tx", u.txBPS, u.txPPS}} {
			f := frameBytes(d.bps, d.pps)
			if f <= 0 {
				continue
			}
			f = math.Max(f, 64)
			line := l.PortMbps * f / (f + 20) // preamble, SFD and gap: 20 bytes a frame
			got := frameBits(d.bps, d.pps) / 1e6
			c := Ceiling{Layer: BoundEthernet, Subject: u.name, NICs: []string{u.name}, Direction: d.dir,
				What:         fmt.Sprintf("%s's %s link (%s at %.0f-byte frames)", u.name, mbps(l.PortMbps), mbps(line), f),
				AchievedMbps: got, CeilingMbps: line, Share: got / line}
			if best == nil || c.Share > best.Share {
				best = &c
			}
		}
		if best != nil {
			out = append(out, *best)
		}
	}
	return out
}

// hopLoad is one PCIe hop's load from every NIC crossing it.
type hopLoad struct {
	addr           string
	gts            float64
	width          int
	tunnelGbps     float64
	capBytes       float64 // per direction, bytes/s (nominal variant)
	up, down       float64 // bytes/s
	rxBits, txBits float64 // frame bits/s, for a tunnel
	nics           []string
}

// pcieCeilings solves each NIC's path at its own rx and tx frame sizes
// and adds up, hop by hop, the bytes every NIC crossing it puts on each
// link direction (docs/pcie-model.md: the per-packet costs), against the
// link's capacity. A hop's ceiling is the traffic it carries scaled until
// its busier direction is full.
func pcieCeilings(w *window, limits []Limits) []Ceiling {
	var hops []*hopLoad
	find := func(key string) *hopLoad {
		for _, h := range hops {
			if h.addr == key {
				return h
			}
		}
		h := &hopLoad{addr: key}
		hops = append(hops, h)
		return h
	}
	for _, l := range limits {
		u := w.nic(l.NIC)
		if u == nil || len(l.Links) == 0 || l.Profile == nil || u.rxPPS+u.txPPS <= 0 {
			continue
		}
		links := liveLinks(l.Links, w.pcie)
		rxHops, err1 := solveHops(links, *l.Profile, frameBytes(u.rxBPS, u.rxPPS))
		txHops, err2 := solveHops(links, *l.Profile, frameBytes(u.txBPS, u.txPPS))
		if err1 != nil || err2 != nil {
			continue
		}
		for i := range links {
			key := links[i].Addr
			if key == "" {
				key = fmt.Sprintf("%s link %d", l.NIC, i)
			}
			h := find(key)
			h.gts, h.width, h.tunnelGbps = links[i].GTs, links[i].Width, links[i].TunnelGbps
			h.capBytes = rxHops[i].CapacityGbps.Nominal * 1e9 / 8
			h.up += u.rxPPS*rxHops[i].Cost.RXUp + u.txPPS*txHops[i].Cost.TXUp
			h.down += u.rxPPS*rxHops[i].Cost.RXDown + u.txPPS*txHops[i].Cost.TXDown
			h.rxBits += frameBits(u.rxBPS, u.rxPPS)
			h.txBits += frameBits(u.txBPS, u.txPPS)
			if !slices.Contains(h.nics, l.NIC) {
				h.nics = append(h.nics, l.NIC)
			}
		}
	}
	var out []Ceiling
	for _, h := range hops {
		var share float64
		dir := "up"
		c := Ceiling{Layer: BoundPCIe, Subject: h.addr, NICs: h.nics}
		if h.tunnelGbps > 0 {
			c.Layer = BoundTunnel
			share = math.Max(h.rxBits, h.txBits) / (h.tunnelGbps * 1e9)
			if h.txBits > h.rxBits {
				dir = "down"
			}
			c.What = fmt.Sprintf("the %.0f Gb/s PCIe tunnel at %s", h.tunnelGbps, h.addr)
		} else {
			if !(h.capBytes > 0) {
				continue
			}
			share = math.Max(h.up, h.down) / h.capBytes
			if h.down > h.up {
				dir = "down"
			}
			c.What = fmt.Sprintf("the %s GT/s x%d link at %s", pcie.FormatGTs(h.gts), h.width, h.addr)
		}
		if !(share > 0) {
			continue
		}
		c.Direction = dir
		c.AchievedMbps = maxDirMbps(w, h.nics)
		c.Share = share
		c.CeilingMbps = c.AchievedMbps / share
		out = append(out, c)
	}
	return out
}

// liveLinks returns links with the speed and width each hop's upstream
// port ran at while the run was active, where it was read: a link that
// was downtrained at rest and retrained under load is judged as it ran.
func liveLinks(links []budget.LinkParams, live map[string]irq.PCIeState) []budget.LinkParams {
	out := slices.Clone(links)
	for i := range out {
		if s, ok := live[out[i].Addr]; ok && s.GTs > 0 && s.Width > 0 {
			out[i].GTs, out[i].Width = s.GTs, s.Width
		}
	}
	return out
}

// solveHops solves the path at one frame size, for its per-hop costs and
// capacities (nominal variant).
func solveHops(links []budget.LinkParams, p budget.Profile, frame float64) ([]budget.HopResult, error) {
	if frame <= 0 {
		frame = budget.DefaultFrameBytes
	}
	res, err := budget.Solve(links, p, budget.Workload{FrameBytes: modelFrame(frame), Direction: budget.Both, Ports: 1, PortMbps: 1000})
	if err != nil {
		return nil, err
	}
	if len(res.Hops) != len(links) {
		return nil, fmt.Errorf("monitor: %d hops solved for %d links", len(res.Hops), len(links))
	}
	return res.Hops, nil
}

// usbCeilings: a USB NIC against its bus. USB 2.0 (480 Mb/s) is
// half duplex: both directions share at most 13 bulk packets of 512 bytes
// per 125 µs microframe, 425.984 Mb/s. SuperSpeed buses are full duplex;
// their ceiling here is the line encoding's (8b/10b at 5 Gb/s, 128b/132b
// above), an upper bound.
func usbCeilings(w *window, lim map[string]Limits) []Ceiling {
	var out []Ceiling
	for _, u := range w.nics {
		l, ok := lim[u.name]
		if !ok || l.USBMbps <= 0 {
			continue
		}
		rx, tx := frameBits(u.rxBPS, u.rxPPS)/1e6, frameBits(u.txBPS, u.txPPS)/1e6
		c := Ceiling{Layer: BoundUSB, Subject: u.name, NICs: []string{u.name}}
		switch {
		case l.USBMbps <= 480:
			c.What = fmt.Sprintf("the %s USB 2.0 bus (%s for both directions)", mbps(l.USBMbps), mbps(425.984))
			c.Share = (rx + tx) / 425.984
		default:
			data := l.USBMbps * 128 / 132
			if l.USBMbps <= 5000 {
				data = l.USBMbps * 0.8
			}
			c.What = fmt.Sprintf("the %s USB bus (%s per direction after line coding)", mbps(l.USBMbps), mbps(data))
			c.Share = math.Max(rx, tx) / data
		}
		if !(c.Share > 0) {
			continue
		}
		c.AchievedMbps = math.Max(rx, tx)
		c.CeilingMbps = c.AchievedMbps / c.Share
		out = append(out, c)
	}
	return out
}

// cpuCeilings: the busiest packet core, and the command's busiest thread
// with the CPU it ran on. A CPU counts when the run's own work on it,
// irq+softirq and the command's threads, is at least ownCPUShare of its
// busy time: the command's when its threads are the larger part, a packet
// core otherwise; its share is its busy plus steal time. Every NIC that
// moved is covered: scaling the load scales the traffic.
func cpuCeilings(w *window) []Ceiling {
	names := nicNames(w)
	got := maxDirMbps(w, names)
	var out []Ceiling
	on := map[int]float64{}     // the command's threads' busy time per CPU
	top := map[int]*threadUse{} // the busiest of them per CPU
	for _, t := range w.threads {
		c := t.cpu()
		if c < 0 {
			continue
		}
		on[c] += t.busy()
		if o := top[c]; o == nil || t.busy() > o.busy() {
			top[c] = t
		}
	}
	// commandCPU reports whether the command's threads are the larger part
	// of the run's own work on u, and that work at least ownCPUShare of it.
	commandCPU := func(u *cpuUse) bool {
		part := math.Min(on[u.cpu], u.busy)
		return part > 0 && part >= u.packet && part+u.packet >= ownCPUShare*u.busy
	}
	var core *Ceiling
	for _, u := range w.cpus {
		if u.busy <= 0 || commandCPU(u) {
			continue // judged as the command's below
		}
		if u.packet+math.Min(on[u.cpu], u.busy) < ownCPUShare*u.busy {
			continue // busy with other work
		}
		share := math.Min(u.busy+u.steal, 100) / 100
		if core == nil || share > core.Share {
			cpu := u.cpu
			core = &Ceiling{Layer: BoundCore, Subject: cpuName(cpu), NICs: names, CPU: &cpu,
				What: fmt.Sprintf("%s (%.0f %% irq+softirq)", cpuName(cpu), u.packet), Share: share}
		}
	}
	if core == nil {
		core = saturatedHost(w, names)
	}
	if core != nil {
		out = append(out, *core)
	}
	var cmd *Ceiling
	for _, t := range w.threads {
		c := t.cpu()
		share := t.busy() / 100
		if u := w.cpu(c); u != nil && top[c] == t && commandCPU(u) {
			share = math.Max(share, math.Min(u.busy+u.steal, 100)/100)
		}
		share = math.Min(share, 1)
		if cmd == nil || share > cmd.Share {
			cpu := c
			cmd = &Ceiling{Layer: BoundCommand, Subject: fmt.Sprintf("%d (%s) on %s", t.tid, t.comm, cpuName(c)), NICs: names,
				CPU: &cpu, TID: t.tid, Share: share,
				What: fmt.Sprintf("the command's thread %d (%s) on %s", t.tid, t.comm, cpuName(c))}
		}
	}
	if cmd != nil && cmd.Share > 0 {
		out = append(out, *cmd)
	}
	for i := range out {
		out[i].AchievedMbps = got
		if out[i].Share > 0 {
			out[i].CeilingMbps = got / out[i].Share
		}
	}
	return out
}

// saturatedHost is the core ceiling of a host whose every CPU was at least
// boundShare busy, whatever with: the packet work had no core to go to.
// nil otherwise.
func saturatedHost(w *window, names []string) *Ceiling {
	// The run's own CPU use, its packet work and its command's threads,
	// must be a real part of it: a rate-limited run on a host busy with
	// other work was not bound by that work.
	own := 0.0
	for _, u := range w.cpus {
		own += u.packet
	}
	for _, t := range w.threads {
		own += t.busy()
	}
	if own < saturatedOwnPct {
		return nil
	}
	var top *cpuUse
	for _, u := range w.cpus {
		if math.Min(u.busy+u.steal, 100) < boundShare*100 {
			return nil
		}
		if top == nil || u.busy+u.steal > top.busy+top.steal {
			top = u
		}
	}
	if top == nil {
		return nil
	}
	cpu := top.cpu
	return &Ceiling{Layer: BoundCore, Subject: cpuName(cpu), NICs: names, CPU: &cpu,
		What: fmt.Sprintf("%s, with every CPU at least %.0f %% busy (%.0f %% user, %.0f %% system, %.0f %% irq+softirq here): the host had no core to spare",
			cpuName(cpu), boundShare*100, top.user, top.system, top.packet),
		Share: math.Min(top.busy+top.steal, 100) / 100}
}

// cardCeilings: what a misidentified card is known to move.
func cardCeilings(w *window, limits []Limits) []Ceiling {
	var out []Ceiling
	seen := map[string]bool{}
	for _, l := range limits {
		if l.RealDevice == "" || l.MovesMbps <= 0 || seen[l.RealDevice] {
			continue
		}
		var names []string
		for _, m := range limits {
			if m.RealDevice == l.RealDevice && w.nic(m.NIC) != nil {
				names = append(names, m.NIC)
			}
		}
		if len(names) == 0 {
			continue
		}
		seen[l.RealDevice] = true
		got := maxDirMbps(w, names)
		out = append(out, Ceiling{Layer: LayerCard, Subject: subjectOf(names), NICs: names,
			What:         fmt.Sprintf("what %s is known to move (%s)", strings.TrimSuffix(l.RealDevice, " emulating it"), mbps(l.MovesMbps)),
			AchievedMbps: got, CeilingMbps: l.MovesMbps, Share: got / l.MovesMbps})
	}
	return out
}

func (w *window) thread(tid int) *threadUse {
	for _, t := range w.threads {
		if t.tid == tid {
			return t
		}
	}
	return nil
}

func (w *window) cpu(id int) *cpuUse {
	for _, u := range w.cpus {
		if u.cpu == id {
			return u
		}
	}
	return nil
}

func busiest(w *window) *CPULoad {
	var b *cpuUse
	for _, u := range w.cpus {
		if b == nil || u.busy > b.busy {
			b = u
		}
	}
	if b == nil {
		return nil
	}
	l := &CPULoad{CPU: b.cpu, BusyPct: b.busy, PacketPct: b.packet, SoftIRQPct: b.softirq, UserPct: b.user,
		SystemPct: b.system, StealPct: b.steal}
	if b.irqKnown {
		v := b.irq
		l.IRQPct = &v
	}
	if b.mhzSecs > 0 {
		mhz := b.mhz
		l.MHz = &mhz
		if b.maxMHz > 0 {
			m := b.maxMHz
			l.MaxMHz = &m
		}
	}
	return l
}

// losses sums each NIC's loss counters by class over the run; a class
// whose counters did not move is left out.
func losses(w *window) []Loss {
	var out []Loss
	for _, u := range w.nics {
		for _, class := range []irq.LossClass{irq.LossNIC, irq.LossTX, irq.LossPauseRX, irq.LossPauseTX, irq.LossAllowance, irq.LossDropped} {
			l := Loss{NIC: u.name, Class: class}
			var secs float64
			// Sources count the same loss more than once (sysfs and the
			// driver's own counter; a driver's no-buffer and missed
			// counters): the largest stands for the class. Pause frames
			// are the exception within one source: xon and xoff, or
			// several priorities, are different frames and add up.
			pause := class == irq.LossPauseRX || class == irq.LossPauseTX
			bySource := map[string]float64{}
			for _, c := range u.losses {
				if c.class != class || c.count < 0.5 {
					continue
				}
				l.Counters = append(l.Counters, c.name)
				n := c.count
				if pause {
					src, _, _ := strings.Cut(c.name, ":")
					bySource[src] += c.count
					n = bySource[src]
				}
				if n > l.Count {
					l.Count, secs = n, c.secs
				}
			}
			if len(l.Counters) == 0 {
				continue
			}
			if secs > 0 {
				l.PerS = l.Count / secs
			}
			if class == irq.LossNIC {
				s := l.Count / (u.rxPackets + l.Count)
				l.OfferedShare = &s
			}
			out = append(out, l)
		}
	}
	return out
}

// lossOf returns the worst loss of a class that counts, or nil: NIC drops
// must be dropShare of the offered packets and dropPerS; allowance any.
func (v *Verdict) lossOf(class irq.LossClass) *Loss {
	var best *Loss
	for i := range v.Losses {
		l := &v.Losses[i]
		if l.Class != class {
			continue
		}
		if class == irq.LossNIC && (l.OfferedShare == nil || *l.OfferedShare < dropShare || l.PerS < dropPerS) {
			continue
		}
		if best == nil || l.Count > best.Count {
			best = l
		}
	}
	return best
}

// pauseLoss returns the busier pause class at pausePerS or more, or nil.
func (v *Verdict) pauseLoss() *Loss {
	var best *Loss
	for i := range v.Losses {
		l := &v.Losses[i]
		if (l.Class == irq.LossPauseRX || l.Class == irq.LossPauseTX) && l.PerS >= pausePerS && (best == nil || l.PerS > best.PerS) {
			best = l
		}
	}
	return best
}

// codes and severities of the verdicts.
var verdictCodes = map[Bound]struct {
	code finding.Code
	sev  finding.Severity
}{
	BoundEthernet: {finding.RunEthernetBound, finding.Info},
	BoundPCIe:     {finding.RunPCIeBound, finding.Warn},
	BoundTunnel:   {finding.RunTunnelBound, finding.Warn},
	BoundUSB:      {finding.RunUSBBound, finding.Warn},
	BoundCore:     {finding.RunCoreBound, finding.Warn},
	BoundCommand:  {finding.RunCommandBound, finding.Warn},
	BoundNICDrops: {finding.RunNICDrops, finding.Warn},
	BoundPause:    {finding.RunPause, finding.Warn},
	BoundOutside:  {finding.RunOutsideHost, finding.Info},
	BoundUnknown:  {finding.RunUnknown, finding.Info},
}

// verdictFinding is the verdict as a Finding.
func (v *Verdict) verdictFinding() finding.Finding {
	vc := verdictCodes[v.Bound]
	f := finding.Finding{Code: vc.code, Severity: vc.sev, Summary: v.Summary, Evidence: map[string]string{
		"bound":          string(v.Bound),
		"active_samples": fmt.Sprintf("%d of %d (%.1f s)", v.ActiveSamples, v.Samples, v.ActiveSeconds),
		"achieved_mbps":  fmt.Sprintf("%.1f", v.AchievedMbps),
	}}
	f.DemandMbps = finding.Mbps(v.AchievedMbps)
	if v.CeilingMbps != nil {
		f.CapacityMbps = finding.Mbps(*v.CeilingMbps)
	}
	switch {
	case v.Limit != nil:
		f.Subject = v.Limit.Subject
		f.Direction = v.Limit.Direction
		f.Evidence["limit"] = fmt.Sprintf("%s: %s of %s", v.Limit.What, mbps(v.Limit.AchievedMbps), mbps(v.Limit.CeilingMbps))
		f.Fix = fixFor(v.Limit.Layer)
	default:
		f.Subject = subjectOf(v.nicsMoved())
	}
	if v.Next != nil {
		f.Evidence["next"] = fmt.Sprintf("%s at %s", v.Next.What, pct(v.Next.Share))
	}
	if b := v.BusiestCPU; b != nil {
		f.Evidence["busiest_cpu"] = fmt.Sprintf("CPU %d %.0f %% busy (%.0f %% irq+softirq, %.0f %% user, %.0f %% system, %.0f %% steal)",
			b.CPU, b.BusyPct, b.PacketPct, b.UserPct, b.SystemPct, b.StealPct)
	}
	return f
}

func (v *Verdict) nicsMoved() []string {
	var out []string
	for _, t := range v.Traffic {
		if t.FramesPerS > 0 && !slices.Contains(out, t.NIC) {
			out = append(out, t.NIC)
		}
	}
	return out
}

func fixFor(b Bound) string {
	switch b {
	case BoundEthernet:
		return "The link is full: a faster link, or more ports (a bond, ECMP), moves more."
	case BoundPCIe:
		return "Move the card to a slot whose link matches the card (speed and width: `nicdiag explain` shows the ceiling per slot), or use fewer ports at once."
	case BoundTunnel:
		return "The tunnel carries no more: a NIC in a PCIe slot, or a tunnel of a later generation."
	case BoundUSB:
		return "Use a USB port of a faster bus (SuperSpeed), or a PCIe NIC."
	case BoundCore:
		return "Spread the packet work: more queues (ethtool -L), IRQ affinity on more cores, RPS/RFS, or a NIC with RSS."
	case BoundCommand:
		return "The benchmark measured its own thread: run more streams in more processes (iperf3 -P before 3.16 is one thread; start several iperf3 with different ports), or pin it away from the NIC's IRQ cores."
	}
	return ""
}

// lossFindings reports the losses beside the verdict: NIC drops and pause
// frames that count but were not the verdict, and any allowance excess
// (also when it is what made the run outside_host: that verdict is info,
// the excess a warning).
func (v *Verdict) lossFindings() []finding.Finding {
	var out []finding.Finding
	if l := v.lossOf(irq.LossNIC); l != nil && v.Bound != BoundNICDrops {
		out = append(out, finding.Finding{Code: finding.RunNICDrops, Severity: finding.Warn, Subject: l.NIC,
			Summary:  fmt.Sprintf("%s dropped %s of the packets it was offered (%s/s: %s)", l.NIC, pct(*l.OfferedShare), num(l.PerS), strings.Join(l.Counters, ", ")),
			Evidence: map[string]string{"count": num(l.Count)}})
	}
	if l := v.pauseLoss(); l != nil && v.Bound != BoundPause {
		out = append(out, finding.Finding{Code: finding.RunPause, Severity: finding.Warn, Subject: l.NIC,
			Summary:  fmt.Sprintf("%s counted %s pause frames/s (%s, %s)", l.NIC, num(l.PerS), l.Class, strings.Join(l.Counters, ", ")),
			Evidence: map[string]string{"count": num(l.Count)}})
	}
	if l := v.lossOf(irq.LossAllowance); l != nil {
		out = append(out, finding.Finding{Code: finding.RunAllowance, Severity: finding.Warn, Subject: l.NIC,
			Summary: fmt.Sprintf("%s exceeded its cloud allowance %s times (%s): the platform dropped or queued packets", l.NIC, num(l.Count), strings.Join(l.Counters, ", "))})
	}
	return out
}

// linkFindings reports a PCIe link that changed speed or width during the
// run, and AER errors logged on the path.
func linkFindings(w *window, limits []Limits) []finding.Finding {
	start := map[string]budget.LinkParams{}
	for _, l := range limits {
		for _, k := range l.Links {
			if k.Addr != "" {
				start[k.Addr] = k
			}
		}
	}
	var out []finding.Finding
	for _, p := range w.pcieAll {
		// A link has two ends; the upstream port of each modelled hop
		// speaks for it, so that one change is one finding.
		_, upstream := start[p.Address]
		if p.ReadSamples > 0 && (upstream || len(start) == 0) {
			at := linkText(p.StartGTs, p.StartWidth)
			if k, ok := start[p.Address]; ok {
				at = linkText(k.GTs, k.Width)
			}
			lo, hi := linkText(p.MinGTs, p.MinWidth), linkText(p.MaxGTs, p.MaxWidth)
			if lo != at || hi != at {
				out = append(out, finding.Finding{Code: finding.RunLinkChanged, Severity: finding.Info, Subject: p.Address,
					Summary: fmt.Sprintf("the PCIe link at %s was %s before the run and ran between %s and %s during it: the link retrains with load (power saving), and the verdict used the speed it ran at", p.Address, at, lo, hi)})
			}
		}
		corr, nonfatal, fatal := deref(p.AERCorrectable), deref(p.AERNonFatal), deref(p.AERFatal)
		if corr+nonfatal+fatal > 0 {
			sev := finding.Info
			if nonfatal+fatal > 0 {
				sev = finding.Warn
			}
			out = append(out, finding.Finding{Code: finding.RunAERErrors, Severity: sev, Subject: p.Address,
				Summary: fmt.Sprintf("%s logged PCIe errors during the run: %d correctable, %d non-fatal, %d fatal (AER): replayed or lost TLPs cost link bandwidth; a reseated card, another slot or a shorter riser usually cures them", p.Address, corr, nonfatal, fatal)})
		}
	}
	return out
}

// slowClockShare: a CPU that bound the run below this share of its
// maximum clock was held back by frequency scaling.
const slowClockShare = 0.75

// clockFindings reports the clock of the CPU that bound the run (core or
// command) when it ran below slowClockShare of its maximum.
func clockFindings(w *window, limit *Ceiling) []finding.Finding {
	if limit == nil || limit.CPU == nil || (limit.Layer != BoundCore && limit.Layer != BoundCommand) {
		return nil
	}
	u := w.cpu(*limit.CPU)
	if u == nil || u.mhzSecs <= 0 || u.maxMHz <= 0 || u.mhz >= slowClockShare*u.maxMHz {
		return nil
	}
	c := *limit.CPU
	return []finding.Finding{{Code: finding.RunCoreClockLow, Severity: finding.Warn, Subject: cpuName(c),
		Summary: fmt.Sprintf("%s, which bound this run, ran at %.0f MHz on average, %s of its %.0f MHz maximum: frequency scaling held it back",
			cpuName(c), u.mhz, pct(u.mhz/u.maxMHz), u.maxMHz),
		Fix:      fmt.Sprintf("cpupower -c %d frequency-set -g performance, or an energy_performance_preference of performance or balance_performance (cpu.powersave in nicdiag check says which applies)", c),
		Evidence: map[string]string{"cpu": fmt.Sprint(c), "mhz": fmt.Sprintf("%.0f", u.mhz), "max_mhz": fmt.Sprintf("%.0f", u.maxMHz)}}}
}

// deref is *p, 0 for nil.
func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func linkText(gts float64, width int) string {
	return fmt.Sprintf("%s GT/s x%d", pcie.FormatGTs(gts), width)
}

func cpuName(c int) string { return fmt.Sprintf("CPU %d", c) }

// FormatMbps renders a rate as the verdict's sentences do: "1435 Mb/s",
// "98.2 Mb/s", "23.1 Gb/s"; "n/a" for NaN or infinity.
func FormatMbps(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v >= 10000:
		return fmt.Sprintf("%.1f Gb/s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f Mb/s", v)
	}
	return fmt.Sprintf("%.1f Mb/s", v)
}

// FormatShare renders a share of 1 as the verdict's sentences do: "96 %";
// "n/a" for NaN or infinity.
func FormatShare(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f %%", s*100)
}

// Same reports whether o is the same ceiling as c (a copy, as Limit and
// Next are of entries of Ceilings).
func (c Ceiling) Same(o Ceiling) bool {
	return c.Layer == o.Layer && c.Subject == o.Subject && c.Direction == o.Direction && c.What == o.What
}

func mbps(v float64) string { return FormatMbps(v) }

func pct(s float64) string { return FormatShare(s) }

// num renders a count: "190k", "1.2M", "37".
func num(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
