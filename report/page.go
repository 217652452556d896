package report

import (
	"io"
	"strings"
)

// The page is written by hand, not by html/template, whose package init
// every nicdiag command paid at start-up. It is byte for byte what the
// template wrote; page_oracle_test.go keeps the template as the oracle.

// writePage writes p as the HTML page: every string escaped by
// pageBuf.text, the charts' SVG as is.
func writePage(w io.Writer, p *page) error {
	var b pageBuf
	b.el(pageHead, p.Title, "</title>\n"+pageStyle+"</head>\n<body>\n")
	b.el("<h1>", p.Title, "</h1>\n")
	if len(p.Notes) > 0 {
		b.WriteString("<div class=\"notes\"><strong>About this record:</strong>\n")
		b.list(p.Notes)
		b.WriteString("</div>\n")
	}
	if p.Verdict != nil {
		b.verdict(p.Verdict)
	}
	b.figure(p.VerdictChart)
	if p.CPUChart.ID != "" {
		b.figure(p.CPUChart)
	}
	b.WriteString("<h2 id=\"run\">The run</h2>\n")
	b.facts(p.Facts)
	b.WriteString("<h2 id=\"verdicts\">Findings</h2>\n")
	if p.Computed {
		b.WriteString("<p>The record carries no summary; these verdicts were computed from its samples.</p>\n")
	}
	for _, f := range p.Findings {
		b.finding(f)
	}
	if len(p.Findings) == 0 {
		b.WriteString("<p>No finding: no core was saturated by packet work, and softnet neither dropped nor ran out of budget often enough to matter.</p>\n")
	}
	b.WriteString("\n<h2 id=\"charts\">Charts</h2>\n")
	for _, c := range p.Charts {
		b.figure(c)
	}
	b.WriteString("\n<h2 id=\"cpus\">Per-CPU means over the run</h2>\n<table class=\"num\">")
	b.table(p.CPUHead, p.CPURows)
	b.WriteString("<footer>Written by <code>nicdiag report</code>")
	if p.Source != "" {
		b.el(" from ", p.Source, "")
	}
	b.WriteString(". Self-contained: no script, no external resource.</footer>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// pageBuf is the page being written.
type pageBuf struct{ strings.Builder }

// text writes s escaped for HTML text and quoted attribute values, as
// html/template escapes a string there (its htmlReplacementTable): NUL
// becomes U+FFFD, " & ' + < > character references; every other byte,
// invalid UTF-8 included, is written as is.
func (b *pageBuf) text(s string) {
	done := 0
	for i := 0; i < len(s); i++ {
		var r string
		switch s[i] {
		case 0:
			r = "\uFFFD"
		case '"':
			r = "&#34;"
		case '&':
			r = "&amp;"
		case '\'':
			r = "&#39;"
		case '+':
			r = "&#43;"
		case '<':
			r = "&lt;"
		case '>':
			r = "&gt;"
		default:
			continue
		}
		b.WriteString(s[done:i])
		b.WriteString(r)
		done = i + 1
	}
	b.WriteString(s[done:])
}

// el writes open, s escaped, then end.
func (b *pageBuf) el(open, s, end string) {
	b.WriteString(open)
	b.text(s)
	b.WriteString(end)
}

// list writes items as a <ul>, on one line.
func (b *pageBuf) list(items []string) {
	b.WriteString("<ul>")
	for _, s := range items {
		b.el("<li>", s, "</li>")
	}
	b.WriteString("</ul>")
}

// facts writes a definition list, a fact a line.
func (b *pageBuf) facts(facts [][2]string) {
	b.WriteString("<dl class=\"facts\">\n")
	for _, f := range facts {
		b.el("<dt>", f[0], "</dt>")
		b.el("<dd>", f[1], "</dd>\n")
	}
	b.WriteString("</dl>\n")
}

// row writes a table row of cells in tag (th or td).
func (b *pageBuf) row(tag string, cells []string) {
	b.WriteString("<tr>")
	b.cells(tag, cells)
	b.WriteString("</tr>\n")
}

func (b *pageBuf) cells(tag string, cells []string) {
	for _, c := range cells {
		b.el("<"+tag+">", c, "</"+tag+">")
	}
}

// table writes a table's rows after its opening tag, and closes it.
func (b *pageBuf) table(head []string, rows [][]string) {
	b.row("th", head)
	for _, r := range rows {
		b.row("td", r)
	}
	b.WriteString("</table>\n")
}

func (b *pageBuf) figure(c chart) {
	b.el("<figure id=\"", c.ID, "\">\n")
	b.WriteString(c.SVG)
	b.el("<figcaption>", c.Caption, "</figcaption>\n</figure>\n")
}

// verdict writes the run verdict's section.
func (b *pageBuf) verdict(v *pageVerdict) {
	b.el("<h2 id=\"verdict\">Run verdict</h2>\n<div class=\"verdict bound-", v.Bound, "\">\n")
	b.el("<p class=\"bound\"><strong>Bound:</strong> <code>", v.Bound, "</code>: ")
	b.el("", v.BoundWords, "</p>\n")
	b.el("<p class=\"sentence\">", v.Summary, "</p>\n")
	b.facts(v.Facts)
	if v.Computed {
		b.WriteString("<p>The record carries no verdict; this one was judged here from its samples and limits.</p>\n")
	}
	b.WriteString("<h3 id=\"ceiling-table\">Ceilings at this run's mix, nearest first</h3>\n")
	if len(v.Ceilings) > 0 {
		b.WriteString("<table class=\"ceilings\">")
		b.row("th", v.CeilHead)
		for _, c := range v.Ceilings {
			b.WriteString("<tr")
			if c.Role != "" {
				b.WriteString(" class=\"reached\"")
			}
			b.el("><td>", c.Role, "</td>")
			b.cells("td", c.Cells)
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
	} else {
		b.WriteString("<p>No ceiling was judged: the record knows no line rate, PCIe path or CPU load to set the run against, or the run moved nothing.</p>\n")
	}
	b.WriteString("<h3 id=\"traffic-table\">Traffic over the samples with traffic</h3>\n")
	if len(v.Traffic) > 0 {
		b.WriteString("<table class=\"traffic\">")
		b.table(v.TrafHead, v.Traffic)
		b.WriteString("<p>Mb/s are Ethernet frame bits (header and FCS, no preamble or gap). A NIC's ceiling is what it would move in that direction with its nearest ceiling full, at the same mix.</p>\n")
	} else {
		b.WriteString("<p>The record names no NIC.</p>\n")
	}
	if len(v.Losses) > 0 {
		b.WriteString("<h3 id=\"losses\">Losses</h3>\n")
		b.list(v.Losses)
		b.WriteString("\n")
	}
	if len(v.StackHead) > 0 {
		b.WriteString("<h3 id=\"stack\">This host's stack</h3>\n<table class=\"stack\">")
		b.table(v.StackHead, v.Stack)
	}
	if v.StackNote != "" {
		b.el("<p class=\"stack-note\">", v.StackNote, "</p>\n")
	}
	b.WriteString("</div>\n")
}

// finding writes one finding with its evidence.
func (b *pageBuf) finding(f pageFinding) {
	b.el("<div class=\"finding ", f.Sev, "\">\n")
	b.el("<p><span class=\"sev ", f.Sev, "\">")
	b.el("", f.Sev, "</span> ")
	b.el("<code>", string(f.Code), "</code> on ")
	b.el("<strong>", f.Subject, "</strong></p>\n")
	b.el("<p>", f.Summary, "</p>\n")
	if f.Fix != "" {
		b.el("<p><em>Usually fixed by:</em> ", f.Fix, "</p>\n")
	}
	if len(f.Evidence) > 0 || len(f.Numbers) > 0 {
		b.WriteString("<table class=\"evidence\"><tr><th>evidence</th><th>value</th></tr>\n")
		for _, rows := range [][][2]string{f.Evidence, f.Numbers} {
			for _, e := range rows {
				b.el("<tr><td><code>", e[0], "</code></td>")
				b.el("<td>", e[1], "</td></tr>\n")
			}
		}
		b.WriteString("</table>\n")
	}
	b.WriteString("</div>\n")
}

const pageHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="nicdiag report">
<title>`

const pageStyle = `<style>
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
`
