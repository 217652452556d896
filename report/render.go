package report

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/monitor"
)

// Format is what Render writes.
type Format int

// Formats.
const (
	// HTML is a self-contained page: the run verdict (what bound it, its
	// ceilings and traffic, throughput against the ceilings), the run, its
	// findings with evidence, every chart inline and a table of per-CPU
	// means. No script, no external resource.
	HTML Format = iota
	// SVG is the charts alone, stacked in one SVG document, throughput
	// against the ceilings first.
	SVG
)

// String returns "html" or "svg".
func (f Format) String() string {
	switch f {
	case HTML:
		return "html"
	case SVG:
		return "svg"
	}
	return "format(" + strconv.Itoa(int(f)) + ")"
}

// ParseFormat reads "html" or "svg".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "html", "htm":
		return HTML, nil
	case "svg":
		return SVG, nil
	}
	return 0, fmt.Errorf("report: unknown format %q (want html or svg)", s)
}

// FormatFor picks the format from a file name's extension: .html or .htm
// for HTML, .svg for SVG.
func FormatFor(path string) (Format, error) {
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	if ext == "" {
		return 0, fmt.Errorf("report: %s has no extension; name it .html or .svg", path)
	}
	f, err := ParseFormat(ext)
	if err != nil {
		return 0, fmt.Errorf("report: cannot tell the format of %s: use .html or .svg", path)
	}
	return f, nil
}

