package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"html"
	"html/template"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/unit"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
)

// fieldRun is one of the recorded field-report runs in ../testdata/runs
// (run_test.go in the module root writes them) and what its report must
// say.
type fieldRun struct {
	file  string
	bound monitor.Bound
	// chart must appear in the ceiling chart (escaped as SVG text is).
	chart []string
	// offScale must appear among the chart's notes of ceilings not drawn.
	offScale []string
	// reached is the level of the ceiling that bound the run, as the
	// chart's axis reads it (0: none bound, or a CPU's).
	reached float64
	// shares must appear among the CPU ceilings drawn as bars;
	// strongShare: the one that bound the run is one of them.
	shares      []string
	strongShare bool
}

var fieldRuns = []fieldRun{
	{file: "82576-seed-pcie.jsonl", bound: monitor.BoundPCIe,
		chart: []string{
			"pcie 1435 Mb/s, 96 % reached, bound this run: the 2.5 GT/s x1 link at 0000:00:1c.0",
			// One port's link of two: its own figure, and where the sum of
			// both ports is with it full.
			"ethernet 987 Mb/s for enp1s0f0 (1974 Mb/s summed), 70 % reached, next: enp1s0f0's 1000 Mb/s link (987 Mb/s at 1518-byte frames)",
			"ethernet 987 Mb/s for enp1s0f1 (1974 Mb/s summed), 70 % reached: enp1s0f1's 1000 Mb/s link",
		},
		// A CPU's ceiling is a share, drawn as a bar, not a line.
		shares:  []string{"core CPU 0", "core 4445 Mb/s, 31 % reached: CPU 0 (29 % irq+softirq)"},
		reached: 1435.25},
	{file: "i350-same-adapter-ethernet.jsonl", bound: monitor.BoundEthernet,
		chart: []string{"ethernet 987 Mb/s", "bound this run: enp1s0f0's 1000 Mb/s link (987 Mb/s at 1518-byte frames)",
			"pcie 2966 Mb/s, 66 % reached: the 5 GT/s x1 link at 0000:00:1c.0"},
		reached: 1974},
	{file: "ccr2004-fastpath-off-outside.jsonl", bound: monitor.BoundOutside,
		// The nearest ceiling (the card's) and the nearest inside the host
		// (CPU 0) are drawn even above 3× the peak.
		chart:  []string{"card 9400 Mb/s, 30 % reached: what a MikroTik CCR2004-1G-2XS-PCIe router card is known to move (9400 Mb/s)"},
		shares: []string{"core 17.5 Gb/s, 16 % reached, next: CPU 0 (10 % irq+softirq)"},
		offScale: []string{"Off the scale (above 3× the peak of 2804 Mb/s), not drawn:",
			"pcie 54.4 Gb/s, 5.2 % reached: the 8 GT/s x8 link at 0000:00:01.0"}},
	{file: "apu1c-rtl8111e-core.jsonl", bound: monitor.BoundCore,
		chart:       []string{"pcie 1422 Mb/s for enp7s0 (1456 Mb/s summed), 58 % reached: the 2.5 GT/s x1 link at 0000:00:1c.2"},
		shares:      []string{"core CPU 0", "core 855 Mb/s, 100 % reached, bound this run: CPU 0 (99 % irq+softirq)"},
		strongShare: true},
}

// tmplEsc is s as html/template writes it in text, and so the page (it
// escapes more than html.EscapeString: "+" too).
func tmplEsc(s string) string {
	var b strings.Builder
	if err := template.Must(template.New("").Parse("{{.}}")).Execute(&b, s); err != nil {
		panic(err)
	}
	return b.String()
}

func readRun(t *testing.T, name string) *monitor.Record {
	t.Helper()
	rec, err := monitor.ReadRecordFile(filepath.Join("..", "testdata", "runs", name))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Verdict == nil {
		t.Fatal("ReadRecord left Verdict nil")
	}
	return rec
}

