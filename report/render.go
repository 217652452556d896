package report

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/atomicfile"
	"github.com/nicdiag/nicdiag/internal/unit"
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
	var rerr error
	err = atomicfile.Write(path, 0o644, func(w io.Writer) error {
		rerr = Render(w, rec, f)
		return rerr
	})
	if rerr != nil {
		return rerr // Render's error says what is wrong with rec
	}
	return err
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
	bc, _ := busyChart(vd)
	cs := charts(v)
	switch f {
	case SVG:
		front := []chart{vc}
		if bc.ID != "" {
			front = append(front, bc)
		}
		return writeSVG(w, append(front, cs...))
	case HTML:
		p := newPage(rec, v, cs, vd, computed, vc)
		p.CPUChart = bc
		return writePage(w, p)
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

// page is what writePage writes.
type page struct {
	Title   string
	Source  string
	Verdict *pageVerdict
	// VerdictChart is throughput against the ceilings, in the verdict's
	// section; CPUChart how busy each CPU was and with what (no ID: none).
	VerdictChart chart
	CPUChart     chart
	Facts        [][2]string
	Notes        []string
	Findings     []pageFinding
	Computed     bool // verdicts computed here, not by the monitor
	Charts       []chart
	CPUHead      []string
	CPURows      [][]string
}

type pageFinding struct {
	finding.Finding
	Sev      string
	Evidence [][2]string
	Numbers  [][2]string
}

func newPage(rec *monitor.Record, v *view, cs []chart, vd *monitor.Verdict, computed bool, vc chart) *page {
	p := &page{Title: "nicdiag report", Source: rec.Source, Notes: rec.Notes,
		Verdict: newPageVerdict(vd, computed), VerdictChart: vc}
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
	p.Charts = cs
	p.CPUHead = []string{"CPU", "irq", "softirq", "busy", "NET_RX/s", "NET_TX/s", "NIC IRQs/s", "softnet processed/s", "dropped/s", "squeezed/s"}
	for _, c := range sum.CPUs {
		irqPct := "n/a"
		if c.IRQPct != nil {
			irqPct = pct(*c.IRQPct)
		}
		p.CPURows = append(p.CPURows, []string{strconv.Itoa(c.CPU), irqPct, pct(c.SoftIRQPct), pct(c.BusyPct),
			unit.Count(c.NetRXPerS), unit.Count(c.NetTXPerS), unit.Count(c.NICIRQsPerS), unit.Count(c.SoftnetProcessedPerS), unit.Count(c.SoftnetDroppedPerS), unit.Count(c.SoftnetSqueezedPerS)})
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
