package fsroot

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned after a few
// seconds; release, when not nil, is then called to unblock it.
func within(t *testing.T, release func(), f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		if release != nil {
			release()
		}
		t.Fatal("blocked: a reader waited on a FIFO")
	}
}

// mkfifo makes a FIFO at p and returns a func that opens its write end,
// which frees a reader stuck in open(2).
func mkfifo(t *testing.T, p string) func() {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
}

// A FIFO in place of a sysfs attribute (or directory) in a snapshot is
// refused at once: nothing waits for a writer.
func TestFIFORefusedWithoutBlocking(t *testing.T) {
	d := tree(t)
	attr := filepath.Join(d, "sys/devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/mtu")
	must(t, os.Remove(attr))
	release := mkfifo(t, attr)
	dirFIFO := filepath.Join(d, "sys/devices/pci0000:00/0000:00:03.0/msi_irqs")
	releaseDir := mkfifo(t, dirFIFO)
	r := New(d)
	within(t, release, func() {
		if _, err := r.ReadFile("/sys/class/net/eth0/mtu"); !errors.Is(err, ErrNotRegular) || !errors.Is(err, fs.ErrPermission) {
			t.Errorf("ReadFile(FIFO) = %v, want ErrNotRegular (and fs.ErrPermission)", err)
		}
		if _, err := r.ReadInt("/sys/class/net/eth0/mtu"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadInt(FIFO) = %v, want ErrNotRegular", err)
		}
		if f, err := r.Open("/sys/class/net/eth0/mtu"); !errors.Is(err, ErrNotRegular) {
			f.Close()
			t.Errorf("Open(FIFO) = %v, want ErrNotRegular", err)
		}
		if f, err := OpenFile(attr); !errors.Is(err, ErrNotRegular) {
			f.Close()
			t.Errorf("OpenFile(FIFO) = %v, want ErrNotRegular", err)
		}
	})
	within(t, releaseDir, func() {
		if _, err := r.ReadDir("/sys/devices/pci0000:00/0000:00:03.0/msi_irqs"); !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("ReadDir(FIFO) = %v, want ENOTDIR", err)
		}
	})
	// The live root refuses it too.
	within(t, release, func() {
		if _, err := New("/").ReadFile(attr); !errors.Is(err, ErrNotRegular) {
			t.Errorf("live ReadFile(FIFO) = %v, want ErrNotRegular", err)
		}
	})
}

// Open and ReadFileMax refuse a symlink out of a snapshot, absolute or
// relative, and a file over the cap; the live host follows its own links.
func TestOpenConfinedAndCapped(t *testing.T) {
	d := tree(t)
	outside := filepath.Join(t.TempDir(), "pci.ids")
	must(t, os.WriteFile(outside, []byte("8086  Intel Corporation\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(d, "usr/share/misc"), 0o755))
	must(t, os.Symlink(outside, filepath.Join(d, "usr/share/misc/pci.ids")))
	rel, err := filepath.Rel(filepath.Join(d, "ethtool"), outside)
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(d, "ethtool"), 0o755))
	must(t, os.Symlink(rel, filepath.Join(d, "ethtool/eth0.json")))
	r := New(d)
	for _, p := range []string{"/usr/share/misc/pci.ids", "/ethtool/eth0.json"} {
		if f, err := r.Open(p); !errors.Is(err, ErrEscape) || !errors.Is(err, fs.ErrPermission) {
			f.Close()
			t.Errorf("Open(%s) = %v, want ErrEscape (and fs.ErrPermission)", p, err)
		}
		if _, err := r.ReadFileMax(p, 1<<20); !errors.Is(err, ErrEscape) {
			t.Errorf("ReadFileMax(%s) = %v, want ErrEscape", p, err)
		}
	}
	if _, err := r.ReadFileMax("/sys/devices/pci0000:00/0000:00:03.0/vendor", 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFileMax over the cap = %v, want ErrTooLarge", err)
	}
	if b, err := r.ReadFileMax("/sys/devices/pci0000:00/0000:00:03.0/vendor", 7); err != nil || string(b) != "0x1af4\n" {
		t.Errorf("ReadFileMax at the cap = %q, %v", b, err)
	}
	if _, err := r.Open("/sys/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(absent) = %v, want fs.ErrNotExist", err)
	}

	// On the live host a symlink is the host's own business (Debian links
	// /usr/share/misc/pci.ids into hwdata).
	link := filepath.Join(t.TempDir(), "pci.ids")
	must(t, os.Symlink(outside, link))
	for _, open := range []func() (*os.File, error){
		func() (*os.File, error) { return New("/").Open(link) },
		func() (*os.File, error) { return OpenFile(link) },
	} {
		f, err := open()
		if err != nil {
			t.Fatalf("live open through a symlink: %v", err)
		}
		var b bytes.Buffer
		if _, err := b.ReadFrom(f); err != nil || b.String() != "8086  Intel Corporation\n" {
			t.Errorf("read %q, %v", b.String(), err)
		}
		f.Close()
	}
	unreadable := filepath.Join(t.TempDir(), "secret")
	must(t, os.WriteFile(unreadable, []byte("x"), 0o000))
	if os.Geteuid() != 0 {
		if _, err := OpenFile(unreadable); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("OpenFile(unreadable) = %v, want fs.ErrPermission", err)
		}
	}
}
