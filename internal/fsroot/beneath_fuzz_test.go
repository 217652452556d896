//go:build linux

package fsroot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fuzzTree lays out, from spec, a root of directories, files and symlinks
// (two bytes an entry: where, what, and for a link which target) next to
// an outside directory holding a marker file. The targets climb, detour,
// loop and jump out, relative and absolute.
func fuzzTree(t *testing.T, spec []byte) (root, outside string) {
	base := t.TempDir()
	root, outside = filepath.Join(base, "r"), filepath.Join(base, "o")
	must(t, os.MkdirAll(root, 0o755))
	must(t, os.MkdirAll(outside, 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "f"), []byte("MARKER"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "f"), []byte("inside"), 0o644))
	targets := []string{"..", "../..", "../../..", "../o", "../../o", "../../o/f", "a", "a/b", "b/../..",
		"/", outside, filepath.Join(outside, "f"), root + "/a", ".", "f", "../f", "c/../../o", "a/", "d/c/.."}
	names := []string{"a", "b", "c", "d"}
	dirs := []string{"."}
	for i := 0; i+1 < len(spec) && i < 24; i += 2 {
		b0, b1 := spec[i], spec[i+1]
		p := filepath.Join(root, dirs[int(b0)%len(dirs)], names[int(b0>>4)%len(names)])
		switch b1 % 3 {
		case 0:
			if os.Mkdir(p, 0o755) == nil {
				rel, _ := filepath.Rel(root, p)
				dirs = append(dirs, rel)
			}
		case 1:
			os.WriteFile(p, []byte("inside"), 0o644)
		case 2:
			os.Symlink(targets[int(b1>>2)%len(targets)], p)
		}
	}
	return root, outside
}

// outcome opens p beneath r as a directory-or-file handle and says where it
// landed: the kernel's path of what was opened, "escape", or "error".
func outcome(t *testing.T, r Root, p string) string {
	fd, err := r.openBeneath("open", p, unix.O_PATH)
	switch {
	case errors.Is(err, ErrEscape):
		return "escape"
	case err != nil:
		return "error"
	}
	defer unix.Close(fd)
	where, ok := fdPath(fd)
	if !ok {
		t.Fatalf("no /proc/self/fd path for %q", p)
	}
	return where
}

// Whatever the tree of links and the path, nothing opened beneath a root
// lies outside it (its real path, from /proc/self/fd, is the root's or
// under it), no read returns the outside marker, and the walk lands where
// openat2 does.
func FuzzOpenBeneath(f *testing.F) {
	for _, s := range []struct {
		spec []byte
		p    string
	}{
		{[]byte{0x00, 0x00, 0x10, 0x12}, "a/b/f"},
		{[]byte{0x00, 0x0e}, "a/f"},
		{[]byte{0x00, 0x00, 0x01, 0x06}, "a/a/f"},
		{[]byte{0x00, 0x02, 0x10, 0x26}, "b/f"},
		{[]byte{0x00, 0x00, 0x01, 0x02, 0x21, 0x22}, "a/a/../c/f"},
		{[]byte{0x00, 0x1a}, "a"},
		{[]byte{0x00, 0x1a, 0x10, 0x1e}, "b/a/f"},
		{nil, "../o/f"},
	} {
		f.Add(s.spec, s.p)
	}
	f.Fuzz(func(t *testing.T, spec []byte, p string) {
		if len(p) > 256 {
			return
		}
		dir, outside := fuzzTree(t, spec)
		real, err := filepath.EvalSymlinks(dir)
		must(t, err)
		r := New(dir)
		var got [2]string
		for i, walk := range []bool{false, true} {
			if !walk && noOpenat2.Load() {
				continue
			}
			forceWalk.Store(walk)
			got[i] = outcome(t, r, p)
			b, _ := r.ReadFile(p)
			names, _ := r.ReadDir(p)
			forceWalk.Store(false)
			if w := got[i]; w != "escape" && w != "error" && w != real && !strings.HasPrefix(w, real+"/") {
				t.Fatalf("walk %v: %q opened %s, outside the root %s", walk, p, w, real)
			}
			if strings.Contains(string(b), "MARKER") {
				t.Fatalf("walk %v: %q read the outside file", walk, p)
			}
			if real != "/" && strings.HasPrefix(outside, real+"/") {
				t.Fatalf("outside dir %s under the root", outside)
			}
			for _, n := range names {
				if n == "MARKER" {
					t.Fatalf("listed the outside directory")
				}
			}
		}
		if !noOpenat2.Load() && got[0] != got[1] {
			t.Fatalf("%q: openat2 %q, walk %q", p, got[0], got[1])
		}
	})
}