// chartSVG cuts the chart of class kind out of a page or SVG document.
func chartSVG(t *testing.T, doc, kind string) string {
	t.Helper()
	i := strings.Index(doc, `class="chart `+kind+`"`)
	if i < 0 {
		t.Fatalf("no %s chart", kind)
	}
	i = strings.LastIndex(doc[:i], "<svg ")
	j := strings.Index(doc[i:], "</svg>")
	return doc[i : i+j+len("</svg>")]
}

// section is the page's verdict section: from its heading to the next.
func section(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, `<h2 id="verdict">`)
	j := strings.Index(page, `<h2 id="run">`)
	if i < 0 || j < i {
		t.Fatal("the page has no verdict section before the run's facts")
	}
	return page[i:j]
}

func wellFormed(t *testing.T, what, doc string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", what, err)
		}
	}
}

// TestFieldRunVerdicts: each field-report run's page opens with its
// verdict (bound, sentence, numbers, every ceiling and every NIC
// direction), and its ceiling chart draws every ceiling with its label, or
// lists it as off the scale.
func TestFieldRunVerdicts(t *testing.T) {
	for _, fr := range fieldRuns {
		t.Run(fr.file, func(t *testing.T) {
			rec := readRun(t, fr.file)
			v := rec.Verdict
			if v.Bound != fr.bound {
				t.Fatalf("bound %s, want %s: %s", v.Bound, fr.bound, v.Summary)
			}
			page := string(render(t, rec, HTML))
			checkVerdictSection(t, fr, v, page)
			checkCeilingChart(t, fr, rec, page)
		})
	}
}

// checkVerdictSection: the page's verdict section, at the top, states the
// bound, the sentence, the numbers, every ceiling and every NIC direction.
func checkVerdictSection(t *testing.T, fr fieldRun, v *monitor.Verdict, page string) {
	t.Helper()
	sec := section(t, page)
	if strings.Index(page, `<h2 id="verdict">`) > strings.Index(page, `<h2 id="charts">`) {
		t.Error("the verdict is not at the top of the page")
	}
	want := []string{
		"<strong>Bound:</strong> <code>" + string(fr.bound) + "</code>",
		tmplEsc(v.Summary),
		"achieved vs ceiling", "next ceiling",
		`class="chart lines-ceilings"`,
	}
	if v.CeilingMbps != nil {
		want = append(want, monitor.FormatMbps(v.AchievedMbps)+" of "+monitor.FormatMbps(*v.CeilingMbps)+", "+monitor.FormatShare(*v.Share))
	}
	if v.Next != nil {
		want = append(want, tmplEsc(ceilingWords(*v.Next)))
	}
	for _, c := range v.Ceilings {
		want = append(want, "<td>"+string(c.Layer)+"</td><td>"+tmplEsc(c.What)+"</td>",
			"<td>"+monitor.FormatMbps(c.AchievedMbps)+"</td><td>"+monitor.FormatMbps(c.CeilingMbps)+"</td><td>"+monitor.FormatShare(c.Share)+"</td>")
	}
	for _, tr := range v.Traffic {
		want = append(want, "<td>"+tmplEsc(tr.NIC)+"</td><td>"+tr.Direction+"</td><td>"+unit.Count(tr.FramesPerS)+"</td><td>"+monitor.FormatMbps(tr.AchievedMbps)+"</td>")
	}
	for _, w := range want {
		if !strings.Contains(sec, w) {
			t.Errorf("the verdict section lacks %q", w)
		}
	}
	if n := strings.Count(sec, `<tr class="reached"><td>bound this run</td>`); (v.Limit != nil) != (n == 1) || n > 1 {
		t.Errorf("%d rows marked as the bound, limit %v", n, v.Limit)
	}
}

