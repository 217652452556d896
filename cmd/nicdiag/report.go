package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/report"
	"github.com/nicdiag/nicdiag/stack"
)

// reportFlags are the report command's own flags.
type reportFlags struct {
	out    string
	format string
}

var reportCmd = &command{
	name:    "report",
	args:    "RUN.jsonl [-o FILE.html|FILE.svg]",
	summary: "draw a monitored run (monitor --record) as an HTML page or SVG",
	help: `Draw a run that 'nicdiag monitor --record' wrote: the run verdict (the
layer that bound the run, every ceiling at the run's own frame sizes and
direction mix, the traffic of each NIC, and the throughput over time against
each ceiling), a heatmap of irq+softirq time per CPU over time, NET_RX and
NET_TX softirqs per CPU, the interrupts of each NIC queue, softnet drops and
time squeezes, each NIC's throughput, and the findings of the run with their
evidence.

On standard output it prints the verdict in a sentence, the table of
ceilings, and what it wrote (with --json: the verdict object too).

FILE.html is one self-contained page (no script, nothing fetched: it opens
offline and can be attached to a bug report); FILE.svg is the charts alone.
Without -o the page is written next to the record, as RUN.html. "-o -"
writes to standard output, as --format says (default html).

A record cut short mid-line (monitor killed) still draws: the complete
samples before the cut are shown, with a note. Without a summary line the
verdicts are computed from the samples.

Exit code: per the run's findings (0, 1, 2), or 3 if the record cannot be read
or the report cannot be written.

Examples:
  nicdiag monitor --record run.jsonl -- iperf3 -c 192.0.2.1 -t 60
  nicdiag report run.jsonl -o run.html
  nicdiag report run.jsonl -o charts.svg`,
	bind: func(fs *flag.FlagSet) runFunc {
		f := &reportFlags{}
		fs.StringVar(&f.out, "o", "", "output `FILE`: .html for the page, .svg for the charts; - for standard output")
		fs.StringVar(&f.format, "format", "", "html or svg, overriding the extension of -o")
		return func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) int {
			return runReport(ctx, e, fs, args, *f)
		}
	},
}

// reportJSON is what --json prints about the report written.
type reportJSON struct {
	Schema   string            `json:"schema"`
	Record   string            `json:"record"`
	Output   string            `json:"output"`
	Format   string            `json:"format"`
	Samples  int               `json:"samples"`
	Notes    []string          `json:"notes"`
	Findings []finding.Finding `json:"findings"`
	// Verdict is the run verdict (monitor.Judge over the record's samples
	// and limits).
	Verdict *monitor.Verdict `json:"verdict"`
}

func runReport(ctx context.Context, e *env, fs *flag.FlagSet, pos []string, f reportFlags) int {
	if len(pos) != 1 {
		return e.usageError("report", "need exactly one record (the FILE of monitor --record FILE)")
	}
	if e.root != "" {
		return e.fail(errors.New("report: reads a record file; --root does not apply"))
	}
	out := f.out
	if out == "" {
		out = strings.TrimSuffix(pos[0], filepath.Ext(pos[0])) + ".html"
		if f.format == "svg" {
			out = strings.TrimSuffix(out, ".html") + ".svg"
		}
	}
	var format report.Format
	var err error
	switch {
	case f.format != "":
		format, err = report.ParseFormat(f.format)
	case out == "-":
		format = report.HTML
	default:
		format, err = report.FormatFor(out)
	}
	if err != nil {
		return e.fail(err)
	}
	if out != "-" && format.String() != strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".") &&
		!(format == report.HTML && strings.EqualFold(filepath.Ext(out), ".htm")) {
		return e.fail(fmt.Errorf("report: %s does not end in .%s", out, format))
	}
	if err := ctx.Err(); err != nil {
		return e.fail(err)
	}
	rec, err := monitor.ReadRecordFile(pos[0])
	if err != nil {
		return e.fail(err)
	}
	if out == "-" {
		if e.json {
			return e.fail(errors.New("report: --json and -o - both want standard output"))
		}
		if err := report.Render(e.stdout, rec, format); err != nil {
			return e.fail(err)
		}
	} else if err := report.WriteFile(out, rec); err != nil {
		return e.fail(err)
	}
	for _, n := range rec.Notes {
		fmt.Fprintf(e.stderr, "nicdiag report: note: %s\n", n)
	}
	fs2 := rec.Summary.Findings
	v := rec.Verdict
	if v == nil {
		j := monitor.Judge(rec.Samples, rec.Limits)
		v = &j
	}
	if e.json {
		notes := rec.Notes
		if notes == nil {
			notes = []string{}
		}
		if fs2 == nil {
			fs2 = []finding.Finding{}
		}
		if err := e.writeJSON(reportJSON{Schema: jsonSchema, Record: pos[0], Output: out, Format: format.String(),
			Samples: len(rec.Samples), Notes: notes, Findings: fs2, Verdict: v}); err != nil {
			return e.fail(err)
		}
	} else if out != "-" {
		writeVerdict(e.stdout, v)
		fmt.Fprintf(e.stdout, "wrote %s: %d samples, %d findings\n", out, len(rec.Samples), len(fs2))
		for _, x := range fs2 {
			fmt.Fprintf(e.stdout, "  %s\n", text.Clean(x.String()))
		}
	}
	return exitFor(fs2)
}

// stackLayers lists the stack's layers and their states: "transport
// room, socket bound, ...", cleaned of terminal controls (a record is
// hostile input).
func stackLayers(st *stack.Summary) string {
	var layers []string
	for _, l := range st.Layers {
		layers = append(layers, text.Clean(string(l.Layer))+" "+text.Clean(strings.ReplaceAll(string(l.State), "_", " ")))
	}
	return strings.Join(layers, ", ")
}

// writeVerdict prints the run verdict: its bound and sentence, then every
// ceiling, nearest first. A record is hostile input: its strings are
// cleaned of terminal controls.
func writeVerdict(w io.Writer, v *monitor.Verdict) {
	fmt.Fprintf(w, "verdict: %s: %s\n", text.Clean(string(v.Bound)), text.Clean(v.Summary))
	if st := v.Stack; st != nil {
		fmt.Fprintf(w, "this host's stack: %s\n", stackLayers(st))
	}
	if len(v.Ceilings) == 0 {
		fmt.Fprintf(w, "ceilings: none judged\n")
		return
	}
	fmt.Fprintf(w, "ceilings at this run's mix, nearest first:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  \tlayer\tdirection\tNICs\tachieved\tceiling\tshare\twhat\n")
	for _, c := range v.Ceilings {
		role := ""
		switch {
		case v.Limit != nil && c.Same(*v.Limit):
			role = "bound"
		case v.Next != nil && c.Same(*v.Next):
			role = "next"
		}
		dir := c.Direction
		if dir == "" {
			dir = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", role, text.Clean(string(c.Layer)), text.Clean(dir),
			text.Clean(strings.Join(c.NICs, "+")), monitor.FormatMbps(c.AchievedMbps), monitor.FormatMbps(c.CeilingMbps), monitor.FormatShare(c.Share), text.Clean(c.What))
	}
	tw.Flush()
}
