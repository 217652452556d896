package main

import (
	"context"
	"io"
	"path/filepath"
	"sync"
	"testing"
)

// Readers of one command that ask for --root at once share one opening:
// the archive is unpacked once, and each gets the same directory.
func TestOpenRootOnce(t *testing.T) {
	archive := snapArchive(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	e := newEnv(io.Discard, io.Discard)
	e.root = archive
	defer e.close()
	dirs := make([]string, 4)
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := e.openRoot(context.Background())
			if err != nil {
				t.Error(err)
			}
			dirs[i] = d
		}()
	}
	wg.Wait()
	for _, d := range dirs[1:] {
		if d != dirs[0] {
			t.Errorf("openRoot gave %q and %q", dirs[0], d)
		}
	}
	if unpacked, _ := filepath.Glob(filepath.Join(tmp, "nicdiag-snapshot-*")); len(unpacked) != 1 {
		t.Errorf("unpacked %d times: %q", len(unpacked), unpacked)
	}
}
