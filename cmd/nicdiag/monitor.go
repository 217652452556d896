package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/report"
)

// monitorFlags are the monitor command's own flags.
type monitorFlags struct {
	interval time.Duration
	duration time.Duration
	record   string
	report   string
}

var monFlags monitorFlags

var monitorCmd = &command{
	name:    "monitor",
	args:    "[IFACE...] | [-- CMD ARGS]",
	summary: "per-core irq/softirq/softnet load live; with -- CMD, the verdict on what bound it",
	help: `Samples, per CPU, the share of time in hard IRQ and softirq, NET_RX and
NET_TX softirqs, the interrupts of each NIC queue and softnet
processed/dropped/squeezed, and per NIC packets and bytes, every --interval.
Where the driver counts traffic per queue, a line per queue shows its
packets, Mb/s and interrupts; "-" marks a counter the driver lacks. Per
interface, the counters come from the first of these that has them:
  1. the kernel's netdev netlink queue statistics (qstats, Linux 6.8+:
     virtio_net since 6.10, mlx5, bnxt_en, gve, ice, ...)
  2. the driver's ethtool statistics (igb, igc, ixgbe, i40e, ice,
     mlx4/mlx5, ena, bnxt_en, hv_netvsc, sfc, virtio_net before 6.10)
On a terminal it redraws like top; otherwise it prints one block per sample.
With -- CMD ARGS it runs the command (its input and output pass through),
samples while it runs, and then prints the verdict: which core bound the
traffic and which queues and IRQs land there. nicdiag prints nothing while
the command runs. Ctrl-C ends sampling; the verdict covers what was sampled.

--json writes one JSON line per sample and a summary line at the end
(with a command: only the summary). --record FILE writes the same lines,
with "type" "start", "sample" and "summary", flushed per sample.
Exit code: per the findings (0, 1, 2), or 3 if the command could not start.

Hard-IRQ time shows as "-" (JSON null) when the kernel does not account it.

examples:
  nicdiag monitor
  nicdiag monitor --interval 500ms eth0
  nicdiag monitor --record run.jsonl -- iperf3 -c 192.0.2.1 -t 10`,
	flags: func(fs *flag.FlagSet) {
		fs.DurationVar(&monFlags.interval, "interval", time.Second, "time between samples")
		fs.DurationVar(&monFlags.duration, "duration", 0, "stop after this long (0: until Ctrl-C or the command ends)")
		fs.StringVar(&monFlags.record, "record", "", "also write every sample as JSON lines to `FILE`")
		fs.StringVar(&monFlags.report, "report", "", "at the end, write a report of the run to `FILE` (.html, or .svg for the charts alone)")
	},
	run: runMonitor,
}

// commandResult is how the monitored command ended, for the summary.
type commandResult struct {
	Argv     []string `json:"argv"`
	ExitCode int      `json:"exit_code"`
	Error    string   `json:"error,omitempty"`
}

