package monitor

import (
	"io"
	"os/exec"
	"slices"
	"time"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/option"
)

// Option configures Start: one of this package's, or one of package
// option's (option.Root samples the host tree under a snapshot directory
// instead of the live host: a snapshot's counters do not move, so every
// rate is 0, what tests and examples want; per-queue counters are not read
// there, and the command of WithCommand still runs on the live host).
type Option interface {
	ApplyRead(*option.Read)
	MonitorOption()
}

// own is an option of this package's.
type own func(*options)

func (own) ApplyRead(*option.Read) {}
func (own) MonitorOption()         {}

type options struct {
	interval   time.Duration
	duration   time.Duration
	read       option.Read
	irq        []irq.Option
	cmd        *exec.Cmd
	record     io.Writer
	recordFile string
	findings   []finding.Finding
	limits     []Limits // the target's
	netns      string   // WithNetns's path
	routed     bool     // WithRoutedInterfaces
}

func newOptions(opts []Option) options {
	o := options{interval: time.Second}
	for _, f := range opts {
		if f == nil {
			continue
		}
		f.ApplyRead(&o.read)
		if f, ok := f.(own); ok {
			f(&o)
		}
	}
	return o
}

// MinInterval is the shortest time between samples Start accepts: one
// sample reads every CPU's and NIC's counters, and a shorter interval turns
// the monitor into the load it measures.
const MinInterval = 10 * time.Millisecond

// WithInterval sets the time between samples (default 1s). Start refuses
// one below MinInterval (ErrInterval).
func WithInterval(d time.Duration) Option {
	return own(func(o *options) { o.interval = d })
}

// WithDuration ends sampling d after Start; 0 (the default) samples until
// Stop, the context given to Start is done, or the command exits. A command
// still running when d has passed is ended by Stop (see WithCommand).
func WithDuration(d time.Duration) Option {
	return own(func(o *options) { o.duration = d })
}

// WithNetns reads the NICs' packet counters in the network namespace whose
// file is at path (see irq.WithNetns): for NICs that live in a namespace
// other than the caller's, such as a veth pair of a test bed.
func WithNetns(path string) Option {
	return own(func(o *options) { o.irq, o.netns = append(o.irq, irq.WithNetns(path)), path })
}

// WithRoutedInterfaces has the run watch, besides the target's, the
// interfaces of its namespace that the command's flows (WithCommand,
// Run.Watch) leave by, as this host's stack finds them (a route lookup
// of each flow's peer): from the sample after the one that first saw
// them, each with Limits.Why "routed". A harness that names no interface
// gets a verdict on the one its load went through, a veth or a bridge
// included. Under WithNetns it has no effect.
func WithRoutedInterfaces() Option {
	return own(func(o *options) { o.routed = true })
}

// WithCommand runs cmd while sampling: Start starts it (after the first
// reading, so the window covers it from its start), and the run ends when
// it exits. Set its Stdin, Stdout and Stderr as wanted; leave it unstarted,
// and build it with exec.Command rather than exec.CommandContext.
//
// Start puts the command in a process group of its own (SysProcAttr.Setpgid)
// unless its SysProcAttr already places it (Setsid, Setpgid, Foreground),
// and adds a variable of this run's, NICDIAG_MONITOR_RUN_ID=1, to its
// environment (cmd.Env, filled in from the process's when nil): that marks
// what the command starts, also what leaves its group and its parent. In a group of
// its own it no longer gets a terminal's Ctrl-C; the caller passes it on
// by ending the run, or gives the command the terminal (Foreground, with
// Ctty).
//
// Stop ends the command's whole tree. A command still running (the
// duration has passed, the context given to Start is done, or Stop was
// called first) gets SIGINT in its process group, or the signal the
// context's cause names when it has a method Signal() os.Signal; SIGKILL
// follows 5s later. Once the command has exited, whatever it started that
// still runs (in its group, with its marker, or seen below it) gets SIGTERM,
// and SIGKILL 1s later; those re-parented to this process, where it is a
// child subreaper (prctl PR_SET_CHILD_SUBREAPER, which the caller decides
// on: Start does not change it), are reaped. Processes the caller started
// itself are left alone.
func WithCommand(cmd *exec.Cmd) Option {
	return own(func(o *options) { o.cmd = cmd })
}

// WithRecord writes the run's record to w as JSON lines (see Writer): the
// start line in Start, each sample as it is taken, the summary in Stop. A
// write error ends the record there; Stop reports it (RecordError).
func WithRecord(w io.Writer) Option {
	return own(func(o *options) { o.record = w })
}

// WithRecordFile writes the record (see WithRecord) to the file at path,
// which Start creates (or truncates) and Stop closes. It replaces
// WithRecord.
func WithRecordFile(path string) Option {
	return own(func(o *options) { o.recordFile = path })
}

// WithFindings adds findings made before the run, such as the static queue
// and IRQ placement verdicts of nicdiag's Host.Check, to the run's
// verdicts: Result.Summary.Findings holds both, worst first.
func WithFindings(fs ...finding.Finding) Option {
	return own(func(o *options) { o.findings = append(o.findings, slices.Clone(fs)...) })
}
