package report

// The page was once written by html/template from the template below; it
// is now written by hand (writePage), so that html/template stays out of
// the nicdiag binary, whose every command paid its package init at
// start-up. The template stays here as the oracle: writePage must write
// what it writes, byte for byte, for any page.

import (
	"bytes"
	"html/template"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/monitor"
)

// oraclePage is a page as the template read it: the charts' SVG as
// template.HTML, which the template writes unescaped. Its VerdictChart
// and Charts shadow the embedded page's.
type oraclePage struct {
	*page
	VerdictChart oracleChart
	CPUChart     *oracleChart
	Charts       []oracleChart
}

type oracleChart struct {
	chart
	Inline template.HTML
}

// oracle is p as the template wrote it.
func oracle(t testing.TB, p *page) []byte {
	t.Helper()
	op := oraclePage{page: p, VerdictChart: oracleChart{p.VerdictChart, template.HTML(p.VerdictChart.SVG)}}
	if p.CPUChart.ID != "" {
		op.CPUChart = &oracleChart{p.CPUChart, template.HTML(p.CPUChart.SVG)}
	}
	for _, c := range p.Charts {
		op.Charts = append(op.Charts, oracleChart{c, template.HTML(c.SVG)})
	}
	var b bytes.Buffer
	if err := oracleTmpl().Execute(&b, op); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pageFor is the page Render writes for rec.
func pageFor(rec *monitor.Record) *page {
	v := newView(rec.Samples)
	vd, computed := verdictOf(rec)
	p := newPage(rec, v, charts(v), vd, computed, ceilingChart(v, vd))
	p.CPUChart, _ = busyChart(vd)
	return p
}

// sameAsOracle fails t unless writePage writes p as the template did.
func sameAsOracle(t testing.TB, what string, p *page) {
	t.Helper()
	var got bytes.Buffer
	if err := writePage(&got, p); err != nil {
		t.Fatal(err)
	}
	want := oracle(t, p)
	if bytes.Equal(got.Bytes(), want) {
		return
	}
	g, w := got.Bytes(), want
	i := 0
	for i < min(len(g), len(w)) && g[i] == w[i] {
		i++
	}
	t.Fatalf("%s: the page differs from the template's at byte %d of %d (template's %d):\n got: %q\nwant: %q",
		what, i, len(g), len(w), g[max(0, i-80):min(len(g), i+80)], w[max(0, i-80):min(len(w), i+80)])
}

// TestPageOracleRecords: the pages of the test records, the golden ones
// among them, are the template's, byte for byte.
func TestPageOracleRecords(t *testing.T) {
	syn, err := monitor.ReadRecordFile(synthFile)
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string]*monitor.Record{
		"ccr2004-synthetic.html":           syn,
		"ccr2004-synthetic-truncated.html": truncatedRecord(t),
		"hostile":                          hostileRecord(),
	}
	for name, rec := range recs {
		p := pageFor(rec)
		sameAsOracle(t, name, p)
		if g, err := os.ReadFile(filepath.Join("testdata", "golden", name)); err == nil && !bytes.Equal(oracle(t, p), g) {
			t.Errorf("the template no longer writes the golden %s: the oracle or the golden is stale", name)
		}
		// The same record without its summary and verdict: computed here.
		bare := *rec
		bare.Summary, bare.Verdict, bare.Notes = nil, nil, append(bare.Notes, "a <note> & 'quote'")
		sameAsOracle(t, name+" without summary", pageFor(&bare))
	}
}

// hostileStrings are what a record's strings might hold.
var hostileStrings = []string{"", " ", "eth0", "<", ">", "&", `"`, "'", "+", "\x00", "\xff", "\xc3", "\xe2\x82",
	"</script>", "<script>alert(1)</script>", "&amp;", "&#34;", "a+b", "x\"'&<b>y", "\uFFFD", "\u2028", "–",
	"{{.Title}}", "\n", "\r\n\t", "]]>", "<!--", "-->", "\ufdd0", "\uffff", "é", "😀", "`", "=", "<svg onload=x>"}

// randomPage is a page of random shape whose strings are drawn from
// material and the hostile strings.
func randomPage(r *rand.Rand, material string) *page {
	str := func() string {
		var b strings.Builder
		for range r.IntN(4) {
			if material != "" && r.IntN(3) == 0 {
				i := r.IntN(len(material))
				b.WriteString(material[i : i+r.IntN(len(material)-i+1)])
			} else {
				b.WriteString(hostileStrings[r.IntN(len(hostileStrings))])
			}
		}
		return b.String()
	}
	strs := func() []string {
		n := r.IntN(4)
		if n == 0 {
			return nil
		}
		s := make([]string, n)
		for i := range s {
			s[i] = str()
		}
		return s
	}
	pairs := func() [][2]string {
		var ps [][2]string
		for range r.IntN(4) {
			ps = append(ps, [2]string{str(), str()})
		}
		return ps
	}
	rows := func() [][]string {
		var rs [][]string
		for range r.IntN(4) {
			rs = append(rs, strs())
		}
		return rs
	}
	ch := func() chart { return chart{ID: str(), Title: str(), Caption: str(), SVG: str()} }
	p := &page{Title: str(), Source: str(), VerdictChart: ch(), Facts: pairs(), Notes: strs(),
		Computed: r.IntN(2) == 0, CPUHead: strs(), CPURows: rows()}
	if r.IntN(2) == 0 {
		p.CPUChart = ch()
	}
	if r.IntN(4) != 0 {
		v := &pageVerdict{Bound: str(), BoundWords: str(), Summary: str(), Computed: r.IntN(2) == 0,
			Facts: pairs(), CeilHead: strs(), TrafHead: strs(), Traffic: rows(), Losses: strs(),
			StackHead: strs(), Stack: rows(), StackNote: str()}
		for range r.IntN(4) {
			v.Ceilings = append(v.Ceilings, pageCeiling{Role: str(), Cells: strs()})
		}
		p.Verdict = v
	}
	for range r.IntN(4) {
		f := finding.Finding{Code: finding.Code(str()), Subject: str(), Summary: str(), Fix: str()}
		p.Findings = append(p.Findings, pageFinding{Finding: f, Sev: str(), Evidence: pairs(), Numbers: pairs()})
	}
	for range r.IntN(4) {
		p.Charts = append(p.Charts, ch())
	}
	return p
}

