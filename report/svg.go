package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nicdiag/nicdiag/internal/unit"
)

// Geometry shared by every chart, in SVG user units (CSS pixels).
const (
	chartW      = 960 // width of every chart
	plotX       = 190 // left edge of the plot area; row labels sit left of it
	plotW       = 640 // width of the plot area
	plotTop     = 34  // top of the plot area, below the title
	sideX       = plotX + plotW + 14
	lineH       = 180 // height of a line chart's plot area
	maxRowH     = 18  // a heatmap row's height when there are few rows
	heatH       = 480 // a heatmap's plot height is at most this, unless rows are minRowH
	minRowH     = 3
	legendSteps = 20
	fontFamily  = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif"
)

// rowHeight is the height of one heatmap row for n rows.
func rowHeight(n int) int {
	if n <= 0 {
		return maxRowH
	}
	h := heatH / n
	return max(minRowH, min(maxRowH, h))
}

// color is an sRGB colour.
type color struct{ r, g, b uint8 }

func (c color) String() string { return fmt.Sprintf("#%02x%02x%02x", c.r, c.g, c.b) }

func hex(s string) color {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	return color{uint8(v >> 16), uint8(v >> 8), uint8(v)}
}

// palette maps [0,1] onto evenly spaced colour stops.
type palette []color

func newPalette(stops ...string) palette {
	p := make(palette, len(stops))
	for i, s := range stops {
		p[i] = hex(s)
	}
	return p
}

var (
	// loadPalette is ColorBrewer's YlOrRd: pale yellow (idle) to dark red
	// (saturated). Lightness falls monotonically, so it survives greyscale
	// printing and the common colour-vision deficiencies.
	loadPalette = newPalette("#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#bd0026", "#800026")
	// ratePalette is ColorBrewer's Blues, for rates that have no fixed top.
	ratePalette = newPalette("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")
	noData      = hex("#d9d9d9")
	// seriesColors are Okabe and Ito's colour-blind safe set.
	seriesColors = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442"}
)

// at returns the colour for f in [0,1] (clamped), interpolated in sRGB.
func (p palette) at(f float64) color {
	if math.IsNaN(f) {
		return noData
	}
	f = max(0, min(1, f))
	x := f * float64(len(p)-1)
	i := int(x)
	if i >= len(p)-1 {
		return p[len(p)-1]
	}
	t := x - float64(i)
	a, b := p[i], p[i+1]
	mix := func(u, v uint8) uint8 { return uint8(math.Round(float64(u) + t*(float64(v)-float64(u)))) }
	return color{mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)}
}

