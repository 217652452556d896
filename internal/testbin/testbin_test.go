package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Build builds once per set of packages, a static binary named after the
// package, and Remove removes it.
func TestBuild(t *testing.T) {
	dir := Build(t, "../pairtime")
	if again := Build(t, "../pairtime"); again != dir {
		t.Errorf("built twice: %s, %s", dir, again)
	}
	bin := filepath.Join(dir, "pairtime")
	out, _ := exec.Command(bin).CombinedOutput() // no arguments: its usage
	if !strings.Contains(string(out), "usage: pairtime") {
		t.Errorf("%s: %q", bin, out)
	}
	if out, err := exec.Command("go", "version", "-m", bin).Output(); err != nil || !strings.Contains(string(out), "CGO_ENABLED=0") {
		t.Errorf("not built without cgo: %v\n%s", err, out)
	}
	Remove()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s after Remove: %v", dir, err)
	}
}

// Buffer takes writes from several goroutines while it is read.
func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := len(b.String()); n != 800 {
		t.Errorf("%d bytes, want 800", n)
	}
}
