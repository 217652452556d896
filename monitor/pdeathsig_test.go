package monitor

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/procs"
	"github.com/nicdiag/nicdiag/option"
	"golang.org/x/sys/unix"
)

// The command's parent-death signal (SIGKILL, which ends it with the
// process even when the process is killed) is tied by the kernel to the
// thread that forked it. A run started from a goroutine that then exits
// locked to its thread (so Go ends the thread) must keep its command.
func TestRunCommandOutlivesStartingThread(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	type started struct {
		run *Run
		tid int
		err error
	}
	ch := make(chan started, 1)
	onEndingThread(func() {
		run, err := Start(context.Background(), nil, option.Root(snap), WithInterval(20*time.Millisecond), WithCommand(cmd))
		ch <- started{run, unix.Gettid(), err}
	})
	s := <-ch
	if s.err != nil {
		t.Fatal(s.err)
	}
	defer s.run.Stop()
	task := "/proc/self/task/" + strconv.Itoa(s.tid)
	if !waitFor(10*time.Second, func() bool { _, err := os.Stat(task); return err != nil }) {
		t.Fatalf("thread %d still there", s.tid)
	}
	// The kernel signals the children of an exiting thread before the
	// thread is gone from /proc; a SIGKILL takes effect at once, but let
	// a loaded machine deliver it.
	time.Sleep(100 * time.Millisecond)
	if p, ok := procs.Read(cmd.Process.Pid); !ok || p.Gone() {
		t.Fatalf("the command (pid %d) died with the thread that started the run", cmd.Process.Pid)
	}
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig != unix.SIGKILL {
		t.Errorf("SysProcAttr = %+v; want Pdeathsig SIGKILL", cmd.SysProcAttr)
	}
	res, err := s.run.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Command; c == nil || c.Signal != unix.SIGINT {
		t.Errorf("command = %+v; want it ended by Stop's SIGINT", c)
	}
}

// onEndingThread runs f on a goroutine locked to a thread that Go ends
// when f returns: not the main thread, which Go keeps.
func onEndingThread(f func()) {
	go func() {
		runtime.LockOSThread() // never unlocked but on the main thread
		if unix.Gettid() != unix.Getpid() {
			f()
			return
		}
		// Held here, the main thread runs no other goroutine: the next
		// lands elsewhere.
		done := make(chan struct{})
		onEndingThread(func() { defer close(done); f() })
		<-done
		runtime.UnlockOSThread()
	}()
}
