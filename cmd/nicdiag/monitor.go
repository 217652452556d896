package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/nicdiag/nicdiag"
	"github.com/nicdiag/nicdiag/internal/procs"
	"github.com/nicdiag/nicdiag/monitor"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/report"
	"golang.org/x/sys/unix"
)

// monitorFlags are the monitor command's own flags.
type monitorFlags struct {
	interval time.Duration
	duration time.Duration
	record   string
	report   string
}

var monitorCmd = &command{
	name:       "monitor",
	args:       "[IFACE...] [-- CMD ARGS]",
	signalEnds: true,
	summary:    "per-core irq/softirq/softnet load live; with -- CMD, the verdict on what bound it",
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
samples while it runs (its threads and sockets too), and then prints the
verdict. nicdiag prints nothing while the command runs. Ctrl-C ends
sampling; the verdict covers what was sampled.

Which interfaces: those named (IFACE and -- CMD combine); else every
physical NIC, and, with a command, the interfaces its flows leave by
(found by a route lookup of each flow's peer: a veth, a bridge, lo), from
the sample after the one that first saw them; on a host without a
physical NIC, every other interface. The verdict weighs the NICs with a
device that moved traffic, or, where none did, the software interfaces
that did, and says which and why.

The command runs in a process group of its own. Started from a terminal's
foreground, nicdiag gives it the terminal: it reads the terminal and gets
its Ctrl-C as if run directly. A SIGINT or SIGTERM that nicdiag gets is
passed on to the command's group. When the run ends (the command exits,
--duration passes, or nicdiag is interrupted), nicdiag ends the command and
everything it started: what is left gets SIGTERM, then SIGKILL; nothing it
started, also in the background, in another session or double-forked,
outlives nicdiag.

The run verdict (with or without a command) puts what the NICs achieved
(Ethernet frame bits: the driver's byte counters plus 4 bytes of FCS per
packet) next to every ceiling at the run's own frame sizes and direction
mix: each port's line rate, each PCIe hop of the path (the model of
'nicdiag explain', hops shared by several NICs added up), a USB bus, the
busiest packet core, the command's busiest thread, and each shaping
qdisc's rate. It names the one the run reached (90 % or more):
run.ethernet_bound, run.pcie_bound, run.tunnel_bound, run.usb_bound,
run.qdisc_bound, run.core_bound (a core full of packet work),
run.command_bound. A full core whose work was mostly other processes'
or the hypervisor's (steal) is run.other_work, naming them. Else this
host's stack, read each sample (sock_diag, /proc/net/snmp and netstat,
qdiscs, conntrack, the processes on each CPU), says what bound it:
run.other_work, run.socket_drops, run.qdisc_drops, run.conntrack_drops,
run.window_bound (this host's receive window), run.sndbuf_bound; else
run.nic_drops (0.1 % of the packets offered, and 10 a second), run.pause
(10 pause frames/s); run.outside_host only when every layer of this host
had room; run.unknown naming what could not be read. Rates are over the
run's span, from the first to the last sample that moved traffic, as the
load generator's own report counts them; the busiest sample is shown
beside them (peak).

--json writes one JSON line per sample and a summary line at the end
(with a command: only the summary). --record FILE writes the same lines,
with "type" "start", "sample" and "summary", flushed per sample.
Exit code: per the findings (0, 1, 2), also after Ctrl-C or SIGTERM, or 3 if
the command could not start. The command's own status is in the summary
("command": "exit_code", "error"); it does not become nicdiag's. If the run
has not ended 1.2 s after a signal (a second signal halves the time left),
nicdiag ends it and exits 130 (SIGINT) or 143 (SIGTERM) within 1.5 s. The
command dies with nicdiag, also when nicdiag is killed (SIGKILL is its
parent-death signal).

Hard-IRQ time shows as "-" (JSON null) when the kernel does not account it.

examples:
  nicdiag monitor
  nicdiag monitor --interval 500ms eth0
  nicdiag monitor --record run.jsonl -- iperf3 -c 192.0.2.1 -t 10
  nicdiag monitor eth0 -- iperf3 -c 192.0.2.1 -P 4`,
	bind: func(fs *flag.FlagSet) runFunc {
		f := &monitorFlags{}
		fs.DurationVar(&f.interval, "interval", time.Second, "time between samples (at least 10ms)")
		fs.DurationVar(&f.duration, "duration", 0, "stop after this long, ending a command still running (0: until Ctrl-C or the command ends)")
		fs.StringVar(&f.record, "record", "", "also write every sample as JSON lines to `FILE`")
		fs.StringVar(&f.report, "report", "", "at the end, write a report of the run to `FILE` (.html, or .svg for the charts alone)")
		return func(ctx context.Context, e *env, fs *flag.FlagSet, args []string) int {
			return runMonitor(ctx, e, args, *f)
		}
	},
}

// runMonitor samples the NICs named in args (every physical one by
// default) while e.command runs, or until Ctrl-C or --duration, and prints
// the verdict.
func runMonitor(ctx context.Context, e *env, args []string, f monitorFlags) int {
	if err := checkMonitorFlags(e, f); err != nil {
		return e.fail(err)
	}
	h, err := monitorHost(ctx, args)
	if err != nil {
		return e.fail(err)
	}
	opts := []monitor.Option{monitor.WithInterval(f.interval), monitor.WithDuration(f.duration),
		monitor.WithFindings(h.h.Check(queueCheckers()...)...)}
	if len(args) == 0 && len(e.command) > 0 {
		opts = append(opts, monitor.WithRoutedInterfaces())
	}
	record := f.record
	if record == "" && f.report != "" {
		// The report draws every sample: they are read back from a
		// record of nicdiag's own.
		tmp, err := os.CreateTemp(e.tempDir(), "run-*.jsonl")
		if err != nil {
			return e.fail(fmt.Errorf("monitor: --report: %w", err))
		}
		tmp.Close()
		record = tmp.Name()
		defer os.Remove(record)
	}
	if record != "" {
		opts = append(opts, monitor.WithRecordFile(record))
	}
	release := func() {} // gives the terminal back once the command has ended
	if len(e.command) > 0 {
		var cmd *exec.Cmd
		cmd, release = e.monitoredCommand()
		opts = append(opts, monitor.WithCommand(cmd))
	}
	run, err := monitor.Start(ctx, h, append([]monitor.Option{option.Root(h.h.Root)}, opts...)...)
	if err != nil {
		release()
		return e.fail(err)
	}
	view := newMonitorView(e, len(e.command) > 0)
	res, err := watchRun(ctx, run, view)
	release()
	if err != nil {
		var re *monitor.RecordError
		if !errors.As(err, &re) {
			return e.fail(err)
		}
		fmt.Fprintf(e.stderr, "nicdiag: monitor: writing %s: %v\n", record, re.Err)
	}
	view.summary(res)
	if f.report != "" {
		writeRunReport(e, f.report, record, f.record != "")
	}
	return exitFor(res.Summary.Findings)
}

// checkMonitorFlags refuses what the run could not do, before it starts.
func checkMonitorFlags(e *env, f monitorFlags) error {
	if f.interval <= 0 {
		return errors.New("monitor: --interval must be positive")
	}
	if e.root != "" {
		return errors.New("monitor samples the live host; --root is for static commands")
	}
	if f.report != "" { // checked before the run, not after it
		if _, err := report.FormatFor(f.report); err != nil {
			return err
		}
		if err := writableDir(filepath.Dir(f.report)); err != nil {
			return fmt.Errorf("monitor: --report %s: %w", f.report, err)
		}
	}
	return nil
}

// monitoredCommand is the command after --, its input and output passed
// through (its output to stderr with --json, to keep nicdiag's JSON
// stream parseable), and the function that gives the terminal back once
// it has ended.
func (e *env) monitoredCommand() (*exec.Cmd, func()) {
	argv := e.command
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, e.stdout, e.stderr
	cmd.Env = e.environ
	if e.json {
		cmd.Stdout = e.stderr
	}
	release := func() {}
	if e.process {
		release = e.adoptCommand(cmd)
	}
	return cmd, release
}

// watchRun shows the run's samples as they come, until it ends (the
// command exits, --duration passes, or ctx is done), and stops it. A run
// whose sampling failed has killed its command: Stop waits for it.
func watchRun(ctx context.Context, run *monitor.Run, view *monitorView) (*monitor.Result, error) {
	for {
		x, err := run.Next(ctx)
		if errors.Is(err, monitor.ErrDone) || ctx.Err() != nil {
			break
		}
		if err != nil {
			_, _ = run.Stop()
			return nil, err
		}
		view.sample(x)
	}
	return run.Stop()
}

// adoptCommand prepares the nicdiag process for running cmd: it becomes a
// child subreaper, so that what the command starts and orphans (a double
// fork, a daemon in a session of its own) is re-parented to nicdiag rather
// than init, and at exit (env.close, also the signal watchdog's) every
// process below nicdiag is killed and reaped. When nicdiag's process group
// has the terminal on stdin in the foreground, the command's group gets it
// instead (its input and Ctrl-C); the returned function, also called at
// exit, gives it back.
func (e *env) adoptCommand(cmd *exec.Cmd) (release func()) {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	release = func() {}
	fd := int(os.Stdin.Fd())
	if pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil && pg == unix.Getpgrp() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Foreground: true, Ctty: fd}
		release = sync.OnceFunc(func() { takeTerminal(fd) })
	}
	e.onClose(func() {
		release()
		endChildren()
	})
	return release
}

// takeTerminal puts nicdiag's process group back in the foreground of the
// terminal fd, from the background where a process is sent SIGTTOU for
// that unless it ignores it.
func takeTerminal(fd int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpgrp())
}

// endChildren kills every process below nicdiag (its children, theirs, and
// so on) and reaps its children, waiting up to childrenWait for them to be
// gone: what a monitored command left when it and its tree were ended, or
// everything when the signal watchdog ends nicdiag.
func endChildren() {
	self := os.Getpid()
	deadline := time.Now().Add(childrenWait)
	for {
		left := false
		for _, p := range procs.Descendants(procs.List(), map[int]bool{self: true}) {
			if p.Gone() {
				if p.PPID == self {
					var ws unix.WaitStatus
					_, _ = unix.Wait4(p.PID, &ws, unix.WNOHANG, nil)
				}
				continue
			}
			left = true
			_ = unix.Kill(p.PID, unix.SIGKILL)
		}
		if !left || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// childrenWait bounds endChildren's wait for killed processes to die.
const childrenWait = time.Second

// monitored is the host as the run's target: the interfaces it selected,
// each with why it is watched (monitor.Limits.Why).
type monitored struct {
	h   *nicdiag.Host
	why string
}

func (m monitored) Monitored() ([]nicinfo.NIC, []monitor.Limits) {
	nics, ls := m.h.Monitored()
	for i := range ls {
		ls[i].Why = m.why
	}
	return nics, ls
}

// monitorHost inspects the host once, selecting the netdevs among those
// named and what they sit on, or every physical NIC, or, on a host without
// one (a container, a namespace, many CI hosts), every other interface but
// lo: what the run samples and judges (Host.Monitor).
func monitorHost(ctx context.Context, names []string) (monitored, error) {
	h, err := nicdiag.Inspect(ctx, nicdiag.WithInterfaces(names...))
	if err != nil && errors.Is(err, nicinfo.ErrNoInterface) {
		err = fmt.Errorf("%w (to run a command, put it after --)", err)
	}
	if err != nil {
		return monitored{}, err
	}
	if len(names) > 0 {
		return monitored{h, monitor.WhyNamed}, nil
	}
	for _, n := range h.Selected {
		if n.Netdev() {
			return monitored{h, monitor.WhyPhysical}, nil
		}
	}
	var soft []string
	for _, n := range h.NICs {
		if n.Netdev() && n.Name != "lo" {
			soft = append(soft, n.Name)
		}
	}
	if len(soft) == 0 {
		return monitored{h, monitor.WhyPhysical}, nil
	}
	h, err = nicdiag.Inspect(ctx, nicdiag.WithInterfaces(soft...))
	return monitored{h, monitor.WhyNoPhysical}, err
}

// writeRunReport writes the report of the run recorded at record; a
// failure is reported and does not change the exit code.
func writeRunReport(e *env, out, record string, named bool) {
	r, err := monitor.ReadRecordFile(record)
	if err == nil {
		if !named {
			r.Source = "" // a file of nicdiag's own
		}
		err = report.WriteFile(out, r)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "nicdiag: monitor: writing report %s: %v\n", out, err)
	}
}

// queueCheckers are the checks of queue and IRQ placement: the static
// verdicts a run's own are added to.
func queueCheckers() []nicdiag.Checker {
	cs, err := nicdiag.CheckersNamed("queues")
	if err != nil {
		panic(err) // a checker renamed without this name
	}
	return cs
}

// writableDir reports why files cannot be created in dir, or nil.
func writableDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return unix.Access(dir, unix.W_OK|unix.X_OK)
}