// checkCeilingChart: the ceiling chart, the same on the page and in the
// SVG document, draws every ceiling with its label or lists it as off the
// scale, the bound one where its figure stands on the axis.
func checkCeilingChart(t *testing.T, fr fieldRun, rec *monitor.Record, page string) {
	t.Helper()
	v := rec.Verdict
	svgDoc := string(render(t, rec, SVG))
	wellFormed(t, "the SVG document", svgDoc)
	ch := chartSVG(t, svgDoc, "lines-ceilings")
	if strings.Replace(ch, `<svg x="0" y="0" `, "<svg ", 1) != chartSVG(t, page, "lines-ceilings") {
		t.Error("the page and the SVG draw different ceiling charts")
	}
	if strings.Index(svgDoc, "lines-ceilings") > strings.Index(svgDoc, "heatmap-load") {
		t.Error("the ceiling chart is not the SVG document's first")
	}
	for _, w := range fr.chart {
		if !strings.Contains(ch, html.EscapeString(w)) {
			t.Errorf("the chart lacks %q", w)
		}
	}
	for _, w := range fr.offScale {
		if !strings.Contains(ch, html.EscapeString(w)) {
			t.Errorf("the chart's notes lack %q", w)
		}
	}
	for _, w := range fr.shares {
		if i := strings.Index(ch, `<g class="shares">`); i < 0 || !strings.Contains(ch[i:], html.EscapeString(w)) {
			t.Errorf("the CPU ceilings' bars lack %q", w)
		}
	}
	if got := strings.Contains(ch, `<rect class="share" x="`+strconv.Itoa(plotX)) && strings.Contains(ch, `fill="#000000"><title>`); got != fr.strongShare {
		t.Errorf("the bound ceiling drawn as a bar: %v, want %v", got, fr.strongShare)
	}
	// Every ceiling is drawn (a line, or a bar for a CPU's) or
	// listed, by layer and figure.
	drawn := strings.Count(ch, `<line class="ref"`) + strings.Count(ch, `<rect class="share" `)
	for _, c := range v.Ceilings {
		if !strings.Contains(ch, string(c.Layer)+" "+monitor.FormatMbps(c.CeilingMbps)) {
			t.Errorf("the chart neither draws nor lists the %s ceiling %s (%s)", c.Layer, monitor.FormatMbps(c.CeilingMbps), c.What)
		}
	}
	listed := 0
	for _, o := range fr.offScale {
		if !strings.HasPrefix(o, "Off the scale") {
			listed++
		}
	}
	if drawn+listed != len(v.Ceilings) {
		t.Errorf("%d ceiling lines and %d listed for %d ceilings", drawn, listed, len(v.Ceilings))
	}
	if fr.reached > 0 {
		ys := strongLineY(t, ch)
		if got := axisValue(t, ch, ys); math.Abs(got-fr.reached) > 0.01*fr.reached {
			t.Errorf("the bound ceiling is drawn at %.1f Mb/s on the axis, want %.1f", got, fr.reached)
		}
	}
}

var (
	strongRE = regexp.MustCompile(`<line class="ref" x1="\d+" y1="([0-9.]+)" x2="\d+" y2="[0-9.]+" stroke="#000000"`)
	gridRE   = regexp.MustCompile(`<line x1="\d+" y1="([0-9.]+)" x2="\d+" y2="[0-9.]+" stroke="#e5e5e5"/>\n<text x="\d+" y="[0-9.]+" text-anchor="end" class="a">([0-9.]+)(k?)</text>`)
)

func strongLineY(t *testing.T, ch string) float64 {
	t.Helper()
	m := strongRE.FindAllStringSubmatch(ch, -1)
	if len(m) != 1 {
		t.Fatalf("%d lines drawn as the bound ceiling, want 1", len(m))
	}
	y, _ := strconv.ParseFloat(m[0][1], 64)
	return y
}

// axisValue reads the value at height y off the chart's labelled grid.
func axisValue(t *testing.T, ch string, y float64) float64 {
	t.Helper()
	m := gridRE.FindAllStringSubmatch(ch, -1)
	if len(m) < 2 {
		t.Fatalf("%d labelled grid lines", len(m))
	}
	val := func(i int) (y, v float64) {
		y, _ = strconv.ParseFloat(m[i][1], 64)
		v, _ = strconv.ParseFloat(m[i][2], 64)
		if m[i][3] == "k" {
			v *= 1000
		}
		return y, v
	}
	y0, v0 := val(0)
	y1, v1 := val(len(m) - 1)
	return v0 + (y-y0)*(v1-v0)/(y1-y0)
}

