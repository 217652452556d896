package report

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/nicdiag/nicdiag/internal/unit"
)

// series is one line of a line chart.
type series struct {
	name   string
	color  string
	dashed bool
	pts    []cell // x1 is the point's time; v NaN breaks the line
}

// refLine is a horizontal line across a line chart's plot, at a level
// that is not a function of time (a ceiling), labelled above it.
type refLine struct {
	v      float64 // the level, in the chart's unit
	label  string  // written above the line, inside the plot: short
	tip    string  // the line's <title>: the whole label
	strong bool    // solid and dark; else dashed and grey
}

// shareBar is a ceiling that is a share, not a rate (a CPU's busy time):
// drawn as a bar of its share under the plot, never as a line the
// traffic could cross.
type shareBar struct {
	name   string  // left of the bar: "core CPU 2"
	share  float64 // 0 to 1
	label  string  // right of the bar: "99 % busy, bound this run"
	tip    string
	strong bool
}

// Label geometry: labelGap is the least distance between two reference
// line labels' baselines (10px text).
const (
	labelGap  = 12
	noteChars = 150 // a note's line, wrapped at a space
	shareH    = 10  // a share bar's height
	shareRowH = 18
	// shareLabelChars is the most characters of a share bar's name, in
	// the 180px left of the plot.
	shareLabelChars = 32
)

// lineChart draws series over time on a linear axis from zero.
type lineChart struct {
	kind, title string
	series      []series
	total       float64
	empty       string // said inside the plot when every series is zero
	// refs are horizontal lines; the axis reaches the highest of them.
	refs []refLine
	// shares are ceilings drawn as bars under the plot, with their
	// heading.
	shares    []shareBar
	sharesTop string
	// legend adds entries after the series' (the kinds of ref line).
	legend []series
	// notes are lines of text under the time axis, wrapped.
	notes []string
}

func (c *lineChart) svg() string {
	d := &svgDoc{}
	d.text(plotX-180, 20, "start", "t", c.title)
	hi := 0.0
	for _, s := range c.series {
		for _, p := range s.pts {
			if !math.IsNaN(p.v) && !math.IsInf(p.v, 0) {
				hi = max(hi, p.v)
			}
		}
	}
	seriesHi := hi
	for _, r := range c.refs {
		if !math.IsNaN(r.v) && !math.IsInf(r.v, 0) {
			// Headroom above the highest line for its label.
			hi = max(hi, r.v*1.12)
		}
	}
	top, step := niceMax(hi)
	bottom := float64(plotTop + lineH)
	y := func(v float64) float64 { return bottom - lineH*max(0, min(v, top))/top }
	for i := 0; i <= min(20, int(math.Round(top/step))); i++ {
		v := float64(i) * step
		d.printf(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e5e5e5"/>`+"\n", plotX, num(y(v)), plotX+plotW, num(y(v)))
		d.text(plotX-6, y(v)+4, "end", "a", unit.Count(v))
	}
	for _, r := range c.refs {
		d.printf(`<line class="ref" x1="%d" y1="%s" x2="%d" y2="%s" %s><title>%s</title></line>`+"\n",
			plotX, num(y(r.v)), plotX+plotW, num(y(r.v)), refStroke(r.strong), esc(r.tip))
	}
	c.drawSeries(d, y)
	if seriesHi == 0 && c.empty != "" {
		d.text(plotX+plotW/2, bottom-lineH/2, "middle", "m", c.empty)
	}
	d.refLabels(c.refs, y)
	d.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", plotX, plotTop, plotW, lineH)
	d.timeAxis(bottom, c.total)
	ly := float64(plotTop) + 6
	for _, s := range append(slices.Clip(c.series), c.legend...) {
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6 3"`
		}
		d.printf(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="%s" stroke-width="2"%s/>`+"\n", sideX, num(ly), sideX+18, num(ly), s.color, dash)
		d.text(sideX+22, ly+4, "start", "s", s.name)
		ly += 16
	}
	ny := d.shareBars(c.shares, c.sharesTop, bottom+48)
	for _, n := range c.notes {
		for _, l := range wrapText(n, noteChars) {
			d.text(plotX-180, ny, "start", "m", l)
			ny += 15
		}
	}
	d.h = int(max(bottom+40, ly, ny-8))
	return d.wrap(c.kind, c.title)
}

// drawSeries draws each series as polylines, broken at NaN.
func (c *lineChart) drawSeries(d *svgDoc, y func(float64) float64) {
	scale := plotW / c.total
	for _, s := range c.series {
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6 3"`
		}
		var pts []string
		flush := func() {
			if len(pts) == 1 {
				pts = append(pts, pts[0])
			}
			if len(pts) > 0 {
				d.printf(`<polyline fill="none" stroke="%s" stroke-width="1.8"%s points="%s"><title>%s</title></polyline>`+"\n",
					s.color, dash, strings.Join(pts, " "), esc(s.name))
			}
			pts = pts[:0]
		}
		for _, p := range s.pts {
			if math.IsNaN(p.v) {
				flush()
				continue
			}
			x := plotX + (p.x0+p.x1)/2*scale
			pts = append(pts, num(x)+","+num(y(p.v)))
		}
		flush()
	}
}

