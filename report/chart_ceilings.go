package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
)

// Limits of the ceiling chart.
const (
	// offScale: a ceiling more than this many times the run's peak is not
	// drawn (it would squash the traffic into the bottom of the plot) but
	// listed under the plot, with its figure; the nearest is always drawn.
	offScale = 3.0
	// maxRefs is the most ceilings drawn; the rest, farther from the run,
	// are counted under the plot (the page's table lists them all).
	maxRefs = 8
	// maxNotes is the most off-scale ceilings listed one per line.
	maxNotes = 4
	// maxNamed is the most NIC names a caption spells out.
	maxNamed = 8
)

// ceilingChart is the run's throughput over time against each ceiling of
// its verdict: per sample the frame Mb/s received and sent, each summed over
// the sampled NICs, and each ceiling as a horizontal line.
//
// A ceiling covers some NICs and is a figure for their busier direction;
// it is drawn where the summed busier direction would be with that ceiling
// full at the run's mix (the summed traffic over the active samples divided
// by the ceiling's share), the level the plotted lines would reach. For a
// ceiling of every NIC that moved, that is its own figure; for one of some
// of them (one port's link of two), its label gives both figures.
// Ceilings other than the nearest, and the nearest inside the host, that are above offScale times the peak
// are listed under the plot instead.
func ceilingChart(v *view, vd *monitor.Verdict) chart {
	c, names := ceilingLines(v, vd)
	if c == nil {
		msg := "The record names no NIC: there is no throughput to set against a ceiling."
		return chart{ID: ceilingsID, Title: ceilingsTitle, SVG: message(ceilingsKind, ceilingsTitle, msg), Caption: msg}
	}
	shown := names
	if len(shown) > maxNamed {
		shown = append(shown[:maxNamed:maxNamed], fmt.Sprintf("%d more", len(names)-maxNamed))
	}
	caption := fmt.Sprintf("Megabits per second of Ethernet frames (header and FCS: (bytes + 4 × packets) × 8, the unit of the ceilings), "+
		"summed over the %d sampled NICs (%s): solid received, dashed sent. "+
		"Each horizontal line is a ceiling of the path (a link, a bus, a shaper's rate) at this run's own frame sizes and direction mix, labelled with its layer, its figure and how much of it the run reached, and listed under the plot with what it is; "+
		"the solid black one, where there is one, is the ceiling that bound the run. A ceiling applies to the busier direction, and is drawn where the summed traffic would be with that ceiling full; "+
		"a ceiling of only some of the NICs (one port's link) gives that sum after its own figure. "+
		"A CPU's ceiling (a core, the command's thread) is a share of that CPU's time, not a rate the traffic could cross: it is drawn as a bar of that share under the plot. "+
		"Ceilings other than the nearest (and the nearest inside the host) that are above %g× the peak are listed under the plot instead of drawn. The verdict's rates are over %d of the %d samples, the run's span with traffic.",
		len(names), strings.Join(shown, ", "), offScale, vd.ActiveSamples, vd.Samples)
	return chart{ID: ceilingsID, Title: ceilingsTitle, SVG: c.svg(), Caption: caption + v.bucketNote()}
}

const (
	ceilingsTitle = "Throughput against the run's ceilings, Mb/s of Ethernet frames"
	ceilingsKind  = "lines-ceilings"
	ceilingsID    = "ceilings"
)

// ceilingLines lays out the ceiling chart; nil when the record names no
// NIC. names are the sampled NICs, in sample order.
func ceilingLines(v *view, vd *monitor.Verdict) (c *lineChart, names []string) {
	c, names = trafficLines(v)
	if c == nil {
		return nil, nil
	}
	peak := 0.0
	for _, s := range c.series {
		for _, p := range s.pts {
			if !math.IsNaN(p.v) && !math.IsInf(p.v, 0) {
				peak = max(peak, p.v)
			}
		}
	}
	// The summed traffic over the active samples, as the verdict saw it.
	var sumRX, sumTX float64
	for _, t := range vd.Traffic {
		if t.Direction == "tx" {
			sumTX += t.AchievedMbps
		} else {
			sumRX += t.AchievedMbps
		}
	}
	c.placeCeilings(vd, peak, math.Max(sumRX, sumTX))
	return c, names
}

// trafficLines is the chart's two series, each sample's frame Mb/s
// received and sent, summed over the NICs; nil when the record names no
// NIC.
func trafficLines(v *view) (*lineChart, []string) {
	names := v.nicNames()
	if len(names) == 0 {
		return nil, nil
	}
	sum := func(tx bool) func(*irq.Sample) (float64, bool) {
		return func(s *irq.Sample) (float64, bool) {
			t, ok := 0.0, false
			for _, n := range s.NICs {
				if n.StatsError != "" {
					continue
				}
				ok = true
				if tx {
					t += monitor.FrameMbps(n.TXBytesPerS, n.TXPacketsPerS)
				} else {
					t += monitor.FrameMbps(n.RXBytesPerS, n.RXPacketsPerS)
				}
			}
			return t, ok
		}
	}
	return &lineChart{kind: ceilingsKind, title: ceilingsTitle, total: v.total, empty: "no traffic",
		series: []series{
			{name: "rx, all NICs", color: seriesColors[0], pts: v.line(sum(false))},
			{name: "tx, all NICs", color: seriesColors[1], dashed: true, pts: v.line(sum(true))},
		}}, names
}

