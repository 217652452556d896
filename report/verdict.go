package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/unit"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/stack"
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
	// StackHead and Stack are this host's stack, a layer a row;
	// StackNote says why there is none.
	StackHead []string
	Stack     [][]string
	StackNote string
}

// pageCeiling is one row of the ceilings table; Role says "bound this run"
// or "next" in words, not colour alone.
type pageCeiling struct {
	Role  string
	Cells []string
}

// boundWords says a Bound in words.
var boundWords = map[monitor.Bound]string{
	monitor.BoundEthernet:  "an Ethernet port at its line rate",
	monitor.BoundPCIe:      "a PCIe hop of the NICs' path, full",
	monitor.BoundTunnel:    "a Thunderbolt or USB4 tunnel, full",
	monitor.BoundUSB:       "the USB bus the NIC sits on, full",
	monitor.BoundCore:      "a CPU core saturated by packet work",
	monitor.BoundCommand:   "a thread of the command saturated its CPU",
	monitor.BoundNICDrops:  "the NIC dropped packets before the stack saw them",
	monitor.BoundPause:     "pause frames (Ethernet flow control) held traffic back",
	monitor.BoundOutside:   "nothing in this host was near its limit: the limit is outside it",
	monitor.BoundUnknown:   "unknown: no traffic, or a layer of this host could not be read",
	monitor.BoundQdisc:     "a qdisc of this host: a shaper's rate, or its drops",
	monitor.BoundTransport: "this host's transport: its receive window, or a send buffer",
	monitor.BoundSocket:    "drops at a socket of this host",
	monitor.BoundConntrack: "this host's connection tracking table, full",
	monitor.BoundOtherWork: "the run's CPUs busy with work that is not the run's",
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
		p.Traffic = append(p.Traffic, []string{t.NIC, t.Direction, unit.Count(t.FramesPerS), monitor.FormatMbps(t.AchievedMbps),
			strconv.FormatFloat(math.Round(t.MeanFrameBytes), 'f', 0, 64), ceil})
	}
	p.StackHead, p.Stack, p.StackNote = stackRows(v.Stack)
	for _, l := range v.Losses {
		s := fmt.Sprintf("%s: %s, %s in all (%s/s), counted by %s", l.NIC, lossWords(l.Class), unit.Count(l.Count), unit.Count(l.PerS), strings.Join(l.Counters, ", "))
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

// stackRows lays out this host's stack, a layer a row: its state and what
// it found (each judgement's sentence, the one that bound the run marked).
func stackRows(s *stack.Summary) (head []string, rows [][]string, note string) {
	if s == nil {
		return nil, nil, "This host's stack (transport, sockets, qdiscs, conntrack, other work) was not read in this record: " +
			"a record of an older nicdiag, or a run without it. The verdict cannot say that the limit was outside this host."
	}
	head = []string{"layer", "state", "what it found"}
	for _, l := range s.Layers {
		var found []string
		for _, j := range s.Judgements {
			if j.Layer != l.Layer {
				continue
			}
			tag := ""
			switch {
			case j.Bound && !j.Outside:
				tag = "[bound] "
			case j.Outside:
				tag = "[outside this host] "
			}
			found = append(found, tag+j.Summary)
		}
		if len(found) == 0 {
			found = append(found, orDash(l.Note))
		}
		rows = append(rows, []string{string(l.Layer), strings.ReplaceAll(string(l.State), "_", " "), strings.Join(found, " · ")})
	}
	return head, rows, ""
}
