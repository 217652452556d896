package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/exporter"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/atomicfile"
	"github.com/nicdiag/nicdiag/option"
)

var checkCmd = &command{
	name:     "check",
	buffered: true,
	args:     "[IFACE|PCI-ADDRESS...]",
	summary:  "preflight: every finding about the NICs, worst first",
	help: `Checks every physical NIC (or the ones named): the PCIe path hop by hop
(downgraded links, slot limits, whether the path can carry the ports' line
rate), the device's identity (a chip claiming what it cannot do), and queue
and IRQ placement. NICs without a netdev (bound to vfio-pci or another DPDK
driver, or to none) get the PCIe checks too; name one by its PCI address.
Prints each finding with what to do about it, worst first.
Exit code: 0 nothing at warn or above, 1 a warning, 2 an error, 3 nicdiag failed.

--format prom writes the findings, ceilings and PCIe links as
nicdiag_exporter serves them (Prometheus text format 0.0.4), less its
counters of its own checks: for node_exporter's textfile collector, from a
timer. -o FILE writes it atomically (a temporary file in FILE's directory,
synced, renamed over FILE, mode 0644); the textfile collector reads only
names ending in .prom. A check that fails writes nicdiag_up 0 (and exits 3).

Examples:
  nicdiag check
  nicdiag check enp1s0f0
  nicdiag --root testdata/snapshots/82576-minipcie-x1 check --json
  nicdiag check --format prom -o /var/lib/node_exporter/textfile_collector/nicdiag.prom`,
	bind: func(fs *flag.FlagSet) runFunc {
		f := &checkFlags{}
		fs.StringVar(&f.format, "format", "text", "output `FORMAT`: text, or prom (the Prometheus exposition)")
		fs.StringVar(&f.out, "o", "", "write the --format prom exposition to `FILE`, atomically, instead of standard output")
		return func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) int {
			return runCheck(ctx, e, args, *f)
		}
	},
}

// checkFlags are the check command's own flags.
type checkFlags struct {
	format string
	out    string
}

// checkJSON is the JSON document of `check --json`.
type checkJSON struct {
	Schema     string            `json:"schema"`
	Interfaces []string          `json:"interfaces"`
	Findings   []finding.Finding `json:"findings"`
	Skipped    []string          `json:"skipped,omitempty"`
	// NoNetdev are the PCI addresses of the checked functions without a
	// netdev.
	NoNetdev []string `json:"no_netdev,omitempty"`
}

func runCheck(ctx context.Context, e *env, args []string, f checkFlags) int {
	switch {
	case f.format != "text" && f.format != "prom":
		return e.usageError("check", fmt.Sprintf("--format %q: want text or prom", f.format))
	case f.format == "prom" && e.json:
		return e.usageError("check", "--json and --format prom: choose one")
	case f.out != "" && f.format != "prom":
		return e.usageError("check", "-o writes the Prometheus exposition: add --format prom")
	}
	if f.format == "prom" {
		return checkProm(ctx, e, args, f.out)
	}
	root, err := e.openRoot(ctx)
	if err != nil {
		return e.fail(err)
	}
	r, err := nicdiag.Check(ctx, option.Root(root), nicdiag.WithInterfaces(args...))
	if err != nil {
		return e.failLookup(ctx, root, args, err)
	}
	names := []string{}
	var bare, skipped []string
	for _, n := range r.Host.Selected {
		if n.Netdev() {
			names = append(names, n.Name)
		} else {
			bare = append(bare, n.ID())
		}
	}
	for _, u := range r.Host.Unread {
		skipped = append(skipped, u.String())
	}
	if e.json {
		if err := e.writeJSON(checkJSON{Schema: jsonSchema, Interfaces: names, Findings: r.Findings, Skipped: skipped, NoNetdev: bare}); err != nil {
			return e.fail(err)
		}
		return exitFor(r.Findings)
	}
	renderFindings(e.stdout, names, bare, r.Findings)
	for _, s := range skipped {
		fmt.Fprintf(e.stdout, "not checked: %s\n", s)
	}
	if len(names) == 0 && len(bare) == 0 && e.root == "" {
		fmt.Fprintln(e.stdout, "this host has no physical NIC; to see nicdiag on a real machine's snapshot, from the source tree:\n  nicdiag --root testdata/snapshots/82576-minipcie-x1 check")
	}
	return exitFor(r.Findings)
}

// renderFindings writes a headline and each finding, worst first. bare are
// the checked PCI functions without a netdev.
func renderFindings(w io.Writer, names, bare []string, fs []finding.Finding) {
	count := map[finding.Severity]int{}
	for _, f := range fs {
		count[f.Severity]++
	}
	if len(names) > 0 || len(bare) == 0 {
		fmt.Fprintf(w, "checked %d interface(s): %s\n", len(names), strings.Join(names, ", "))
	}
	if len(bare) > 0 {
		fmt.Fprintf(w, "checked %d PCI function(s) without a netdev: %s\n", len(bare), strings.Join(bare, ", "))
	}
	if len(fs) == 0 {
		fmt.Fprintln(w, "no findings")
		return
	}
	noun := "findings"
	if len(fs) == 1 {
		noun = "finding"
	}
	fmt.Fprintf(w, "%d %s: %d error, %d warn, %d info\n", len(fs), noun, count[finding.Error], count[finding.Warn], count[finding.Info])
	for _, f := range fs {
		fmt.Fprintf(w, "\n%-5s %s  %s\n", strings.ToUpper(f.Severity.String()), f.Code, f.Subject)
		fmt.Fprintf(w, "      %s\n", f.Summary)
		if f.Fix != "" {
			fmt.Fprintf(w, "      fix: %s\n", f.Fix)
		}
		if len(f.Evidence) > 0 {
			keys := make([]string, 0, len(f.Evidence))
			for k := range f.Evidence {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			fmt.Fprintf(w, "      evidence:\n")
			for _, k := range keys {
				fmt.Fprintf(w, "        %s: %s\n", k, f.Evidence[k])
			}
		}
	}
}

// checkProm runs the check and writes its exposition to out (standard
// output when ""): a failed check is nicdiag_up 0, written before the
// error is reported, so an alert on it fires.
func checkProm(ctx context.Context, e *env, args []string, out string) int {
	start := time.Now()
	root, err := e.openRoot(ctx)
	var r *nicdiag.Report
	if err == nil {
		r, err = nicdiag.Check(ctx, option.Root(root), nicdiag.WithInterfaces(args...))
	}
	took := time.Since(start)
	write := func(w io.Writer) error { return exporter.WriteReport(w, r, took) }
	var werr error
	if out == "" {
		werr = write(e.stdout)
	} else {
		werr = atomicfile.Write(out, 0o644, write)
	}
	switch {
	case err != nil && root != "":
		return e.failLookup(ctx, root, args, err)
	case err != nil:
		return e.fail(err)
	case werr != nil:
		return e.fail(werr)
	}
	return exitFor(r.Findings)
}
