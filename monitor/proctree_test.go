package monitor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/procs"
	"github.com/nicdiag/nicdiag/internal/proctest"
	"github.com/nicdiag/nicdiag/option"
	"golang.org/x/sys/unix"
)

// waitFor polls cond until it holds or d has passed.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// treeScript starts five sleeps that a command's tree may hold: one in the
// background (in the group, ignoring SIGINT as a shell's background jobs
// do), one in a session of its own, one orphaned by a subshell (re-parented,
// still in the group), one both: double-forked from a session of its own,
// found by its environment alone, and one orphaned with its environment
// cleared, found by its group alone. Each sleeps for 300+i seconds and a
// fraction unique to the test, so that its command line marks it.
func treeScript(t *testing.T, tag string) (script string, marks []string) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	for i := range 5 {
		marks = append(marks, fmt.Sprintf("%d.%s", 300+i, tag))
	}
	script = fmt.Sprintf(`sleep %s & setsid sleep %s & (sleep %s &) ; setsid sh -c 'sleep %s &' ; (env -i %s %s &) ; wait`,
		marks[0], marks[1], marks[2], marks[3], sleep, marks[4])
	return script, marks
}

// killAll ends the processes with each mark, for a test that failed with
// them running.
func killAll(marks []string) {
	for _, m := range marks {
		for _, pid := range proctest.LiveWith(m) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// TestRunEndsCommandTree: Stop ends the command and everything it started,
// also what double-forked or left its group and session, and leaves alone a
// process the caller started and Watch'ed. As a child subreaper (what the
// nicdiag command is) the orphans re-parent to the test process, and Stop
// reaps them.
func TestRunEndsCommandTree(t *testing.T) {
	for _, subreaper := range []bool{false, true} {
		t.Run(fmt.Sprintf("subreaper=%v", subreaper), func(t *testing.T) {
			if subreaper {
				if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
					t.Skip(err)
				}
				defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
			}
			tag := fmt.Sprintf("%d%d", os.Getpid(), map[bool]int{false: 1, true: 2}[subreaper])
			script, marks := treeScript(t, tag)
			defer killAll(marks)
			own := exec.Command("sleep", "310."+tag) // the harness's load generator
			if err := own.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { own.Process.Kill(); own.Wait() }()

			run, err := Start(context.Background(), nil, option.Root(snap), WithInterval(20*time.Millisecond),
				WithCommand(exec.Command("sh", "-c", script)))
			if err != nil {
				t.Fatal(err)
			}
			run.Watch(own.Process.Pid)
			if !waitFor(10*time.Second, func() bool {
				for _, m := range marks {
					if len(proctest.Sleeping(m)) != 1 {
						return false
					}
				}
				return true
			}) {
				t.Fatalf("the command did not start its five sleeps")
			}
			start := time.Now()
			res, err := run.Stop()
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("Stop took %v", took)
			for _, m := range marks {
				if pids := proctest.LiveWith(m); len(pids) > 0 {
					t.Errorf("sleep %s still runs (pid %v) after Stop", m, pids)
				}
			}
			if took > 3*time.Second {
				t.Errorf("Stop took %v", took)
			}
			if c := res.Command; c == nil || c.Signal != syscall.SIGINT {
				t.Errorf("command = %+v; want it ended by SIGINT", c)
			}
			if own.ProcessState != nil || unix.Kill(own.Process.Pid, 0) != nil {
				t.Error("Stop ended a process the caller started itself")
			}
			if subreaper {
				self := os.Getpid()
				for _, p := range procs.List() {
					if p.PPID == self && p.State == 'Z' && p.PID != own.Process.Pid {
						t.Errorf("pid %d re-parented here is left a zombie", p.PID)
					}
				}
			}
		})
	}
}

// TestRunCommandExitLeftovers: a command that exits by itself ends the run
// with its status, also when what it left running in the background holds
// the pipe its output is copied from (Stdout a bytes.Buffer): that is ended,
// and the run does not wait for it.
func TestRunCommandExitLeftovers(t *testing.T) {
	mark := fmt.Sprintf("320.%d", os.Getpid())
	defer killAll([]string{mark})
	var out bytes.Buffer
	cmd := exec.Command("sh", "-c", "sleep "+mark+" & echo bye; exit 7")
	cmd.Stdout = &out
	start := time.Now()
	run, err := Start(context.Background(), nil, option.Root(snap), WithInterval(20*time.Millisecond), WithCommand(cmd))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	for {
		_, err := run.Next(ctx)
		if errors.Is(err, ErrDone) {
			break
		}
		if err != nil {
			killAll([]string{mark})
			t.Fatalf("the run did not end when the command exited: %v", err)
		}
	}
	res, err := run.Stop()
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if c := res.Command; c == nil || c.ExitCode != 7 || c.Signal != 0 || out.String() != "bye\n" {
		t.Errorf("command = %+v, output %q", c, out.String())
	}
	if pids := proctest.LiveWith(mark); len(pids) > 0 {
		t.Errorf("the command's background sleep still runs (pid %v)", pids)
	}
	if took > 3*time.Second {
		t.Errorf("took %v", took)
	}
}

// signalCause is a context cause that names a signal, as the nicdiag
// command's does.
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string     { return c.sig.String() }
func (c signalCause) Signal() os.Signal { return c.sig }

// TestRunCommandSignalFromCause: a run interrupted with a cause that names
// SIGTERM passes SIGTERM on; with a plain cancel, SIGINT. The command is
// this test binary as signalHelper, which catches the three signals and
// says which came: a command that died of the signal would not, where it
// inherited the signal ignored (SIGHUP under nohup, SIGINT in a
// background job), and the test would depend on how it was started.
func TestRunCommandSignalFromCause(t *testing.T) {
	for _, tc := range []struct {
		cause error
		want  syscall.Signal
	}{{signalCause{syscall.SIGTERM}, syscall.SIGTERM}, {fmt.Errorf("wrapped: %w", signalCause{syscall.SIGHUP}), syscall.SIGHUP},
		{nil, syscall.SIGINT}, {errors.New("no signal"), syscall.SIGINT}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), signalHelperEnv+"=1")
		cmd.Stdout = w
		run, err := Start(ctx, nil, option.Root(snap), WithInterval(20*time.Millisecond), WithCommand(cmd))
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(r)
		if line, err := br.ReadString('\n'); err != nil || line != "ready\n" { // its handler is in place
			t.Fatalf("helper: %q, %v", line, err)
		}
		cancel(tc.cause)
		res, err := run.Stop()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(br)
		r.Close()
		if c := res.Command; c == nil || c.ExitCode != signalHelperExit || !res.Interrupted || strings.TrimSpace(string(got)) != tc.want.String() {
			t.Errorf("cause %v: the command got %q (command %+v, interrupted %v); want %q", tc.cause, got, c, res.Interrupted, tc.want)
		}
	}
}

// TestPrepareCommand: a process group of its own unless the caller placed
// the command; the marker added to the environment, the caller's
// SysProcAttr left as it was.
func TestPrepareCommand(t *testing.T) {
	cmd := exec.Command("true")
	if !prepareCommand(cmd, "M=1") || !cmd.SysProcAttr.Setpgid || cmd.Env[len(cmd.Env)-1] != "M=1" || len(cmd.Env) < 2 {
		t.Errorf("plain command: attr %+v env %q", cmd.SysProcAttr, cmd.Env)
	}
	attr := &syscall.SysProcAttr{Setpgid: true, Pgid: 1}
	cmd = exec.Command("true")
	cmd.SysProcAttr, cmd.Env = attr, []string{"A=b"}
	if prepareCommand(cmd, "M=1") || cmd.SysProcAttr == attr || strings.Join(cmd.Env, " ") != "A=b M=1" {
		t.Errorf("joining group 1: attr %+v env %q", cmd.SysProcAttr, cmd.Env)
	}
	cmd = exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if !prepareCommand(cmd, "M=1") || cmd.SysProcAttr.Setpgid {
		t.Errorf("own session: attr %+v", cmd.SysProcAttr)
	}
}
