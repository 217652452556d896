package monitor

import (
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/irq"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// Run is a monitored run in progress: Start begins it, Next hands out its
// samples, Stop ends it. Its methods are safe for concurrent use.
type Run struct {
	o       options
	ctx     context.Context // Start's: done means interrupted
	cancel  context.CancelFunc
	sampler *irq.Sampler
	follow  follower // this host's stack, and the interfaces it adds
	rec     recorder
	cmd     *exec.Cmd
	cmdDone <-chan CommandResult
	// cmdExited is closed when the command has exited; cmdDone may
	// yield later (see startCommand).
	cmdExited <-chan struct{}
	tree      *tree         // the command and what it started
	looped    chan struct{} // closed when sampling has ended
	watch     atomic.Int64  // a pid for Watch to hand the sampler; -1: none

	mu      sync.Mutex
	win     *Window
	backlog []Sample // taken, not yet handed out by Next
	skipped int      // samples Next never handed out (MaxBacklog)
	queues  []irq.NICQueues
	wake    chan struct{} // closed at each new sample and at the end
	ended   bool
	err     error // why sampling failed; nil when it ended normally

	stopOnce sync.Once
	result   *Result
	stopErr  error
}

// Result is what a run found.
type Result struct {
	// Summary holds the window's averages and verdicts (irq.Summarizer),
	// with the findings of WithFindings, worst first.
	Summary irq.Summary
	// Queues is the NIC → IRQ map sampled at the end.
	Queues []irq.NICQueues
	// Command is how the command of WithCommand ended; nil without one.
	Command *CommandResult
	// Interrupted is true when the context given to Start was done by the
	// end of the run (Ctrl-C): the verdicts cover what was sampled.
	Interrupted bool
	// Verdict says which layer bound the run (Window.Verdict over the
	// samples and the target's Limits); its findings are in
	// Summary.Findings too.
	Verdict Verdict
	// Limits are the target's.
	Limits []Limits
}

// Start takes the first reading of the counters, maps the queues of the
// target's interfaces to their IRQs (t may be nil, or have none: CPU load
// is still sampled), opens the
// record and writes its start line, starts the command, and samples in the
// background every interval until Stop. When ctx is done the run ends, as
// interrupted. Start fails when the interval is not positive
// (ErrInterval), the first reading fails, the record file cannot be
// created, or the command cannot be started (ErrCommandStart).
func Start(ctx context.Context, t Target, opts ...Option) (*Run, error) {
	o := newOptions(opts)
	if o.interval < MinInterval {
		return nil, ErrInterval
	}
	var nics []nicinfo.NIC
	if t != nil {
		nics, o.limits = t.Monitored()
	}
	iopts := append([]irq.Option{option.Of(o.read), irq.WithInterval(o.interval)}, o.irq...)
	if addrs := pathAddrs(o.limits); len(addrs) > 0 {
		iopts = append(iopts, irq.WithPCIe(addrs...))
	}
	s, err := irq.NewSampler(ctx, nics, iopts...)
	if err != nil {
		return nil, err
	}
	r := &Run{o: o, ctx: ctx, sampler: s, cmd: o.cmd, looped: make(chan struct{}), wake: make(chan struct{}),
		queues: slices.Clone(s.Queues()), win: NewWindow(o.limits)}
	if o.cmd != nil {
		r.win.commandRun()
	}
	r.follow.start(ctx, o, nics, iopts)
	r.watch.Store(-1)
	if err := r.rec.open(o); err != nil {
		s.Close()
		r.follow.close()
		return nil, err
	}
	var argv []string
	if o.cmd != nil {
		argv = o.cmd.Args
	}
	r.rec.write(func(w *Writer) error {
		return w.WriteStart(Header{Interval: o.interval, Command: argv, Queues: r.queues, Limits: o.limits, Findings: o.findings})
	})
	sctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	if o.duration > 0 {
		var cancelTimeout context.CancelFunc
		sctx, cancelTimeout = context.WithTimeout(sctx, o.duration)
		r.cancel = func() { cancelTimeout(); cancel() }
	}
	if o.cmd != nil {
		marker := newMarker()
		ownGroup := prepareCommand(o.cmd, marker)
		if r.cmdExited, r.cmdDone, err = startCommand(o.cmd, cancel); err != nil {
			r.cancel()
			r.rec.close()
			s.Close()
			r.follow.close()
			return nil, err
		}
		r.tree = newTree(o.cmd.Process.Pid, ownGroup, marker)
		s.Watch(o.cmd.Process.Pid) // before the loop: the samplers are not shared yet
		r.follow.watch(o.cmd.Process.Pid)
	}
	go r.loop(sctx)
	return r, nil
}

// loop samples until ctx is done or the sampler fails; a failure kills the
// command's process group too, which must not run on unwatched.
func (r *Run) loop(ctx context.Context) {
	defer close(r.looped)
	defer func() { r.sampler.Close() }() // the files and sockets it keeps open
	defer r.follow.close()
	for {
		if pid := r.watch.Swap(-1); pid >= 0 {
			r.sampler.Watch(int(pid))
			r.follow.watch(int(pid))
		}
		ix, err := r.sampler.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				err = nil
			} else if r.tree != nil {
				r.tree.signal(syscall.SIGKILL)
			}
			r.mu.Lock()
			r.ended, r.err = true, err
			r.signal()
			r.mu.Unlock()
			return
		}
		x := r.follow.sample(ctx, ix)
		r.rec.write(func(w *Writer) error { return w.WriteRunSample(x) })
		if s := r.follow.extend(ctx, r.sampler, x.Stack); s != nil {
			r.sampler = s
		}
		r.mu.Lock()
		r.win.AddSample(x)
		if len(r.backlog) == MaxBacklog {
			r.backlog[0] = Sample{}
			r.backlog = r.backlog[1:]
			r.skipped++
		}
		r.backlog = append(r.backlog, x)
		r.queues = slices.Clone(r.sampler.Queues())
		r.signal()
		r.mu.Unlock()
	}
}

