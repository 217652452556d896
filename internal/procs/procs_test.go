package procs

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	p, ok := Parse(42, []byte("42 (a (b) c) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 12345 1000 100 18446744073709551615\n"))
	if !ok || p.PPID != 7 || p.PGID != 42 || p.State != 'S' || p.Start != 12345 {
		t.Errorf("%+v %v", p, ok)
	}
	if _, ok := Parse(1, []byte("1 (x) S 0")); ok {
		t.Error("a short line parsed")
	}
}

// List and Descendants on the live table: a child of this test and its
// own child are below this process, nearest first, and Read agrees.
func TestDescendantsLive(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 5 & wait")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	self := os.Getpid()
	var below []Proc
	for range 200 { // until the shell has started its sleep
		if below = Descendants(List(), map[int]bool{self: true}); len(below) >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(below) < 2 || below[0].PID != cmd.Process.Pid || below[1].PPID != cmd.Process.Pid {
		t.Fatalf("below %d: %+v; want the shell %d, then its sleep", self, below, cmd.Process.Pid)
	}
	if p, ok := Read(cmd.Process.Pid); !ok || p.PPID != self || p.Start != below[0].Start {
		t.Errorf("Read(%d) = %+v, %v", cmd.Process.Pid, p, ok)
	}
	if _, ok := Read(-1); ok {
		t.Error("Read(-1) found a process")
	}
}
