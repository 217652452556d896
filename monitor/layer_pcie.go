package monitor

import (
	"fmt"
	"math"
	"slices"

	"github.com/nicdiag/nicdiag/budget"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/pcie"
)

// pcieLayer is each PCIe hop of the NICs' paths against its link: the
// link state each hop's upstream port ran at in the span (the latest
// read), and over the whole run the changes of its link and the AER
// errors it logged.
type pcieLayer struct {
	live map[string]irq.PCIeState
}

func newPCIeLayer() *pcieLayer { return &pcieLayer{live: map[string]irq.PCIeState{}} }

func (p *pcieLayer) add(x *irq.Sample, _ float64) {
	for _, s := range x.PCIe {
		if s.Error == "" && s.GTs > 0 {
			p.live[s.Address] = s
		}
	}
}

// merge takes o's states: o's samples came later.
func (p *pcieLayer) merge(o layer) {
	for a, s := range o.(*pcieLayer).live {
		p.live[a] = s
	}
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

// offer solves each NIC's path at its own rx and tx frame sizes and adds
// up, hop by hop, the bytes every NIC crossing it puts on each link
// direction (docs/pcie-model.md: the per-packet costs), against the
// link's capacity. A hop's ceiling is the traffic it carries scaled until
// its busier direction is full.
func (p *pcieLayer) offer(j *judgement, v *Verdict) {
	for _, h := range p.hops(j) {
		if c, ok := h.ceiling(j); ok {
			v.Ceilings = append(v.Ceilings, c)
		}
	}
}

// hops adds up the load of every NIC with a modelled path, hop by hop.
func (p *pcieLayer) hops(j *judgement) []*hopLoad {
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
	for _, l := range j.limits {
		u := j.traffic.nic(l.NIC)
		if u == nil || len(l.Links) == 0 || l.Profile == nil || u.rxPPS+u.txPPS <= 0 {
			continue
		}
		links := liveLinks(l.Links, p.live)
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
	return hops
}

// ceiling is the hop's ceiling: a tunnel's against its rate, a link's
// against its capacity; not ok when there is none.
func (h *hopLoad) ceiling(j *judgement) (Ceiling, bool) {
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
			return c, false
		}
		share = math.Max(h.up, h.down) / h.capBytes
		if h.down > h.up {
			dir = "down"
		}
		c.What = fmt.Sprintf("the %s link at %s", linkText(h.gts, h.width), h.addr)
	}
	if !(share > 0) {
		return c, false
	}
	c.Direction = dir
	c.AchievedMbps = j.traffic.maxDirMbps(h.nics)
	c.Share = share
	c.CeilingMbps = c.AchievedMbps / share
	return c, true
}

// liveLinks returns links with the speed and width each hop's upstream
// port ran at in the span, where it was read: a link that was downtrained
// at rest and retrained under load is judged as it ran.
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

// modelFrame clamps a mean frame size to what the model accepts.
func modelFrame(f float64) int {
	return int(math.Round(math.Min(math.Max(f, 64), 16384)))
}

// findings reports a PCIe link that changed speed or width during the
// run, and AER errors logged on the path.
func (p *pcieLayer) findings(j *judgement, _ *Verdict) []finding.Finding {
	start := map[string]budget.LinkParams{}
	for _, l := range j.limits {
		for _, k := range l.Links {
			if k.Addr != "" {
				start[k.Addr] = k
			}
		}
	}
	var out []finding.Finding
	for _, s := range j.pcieRun {
		// A link has two ends; the upstream port of each modelled hop
		// speaks for it, so that one change is one finding.
		k, upstream := start[s.Address]
		if s.ReadSamples > 0 && (upstream || len(start) == 0) {
			at := linkText(s.StartGTs, s.StartWidth)
			if upstream {
				at = linkText(k.GTs, k.Width)
			}
			lo, hi := linkText(s.MinGTs, s.MinWidth), linkText(s.MaxGTs, s.MaxWidth)
			if lo != at || hi != at {
				out = append(out, finding.Finding{Code: finding.RunLinkChanged, Severity: finding.Info, Subject: s.Address,
					Summary: fmt.Sprintf("the PCIe link at %s was %s before the run and ran between %s and %s during it: the link retrains with load (power saving), and the verdict used the speed it ran at", s.Address, at, lo, hi)})
			}
		}
		if f, ok := aerFinding(s); ok {
			out = append(out, f)
		}
	}
	return out
}

// aerFinding is run.aer_errors for the errors a function logged.
func aerFinding(s irq.PCIeSummary) (finding.Finding, bool) {
	corr, nonfatal, fatal := deref(s.AERCorrectable), deref(s.AERNonFatal), deref(s.AERFatal)
	if corr+nonfatal+fatal == 0 {
		return finding.Finding{}, false
	}
	sev := finding.Info
	if nonfatal+fatal > 0 {
		sev = finding.Warn
	}
	return finding.Finding{Code: finding.RunAERErrors, Severity: sev, Subject: s.Address,
		Summary: fmt.Sprintf("%s logged PCIe errors during the run: %d correctable, %d non-fatal, %d fatal (AER): replayed or lost TLPs cost link bandwidth", s.Address, corr, nonfatal, fatal),
		Fix: fmt.Sprintf("Reseat the card, or move it to another slot or a shorter riser; then watch the count: cat /sys/bus/pci/devices/%s/aer_dev_correctable (lspci -vvv -s %s shows the error status).",
			s.Address, s.Address),
		Evidence: map[string]string{"correctable": fmt.Sprint(corr), "nonfatal": fmt.Sprint(nonfatal), "fatal": fmt.Sprint(fatal)}}, true
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
