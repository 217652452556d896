package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/report"
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
	help: `Draw a run that 'nicdiag monitor --record' wrote: a heatmap of irq+softirq
time per CPU over time, NET_RX and NET_TX softirqs per CPU, the interrupts of
each NIC queue, softnet drops and time squeezes, each NIC's throughput, and the
verdicts of the run with their evidence.

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
	if e.json {
		notes := rec.Notes
		if notes == nil {
			notes = []string{}
		}
		if fs2 == nil {
			fs2 = []finding.Finding{}
		}
		if err := e.writeJSON(reportJSON{Schema: jsonSchema, Record: pos[0], Output: out, Format: format.String(),
			Samples: len(rec.Samples), Notes: notes, Findings: fs2}); err != nil {
			return e.fail(err)
		}
	} else if out != "-" {
		fmt.Fprintf(e.stdout, "wrote %s: %d samples, %d findings\n", out, len(rec.Samples), len(fs2))
		for _, x := range fs2 {
			fmt.Fprintf(e.stdout, "  %s\n", x)
		}
	}
	return exitFor(fs2)
}
