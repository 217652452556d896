package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The file gets the whole content and the mode asked for, whatever the
// umask, and replaces what was there; nothing else is left in the
// directory.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nicdiag.prom")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	big := strings.Repeat("x", 100<<10) // past bufio's buffer
	if err := Write(path, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, big)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != big {
		t.Fatalf("content: %d bytes, %v", len(b), err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %v, want the file alone", ents)
	}
}

// A failed write leaves the old file as it was and no temporary file, and
// the error names the path and says why.
func TestWriteFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nicdiag.prom")
	os.WriteFile(path, []byte("old\n"), 0o644)
	boom := errors.New("boom")
	err := Write(path, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v, want boom naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("the old file became %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %v after a failed write", ents)
	}

	// A directory that does not exist: the error is the user's path's.
	missing := filepath.Join(dir, "nope", "nicdiag.prom")
	err = Write(missing, 0o644, func(io.Writer) error { return nil })
	if !errors.Is(err, os.ErrNotExist) || err.Error() != "cannot write "+missing+": no such file or directory" {
		t.Errorf("missing directory: %v", err)
	}
	// A directory where the file should be: the rename fails.
	if err := os.Mkdir(filepath.Join(dir, "d.prom"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "d.prom"), 0o644, func(io.Writer) error { return nil }); err == nil {
		t.Error("renaming over a directory: no error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("directory holds %v after a failed rename", ents)
	}
}