// signal wakes the callers waiting in Next; r.mu is held.
func (r *Run) signal() {
	close(r.wake)
	r.wake = make(chan struct{})
}

// MaxBacklog is the most samples a run holds for Next: a caller that
// falls further behind misses the oldest of them (Skipped counts them).
// The record and the verdict have every sample.
const MaxBacklog = 1024

// Next returns the next sample, waiting for it to be taken: every sample
// once, in order, also those taken before the call, as long as the caller
// keeps within MaxBacklog of the sampling. Once the run has ended and
// every sample held has been returned it returns ErrDone, or the error
// that ended sampling (the counters could not be read; the command, if
// any, has been killed with what it started). It returns ctx.Err() when
// ctx is done first.
func (r *Run) Next(ctx context.Context) (Sample, error) {
	for {
		r.mu.Lock()
		if len(r.backlog) > 0 {
			x := r.backlog[0]
			r.backlog[0] = Sample{}
			r.backlog = r.backlog[1:]
			r.mu.Unlock()
			return x, nil
		}
		if r.ended {
			err := r.err
			r.mu.Unlock()
			if err == nil {
				err = ErrDone
			}
			return Sample{}, err
		}
		wake := r.wake
		r.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return Sample{}, ctx.Err()
		}
	}
}

// Skipped is the number of samples Next did not hand out because the
// caller fell more than MaxBacklog samples behind.
func (r *Run) Skipped() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped
}

// Wait waits for the run to end by itself (WithDuration has passed, the
// command of WithCommand has exited, or the context given to Start is
// done), then stops it and returns what Stop returns. It returns
// ctx.Err() when ctx is done first; the run goes on. The samples need not
// be taken with Next meanwhile.
func (r *Run) Wait(ctx context.Context) (*Result, error) {
	select {
	case <-r.looped:
		return r.Stop()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Watch makes the process tree rooted at pid the run's command for the
// verdict: from the next reading on, each sample's Threads holds its
// tasks (see irq.Sampler.Watch), and its busiest thread is a ceiling.
// A harness calls it with its load generator's pid; WithCommand does it
// by itself. 0 stops watching. Watching does not make a process the run's:
// Stop ends the command's processes only (see WithCommand), never one the
// caller started.
func (r *Run) Watch(pid int) {
	if pid >= 0 {
		r.watch.Store(int64(pid))
	}
}

// pathAddrs lists the PCI functions of every Limits' path, once each.
func pathAddrs(ls []Limits) []string {
	var out []string
	for _, l := range ls {
		for _, a := range l.Path {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// Queues returns the NIC → IRQ map in use: the one of the latest reading.
func (r *Run) Queues() []irq.NICQueues {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.queues
}

// Stop ends sampling (a partial interval is dropped), ends the command and
// whatever it started and waits for them (see WithCommand), summarizes the
// window, writes the record's summary line and closes a record file.
// Calling it again returns the same.
//
// When sampling failed, Stop returns that error and no Result, and writes
// no summary. When only the record could not be written, it returns the
// Result and a *RecordError.
func (r *Run) Stop() (*Result, error) {
	r.stopOnce.Do(func() { r.result, r.stopErr = r.stop() })
	return r.result, r.stopErr
}

func (r *Run) stop() (*Result, error) {
	r.cancel()
	<-r.looped
	var cr *CommandResult
	if r.cmd != nil {
		cr = r.endCommand()
	}
	r.mu.Lock()
	win, queues, failed := r.win, r.queues, r.err
	r.mu.Unlock()
	if failed != nil {
		r.rec.close()
		return nil, failed
	}
	res := &Result{Summary: win.Summary(), Queues: queues, Command: cr,
		Interrupted: r.ctx.Err() != nil, Limits: r.o.limits, Verdict: win.Verdict()}
	res.Summary.Findings = append(res.Summary.Findings, r.o.findings...)
	res.Summary.Findings = append(res.Summary.Findings, res.Verdict.Findings...)
	finding.Sort(res.Summary.Findings)
	r.rec.write(func(w *Writer) error { return w.WriteSummary(res) })
	r.rec.close()
	if r.rec.err != nil {
		return res, &RecordError{Err: r.rec.err}
	}
	return res, nil
}

// recorder writes a run's record; the first error ends it.
type recorder struct {
	w   *Writer
	f   *os.File // the file of WithRecordFile, closed at the end
	err error
}

func (rc *recorder) open(o options) error {
	var w io.Writer = o.record
	if o.recordFile != "" {
		f, err := os.Create(o.recordFile)
		if err != nil {
			return err
		}
		rc.f, w = f, f
	}
	if w != nil {
		rc.w = NewWriter(w)
	}
	return nil
}

func (rc *recorder) write(f func(*Writer) error) {
	if rc.w == nil || rc.err != nil {
		return
	}
	rc.err = f(rc.w)
}

func (rc *recorder) close() {
	if rc.f != nil {
		if err := rc.f.Close(); err != nil && rc.err == nil {
			rc.err = err
		}
		rc.f = nil
	}
}