// TestCeilingSeries: the chart's lines are each sample's Ethernet frame
// Mb/s, (bytes + 4 × packets) × 8 / 1e6, summed over the NICs, and its
// ceilings sit where the summed busier direction is with each full.
func TestCeilingSeries(t *testing.T) {
	rec := readRun(t, "82576-seed-pcie.jsonl")
	c, names := ceilingLines(newView(rec.Samples), rec.Verdict)
	if strings.Join(names, ",") != "enp1s0f0,enp1s0f1" || len(c.series) != 2 {
		t.Fatalf("names %v, %d series", names, len(c.series))
	}
	for i, s := range rec.Samples {
		var rx, tx float64
		for _, n := range s.NICs {
			rx += (n.RXBytesPerS + 4*n.RXPacketsPerS) * 8 / 1e6
			tx += (n.TXBytesPerS + 4*n.TXPacketsPerS) * 8 / 1e6
		}
		if math.Abs(c.series[0].pts[i].v-rx) > 1e-9 || math.Abs(c.series[1].pts[i].v-tx) > 1e-9 {
			t.Errorf("sample %d: rx %v tx %v, want %v %v", i, c.series[0].pts[i].v, c.series[1].pts[i].v, rx, tx)
		}
		if math.Abs(rx-1378.10112) > 1e-6 {
			t.Errorf("sample %d: rx %v Mb/s, want 1378.1 (2 ports × 56740 frames/s of 1518 bytes)", i, rx)
		}
	}
	want := []struct {
		v      float64
		strong bool
	}{{1435.25, true}, {1974.0, false}, {1974.0, false}} // the core, at 4445, is off the scale
	if len(c.refs) != len(want) {
		t.Fatalf("%d ceiling lines, want %d", len(c.refs), len(want))
	}
	for i, w := range want {
		if r := c.refs[i]; math.Abs(r.v-w.v) > 0.5 || r.strong != w.strong {
			t.Errorf("line %d at %.2f (strong %v), want %.2f (%v): %s", i, r.v, r.strong, w.v, w.strong, r.label)
		}
	}
}

// hostileRecord is a record built by hand (no Verdict: Render judges it)
// whose NIC names and limits carry markup.
func hostileRecord() *monitor.Record {
	const evil = `eth<script>alert(1)</script>`
	const odd = `x"'&<b>y`
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var samples []irq.Sample
	for i := range 5 {
		busy := 30.0
		samples = append(samples, irq.Sample{Time: t0.Add(time.Duration(i+1) * time.Second), IntervalS: 1, IRQTimeAccounted: true,
			CPUs: []irq.CPURate{{CPU: 0, SoftIRQPct: 25, BusyPct: busy, IRQPct: &busy}},
			NICs: []irq.NICRate{
				{Name: evil, RXPacketsPerS: 80000, RXBytesPerS: 80000 * 1514, TXPacketsPerS: 40000, TXBytesPerS: 40000 * 66},
				{Name: odd, RXPacketsPerS: 1000, RXBytesPerS: 1000 * 1514},
			}})
	}
	return &monitor.Record{Source: `<i>run</i>.jsonl`, Samples: samples, Limits: []monitor.Limits{
		{NIC: evil, PortMbps: 1000},
		{NIC: odd, RealDevice: `<img src=x onerror=alert(2)> emulating it`, BoundBy: `</td><script>`, MovesMbps: 2000},
	}}
}

