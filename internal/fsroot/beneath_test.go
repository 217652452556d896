//go:build unix

package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/snaptest"
)

// modes runs f once with openat2 (where the kernel has it) and once with
// the walk that stands in for it.
func modes(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", func(t *testing.T) {
		if noOpenat2.Load() {
			t.Skip("no openat2 on this kernel")
		}
		f(t)
	})
	t.Run("walk", func(t *testing.T) {
		forceWalk.Store(true)
		defer forceWalk.Store(false)
		f(t)
	})
}

// hostile is tree with an outside directory holding a marker file, and
// links of every shape that reach it, or stay inside by a detour.
func hostile(t *testing.T) (dir, outside string) {
	t.Helper()
	dir = tree(t)
	outside = t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "shadow"), []byte("MARKER\n"), 0o644))
	up, err := filepath.Rel(filepath.Join(dir, "sys/class/net"), outside)
	must(t, err)
	snaptest.Add(t, dir, map[string]string{
		"sys/class/net/outrel":         "->" + up,
		"sys/class/net/outabs":         "->" + outside,
		"sys/class/net/shadow":         "->" + filepath.Join(outside, "shadow"),
		"sys/class/net/loop1":          "->loop2",
		"sys/class/net/loop2":          "->loop1",
		"sys/class/net/dangling":       "->nowhere",
		"sys/class/net/chain":          "->eth0",
		"sys/class/net/detour":         "->../../class/net/eth0/..",
		"sys/class/net/trail":          "->eth0/",
		"sys/devices/pci0000:00/plain": "x\n",
		"sys/x":                        "->devices/pci0000:00/0000:00:03.0/virtio2/net/eth0",
		"sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/up":  "->../../../../../../bus",
		"sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/out": "->../../../../../../../../x",
		"etc/passwd": "inside\n",
	})
	return dir, outside
}

// Every reader refuses each way out of the root, in both modes, and reads
// what the links reach inside it.
func TestBeneath(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir, _ := hostile(t)
		r := New(dir)
		beneathFiles(t, r, dir)
		beneathDirs(t, r)
		beneathLinks(t, r)
	})
}

// beneathFiles: reads of files through hostile links end beneath the root
// or fail, naming the file under dir.
func beneathFiles(t *testing.T, r Root, dir string) {
	for _, c := range []struct {
		path string
		want string // the contents, or the error: "escape", "absent", "loop", "notdir", "notregular"
	}{
		{"/sys/class/net/eth0/mtu", "1500\n"},
		{"sys/class/net/eth0/mtu", "1500\n"},
		{"/sys/class/net/chain/mtu", "1500\n"},
		{"/sys/class/net/eth0/../../../vendor", "0x1af4\n"},
		{"/sys/class/net/detour/mtu", "absent"},
		{"/sys/class/net/detour/eth0/mtu", "1500\n"},
		{"/sys/class/net/trail/mtu", "1500\n"},
		{"/sys/class/net/outrel/shadow", "escape"},
		{"/sys/class/net/outabs/shadow", "escape"},
		{"/sys/class/net/shadow", "escape"},
		{"/sys/class/net/evil/passwd", "escape"},
		{"/sys/class/net/abs/passwd", "escape"},
		{"/../etc/passwd", "escape"},
		{"/sys/../../etc/passwd", "escape"},
		{"/etc/passwd", "inside\n"},
		{"/sys/class/net/loop1", "loop"},
		{"/sys/class/net/dangling", "absent"},
		{"/sys/devices/pci0000:00/plain/x", "notdir"},
		{"/sys/devices/pci0000:00/plain/..", "notdir"},
		{"/sys/class/net/eth0", "notregular"},
		{"/sys/class/net/eth0/", "notregular"},
		{"/", "notregular"},
	} {
		b, err := r.ReadFile(c.path)
		got := string(b)
		switch {
		case errors.Is(err, ErrEscape):
			got = "escape"
		case errors.Is(err, fs.ErrNotExist):
			got = "absent"
		case errors.Is(err, syscall.ELOOP):
			got = "loop"
		case errors.Is(err, syscall.ENOTDIR):
			got = "notdir"
		case errors.Is(err, ErrNotRegular):
			got = "notregular"
		case err != nil:
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("ReadFile(%q) = %q (%v), want %q", c.path, got, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), dir) {
			t.Errorf("ReadFile(%q): %v does not name the file", c.path, err)
		}
		f, oerr := r.Open(c.path)
		if (oerr == nil) != (err == nil) || oerr != nil && oerr.Error() != err.Error() {
			t.Errorf("Open(%q) = %v, ReadFile %v", c.path, oerr, err)
		}
		if f != nil {
			f.Close()
		}
	}
}