func runMonitor(ctx context.Context, e *env, fs *flag.FlagSet, args []string) int {
	f := monFlags
	if f.interval <= 0 {
		return e.fail(errors.New("monitor: --interval must be positive"))
	}
	if e.root != "" {
		return e.fail(errors.New("monitor samples the live host; --root is for static commands"))
	}
	if f.report != "" {
		if _, err := report.FormatFor(f.report); err != nil {
			return e.fail(err) // before the run, not after it
		}
	}
	argv := e.command
	h, err := nicdiag.Inspect(ctx, nicdiag.WithInterfaces(args...))
	if err != nil {
		if errors.Is(err, nicinfo.ErrNoInterface) {
			err = fmt.Errorf("%w (to run a command, put it after --)", err)
		}
		return e.fail(err)
	}
	var nics []nicinfo.NIC
	for _, n := range h.Selected {
		if n.Netdev() {
			nics = append(nics, n.NIC)
		}
	}
	static := h.Check(queueCheckers()...)
	s, err := irq.NewSampler(ctx, nics, irq.WithInterval(f.interval))
	if err != nil {
		return e.fail(err)
	}
	rec, err := openRecord(f.record)
	if err != nil {
		return e.fail(err)
	}
	defer rec.close()
	rec.write(startLine{Type: "start", Schema: jsonSchema, IntervalS: f.interval.Seconds(), Command: argv, NICs: s.Queues()})

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if f.duration > 0 {
		sctx, cancel = context.WithTimeout(sctx, f.duration)
		defer cancel()
	}
	var cmdDone chan commandResult
	var cmd *exec.Cmd
	if len(argv) > 0 {
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, e.stdout, e.stderr
		if e.json {
			cmd.Stdout = e.stderr // keep nicdiag's JSON stream on stdout parseable
		}
		if err := cmd.Start(); err != nil {
			return e.fail(fmt.Errorf("monitor: cannot start %s: %w", argv[0], err))
		}
		cmdDone = make(chan commandResult, 1)
		go func() {
			err := cmd.Wait()
			r := commandResult{Argv: argv, ExitCode: cmd.ProcessState.ExitCode()}
			if err != nil {
				r.Error = err.Error()
			}
			cmdDone <- r
			cancel()
		}()
	}
	view := newMonitorView(e, len(argv) > 0)
	var samples []irq.Sample
	for {
		x, err := s.Next(sctx)
		if err != nil {
			if sctx.Err() != nil {
				break
			}
			if cmd != nil { // do not leave the command running on its own
				_ = cmd.Process.Kill()
				<-cmdDone
			}
			return e.fail(err)
		}
		samples = append(samples, x)
		rec.write(sampleLine{Type: "sample", Schema: jsonSchema, Sample: &x})
		view.sample(x, s.Queues())
	}
	var cr *commandResult
	if cmdDone != nil {
		cr = waitCommand(ctx, cmd, cmdDone)
	}
	sum := irq.Summarize(samples)
	sum.Findings = append(sum.Findings, static...)
	finding.Sort(sum.Findings)
	line := summaryLine{Type: "summary", Schema: jsonSchema, Summary: &sum, Queues: s.Queues(),
		Command: cr, Interrupted: ctx.Err() != nil}
	rec.write(line)
	if err := rec.err; err != nil {
		fmt.Fprintf(e.stderr, "nicdiag: monitor: writing %s: %v\n", f.record, err)
	}
	view.summary(line)
	if f.report != "" {
		r := &report.Record{Samples: samples, Summary: &sum,
			Run: report.Run{Command: argv, Interrupted: line.Interrupted}}
		if f.record != "" {
			r.Source = filepath.Base(f.record) // filepath.Base("") is "."
		}
		if cr != nil {
			r.Run.ExitCode, r.Run.CommandError = &cr.ExitCode, cr.Error
		}
		if err := report.WriteFile(f.report, r); err != nil {
			fmt.Fprintf(e.stderr, "nicdiag: monitor: writing report %s: %v\n", f.report, err)
		}
	}
	return exitFor(sum.Findings)
}

// waitCommand waits for the monitored command. On Ctrl-C the terminal sent
// it SIGINT too; if nicdiag alone was interrupted, it passes SIGINT on, and
// kills the command after a grace period.
func waitCommand(ctx context.Context, cmd *exec.Cmd, done <-chan commandResult) *commandResult {
	if ctx.Err() == nil {
		r := <-done
		return &r
	}
	select {
	case r := <-done:
		return &r
	case <-time.After(100 * time.Millisecond):
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case r := <-done:
		return &r
	case <-time.After(5 * time.Second):
	}
	_ = cmd.Process.Kill()
	r := <-done
	return &r
}

// queueCheckers are the checks of queue and IRQ placement: the static
// verdicts a run's own are added to.
func queueCheckers() []nicdiag.Checker {
	var out []nicdiag.Checker
	for _, c := range nicdiag.Checkers() {
		if slices.Contains(c.Codes, finding.IRQAffinityConcentrate) {
			out = append(out, c)
		}
	}
	return out
}
