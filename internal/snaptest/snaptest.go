// Package snaptest holds helpers for tests that read snapshot trees.
package snaptest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Copy copies the snapshot directory src, symlinks as symlinks, into a new
// temporary directory that the test may damage, and returns it.
func Copy(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	CopyTo(t, src, dst)
	return dst
}

// CopyTo copies the snapshot directory src to dst, symlinks as symlinks.
func CopyTo(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, out)
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Write lays files out under a new temporary directory and returns it.
// Keys are slash-separated paths relative to the root ("sys/class/net/eth0/mtu");
// a value "->TARGET" makes a symlink to TARGET, any other value is the
// file's content.
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	Add(t, dir, files)
	return dir
}

// Add lays files out under dir, as Write does.
func Add(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(c, "->"); ok {
			if err := os.Symlink(target, dst); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(dst, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
