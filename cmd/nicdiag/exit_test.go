package main

// How nicdiag ends: the time left after one signal or several (exitClock),
// the removal of temporary files bounded by it (env.shut), the private
// TMPDIRs that a killed nicdiag leaves and the next removes, monitor under
// timeout(1)'s repeated SIGTERM, and monitor's command after a SIGKILL.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/proctest"
	"golang.org/x/sys/unix"
)

// The first signal gives signalGrace, the command all but the removal's
// share of it; a repeat of the first signal within sameSignal (timeout(1)
// sends it twice) changes nothing; any later signal halves what is left.
func TestExitClock(t *testing.T) {
	var c exitClock
	t0 := time.Unix(1000, 0)
	if c.expired() != nil {
		t.Fatal("a clock before any signal expires")
	}
	if !c.signal(syscall.SIGTERM, t0) || c.first != syscall.SIGTERM || !c.deadline.Equal(t0.Add(signalGrace)) {
		t.Fatalf("first signal: first %v, deadline %v", c.first, c.deadline.Sub(t0))
	}
	if got, want := c.commandLeft(t0), signalGrace-signalGrace/removeShare; got != want {
		t.Errorf("the command's share: %v; want %v", got, want)
	}
	if c.signal(syscall.SIGTERM, t0.Add(time.Millisecond)) || !c.deadline.Equal(t0.Add(signalGrace)) {
		t.Errorf("the same signal 1ms later moved the deadline to %v", c.deadline.Sub(t0))
	}
	t1 := t0.Add(300 * time.Millisecond)
	if c.signal(syscall.SIGTERM, t1) || !c.deadline.Equal(t1.Add(600*time.Millisecond)) {
		t.Errorf("a second SIGTERM 300ms in: deadline %v; want 900ms (half of the 1.2s left)", c.deadline.Sub(t0))
	}
	t2 := t1.Add(time.Millisecond)
	if c.signal(syscall.SIGINT, t2) || !c.deadline.Equal(t2.Add(299500*time.Microsecond)) {
		t.Errorf("a SIGINT 1ms after: deadline %v; want half of what was left", c.deadline.Sub(t0))
	}
	if c.first != syscall.SIGTERM {
		t.Errorf("first = %v; the exit code is the first signal's", c.first)
	}
}

// A removal that does not finish (a tree too large for the time left)
// holds shut no longer than its deadline; closers run before it.
func TestShutBoundsRemoval(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	defer func(f func(string) error) { removeAll = f }(removeAll)
	removed := make(chan string, 1)
	removeAll = func(p string) error {
		removed <- p
		<-block
		return nil
	}
	e := newEnv(os.Stdout, os.Stderr)
	e.tmp = &privateTemp{dir: t.TempDir()}
	closed := false
	e.onClose(func() { closed = true })
	done := make(chan struct{})
	go func() {
		e.shut(time.Now().Add(50 * time.Millisecond))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("shut waits for a removal past its deadline")
	}
	if !closed {
		t.Error("shut did not run the closers")
	}
	select {
	case p := <-removed:
		if p != e.tmp.dir {
			t.Errorf("removed %s; want %s", p, e.tmp.dir)
		}
	case <-time.After(20 * time.Second):
		t.Error("the removal did not start")
	}
}

// blockedNicdiag starts nicdiag --root archive list --json writing to a
// pipe nobody reads, and waits until it blocks there with the archive
// unpacked under its private TMPDIR.
func blockedNicdiag(t *testing.T, archive string) *nicdiagProc {
	t.Helper()
	_, w := fullPipe(t)
	p := startNicdiag(t, w, "--root", archive, "list", "--json")
	if !waitUntil(20*time.Second, func() bool { return blockedOnPipe(p.cmd.Process.Pid) }) {
		t.Skipf("no thread of nicdiag seen waiting in pipe_write; stderr:\n%s", p.stderr.String())
	}
	p.tmpHolds(t)
	return p
}

// runIn runs nicdiag with args to its end, with TMPDIR tmp.
func runIn(t *testing.T, tmp string, args ...string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nicdiag %v: %v\n%s", args, err, out)
	}
}