// beneathDirs: directories that leave the root are refused; those that
// stay open and list.
func beneathDirs(t *testing.T, r Root) {
	for _, p := range []string{"/sys/class/net/outrel", "/sys/class/net/outabs", "/sys/class/net/evil"} {
		if _, err := r.ReadDir(p); !errors.Is(err, ErrEscape) {
			t.Errorf("ReadDir(%s) = %v, want ErrEscape", p, err)
		}
		if r.Exists(p) {
			t.Errorf("Exists(%s) is true", p)
		}
		if _, err := r.Readlink(p + "/shadow"); !errors.Is(err, ErrEscape) {
			t.Errorf("Readlink(%s/shadow) = %v, want ErrEscape", p, err)
		}
	}
	for _, p := range []string{"/sys/class/net/outrel", "/sys/class/net/evil"} {
		if d, err := r.OpenDir(p); !errors.Is(err, ErrEscape) {
			t.Errorf("OpenDir(%s) = %v, want ErrEscape", p, err)
			d.Close()
		}
	}
	if d, err := r.OpenDir("/sys/class/net/eth0/mtu"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("OpenDir(a file) = %v, want ENOTDIR", err)
		d.Close()
	}
	if d, err := r.OpenDir("/sys/class/net/chain"); err != nil {
		t.Errorf("OpenDir through a link chain: %v", err)
	} else if names, err := d.Readdirnames(-1); err != nil || len(names) != 3 {
		t.Errorf("OpenDir's listing = %q, %v", names, err)
	} else {
		d.Close()
	}
	if names, err := r.ReadDir("/sys/class/net/chain"); err != nil || !slices.Equal(names, []string{"mtu", "out", "up"}) {
		t.Errorf("ReadDir through a link chain = %q, %v", names, err)
	}
}

// beneathLinks: Exists, Readlink, LinkBase and Mode answer beneath the
// root, for links that lead out too.
func beneathLinks(t *testing.T, r Root) {
	for p, want := range map[string]bool{"/sys/class/net/chain/mtu": true, "/sys/class/net/eth0": true,
		"/sys/class/net/dangling": false, "/sys/class/net/loop1": false, "/sys/class/net/shadow": false, "/": true} {
		if got := r.Exists(p); got != want {
			t.Errorf("Exists(%s) = %v, want %v", p, got, want)
		}
	}
	// Readlink reads the link itself, even one that leads out.
	if tg, err := r.Readlink("/sys/class/net/outabs"); err != nil || !filepath.IsAbs(tg) {
		t.Errorf("Readlink(outabs) = %q, %v", tg, err)
	}
	if base, err := r.LinkBase("/sys/class/net/chain/"); err != nil || base != "eth0" {
		t.Errorf("LinkBase(chain/) = %q, %v", base, err)
	}
	if _, err := r.Readlink("/sys/class/net/eth0/mtu"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Readlink(a file) = %v, want EINVAL", err)
	}
	if _, err := r.Readlink("/"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Readlink(/) = %v, want EINVAL", err)
	}
	// LinkBase names only what is inside: it measures the climb from
	// the link's real directory, not from the path it was named by.
	for p, want := range map[string]string{
		"/sys/class/net/eth0": "eth0",
		"/sys/x/up":           "bus",
		"/sys/class/net/x/../../../../../../../../sys/x/up": "bus",
		"/sys/x/out":                   "escape",
		"/sys/class/net/outabs":        "escape",
		"/sys/class/net/evil":          "escape",
		"/sys/class/net/outrel/shadow": "escape",
		"/sys/class/net/eth0/mtu":      "invalid",
	} {
		got, err := r.LinkBase(p)
		switch {
		case errors.Is(err, ErrEscape):
			got = "escape"
		case errors.Is(err, syscall.EINVAL):
			got = "invalid"
		case err != nil:
			got = err.Error()
		}
		if got != want {
			t.Errorf("LinkBase(%s) = %q, want %q", p, got, want)
		}
	}
	for p, want := range map[string]fs.FileMode{
		"/":                        fs.ModeDir,
		"/sys/class/net/eth0":      fs.ModeSymlink,
		"/sys/class/net/outabs":    fs.ModeSymlink,
		"/sys/class/net/chain/mtu": 0,
	} {
		if m, err := r.Mode(p); err != nil || m.Type() != want {
			t.Errorf("Mode(%s) = %v, %v; want type %v", p, m, err, want)
		}
	}
	for p, want := range map[string]error{"/sys/class/net/outrel/shadow": ErrEscape, "/sys/class/net/nope": fs.ErrNotExist} {
		if _, err := r.Mode(p); !errors.Is(err, want) {
			t.Errorf("Mode(%s) = %v, want %v", p, err, want)
		}
	}
}

