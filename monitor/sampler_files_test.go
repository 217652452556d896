package monitor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunClosesSamplerFiles: the sampler keeps the files it reads open
// between samples; once Stop returns they are closed.
func TestRunClosesSamplerFiles(t *testing.T) {
	root, err := filepath.Abs(snap)
	if err != nil {
		t.Fatal(err)
	}
	// open counts this process's open files inside the snapshot (the
	// root directory itself aside: fsroot may hold it).
	open := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		n := 0
		for _, e := range ents {
			if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, root+"/") {
				n++
			}
		}
		return n
	}
	before := open()
	run, err := Start(context.Background(), snapNICs(t, snap), WithRoot(snap), WithInterval(10*time.Millisecond),
		WithDuration(60*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	during := open()
	for {
		if _, err := run.Next(context.Background()); errors.Is(err, ErrDone) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := run.Stop(); err != nil {
		t.Fatal(err)
	}
	if after := open(); after != before || during <= before {
		t.Errorf("files open in the snapshot: %d before Start, %d while sampling, %d after Stop", before, during, after)
	}
}
