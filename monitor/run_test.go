package monitor

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// snap is a bundled snapshot: its counters never move, so a run over it
// has every rate 0 and no verdict of its own.
const snap = "../testdata/snapshots/82576-minipcie-x1"

func snapNICs(t *testing.T, root string) []nicinfo.NIC {
	t.Helper()
	nics, err := nicinfo.List(context.Background(), option.Root(root))
	if err != nil {
		t.Fatal(err)
	}
	return nics
}

// TestRunSnapshot: Start, samples through Next in order, Stop; the record
// holds what Next handed out and reads back.
func TestRunSnapshot(t *testing.T) {
	var rec bytes.Buffer
	static := finding.Finding{Code: finding.IRQAffinityConcentrate, Severity: finding.Warn, Subject: "enp1s0f0", Summary: "static"}
	run, err := Start(context.Background(), NICs(snapNICs(t, snap)...), option.Root(snap), WithInterval(10*time.Millisecond),
		WithDuration(200*time.Millisecond), WithRecord(&rec), WithFindings(static))
	if err != nil {
		t.Fatal(err)
	}
	if q := run.Queues(); len(q) == 0 || q[0].NIC != "enp1s0f0" {
		t.Errorf("queues = %+v", q)
	}
	var seen []time.Time
	for {
		x, err := run.Next(context.Background())
		if errors.Is(err, ErrDone) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, x.Time)
	}
	res, err := run.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 || res.Summary.Samples != len(seen) || res.Verdict.Samples != len(seen) {
		t.Fatalf("Next gave %d samples, the summary is of %d, the verdict of %d", len(seen), res.Summary.Samples, res.Verdict.Samples)
	}
	for i := 1; i < len(seen); i++ {
		if !seen[i].After(seen[i-1]) {
			t.Errorf("sample %d out of order", i)
		}
	}
	if run.Skipped() != 0 {
		t.Errorf("%d samples skipped", run.Skipped())
	}
	if res.Interrupted || res.Command != nil {
		t.Errorf("interrupted %v, command %+v", res.Interrupted, res.Command)
	}
	if len(res.Summary.Findings) != 1 || res.Summary.Findings[0].Summary != "static" {
		t.Errorf("findings = %v; want only the static one (nothing moves in a snapshot)", res.Summary.Findings)
	}
	if len(res.Summary.NICs) == 0 || res.Summary.NICs[0].StatsError != "" {
		t.Errorf("NIC rates = %+v", res.Summary.NICs)
	}
	if again, err := run.Stop(); again != res || err != nil {
		t.Error("a second Stop returned something else")
	}
	if _, err := run.Next(context.Background()); !errors.Is(err, ErrDone) {
		t.Errorf("Next after Stop: %v", err)
	}
	got, err := ReadRecord(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Samples) != len(seen) || len(got.Notes) != 0 || len(got.Summary.Findings) != 1 {
		t.Errorf("record: %d samples, notes %q, findings %v", len(got.Samples), got.Notes, got.Summary.Findings)
	}
}

// TestRunStopEarly: Stop without Next drops the partial interval and keeps
// the samples taken; a run without NICs still samples CPUs.
func TestRunStopEarly(t *testing.T) {
	run, err := Start(context.Background(), nil, option.Root(snap), WithInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(110 * time.Millisecond)
	res, err := run.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; s.Samples == 0 || len(s.CPUs) == 0 || len(s.NICs) != 0 {
		t.Fatalf("summary of %d samples: %+v", s.Samples, s)
	}
}

// TestRunInterrupted: the context given to Start ends the run, and the
// result says so; Next with a context of its own returns that context's
// error.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	run, err := Start(ctx, nil, option.Root(snap), WithInterval(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithCancel(context.Background())
	cancelShort()
	if _, err := run.Next(short); !errors.Is(err, context.Canceled) && err != nil {
		t.Errorf("Next with a done context: %v", err)
	}
	time.AfterFunc(60*time.Millisecond, cancel)
	for {
		if _, err := run.Next(context.Background()); err != nil {
			if !errors.Is(err, ErrDone) {
				t.Fatal(err)
			}
			break
		}
	}
	res, err := run.Stop()
	if err != nil || !res.Interrupted {
		t.Fatalf("interrupted = %v, %v", res != nil && res.Interrupted, err)
	}
}