// num formats a coordinate: at most one decimal, no trailing zeros.
func num(v float64) string {
	v = math.Round(v*10) / 10
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// esc escapes text for SVG and HTML.
func esc(s string) string { return html.EscapeString(s) }

// pct formats a percentage (0 to 100) as the verdict writes shares:
// "37 %", "0.16 %".
func pct(p float64) string { return unit.Share(p / 100) }

// niceStep returns a step of 1, 2 or 5 times a power of ten that cuts span
// into at most n parts.
func niceStep(span float64, n int) float64 {
	if !(span > 0) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	if !(p > 0) || math.IsInf(p, 0) {
		return span
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// niceMax rounds v up to a multiple of its nice step (at least 1).
func niceMax(v float64) (top, step float64) {
	if !(v > 0) || math.IsInf(v, 0) || v > 1e18 {
		if v > 1e18 {
			v = 1e18
		} else {
			v = 1
		}
	}
	step = niceStep(v, 5)
	top = math.Ceil(v/step) * step
	return top, step
}

// svgDoc is a chart being written.
type svgDoc struct {
	b strings.Builder
	h int // height, known once the chart is laid out
}

func (d *svgDoc) printf(format string, args ...any) { fmt.Fprintf(&d.b, format, args...) }

// text writes a text element; anchor is start, middle or end.
func (d *svgDoc) text(x, y float64, anchor, class, s string) {
	d.printf(`<text x="%s" y="%s" text-anchor="%s" class="%s">%s</text>`+"\n", num(x), num(y), anchor, class, esc(s))
}

// wrap returns the finished chart as a standalone <svg> element. kind is a
// class naming the chart (the test and the page's CSS use it).
func (d *svgDoc) wrap(kind, title string) string {
	var out strings.Builder
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" class="chart %s" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s" font-family="%s" font-size="11">`+"\n",
		kind, chartW, d.h, chartW, d.h, esc(title), fontFamily)
	out.WriteString(`<style>.t{font-size:14px;font-weight:bold}.a{fill:#444}.s{fill:#222}.m{fill:#666;font-style:italic}</style>` + "\n")
	fmt.Fprintf(&out, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartW, d.h)
	out.WriteString(d.b.String())
	out.WriteString("</svg>\n")
	return out.String()
}

// timeAxis draws the seconds axis under a plot that spans total seconds.
func (d *svgDoc) timeAxis(y, total float64) {
	d.printf(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#444"/>`+"\n", plotX, num(y), plotX+plotW, num(y))
	step := niceStep(total, 8)
	n := 0
	if step > 0 {
		n = min(20, int(math.Floor(total/step*(1+1e-9))))
	}
	for i := 0; i <= n; i++ {
		t := float64(i) * step
		x := plotX + plotW*t/total
		d.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#444"/>`+"\n", num(x), num(y), num(x), num(y+4))
		d.text(x, y+15, "middle", "a", strconv.FormatFloat(t, 'f', -1, 64))
	}
	d.text(plotX+plotW/2, y+29, "middle", "a", "seconds since the start of the run")
}

// cell is one heatmap rectangle.
type cell struct {
	x0, x1 float64 // seconds since the start
	v      float64 // NaN: no data
}

// heatmap is a grid of rows (CPUs or queues) over time.
type heatmap struct {
	kind, title string
	rows        []string // row labels
	rowTips     []string // full row names for the tooltip
	cells       [][]cell // [row][column]
	top         float64  // the value drawn in the palette's last colour
	pal         palette  // colour scale
	fmtV        func(float64) string
	side        []float64 // per-row figure written right of the plot (NaN: none)
	sideHead    string
	legend      string // what the colour means, e.g. "irq+softirq time"
	total       float64
	tips        bool // per-cell tooltips (off for huge grids)
}

func (h *heatmap) svg() string {
	d := &svgDoc{}
	rh := rowHeight(len(h.rows))
	d.text(plotX-180, 20, "start", "t", h.title)
	if h.sideHead != "" {
		d.text(sideX, plotTop-4, "start", "a", h.sideHead)
	}
	scale := plotW / h.total
	d.printf(`<g class="cells" shape-rendering="crispEdges" data-x="%d" data-y="%d" data-row-height="%d">`+"\n", plotX, plotTop, rh)
	for r, row := range h.cells {
		y := plotTop + r*rh
		for _, c := range row {
			col := h.pal.at(c.v / h.top)
			x0, x1 := plotX+c.x0*scale, plotX+c.x1*scale
			if h.tips {
				val := "no data"
				if !math.IsNaN(c.v) {
					val = h.fmtV(c.v)
				}
				d.printf(`<rect x="%s" y="%d" width="%s" height="%d" fill="%s"><title>%s, %s–%s s: %s</title></rect>`+"\n",
					num(x0), y, num(x1-x0), rh, col, esc(h.rowTips[r]), num(c.x0), num(c.x1), esc(val))
			} else {
				d.printf(`<rect x="%s" y="%d" width="%s" height="%d" fill="%s"/>`+"\n", num(x0), y, num(x1-x0), rh, col)
			}
		}
	}
	d.printf("</g>\n")
	every := 1 // label every row, or every n-th when rows are thin
	if rh < 10 {
		every = (10 + rh - 1) / rh
	}
	for r, label := range h.rows {
		if r%every != 0 {
			continue
		}
		y := float64(plotTop+r*rh) + float64(rh)/2 + 4
		d.printf(`<text x="%d" y="%s" text-anchor="end" class="s"><title>%s</title>%s</text>`+"\n",
			plotX-6, num(y), esc(h.rowTips[r]), esc(label))
		if h.side != nil && !math.IsNaN(h.side[r]) {
			d.text(sideX, y, "start", "s", h.fmtV(h.side[r]))
		}
	}
	bottom := float64(plotTop + len(h.rows)*rh)
	d.printf(`<rect x="%d" y="%d" width="%d" height="%s" fill="none" stroke="#444"/>`+"\n", plotX, plotTop, plotW, num(bottom-plotTop))
	d.timeAxis(bottom, h.total)
	// Legend: the colour scale in legendSteps swatches.
	ly := bottom + 42
	d.text(plotX-6, ly+9, "end", "a", h.legend)
	sw := 16.0
	for i := range legendSteps {
		f := (float64(i) + 0.5) / legendSteps
		d.printf(`<rect x="%s" y="%s" width="%s" height="10" fill="%s"/>`+"\n", num(plotX+float64(i)*sw), num(ly), num(sw), h.pal.at(f))
	}
	d.text(plotX, ly+23, "start", "a", h.fmtV(0))
	d.text(plotX+legendSteps*sw, ly+23, "end", "a", h.fmtV(h.top))
	d.printf(`<rect x="%s" y="%s" width="%s" height="10" fill="%s"/>`+"\n", num(plotX+legendSteps*sw+40), num(ly), num(sw), noData)
	d.text(plotX+legendSteps*sw+40+sw+4, ly+9, "start", "a", "no data")
	d.h = int(ly) + 32
	return d.wrap(h.kind, h.title)
}

// clipRunes cuts s to at most n characters, with "…" when it was cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// message is a chart-sized note where a chart has nothing to draw.
func message(kind, title, msg string) string {
	d := &svgDoc{}
	d.text(plotX-180, 20, "start", "t", title)
	d.text(plotX-180, 44, "start", "m", msg)
	d.h = 60
	return d.wrap(kind, title)
}
