package monitor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// CommandResult is how the command of WithCommand ended. Its JSON form is
// the summary line's "command" object.
type CommandResult struct {
	// Argv is the command line (exec.Cmd.Args).
	Argv []string `json:"argv"`
	// ExitCode is its exit status; -1 when a signal ended it.
	ExitCode int `json:"exit_code"`
	// Error is how Wait described a failure ("exit status 3", "signal:
	// interrupt"); empty after a clean exit.
	Error string `json:"error,omitempty"`
	// Signal is the signal that ended it; 0 when it exited by itself.
	Signal syscall.Signal `json:"-"`
}

// killAfter is how long Stop waits for a command it has signalled before it
// kills the command's process group (see WithCommand).
const killAfter = 5 * time.Second

// prepareCommand gives cmd a process group of its own, unless its
// SysProcAttr already places it (a session, a group, the terminal's
// foreground), and a parent-death signal, SIGKILL, unless it has one (see
// startCommand), and adds marker to its environment. It reports whether
// the command will lead a group of its own.
func prepareCommand(cmd *exec.Cmd, marker string) (ownGroup bool) {
	var a syscall.SysProcAttr
	if cmd.SysProcAttr != nil {
		a = *cmd.SysProcAttr // the caller's value stays as it was
	}
	if !a.Setsid && !a.Setpgid && !a.Foreground {
		a.Setpgid, a.Pgid = true, 0
	}
	if a.Pdeathsig == 0 {
		a.Pdeathsig = syscall.SIGKILL
	}
	cmd.SysProcAttr = &a
	env := cmd.Env
	if env == nil {
		env = os.Environ()
		if cmd.Dir != "" { // as exec.Cmd does for an environment it fills in
			if pwd, err := filepath.Abs(cmd.Dir); err == nil {
				env = append(env, "PWD="+pwd)
			}
		}
	}
	cmd.Env = append(env[:len(env):len(env)], marker)
	return a.Setsid || a.Pgid == 0
}

// startCommand starts cmd and returns a channel closed when it has exited
// and one that then yields how it ended, once exec.Cmd.Wait has returned;
// ended is called right after it exits. The two differ when the command
// leaves a process behind that holds an output pipe exec.Cmd copies from
// (Stdout set to a bytes.Buffer, say): Wait returns only when that process
// has closed it too.
func startCommand(cmd *exec.Cmd, ended func()) (exited <-chan struct{}, done <-chan CommandResult, err error) {
	exit := make(chan struct{})
	if err := startLocked(cmd, exit); err != nil {
		name := cmd.Path
		if len(cmd.Args) > 0 {
			name = cmd.Args[0]
		}
		return nil, nil, &startError{name: name, err: err}
	}
	markExit := sync.OnceFunc(func() {
		close(exit)
		ended()
	})
	// A pidfd polls readable when the process exits, without reaping it.
	// It is opened before anything waits for the process, so the pid is
	// still the command's. Without one (Linux before 5.3), Wait's return
	// marks the exit.
	if fd, err := unix.PidfdOpen(cmd.Process.Pid, 0); err == nil {
		go func() {
			defer unix.Close(fd)
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			for {
				n, err := unix.Poll(fds, -1)
				if err == unix.EINTR {
					continue
				}
				if err == nil && n > 0 {
					markExit()
				}
				return
			}
		}()
	}
	res := make(chan CommandResult, 1)
	go func() {
		err := cmd.Wait()
		r := CommandResult{Argv: cmd.Args, ExitCode: cmd.ProcessState.ExitCode()}
		if err != nil {
			r.Error = err.Error()
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Signal = ws.Signal()
		}
		markExit()
		res <- r
	}()
	return exit, res, nil
}

// startLocked starts cmd from a goroutine locked to its thread until exit
// is closed. The kernel sends the parent-death signal (SysProcAttr.
// Pdeathsig) when the thread that forked the child ends, not the process:
// a Go thread ends when a goroutine locked to it exits (some lock one to
// change its network namespace, then exit), so a command started from a
// pooled thread could be killed in the middle of the run. Locked here,
// the thread lives as long as the command, and ends with the process:
// killed with SIGKILL, nicdiag takes its command with it.
func startLocked(cmd *exec.Cmd, exit <-chan struct{}) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			<-exit
		}
		// Returning still locked ends the thread: the command has exited.
	}()
	return <-started
}

// endCommand ends the run's command and everything it started, and returns
// how the command ended. A command still running gets the signal of
// interruptSignal(ctx) in its whole process group, and SIGKILL killAfter
// later; then whatever it left running is ended (tree.endLeftovers).
func (r *Run) endCommand() *CommandResult {
	select {
	case <-r.cmdExited:
	default:
		r.tree.remember()
		r.tree.signal(interruptSignal(r.ctx))
		select {
		case <-r.cmdExited:
		case <-time.After(killAfter):
			r.tree.signal(syscall.SIGKILL)
			<-r.cmdExited
		}
	}
	r.tree.endLeftovers() // which also closes the output pipes they held
	res := <-r.cmdDone
	return &res
}

// interruptSignal is the signal Stop passes on to a command still running:
// the one the cause of ctx names (an error with a method Signal() os.Signal,
// such as the nicdiag command's for SIGTERM), else SIGINT.
func interruptSignal(ctx context.Context) syscall.Signal {
	var named interface{ Signal() os.Signal }
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &named) {
		if s, ok := named.Signal().(syscall.Signal); ok && s > 0 {
			return s
		}
	}
	return syscall.SIGINT
}