// TestRunCommandExitStatus: the run ends with the command, whose status is
// in the result and the record.
func TestRunCommandExitStatus(t *testing.T) {
	var out, rec bytes.Buffer
	// The command exits once the test has a sample (it waits on stdin),
	// however slow the machine.
	stdin, release, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	cmd := exec.Command("sh", "-c", "echo from-command; read x; exit 3")
	cmd.Stdin, cmd.Stdout = stdin, &out
	start := time.Now()
	run, err := Start(context.Background(), nil, option.Root(snap), WithInterval(20*time.Millisecond), WithCommand(cmd), WithRecord(&rec))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := run.Next(context.Background()); err != nil {
			break
		}
		if i == 0 {
			release.Close()
		}
	}
	release.Close()
	res, err := run.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("the run did not end with the command")
	}
	c := res.Command
	if c == nil || c.ExitCode != 3 || c.Error != "exit status 3" || c.Signal != 0 || strings.Join(c.Argv, " ") != "sh -c echo from-command; read x; exit 3" {
		t.Fatalf("command = %+v", c)
	}
	if out.String() != "from-command\n" || res.Interrupted || res.Summary.Samples == 0 {
		t.Errorf("output %q, interrupted %v, %d samples", out.String(), res.Interrupted, res.Summary.Samples)
	}
	got, err := ReadRecord(&rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Run.ExitCode == nil || *got.Run.ExitCode != 3 || got.Run.CommandError != "exit status 3" || got.Run.Command[0] != "sh" {
		t.Errorf("record run = %+v", got.Run)
	}
}

// TestRunCommandInterrupted: when only nicdiag is interrupted, the command
// gets SIGINT passed on, and the result says it died of it.
func TestRunCommandInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.Command("sleep", "30")
	run, err := Start(ctx, nil, option.Root(snap), WithInterval(20*time.Millisecond), WithCommand(cmd))
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	for {
		if _, err := run.Next(context.Background()); err != nil {
			break
		}
	}
	res, err := run.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v to end the command", d)
	}
	if c := res.Command; c == nil || c.Signal != syscall.SIGINT || c.ExitCode != -1 || !res.Interrupted {
		t.Errorf("command = %+v, interrupted %v", c, res.Interrupted)
	}
}

func TestRunCommandCannotStart(t *testing.T) {
	var rec bytes.Buffer
	_, err := Start(context.Background(), nil, option.Root(snap), WithCommand(exec.Command("/nonexistent/nicdiag-test")), WithRecord(&rec))
	if !errors.Is(err, ErrCommandStart) || !errors.Is(err, fs.ErrNotExist) ||
		!strings.HasPrefix(err.Error(), "monitor: cannot start /nonexistent/nicdiag-test: ") {
		t.Errorf("err = %v", err)
	}
	if !strings.HasPrefix(rec.String(), `{"type":"start"`) || strings.Count(rec.String(), "\n") != 1 {
		t.Errorf("record = %q; want the start line alone", rec.String())
	}
}

// TestRunSamplerFails: counters that become unreadable end the run with
// their error, kill the command, and write no summary.
func TestRunSamplerFails(t *testing.T) {
	root := snaptest.Copy(t, snap)
	recPath := filepath.Join(t.TempDir(), "run.jsonl")
	run, err := Start(context.Background(), nil, option.Root(root), WithInterval(20*time.Millisecond),
		WithCommand(exec.Command("sleep", "30")), WithRecordFile(recPath))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "proc/interrupts")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var nerr error
	for nerr == nil {
		_, nerr = run.Next(context.Background())
	}
	if !errors.Is(nerr, fs.ErrNotExist) {
		t.Errorf("Next: %v", nerr)
	}
	if res, err := run.Stop(); res != nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stop: %+v, %v", res, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the command was not killed (%v)", d)
	}
	b, err := os.ReadFile(recPath)
	if err != nil || bytes.Contains(b, []byte(`"type":"summary"`)) || !bytes.Contains(b, []byte(`"type":"sample"`)) {
		t.Errorf("record after a failure: %v\n%s", err, b)
	}
}

// TestRunRecordError: a record that cannot be written does not fail the
// run; Stop returns the result and a RecordError.
func TestRunRecordError(t *testing.T) {
	run, err := Start(context.Background(), nil, option.Root(snap), WithInterval(10*time.Millisecond),
		WithDuration(50*time.Millisecond), WithRecord(errWriter{}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Stop()
	var re *RecordError
	if res == nil || !errors.Is(err, ErrRecord) || !errors.As(err, &re) || re.Err.Error() != "disk full" ||
		err.Error() != "monitor: writing the record: disk full" {
		t.Errorf("Stop: %v, %v", res, err)
	}
	if _, err := Start(context.Background(), nil, option.Root(snap), WithRecordFile(filepath.Join(t.TempDir(), "no", "dir.jsonl"))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("record file in a missing directory: %v", err)
	}
}

func TestRunBadInterval(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, time.Nanosecond, MinInterval - 1} {
		if _, err := Start(context.Background(), nil, option.Root(snap), WithInterval(d)); !errors.Is(err, ErrInterval) {
			t.Errorf("interval %v: %v", d, err)
		}
	}
	if _, err := Start(context.Background(), nil, option.Root(t.TempDir())); err == nil {
		t.Error("a root without /proc started")
	}
}
