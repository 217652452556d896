package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// unregisteredMajor returns a character major number from the range that
// Documentation/admin-guide/devices.txt keeps for local use (60-63, 120-127,
// 240-254) which no driver has registered here (/proc/devices): opening a
// node with it runs the kernel's chrdev_open, which fails with ENXIO.
func unregisteredMajor(t *testing.T) uint32 {
	b, err := os.ReadFile("/proc/devices")
	if err != nil {
		t.Skip(err)
	}
	chars, _, _ := strings.Cut(string(b), "Block devices:")
	used := map[uint32]bool{}
	for _, l := range strings.Split(chars, "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				used[uint32(n)] = true
			}
		}
	}
	for _, m := range []uint32{60, 61, 62, 63, 120, 121, 122, 123, 124, 125, 126, 127} {
		if !used[m] {
			return m
		}
	}
	t.Skip("every local-use major is registered")
	return 0
}

// Device nodes and a FIFO where a snapshot has attributes: each reader
// refuses them with ErrNotRegular before any open reaches a driver. A node
// of a major no driver holds tells: opened, it fails with ENXIO; refused
// on its type (O_PATH and fstat first), it is ErrNotRegular. /dev/null's
// 1:3 and a FIFO stand for the nodes a hostile snapshot would hold.
func TestDeviceNodesRefusedBeforeOpen(t *testing.T) {
	d := tree(t)
	dir := "sys/devices/pci0000:00/0000:00:03.0"
	major := unregisteredMajor(t)
	nodes := map[string]struct {
		mode uint32
		dev  uint64
	}{
		"null":  {unix.S_IFCHR, unix.Mkdev(1, 3)},
		"nodrv": {unix.S_IFCHR, unix.Mkdev(major, 0)},
		"fifo":  {unix.S_IFIFO, 0},
	}
	for name, n := range nodes {
		if err := unix.Mknod(filepath.Join(d, dir, name), n.mode|0o644, int(n.dev)); err != nil {
			t.Skipf("mknod %s: %v (needs root)", name, err)
		}
	}
	// The unregistered node opens with ENXIO: what an open that reaches
	// the driver layer answers.
	if _, err := os.Open(filepath.Join(d, dir, "nodrv")); !errors.Is(err, unix.ENXIO) {
		t.Fatalf("open of %d:0 = %v; want ENXIO (is the major free?)", major, err)
	}
	for _, way := range []struct {
		name         string
		walk, noProc bool
	}{{"openat2", false, false}, {"walk", true, false}, {"no /proc", false, true}} {
		t.Run(way.name, func(t *testing.T) {
			forceWalk.Store(way.walk)
			forceNoProc.Store(way.noProc)
			defer forceWalk.Store(false)
			defer forceNoProc.Store(false)
			r := New(d)
			for name := range nodes {
				p := "/" + dir + "/" + name
				readers := map[string]func() error{
					"ReadFile":    func() error { _, err := r.ReadFile(p); return err },
					"ReadIntInto": func() error { _, _, err := r.ReadIntInto(p, nil); return err },
					"Open": func() error {
						f, err := r.Open(p)
						if err == nil {
							f.Close()
						}
						return err
					},
				}
				for rn, read := range readers {
					var err error
					within(t, nil, func() { err = read() })
					if !errors.Is(err, ErrNotRegular) || !errors.Is(err, fs.ErrPermission) {
						t.Errorf("%s(%s) = %v; want ErrNotRegular, refused before an open", rn, name, err)
					}
				}
				if !r.Exists(p) {
					t.Errorf("Exists(%s) = false", name)
				}
				if m, err := r.Mode(p); err != nil || m.Type()&(fs.ModeDevice|fs.ModeNamedPipe) == 0 {
					t.Errorf("Mode(%s) = %v, %v", name, m, err)
				}
			}
		})
	}
	// A regular file still reads, all three ways.
	for _, walk := range []bool{false, true} {
		forceWalk.Store(walk)
		for _, noProc := range []bool{false, true} {
			forceNoProc.Store(noProc)
			if b, err := New(d).ReadFile("/" + dir + "/vendor"); err != nil || len(b) == 0 {
				t.Errorf("walk %v, no /proc %v: ReadFile(vendor) = %q, %v", walk, noProc, b, err)
			}
		}
	}
	forceWalk.Store(false)
	forceNoProc.Store(false)
}
