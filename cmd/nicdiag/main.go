// Command nicdiag inspects the network cards of a Linux host and explains why
// a network benchmark hits a ceiling: the PCIe path, the device's identity,
// and the per-core interrupt load.
//
// Exit codes: 0 no finding at warn or above, 1 a finding at warn, 2 a finding
// at error, 3 nicdiag itself failed (including bad usage), 130 or 143 (128 +
// the signal's number) when SIGINT or SIGTERM ended it, 141 when its output
// pipe was closed (see runProcess).
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Exit codes (docs/design.md §3).
const (
	exitOK    = 0
	exitWarn  = 1
	exitError = 2
	exitFail  = 3
)

// signalGrace is how long nicdiag takes, at most, to exit after the first
// SIGINT or SIGTERM: the command's time to return, then the removal of its
// temporary files (the last removeShare of it).
const signalGrace = 1500 * time.Millisecond

// removeShare is the part of the time left after a signal kept for the
// removal of temporary files at exit.
const removeShare = 5

// sameSignal is how close a repeat of the first signal must follow the
// one before to count as the same: timeout(1) sends its signal to nicdiag
// and then to its process group, nicdiag included.
const sameSignal = 50 * time.Millisecond

func main() {
	os.Exit(runProcess(os.Args[1:], os.Stdout, os.Stderr))
}

// signalCause is the cause of the context of a run a signal interrupted:
// monitor.Run passes the signal it names on to its command.
type signalCause struct{ sig syscall.Signal }

func (c signalCause) Error() string     { return "nicdiag: " + c.sig.String() }
func (c signalCause) Signal() os.Signal { return c.sig }

// exitClock is the time nicdiag has left after a signal: signalGrace
// after the first, and half of what is left at each later one (so a
// second Ctrl-C hurries nicdiag without cutting monitor's summary short).
type exitClock struct {
	first    syscall.Signal
	last     time.Time
	deadline time.Time // exit by then
	timer    *time.Timer
}

// signal takes in a SIGINT or SIGTERM and reports whether it is the first.
func (c *exitClock) signal(sig syscall.Signal, now time.Time) bool {
	if c.first == 0 {
		c.first, c.last, c.deadline = sig, now, now.Add(signalGrace)
		c.timer = time.NewTimer(c.commandLeft(now))
		return true
	}
	if sig != c.first || now.Sub(c.last) >= sameSignal {
		c.last, c.deadline = now, now.Add(c.deadline.Sub(now)/2)
		c.timer.Reset(c.commandLeft(now))
	}
	return false
}

// commandLeft is how long the command may still run: what is left but
// the removal's share.
func (c *exitClock) commandLeft(now time.Time) time.Duration {
	left := c.deadline.Sub(now)
	return left - left/removeShare
}

// expired is the channel that fires when the command's time is up; nil
// (never) before a signal.
func (c *exitClock) expired() <-chan time.Time {
	if c.timer == nil {
		return nil
	}
	return c.timer.C
}

// runProcess runs nicdiag as a process and returns its exit code. The
// command runs on a goroutine of its own, with a private TMPDIR once it
// asks for one (env.tempDir), so that whatever it unpacks or captures lies
// under one directory. The first SIGINT or SIGTERM cancels its context;
// nicdiag then exits within signalGrace (exitClock: a later signal halves
// what is left): when the command has returned, or at the latest when its
// share of the time is up, it cleans up (env.shut: the processes a command
// started, then the temporary files, their removal cut off at the
// deadline) and returns 128+signal, whatever the command is blocked on. A
// command that returns in time after a signal gets 128+signal too, unless
// a signal is its ordinary end (command.signalEnds).
//
// A SIGPIPE from standard output or error (a reader that went away: "|
// head") ends nicdiag at once with 141 (128 + SIGPIPE), cleaned up, where
// the signal would have killed it with its files left behind. A SIGPIPE
// from anything else (a scraper gone from serve's socket) only fails that
// write.
func runProcess(args []string, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)

	e := newEnv(stdout, stderr)
	e.process = true // the private TMPDIR is made when first asked for (env.tempDir)
	done := make(chan int, 1)
	go func() {
		growStack()
		done <- e.run(ctx, args)
	}()

	var clock exitClock
	for {
		select {
		case code := <-done:
			e.shut(clock.deadline) // zero without a signal: removed in full
			if clock.first != 0 && (e.cur == nil || !e.cur.signalEnds) {
				return 128 + int(clock.first)
			}
			return code
		case s := <-sigs:
			sig, _ := s.(syscall.Signal)
			if sig == syscall.SIGPIPE {
				if !brokenOutput() {
					continue
				}
				e.shut(time.Now().Add(signalGrace / removeShare))
				return 128 + int(sig)
			}
			if clock.signal(sig, time.Now()) {
				cancel(signalCause{sig})
			}
		case <-clock.expired():
			e.shut(clock.deadline)
			return 128 + int(clock.first)
		}
	}
}

// growStack grows the calling goroutine's stack to what a command needs
// in one step. A new goroutine starts with 8 KiB, and each doubling on
// the way up copies every frame on it (list grew its stack five times,
// ~5 % of its run in runtime.newstack under perf).
//
//go:noinline
func growStack() {
	var b [64 << 10]byte
	stackSink(b[:])
}

//go:noinline
func stackSink(b []byte) { b[len(b)-1] = 1 }

// brokenOutput reports whether standard output or error leads nowhere any
// more: a pipe or socket whose reader has gone.
func brokenOutput() bool {
	fds := []unix.PollFd{{Fd: 1, Events: unix.POLLOUT}, {Fd: 2, Events: unix.POLLOUT}}
	if n, err := unix.Poll(fds, 0); err != nil || n == 0 {
		return false
	}
	for _, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}

// isTerminal reports whether w is a terminal (not merely a character device
// such as /dev/null).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
