package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/option"
)

// TestRunClosesSamplerFiles: the sampler keeps the files it reads open
// between samples; once Stop returns they are closed.
func TestRunClosesSamplerFiles(t *testing.T) {
	root, err := filepath.Abs(snap)
	if err != nil {
		t.Fatal(err)
	}
	// open lists this process's open files inside the snapshot (the root
	// directory itself aside: fsroot may hold it), as "FD PATH".
	open := func() map[string]bool {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		m := map[string]bool{}
		for _, e := range ents {
			if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, root+"/") {
				m[e.Name()+" "+l] = true
			}
		}
		return m
	}
	before := open()
	// No duration: the run samples until Stop, so the files are still open
	// when counted however slow the machine.
	run, err := Start(context.Background(), NICs(snapNICs(t, snap)...), option.Root(snap), WithInterval(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	during := open()
	if _, err := run.Stop(); err != nil {
		t.Fatal(err)
	}
	// Files of other tests' samplers may close meanwhile (finalizers):
	// those the run opened must be closed.
	after, opened := open(), 0
	for f := range during {
		if before[f] {
			continue
		}
		opened++
		if after[f] {
			t.Errorf("%s: still open after Stop", f)
		}
	}
	if opened == 0 {
		t.Error("the run kept no file open while sampling")
	}
}