// shareBars draws the share ceilings from y down, under a heading, and
// returns where the text under them starts.
func (d *svgDoc) shareBars(bars []shareBar, heading string, y float64) float64 {
	if len(bars) == 0 {
		return y
	}
	d.text(plotX-180, y, "start", "s", heading)
	y += 8
	d.printf(`<g class="shares">` + "\n")
	for _, b := range bars {
		fill := "#8c8c8c"
		if b.strong {
			fill = "#000000"
		}
		w := plotW * max(0, min(b.share, 1))
		d.printf(`<rect class="share-track" x="%d" y="%s" width="%d" height="%d" fill="#eeeeee" stroke="#bbbbbb"/>`+"\n", plotX, num(y), plotW, shareH)
		d.printf(`<rect class="share" x="%d" y="%s" width="%s" height="%d" fill="%s"><title>%s</title></rect>`+"\n", plotX, num(y), num(w), shareH, fill, esc(b.tip))
		d.text(plotX-6, y+shareH-1, "end", "s", clipRunes(b.name, shareLabelChars))
		d.text(plotX+plotW+6, y+shareH-1, "start", "s", b.label)
		y += shareRowH
	}
	d.printf("</g>\n")
	return y + 14
}

// refStroke is a reference line's stroke attributes.
func refStroke(strong bool) string {
	if strong {
		return `stroke="#000000" stroke-width="2"`
	}
	return `stroke="#555555" stroke-width="1.2" stroke-dasharray="8 4"`
}

// refLabels writes each reference line's label above it, none over
// another: the labels are laid out in the order of their lines, each at
// least labelGap above the one below it, and pushed down from the top of
// the plot where there is no room above. A white halo keeps them legible
// over a series.
func (d *svgDoc) refLabels(refs []refLine, y func(float64) float64) {
	order := make([]int, len(refs))
	for i := range order {
		order[i] = i
	}
	// Lowest line first (largest y).
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(refs[a].v, refs[b].v) })
	base := make([]float64, len(order))
	for k, i := range order {
		base[k] = y(refs[i].v) - 3
		if k > 0 {
			base[k] = min(base[k], base[k-1]-labelGap)
		}
	}
	// From the top down: no label above the plot's top, and each still
	// labelGap above the next one down.
	for k := len(base) - 1; k >= 0; k-- {
		limit := float64(plotTop + 10)
		if k < len(base)-1 {
			limit = base[k+1] + labelGap
		}
		base[k] = max(base[k], limit)
	}
	for k, i := range order {
		d.printf(`<text class="ref-label" x="%d" y="%s" text-anchor="start" font-size="10" paint-order="stroke" stroke="#ffffff" stroke-width="3" stroke-linejoin="round" fill="#222222">%s<title>%s</title></text>`+"\n",
			plotX+4, num(base[k]), esc(refs[i].label), esc(refs[i].tip))
	}
}

// wrapText cuts s into lines of at most n characters at spaces (a word
// longer than n is a line of its own, cut).
func wrapText(s string, n int) []string {
	indent := s[:len(s)-len(strings.TrimLeft(s, " "))]
	n -= len(indent)
	var out []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) <= n:
			line += " " + w
		default:
			out = append(out, line)
			line = w
		}
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	for i := range out {
		out[i] = indent + clipRunes(out[i], n)
	}
	return out
}