// placeCeilings draws the verdict's ceilings on c: a path's as a line
// where the summed busier direction (busier) would be with it full, a
// CPU's as a bar of its share; those above offScale times the peak, and
// past maxRefs, listed under the plot.
func (c *lineChart) placeCeilings(vd *monitor.Verdict, peak, busier float64) {
	var off, drawn []string
	more := 0
	strongShown := false
	nearest := -1 // the nearest ceiling inside the host; a card's may lead the list
	for i, ce := range vd.Ceilings {
		if ce.Layer != monitor.LayerCard {
			nearest = i
			break
		}
	}
	for i, ce := range vd.Ceilings {
		strong := vd.Limit != nil && ce.Same(*vd.Limit)
		if cpuCeiling(ce.Layer) {
			// A share of a CPU, not a rate: a bar, not a line.
			c.shares = append(c.shares, shareBar{name: shareName(ce), share: ce.Share, strong: strong,
				label: monitor.FormatShare(ce.Share) + role(ce, vd), tip: ceilingLabel(ce, vd, busier/ce.Share)})
			strongShown = strongShown || strong
			continue
		}
		level := busier / ce.Share
		if !(ce.Share > 0) || math.IsNaN(level) || math.IsInf(level, 0) || !(level > 0) {
			continue
		}
		label := ceilingLabel(ce, vd, level)
		// The nearest ceiling, and the nearest inside the host, are drawn
		// wherever they are: the plot shows how far the run stayed from them.
		if i != 0 && i != nearest && peak > 0 && level > offScale*peak {
			off = append(off, label)
			continue
		}
		if len(c.refs) == maxRefs {
			more++
			continue
		}
		strongShown = strongShown || strong
		c.refs = append(c.refs, refLine{v: level, label: shortLabel(ce, vd, level), tip: label, strong: strong})
		drawn = append(drawn, "  "+label)
	}
	if len(c.shares) > 0 {
		c.sharesTop = "CPU ceilings: a share of one CPU's time, not a rate (the traffic scales with it):"
	}
	if strongShown {
		c.legend = append(c.legend, series{name: "ceiling reached", color: "#000000"})
	}
	if len(c.refs) > 0 && (!strongShown || len(c.refs) > 1) {
		c.legend = append(c.legend, series{name: "other ceiling", color: "#555555", dashed: true})
	}
	c.ceilingNotes(vd, peak, drawn, off, more)
}

// ceilingNotes lists under the plot the ceilings drawn with what they
// are, those off the scale, and how many more were left out.
func (c *lineChart) ceilingNotes(vd *monitor.Verdict, peak float64, drawn, off []string, more int) {
	if len(drawn) > 0 {
		c.notes = append(append(c.notes, "The lines drawn:"), drawn...)
	}
	if len(off) > 0 {
		c.notes = append(c.notes, fmt.Sprintf("Off the scale (above %g× the peak of %s), not drawn:", offScale, monitor.FormatMbps(peak)))
		for i, o := range off {
			if i == maxNotes {
				c.notes = append(c.notes, fmt.Sprintf("  and %d more (the verdict's table lists them)", len(off)-maxNotes))
				break
			}
			c.notes = append(c.notes, "  "+o)
		}
	}
	if more > 0 {
		c.notes = append(c.notes, fmt.Sprintf("%d farther ceilings are not drawn (the verdict's table lists them).", more))
	}
	if len(vd.Ceilings) == 0 {
		c.notes = append(c.notes, fmt.Sprintf("No ceiling was judged for this run (verdict: %s).", vd.Bound))
	}
}

// ceilingLabel is "pcie 1435 Mb/s, 96 % reached, bound this run: the
// 2.5 GT/s x1 link at 0000:00:1c.0": the line's label (shortLabel) and
// what the ceiling is.
func ceilingLabel(c monitor.Ceiling, vd *monitor.Verdict, level float64) string {
	return shortLabel(c, vd, level) + ": " + c.What
}

// shortLabel is the label drawn on a ceiling's line: "pcie 1435 Mb/s,
// 96 % reached, bound this run". A ceiling of some of the NICs adds the
// level it is drawn at.
func shortLabel(c monitor.Ceiling, vd *monitor.Verdict, level float64) string {
	s := fmt.Sprintf("%s %s", c.Layer, monitor.FormatMbps(c.CeilingMbps))
	if math.Abs(level-c.CeilingMbps) > 0.005*level {
		s += fmt.Sprintf(" for %s (%s summed)", clipRunes(strings.Join(c.NICs, "+"), 40), monitor.FormatMbps(level))
	}
	return s + ", " + monitor.FormatShare(c.Share) + " reached" + role(c, vd)
}

// role is ", bound this run" or ", next" for the verdict's limit and next
// ceiling.
func role(c monitor.Ceiling, vd *monitor.Verdict) string {
	switch {
	case vd.Limit != nil && c.Same(*vd.Limit):
		return ", bound this run"
	case vd.Next != nil && c.Same(*vd.Next):
		return ", next"
	}
	return ""
}

// cpuCeiling reports whether a ceiling is a CPU's: derived from a share of
// its time, drawn as that share.
func cpuCeiling(b monitor.Bound) bool { return b == monitor.BoundCore || b == monitor.BoundCommand }

// shareName names a CPU ceiling beside its bar: "core CPU 2", "command
// on CPU 0" (the bar's tooltip names the thread).
func shareName(c monitor.Ceiling) string {
	if c.Layer == monitor.BoundCommand && c.CPU != nil {
		return fmt.Sprintf("command on CPU %d", *c.CPU)
	}
	return string(c.Layer) + " " + c.Subject
}
