// Package monitor is the monitored run of `nicdiag monitor` as a library:
// it samples per-CPU irq/softirq/softnet load and per-NIC traffic at an
// interval while the caller (a benchmark harness, say) runs its load, or
// while a command runs, and ends with the window's summary and verdicts.
//
//	run, err := monitor.Start(ctx, nics, monitor.WithInterval(time.Second))
//	// ... generate load ...
//	res, err := run.Stop() // res.Summary.Findings: irq.hot_core, softnet.drops, ...
//
// Sampling runs in the background from Start to Stop; Next hands out the
// samples one by one for a live view. A run ends by itself when the context
// given to Start is done (Result.Interrupted), when WithDuration has
// passed, or when the command of WithCommand exits.
//
// A run can be recorded (WithRecord, WithRecordFile) as JSON lines: a
// "start" line, one "sample" line per interval, written as it is taken, and
// a "summary" line at Stop, so that a record is complete after Ctrl-C and
// keeps every finished sample if the process is killed. Writer writes that
// format and ReadRecord reads it back, also when cut short mid-line; package
// report draws it.
//
// The package never prints or exits. Its errors work with errors.Is:
// ErrDone, ErrInterval, ErrCommandStart, ErrRecord, ErrEmpty, ErrMalformed.
package monitor
