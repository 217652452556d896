// Package monitor is the monitored run of `nicdiag monitor` as a library:
// it samples per-CPU irq/softirq/softnet load and per-NIC traffic at an
// interval, and this host's network stack right after (package stack: the
// command's sockets, socket drops, qdiscs, conntrack, the processes on
// each CPU), while the caller (a benchmark harness, say) runs its load, or
// while a command runs, and ends with the window's summary and the run
// verdict: which layer of the host bound the run, or that every layer had
// room. WithRoutedInterfaces adds the interfaces the command's flows leave
// by to those sampled.
//
//	h, err := nicdiag.Inspect(ctx)  // the host, read once
//	run, err := h.Monitor(ctx, monitor.WithDuration(10*time.Second))
//	// ... generate load ...
//	res, err := run.Wait(ctx) // res.Verdict.Bound, res.Summary.Findings
//
// Start takes a Target, what to sample and the ceilings to judge it by
// (nicdiag.Host is one). Sampling runs in the background from Start to
// Stop; Next hands out the samples for a live view. A run ends by itself
// when the context given to Start is done (Result.Interrupted), when
// WithDuration has passed, or when the command of WithCommand exits; Wait
// waits for that.
//
// A run keeps no samples: a Window sums each as it arrives (AddSample),
// what the summary and the verdict need (one file per layer of the host,
// layer_*.go; the stack's part in a stack.Aggregator), so that its memory
// does not grow with its length.
//
// A run can be recorded (WithRecord, WithRecordFile) as JSON lines: a
// "start" line, one "sample" line per interval, written as it is taken, and
// a "summary" line at Stop, so that a record is complete after Ctrl-C and
// keeps every finished sample if the process is killed. A sample line
// carries the stack's reading as "stack" and the interfaces first sampled
// in it as "added". Writer writes that format and ReadRecord reads it back,
// also when cut short mid-line; package report draws it.
//
// The package never prints or exits. Its errors work with errors.Is:
// ErrDone, ErrInterval, ErrCommandStart, ErrRecord, ErrEmpty, ErrMalformed.
package monitor