// TestVerdictHostile: a record's strings reach the verdict's sentence,
// tables and chart labels escaped, in the page and in the SVG; the
// verdict of a Record without one is judged.
func TestVerdictHostile(t *testing.T) {
	rec := hostileRecord()
	v := monitor.Judge(rec.Samples, rec.Limits)
	if v.Bound != monitor.BoundEthernet || !strings.Contains(v.Ceilings[0].What, "<script>") {
		t.Fatalf("the hostile run's verdict is %s, nearest %+v: the test no longer tests escaping", v.Bound, v.Ceilings)
	}
	page := string(render(t, rec, HTML))
	svgDoc := string(render(t, rec, SVG))
	for what, doc := range map[string]string{"page": page, "SVG": svgDoc} {
		for _, bad := range []string{"<script", "<img", "<b>", "<i>", "</td><script"} {
			if strings.Contains(strings.ToLower(doc), bad) {
				t.Errorf("the %s contains %q unescaped", what, bad)
			}
		}
		ch := chartSVG(t, doc, "lines-ceilings")
		wellFormed(t, "the "+what+"'s ceiling chart", ch)
		for _, w := range []string{"ethernet 987 Mb/s", "bound this run: eth&lt;script&gt;alert(1)&lt;/script&gt;&#39;s 1000 Mb/s link"} {
			if !strings.Contains(ch, w) {
				t.Errorf("the %s's ceiling chart lacks %q", what, w)
			}
		}
	}
	wellFormed(t, "the SVG document", svgDoc)
	sec := section(t, page)
	for _, w := range []string{"<code>ethernet</code>", "this one was judged here from its samples and limits",
		"<td>eth&lt;script&gt;alert(1)&lt;/script&gt;</td>", "<td>x&#34;&#39;&amp;&lt;b&gt;y</td>",
		"&lt;img src=x onerror=alert(2)&gt;", tmplEsc(v.Summary)} {
		if !strings.Contains(sec, w) {
			t.Errorf("the verdict section lacks %q", w)
		}
	}
	// With the verdict given, the same chart and no "judged here".
	rec.Verdict = &v
	page2 := string(render(t, rec, HTML))
	if strings.Contains(page2, "judged here") || chartSVG(t, page2, "lines-ceilings") != chartSVG(t, page, "lines-ceilings") {
		t.Error("a given verdict and a judged one draw differently")
	}
}

// TestCeilingChartEdges: a record without NICs says there is nothing to
// draw; one that moved nothing has no ceiling and says so; a ceiling is
// never drawn off the plot.
func TestCeilingChartEdges(t *testing.T) {
	s := syntheticSamples()[:5]
	for i := range s {
		s[i].NICs = nil
	}
	page := string(render(t, &monitor.Record{Samples: s}, HTML))
	if !strings.Contains(page, "there is no throughput to set against a ceiling") || !strings.Contains(page, "<code>unknown</code>") {
		t.Error("a record without NICs: no note in the ceiling chart, or a bound other than unknown")
	}
	s = syntheticSamples()[:5]
	for i := range s {
		for j := range s[i].NICs {
			n := &s[i].NICs[j]
			n.RXBytesPerS, n.RXPacketsPerS, n.TXBytesPerS, n.TXPacketsPerS = 0, 0, 0, 0
		}
	}
	ch := chartSVG(t, string(render(t, &monitor.Record{Samples: s}, SVG)), "lines-ceilings")
	if !strings.Contains(ch, "No ceiling was judged for this run (verdict: unknown).") || strings.Contains(ch, `class="ref"`) {
		t.Error("an idle run's chart does not say it has no ceiling")
	}
	// Many ceilings: at most maxRefs drawn, the rest counted.
	var b bytes.Buffer
	rec := hostileRecord()
	for i := range 12 {
		name := "p" + strconv.Itoa(i)
		rec.Limits = append(rec.Limits, monitor.Limits{NIC: name, PortMbps: 1000 + float64(i)})
		for j := range rec.Samples {
			rec.Samples[j].NICs = append(rec.Samples[j].NICs, irq.NICRate{Name: name, RXPacketsPerS: 50000, RXBytesPerS: 50000 * 1514})
		}
	}
	if err := Render(&b, rec, SVG); err != nil {
		t.Fatal(err)
	}
	ch = chartSVG(t, b.String(), "lines-ceilings")
	if n := strings.Count(ch, `<line class="ref"`); n != maxRefs || !strings.Contains(ch, "farther ceilings are not drawn") {
		t.Errorf("%d ceiling lines drawn of 14, want %d and a note", n, maxRefs)
	}
	for _, m := range regexp.MustCompile(`<line class="ref" x1="\d+" y1="([0-9.]+)"`).FindAllStringSubmatch(ch, -1) {
		if y, _ := strconv.ParseFloat(m[1], 64); y < plotTop || y > plotTop+lineH {
			t.Errorf("a ceiling line at y=%v, outside the plot", y)
		}
	}
}