// WriteFile renders rec to path in the format its extension names (see
// FormatFor). It writes a temporary file beside path and renames it into
// place, so a reader never sees half a report.
func WriteFile(path string, rec *monitor.Record) error {
	f, err := FormatFor(path)
	if err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename this fails harmlessly
	w := bufio.NewWriter(tmp)
	if err := Render(w, rec, f); err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Render writes rec as f. The output depends on rec alone. The verdict is
// rec.Verdict, or, when that is nil (a Record built by hand),
// monitor.Judge over rec.Samples and rec.Limits. It returns an error
// wrapping monitor.ErrEmpty when rec has no sample.
func Render(w io.Writer, rec *monitor.Record, f Format) error {
	if rec == nil || len(rec.Samples) == 0 {
		return monitor.ErrEmpty
	}
	v := newView(rec.Samples)
	vd, computed := verdictOf(rec)
	vc := ceilingChart(v, vd)
	cs := charts(v)
	switch f {
	case SVG:
		return writeSVG(w, append([]chart{vc}, cs...))
	case HTML:
		return pageTmpl().Execute(w, newPage(rec, v, cs, vd, computed, vc))
	}
	return fmt.Errorf("report: unknown format %v", f)
}

// writeSVG stacks the charts in one document.
func writeSVG(w io.Writer, cs []chart) error {
	var body strings.Builder
	y := 0
	for _, c := range cs {
		h := svgHeight(c.SVG)
		// A nested <svg> keeps each chart's own coordinates.
		s := strings.Replace(c.SVG, "<svg ", fmt.Sprintf(`<svg x="0" y="%d" `, y), 1)
		body.WriteString(s)
		y += h + 16
	}
	_, err := fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">
<rect width="%d" height="%d" fill="#ffffff"/>
%s</svg>
`, chartW, y, chartW, y, chartW, y, body.String())
	return err
}

// svgHeight reads back the height attribute a chart was written with.
func svgHeight(s string) int {
	i := strings.Index(s, ` height="`)
	if i < 0 {
		return 0
	}
	s = s[i+len(` height="`):]
	n, _ := strconv.Atoi(s[:strings.IndexByte(s, '"')])
	return n
}

// page is what the HTML template reads.
type page struct {
	Title   string
	Source  string
	Verdict *pageVerdict
	// VerdictChart is throughput against the ceilings, in the verdict's
	// section.
	VerdictChart pageChart
	Facts        [][2]string
	Notes        []string
	Findings     []pageFinding
	Computed     bool // verdicts computed here, not by the monitor
	Charts       []pageChart
	CPUHead      []string
	CPURows      [][]string
}

type pageFinding struct {
	finding.Finding
	Sev      string
	Evidence [][2]string
	Numbers  [][2]string
}

type pageChart struct {
	chart
	Inline template.HTML
}

func newPage(rec *monitor.Record, v *view, cs []chart, vd *monitor.Verdict, computed bool, vc chart) *page {
	p := &page{Title: "nicdiag report", Source: rec.Source, Notes: rec.Notes,
		Verdict: newPageVerdict(vd, computed), VerdictChart: pageChart{chart: vc, Inline: template.HTML(vc.SVG)}}
	if rec.Source != "" {
		p.Title += ": " + rec.Source
	}
	sum := rec.Summary
	if sum == nil {
		s := irq.Summarize(rec.Samples)
		sum = &s
		p.Computed = true
	}
	p.Facts = pageFacts(rec, v, p.Computed)
	for _, f := range sum.Findings {
		p.Findings = append(p.Findings, newPageFinding(f))
	}
	for _, c := range cs {
		p.Charts = append(p.Charts, pageChart{chart: c, Inline: template.HTML(c.SVG)})
	}
	p.CPUHead = []string{"CPU", "irq", "softirq", "busy", "NET_RX/s", "NET_TX/s", "NIC IRQs/s", "softnet processed/s", "dropped/s", "squeezed/s"}
	for _, c := range sum.CPUs {
		irqPct := "n/a"
		if c.IRQPct != nil {
			irqPct = pct(*c.IRQPct)
		}
		p.CPURows = append(p.CPURows, []string{strconv.Itoa(c.CPU), irqPct, pct(c.SoftIRQPct), pct(c.BusyPct),
			si(c.NetRXPerS), si(c.NetTXPerS), si(c.NICIRQsPerS), si(c.SoftnetProcessedPerS), si(c.SoftnetDroppedPerS), si(c.SoftnetSqueezedPerS)})
	}
	return p
}

// pageFacts are the page's table of the run: when, how long, what was
// sampled, the command and what could not be read. computed says the
// verdicts were computed here, the record having no summary.
func pageFacts(rec *monitor.Record, v *view, computed bool) [][2]string {
	first, last := rec.Samples[0], rec.Samples[len(rec.Samples)-1]
	start := first.Time.Add(-time.Duration(first.IntervalS * float64(time.Second)))
	var nics []string
	seen := map[string]bool{}
	missing := map[string]bool{}
	var miss []string
	for _, s := range rec.Samples {
		for _, n := range s.NICs {
			if !seen[n.Name] {
				seen[n.Name] = true
				nics = append(nics, n.Name)
			}
		}
		for _, m := range s.Missing {
			if !missing[m] {
				missing[m] = true
				miss = append(miss, m)
			}
		}
	}
	interval := v.total / float64(len(rec.Samples))
	facts := [][2]string{
		{"started", start.Format(time.RFC3339)},
		{"ended", last.Time.Format(time.RFC3339)},
		{"covered", strconv.FormatFloat(round(v.total, 1), 'f', -1, 64) + " s in " + strconv.Itoa(len(rec.Samples)) + " samples (" + strconv.FormatFloat(round(interval, 3), 'f', -1, 64) + " s each on average)"},
		{"CPUs", strconv.Itoa(len(v.cpus))},
		{"NICs monitored", orNone(strings.Join(nics, ", "))},
		{"hard-IRQ time", map[bool]string{true: "accounted by the kernel", false: "not accounted by this kernel: the load shown is softirq time only"}[accounted(rec.Samples)]},
	}
	if len(rec.Run.Command) > 0 {
		how := "ended"
		switch {
		case rec.Run.CommandError != "":
			how = "failed: " + rec.Run.CommandError
		case rec.Run.ExitCode != nil:
			how = "exit code " + strconv.Itoa(*rec.Run.ExitCode)
		case rec.Summary == nil || computed:
			how = "outcome not recorded"
		}
		facts = append(facts, [2]string{"command", strings.Join(rec.Run.Command, " ") + " (" + how + ")"})
	}
	if rec.Run.Interrupted {
		facts = append(facts, [2]string{"interrupted", "sampling was ended by Ctrl-C; the verdicts cover what was sampled"})
	}
	if len(miss) > 0 {
		slices.Sort(miss)
		facts = append(facts, [2]string{"could not read", strings.Join(miss, "; ")})
	}
	return facts
}

// newPageFinding lays out a finding's evidence (sorted by key) and numbers.
func newPageFinding(f finding.Finding) pageFinding {
	pf := pageFinding{Finding: f, Sev: f.Severity.String()}
	keys := make([]string, 0, len(f.Evidence))
	for k := range f.Evidence {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		pf.Evidence = append(pf.Evidence, [2]string{k, f.Evidence[k]})
	}
	if f.CapacityMbps != nil {
		pf.Numbers = append(pf.Numbers, [2]string{"capacity", strconv.FormatFloat(*f.CapacityMbps, 'f', -1, 64) + " Mbit/s"})
	}
	if f.DemandMbps != nil {
		pf.Numbers = append(pf.Numbers, [2]string{"demand", strconv.FormatFloat(*f.DemandMbps, 'f', -1, 64) + " Mbit/s"})
	}
	if f.Direction != "" {
		pf.Numbers = append(pf.Numbers, [2]string{"direction", f.Direction})
	}
	return pf
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// pageTmpl is parsed on first use, not at start-up: every nicdiag command
// links this package, few draw a report.
var pageTmpl = sync.OnceValue(func() *template.Template { return template.Must(template.New("page").Parse(pageHTML)) })

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="nicdiag report">
<title>{{.Title}}</title>
<style>
body{font-family:"DejaVu Sans","Liberation Sans",Arial,Helvetica,sans-serif;font-size:14px;color:#222;background:#fff;margin:24px;max-width:1000px}
h1{font-size:22px;margin:0 0 12px}
h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ccc;padding-bottom:4px}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:0}
dl.facts dt{color:#555}
dl.facts dd{margin:0}
.notes{border-left:4px solid #e69f00;background:#fff8e6;padding:6px 12px;margin:12px 0}
.finding{border:1px solid #ccc;border-left-width:6px;padding:8px 12px;margin:10px 0}
.finding.error{border-left-color:#7a0177}
.finding.warn{border-left-color:#e69f00}
.finding.info{border-left-color:#0072b2}
.sev{display:inline-block;font-weight:bold;text-transform:uppercase;font-size:12px;padding:1px 6px;border-radius:3px;color:#fff}
.sev.error{background:#7a0177}
.sev.warn{background:#8a5a00}
.sev.info{background:#0072b2}
code{font-family:"DejaVu Sans Mono",monospace;font-size:13px}
table{border-collapse:collapse;margin:6px 0}
td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;vertical-align:top}
table.num td{text-align:right}
figure{margin:16px 0}
figcaption{color:#444;max-width:900px;margin-top:4px}
svg.chart{display:block}
footer{color:#777;font-size:12px;margin-top:32px}
h3{font-size:15px;margin:16px 0 6px}
.verdict{border:1px solid #ccc;border-left:6px solid #000;padding:8px 12px;margin:10px 0}
.verdict p.bound{font-size:16px;margin:4px 0 8px}
.verdict p.sentence{font-size:15px;margin:8px 0}
.verdict tr.reached td{font-weight:bold}
table.ceilings td:nth-child(n+6),table.traffic td:nth-child(n+3){white-space:nowrap}
</style>
</head>
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
{{end}}</div>
{{end}}{{with .VerdictChart}}<figure id="{{.ID}}">
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