// Realpath answers the same whether the kernel resolves the path or the
// Lstat walk does.
func TestRealpathFastMatchesWalk(t *testing.T) {
	dir, _ := hostile(t)
	r := New(dir)
	// The kernel answers the first ones; it refuses the last two, where
	// the walk is more lenient (".." at the root stays there; ".." after a
	// file), and the walk answers.
	kernel := 7
	for i, p := range []string{"/", "/sys", "/sys/class/net/eth0", "/sys/class/net/eth0/mtu", "/sys/class/net/chain",
		"/sys/class/net/eth0/../../../vendor", "/sys/class/net/detour", "sys//class/./net/trail/", "/sys/class/net/evil",
		"/sys/class/net/outabs", "/sys/class/net/loop1", "/sys/class/net/dangling", "/../sys", "/sys/devices/pci0000:00/plain/.."} {
		fast, ok := r.realpathFast(p)
		walk, err := r.Resolve(p, nil)
		if ok && (err != nil || fast != walk) {
			t.Errorf("%s: kernel %q, walk %q, %v", p, fast, walk, err)
		}
		if !ok && i <= kernel && !noOpenat2.Load() {
			t.Errorf("%s: the kernel could not answer, the walk did: %q, %v", p, walk, err)
		}
		if got, gerr := r.Realpath(p); got != walk || (gerr == nil) != (err == nil) {
			t.Errorf("Realpath(%s) = %q, %v; walk %q, %v", p, got, gerr, walk, err)
		}
	}
	// The live root: this package's own directory.
	wd, err := os.Getwd()
	must(t, err)
	live := New("/")
	fast, ok := live.realpathFast(wd)
	walk, err := live.Resolve(wd, nil)
	if err != nil || ok && fast != walk {
		t.Errorf("live %s: kernel %q (%v), walk %q, %v", wd, fast, ok, walk, err)
	}
}

// A component swapped between a directory and a symlink out of the root
// while the reads go on never lets one through: the check and the open are
// one step. (A Realpath followed by an open by path let the swap in between.)
func TestSwapRace(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir, outside := hostile(t)
		must(t, os.WriteFile(filepath.Join(outside, "mtu"), []byte("MARKER\n"), 0o644))
		d := filepath.Join(dir, "sys/class/net")
		must(t, os.MkdirAll(filepath.Join(d, "swap"), 0o755))
		must(t, os.WriteFile(filepath.Join(d, "swap/mtu"), []byte("1500\n"), 0o644))
		must(t, os.Symlink(outside, filepath.Join(d, "other")))
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := renameExchange(filepath.Join(d, "swap"), filepath.Join(d, "other")); err != nil {
					t.Errorf("exchange: %v", err)
					return
				}
			}
		}()
		r := New(dir)
		read := 0
		for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
			b, err := r.ReadFile("/sys/class/net/swap/mtu")
			if strings.Contains(string(b), "MARKER") {
				t.Fatalf("read the outside file through the swapped link")
			}
			if err == nil {
				read++
			}
		}
		close(stop)
		<-done
		if read == 0 {
			t.Error("no read got through at all")
		}
	})
}

// Goroutines sharing a fresh Root open its directory once between them and
// all read; Roots no longer used give their descriptor back.
func TestRootHandle(t *testing.T) {
	dir := tree(t)
	r := New(dir)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := r.ReadInt("/sys/class/net/eth0/mtu")
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	fds := func() int { return openFDs(t) }
	before := fds()
	for range 200 {
		if _, err := New(dir).ReadInt("/sys/class/net/eth0/mtu"); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 50 && fds() > before+20; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := fds(); n > before+20 {
		t.Errorf("%d descriptors open after 200 Roots were dropped, %d before", n, before)
	}
}

// New for a directory already open shares its descriptor, with the
// garbage collector off (it no longer takes a collection to close the
// Roots made per NIC); a directory replaced at the same path gets a handle
// of its own, while the old Root keeps reading the directory it opened.
func TestNewSharesHandle(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	dir := tree(t)
	const mtu = "/sys/class/net/eth0/mtu"
	first := New(dir)
	if v, err := first.ReadInt(mtu); err != nil || v != 1500 {
		t.Fatalf("first read: %d, %v", v, err)
	}
	fds := func() int { return openFDs(t) }
	before := fds()
	for range 200 {
		if _, err := New(dir).ReadInt(mtu); err != nil {
			t.Fatal(err)
		}
	}
	if n := fds(); n > before+2 {
		t.Errorf("%d descriptors after 200 New of an open directory, %d before", n, before)
	}

	must(t, os.Rename(dir, dir+".old"))
	t.Cleanup(func() { os.RemoveAll(dir + ".old") })
	must(t, os.MkdirAll(filepath.Join(dir, "sys/class/net/eth0"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "sys/class/net/eth0/mtu"), []byte("9000\n"), 0o644))
	if v, err := New(dir).ReadInt(mtu); err != nil || v != 9000 {
		t.Errorf("New after the directory was replaced read %d, %v; want 9000", v, err)
	}
	if v, err := first.ReadInt(mtu); err != nil || v != 1500 {
		t.Errorf("the first Root read %d, %v after the replacement; want its own 1500", v, err)
	}
}

// openFDs counts this process's open descriptors, or skips the test
// without /proc/self/fd.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}
