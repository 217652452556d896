package monitor

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"time"
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

// Grace periods of an interrupted run's command (see WithCommand).
const (
	interruptAfter = 100 * time.Millisecond
	killAfter      = 5 * time.Second
)

// startCommand starts cmd and returns a channel that yields how it ended;
// ended is called right after it exits.
func startCommand(cmd *exec.Cmd, ended func()) (<-chan CommandResult, error) {
	if err := cmd.Start(); err != nil {
		name := cmd.Path
		if len(cmd.Args) > 0 {
			name = cmd.Args[0]
		}
		return nil, &startError{name: name, err: err}
	}
	done := make(chan CommandResult, 1)
	go func() {
		err := cmd.Wait()
		r := CommandResult{Argv: cmd.Args, ExitCode: cmd.ProcessState.ExitCode()}
		if err != nil {
			r.Error = err.Error()
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Signal = ws.Signal()
		}
		done <- r
		ended()
	}()
	return done, nil
}

// waitCommand waits for the command. When ctx is done (Ctrl-C), the
// terminal sent the command SIGINT too; if nicdiag alone was interrupted,
// it passes SIGINT on, and kills the command after a grace period.
func waitCommand(ctx context.Context, cmd *exec.Cmd, done <-chan CommandResult) *CommandResult {
	if ctx.Err() == nil {
		r := <-done
		return &r
	}
	select {
	case r := <-done:
		return &r
	case <-time.After(interruptAfter):
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case r := <-done:
		return &r
	case <-time.After(killAfter):
	}
	_ = cmd.Process.Kill()
	r := <-done
	return &r
}