// TestPageOracleRandom: random pages of hostile strings are the
// template's, byte for byte.
func TestPageOracleRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 2026))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		sameAsOracle(t, "random page "+strconv.Itoa(i), randomPage(r, ""))
	}
}

// FuzzPage: a random page whose strings are cut from the fuzzer's input
// is the template's, byte for byte.
// go test ./report -run '^$' -fuzz FuzzPage -fuzztime 20s
func FuzzPage(f *testing.F) {
	f.Add(uint64(1), "")
	f.Add(uint64(2), "<b>x</b> & \"y\" 'z' +1 \x00 \xff")
	f.Add(uint64(3), "</script><script>alert(1)</script>")
	f.Fuzz(func(t *testing.T, seed uint64, material string) {
		sameAsOracle(t, "fuzzed page", randomPage(rand.New(rand.NewPCG(seed, 0)), material))
	})
}

var oracleTmpl = sync.OnceValue(func() *template.Template { return template.Must(template.New("page").Parse(oracleHTML)) })

// oracleHTML is the template the page was written from, verbatim but for
// the style sheet, a constant both share (it holds no template action).
const oracleHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="nicdiag report">
<title>{{.Title}}</title>
` + pageStyle + `</head>
<body>
<h1>{{.Title}}</h1>
{{if .Notes}}<div class="notes"><strong>About this record:</strong>
<ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul></div>
{{end}}{{with .Verdict}}<h2 id="verdict">Run verdict</h2>
<div class="verdict bound-{{.Bound}}">
<p class="bound"><strong>Bound:</strong> <code>{{.Bound}}</code>: {{.BoundWords}}</p>
<p class="sentence">{{.Summary}}</p>
<dl class="facts">
{{range .Facts}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>
{{end}}</dl>
{{if .Computed}}<p>The record carries no verdict; this one was judged here from its samples and limits.</p>
{{end}}<h3 id="ceiling-table">Ceilings at this run's mix, nearest first</h3>
{{if .Ceilings}}<table class="ceilings"><tr>{{range .CeilHead}}<th>{{.}}</th>{{end}}</tr>
{{range .Ceilings}}<tr{{if .Role}} class="reached"{{end}}><td>{{.Role}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{else}}<p>No ceiling was judged: the record knows no line rate, PCIe path or CPU load to set the run against, or the run moved nothing.</p>
{{end}}<h3 id="traffic-table">Traffic over the samples with traffic</h3>
{{if .Traffic}}<table class="traffic"><tr>{{range .TrafHead}}<th>{{.}}</th>{{end}}</tr>
{{range .Traffic}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<p>Mb/s are Ethernet frame bits (header and FCS, no preamble or gap). A NIC's ceiling is what it would move in that direction with its nearest ceiling full, at the same mix.</p>
{{else}}<p>The record names no NIC.</p>
{{end}}{{if .Losses}}<h3 id="losses">Losses</h3>
<ul>{{range .Losses}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{if .StackHead}}<h3 id="stack">This host's stack</h3>
<table class="stack"><tr>{{range .StackHead}}<th>{{.}}</th>{{end}}</tr>
{{range .Stack}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{if .StackNote}}<p class="stack-note">{{.StackNote}}</p>
{{end}}</div>
{{end}}{{with .VerdictChart}}<figure id="{{.ID}}">
{{.Inline}}<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}{{with .CPUChart}}<figure id="{{.ID}}">
{{.Inline}}<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}<h2 id="run">The run</h2>
<dl class="facts">
{{range .Facts}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>
{{end}}</dl>
<h2 id="verdicts">Findings</h2>
{{if .Computed}}<p>The record carries no summary; these verdicts were computed from its samples.</p>
{{end}}{{range .Findings}}<div class="finding {{.Sev}}">
<p><span class="sev {{.Sev}}">{{.Sev}}</span> <code>{{.Code}}</code> on <strong>{{.Subject}}</strong></p>
<p>{{.Summary}}</p>
{{if .Fix}}<p><em>Usually fixed by:</em> {{.Fix}}</p>
{{end}}{{if or .Evidence .Numbers}}<table class="evidence"><tr><th>evidence</th><th>value</th></tr>
{{range .Evidence}}<tr><td><code>{{index . 0}}</code></td><td>{{index . 1}}</td></tr>
{{end}}{{range .Numbers}}<tr><td><code>{{index . 0}}</code></td><td>{{index . 1}}</td></tr>
{{end}}</table>
{{end}}</div>
{{else}}<p>No finding: no core was saturated by packet work, and softnet neither dropped nor ran out of budget often enough to matter.</p>
{{end}}
<h2 id="charts">Charts</h2>
{{range .Charts}}<figure id="{{.ID}}">
{{.Inline}}<figcaption>{{.Caption}}</figcaption>
</figure>
{{end}}
<h2 id="cpus">Per-CPU means over the run</h2>
<table class="num"><tr>{{range .CPUHead}}<th>{{.}}</th>{{end}}</tr>
{{range .CPURows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<footer>Written by <code>nicdiag report</code>{{if .Source}} from {{.Source}}{{end}}. Self-contained: no script, no external resource.</footer>
</body>
</html>
`
