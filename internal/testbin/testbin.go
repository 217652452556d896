// Package testbin builds the module's commands for tests that run them as
// processes, as they are released (static, without cgo), once per test
// binary, and gives those tests a log buffer that the process and the test
// may use at once.
package testbin

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	built = map[string]result{} // by the packages asked for
	dirs  []string
)

type result struct {
	dir string
	err error
}

// Build builds the command packages pkgs (paths as go build takes them)
// into a directory that holds nothing else, the first time they are asked
// for, and returns that directory: each binary is named after its
// package's directory. Call Remove from TestMain when the tests are done.
func Build(t testing.TB, pkgs ...string) string {
	t.Helper()
	key := strings.Join(pkgs, "\x00")
	mu.Lock()
	r, ok := built[key]
	if !ok {
		r = build(pkgs)
		built[key] = r
	}
	mu.Unlock()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.dir
}

func build(pkgs []string) result {
	dir, err := os.MkdirTemp("", "nicdiag-testbin-")
	if err != nil {
		return result{err: err}
	}
	dirs = append(dirs, dir)
	cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return result{err: fmt.Errorf("go build %v: %v\n%s", pkgs, err, out)}
	}
	return result{dir: dir}
}

// Remove removes what Build built.
func Remove() {
	mu.Lock()
	defer mu.Unlock()
	for _, d := range dirs {
		os.RemoveAll(d)
	}
	dirs, built = nil, map[string]result{}
}

// Buffer is a bytes.Buffer that several goroutines may use at once: a
// process's standard error that the test reads while it runs.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