// A SIGKILL leaves the private TMPDIR with the unpacked archive in it; the
// next nicdiag that needs a TMPDIR removes it, and leaves alone that of a
// nicdiag still running (its lock is held).
func TestStaleTempSwept(t *testing.T) {
	archive := snapArchive(t)
	killed := blockedNicdiag(t, archive)
	if err := killed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-killed.waited
	left, _ := filepath.Glob(filepath.Join(killed.tmp, tempLive+"*", "*"))
	if len(left) == 0 {
		t.Fatal("nothing left in TMPDIR after SIGKILL: no sweep to test")
	}

	live := blockedNicdiag(t, archive)
	liveDirs, _ := filepath.Glob(filepath.Join(live.tmp, tempLive+"*"))
	if len(liveDirs) != 1 {
		t.Fatalf("private TMPDIRs of the running nicdiag: %q", liveDirs)
	}
	// The killed one's leftovers move beside the live one's, and a third
	// nicdiag runs there.
	stale, _ := filepath.Glob(filepath.Join(killed.tmp, tempLive+"*"))
	for _, d := range stale {
		if err := os.Rename(d, filepath.Join(live.tmp, filepath.Base(d))); err != nil {
			t.Fatal(err)
		}
	}
	runIn(t, live.tmp, "--root", archive, "list")
	for _, d := range stale {
		if _, err := os.Lstat(filepath.Join(live.tmp, filepath.Base(d))); err == nil {
			t.Errorf("%s, left by a killed nicdiag, is still there", filepath.Base(d))
		}
	}
	if _, err := os.Stat(liveDirs[0]); err != nil {
		t.Errorf("the running nicdiag's TMPDIR was removed: %v", err)
	}
	code, _ := live.signal(t, syscall.SIGTERM)
	if code != 143 {
		t.Errorf("exit %d after SIGTERM; want 143", code)
	}
	live.tmpSwept(t, archive)
}

// GNU timeout sends its SIGTERM to nicdiag and then to its own process
// group, nicdiag included: monitor still ends its command, prints the
// summary and exits per its findings (not 143). The second signal halves
// the grace left, so a loaded host can run it out before the summary: a
// try that printed nothing is made again with a longer timeout, and one
// of three must give the summary.
func TestMonitorUnderTimeout(t *testing.T) {
	timeout, err := exec.LookPath("timeout")
	if err != nil {
		t.Skip(err)
	}
	for try, secs := range []string{"2", "4", "8"} {
		mark := fmt.Sprintf("1000.%d%d7", os.Getpid(), try)
		cmd := exec.Command(timeout, "--preserve-status", secs, binary(t), "monitor", "--json", "--interval", "200ms", "--", "sleep", mark)
		cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
		out, err := cmd.Output()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		noneLeft(t, []string{mark})
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, `"type":"summary"`) && try < 2 {
			t.Logf("timeout %s s: no summary (exit %d, %d lines); again", secs, cmd.ProcessState.ExitCode(), len(lines))
			continue
		}
		want, sum := exitForSummary(t, lastLine(t, lines, ""))
		if code := cmd.ProcessState.ExitCode(); code != want || sum["interrupted"] != true {
			t.Errorf("exit %d, interrupted %v; want %d (the findings) and the summary", code, sum["interrupted"], want)
		}
		return
	}
}

// A SIGKILLed nicdiag cannot end its command; the parent-death signal
// does.
func TestMonitorCommandDiesWithNicdiag(t *testing.T) {
	mark := fmt.Sprintf("1000.%d8", os.Getpid())
	p := startNicdiag(t, nil, "monitor", "--json", "--interval", "200ms", "--", "sleep", mark)
	allSleeping(t, p, []string{mark})
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.waited
	if !waitUntil(10*time.Second, func() bool { return len(proctest.Sleeping(mark)) == 0 }) {
		for _, pid := range proctest.Sleeping(mark) {
			unix.Kill(pid, unix.SIGKILL)
		}
		t.Fatal("the command still runs 10s after nicdiag was killed")
	}
}
