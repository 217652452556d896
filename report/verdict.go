package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
)

// verdictOf is the record's run verdict: Record.Verdict, which
// monitor.ReadRecord fills, or, for a Record built by hand without one,
// monitor.Judge over its samples and limits (computed is then true).
func verdictOf(rec *monitor.Record) (v *monitor.Verdict, computed bool) {
	if rec.Verdict != nil {
		return rec.Verdict, false
	}
	j := monitor.Judge(rec.Samples, rec.Limits)
	return &j, true
}

// pageVerdict is the verdict as the page's top section shows it; every
// string is escaped by writePage.
type pageVerdict struct {
	Bound      string
	BoundWords string
	Summary    string
	Computed   bool
	Facts      [][2]string
	CeilHead   []string
	Ceilings   []pageCeiling
	TrafHead   []string
	Traffic    [][]string
	Losses     []string
}

// pageCeiling is one row of the ceilings table; Role says "bound this run"
// or "next" in words, not colour alone.
type pageCeiling struct {
	Role  string
	Cells []string
}

// boundWords says a Bound in words.
var boundWords = map[monitor.Bound]string{
	monitor.BoundEthernet: "an Ethernet port at its line rate",
	monitor.BoundPCIe:     "a PCIe hop of the NICs' path, full",
	monitor.BoundTunnel:   "a Thunderbolt or USB4 tunnel, full",
	monitor.BoundUSB:      "the USB bus the NIC sits on, full",
	monitor.BoundCore:     "a CPU core saturated by packet work",
	monitor.BoundCommand:  "a thread of the command saturated its CPU",
	monitor.BoundNICDrops: "the NIC dropped packets before the stack saw them",
	monitor.BoundPause:    "pause frames (Ethernet flow control) held traffic back",
	monitor.BoundOutside:  "nothing in this host was near its limit: the limit is outside it",
	monitor.BoundUnknown:  "unknown: no traffic, or nothing to judge it by",
}

func newPageVerdict(v *monitor.Verdict, computed bool) *pageVerdict {
	p := &pageVerdict{Bound: string(v.Bound), BoundWords: boundWords[v.Bound], Summary: v.Summary, Computed: computed}
	if p.BoundWords == "" {
		p.BoundWords = "a bound this report does not know"
	}
	achieved := monitor.FormatMbps(v.AchievedMbps) + " per direction (the busier direction of the NICs the ceiling covers)"
	if v.CeilingMbps != nil && v.Share != nil {
		achieved = fmt.Sprintf("%s of %s, %s", monitor.FormatMbps(v.AchievedMbps), monitor.FormatMbps(*v.CeilingMbps), monitor.FormatShare(*v.Share))
		if v.Limit == nil && v.Next != nil {
			achieved += " of the nearest ceiling"
		}
		achieved += ", per direction (the busier direction of the NICs the ceiling covers)"
	}
	p.Facts = append(p.Facts, [2]string{"achieved vs ceiling", achieved})
	if v.Limit != nil {
		p.Facts = append(p.Facts, [2]string{"ceiling reached", ceilingWords(*v.Limit)})
	}
	next := "none: no other ceiling is known"
	if v.Next != nil {
		next = ceilingWords(*v.Next)
	}
	p.Facts = append(p.Facts, [2]string{"next ceiling", next})
	if b := v.BusiestCPU; b != nil {
		p.Facts = append(p.Facts, [2]string{"busiest CPU", fmt.Sprintf("CPU %d, %.0f %% busy (%.0f %% irq+softirq, %.0f %% user, %.0f %% system, %.0f %% steal)",
			b.CPU, b.BusyPct, b.PacketPct, b.UserPct, b.SystemPct, b.StealPct)})
	}
	p.Facts = append(p.Facts, [2]string{"judged over", fmt.Sprintf("%d of %d samples (%s s) with traffic: the run's span, from the first to the last sample that moved traffic",
		v.ActiveSamples, v.Samples, strconv.FormatFloat(round(v.ActiveSeconds, 1), 'f', -1, 64))})

	p.CeilHead = []string{"", "layer", "what", "direction", "NICs", "achieved", "ceiling", "share"}
	for _, c := range v.Ceilings {
		role := ""
		switch {
		case v.Limit != nil && c.Same(*v.Limit):
			role = "bound this run"
		case v.Next != nil && c.Same(*v.Next):
			role = "next"
		}
		p.Ceilings = append(p.Ceilings, pageCeiling{Role: role, Cells: []string{string(c.Layer), c.What, orDash(c.Direction),
			strings.Join(c.NICs, ", "), monitor.FormatMbps(c.AchievedMbps), monitor.FormatMbps(c.CeilingMbps), monitor.FormatShare(c.Share)}})
	}
	p.TrafHead = []string{"NIC", "direction", "frames/s", "Mb/s", "mean frame bytes", "ceiling"}
	for _, t := range v.Traffic {
		ceil := "none known"
		if t.CeilingMbps != nil {
			ceil = monitor.FormatMbps(*t.CeilingMbps) + " (" + string(t.CeilingLayer) + ")"
		}
		p.Traffic = append(p.Traffic, []string{t.NIC, t.Direction, si(t.FramesPerS), monitor.FormatMbps(t.AchievedMbps),
			strconv.FormatFloat(math.Round(t.MeanFrameBytes), 'f', 0, 64), ceil})
	}
	for _, l := range v.Losses {
		s := fmt.Sprintf("%s: %s, %s in all (%s/s), counted by %s", l.NIC, lossWords(l.Class), si(l.Count), si(l.PerS), strings.Join(l.Counters, ", "))
		if l.OfferedShare != nil {
			s += fmt.Sprintf("; %s of the packets offered", monitor.FormatShare(*l.OfferedShare))
		}
		p.Losses = append(p.Losses, s)
	}
	return p
}

// sameCeiling reports whether a and b are the same ceiling of a verdict.

// ceilingWords is "pcie: the 2.5 GT/s x1 link at 0000:00:1c.0, 1435 Mb/s
// at this run's mix, reached 96 %".
func ceilingWords(c monitor.Ceiling) string {
	s := fmt.Sprintf("%s: %s, %s at this run's mix", c.Layer, c.What, monitor.FormatMbps(c.CeilingMbps))
	if c.Direction != "" {
		s += " (" + c.Direction + ")"
	}
	return s + ", reached " + monitor.FormatShare(c.Share)
}

func lossWords(c irq.LossClass) string {
	switch c {
	case irq.LossNIC:
		return "dropped by the NIC"
	case irq.LossTX:
		return "lost sending"
	case irq.LossPauseRX:
		return "pause frames received"
	case irq.LossPauseTX:
		return "pause frames sent"
	case irq.LossAllowance:
		return "cloud allowance exceeded"
	}
	return string(c)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
