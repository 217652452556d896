//go:build unix

package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadInto(t *testing.T) {
	d := tree(t)
	r := New(d)
	const vendor = "/sys/devices/pci0000:00/0000:00:03.0/vendor"
	buf := make([]byte, 0, 4)
	b, err := r.ReadInto(vendor, buf, 7)
	if err != nil || string(b) != "0x1af4\n" {
		t.Fatalf("ReadInto = %q, %v", b, err)
	}
	// The storage is reused once large enough.
	if c, err := r.ReadInto("/sys/class/net/eth0/mtu", b, 7); err != nil || string(c) != "1500\n" || &c[0] != &b[0] {
		t.Errorf("second read = %q, %v (same storage: %v)", c, err, err == nil && &c[0] == &b[0])
	}
	if _, err := r.ReadInto(vendor, nil, 6); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the cap = %v, want ErrTooLarge", err)
	}
	if _, err := r.ReadInto("/sys/class/net/evil/passwd", nil, 1<<20); !errors.Is(err, ErrEscape) {
		t.Errorf("through an escaping link = %v, want ErrEscape", err)
	}
	if b, err := r.ReadInto("/sys/nope", buf, 10); !errors.Is(err, fs.ErrNotExist) || len(b) != 0 {
		t.Errorf("absent = %q, %v, want fs.ErrNotExist", b, err)
	}
	fifo := filepath.Join(d, "sys/devices/pci0000:00/0000:00:03.0/vendor")
	must(t, os.Remove(fifo))
	release := mkfifo(t, fifo)
	within(t, release, func() {
		if _, err := r.ReadInto(vendor, nil, 10); !errors.Is(err, ErrNotRegular) {
			t.Errorf("FIFO = %v, want ErrNotRegular", err)
		}
	})
	// A /proc file reports size 0 and is read to EOF.
	if b, err := New("/").ReadInto("/proc/self/stat", nil, 4096); err == nil && !strings.Contains(string(b), ") ") {
		t.Errorf("/proc/self/stat = %q", b)
	}
}
