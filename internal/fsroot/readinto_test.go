//go:build unix

package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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

// TestReadIntInto: ReadIntInto reads what ReadInt reads, the same way
// (base prefixes, sign, surrounding space), with the same errors, and
// reuses the buffer.
func TestReadIntInto(t *testing.T) {
	d := t.TempDir()
	r := New(d)
	var buf []byte
	for i, s := range []string{"0", "1500\n", " 42 \n", "999999999999999999", "9223372036854775807", "9223372036854775808",
		"010", "0x1af4\n", "-5", "+7", "1_000", "", "x", "18446744073709551615\n", "\u00a012\u00a0"} {
		p := "/a" + strconv.Itoa(i)
		must(t, os.WriteFile(filepath.Join(d, p), []byte(s), 0o644))
		want, werr := r.ReadInt(p)
		var got int64
		var err error
		got, buf, err = r.ReadIntInto(p, buf)
		if got != want || fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Errorf("%q: %d, %v; ReadInt %d, %v", s, got, err, want, werr)
		}
	}
	if _, _, err := r.ReadIntInto("/nope", buf); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent = %v", err)
	}
}

// A file over a reader's cap costs no more memory than the cap: a
// snapshot's 1 GiB (sparse) file is refused by its size before any read,
// and a file read to its end (a live root, whose sizes are not trusted)
// stops one byte past the cap without doubling past it. The buffer handed
// back with the error is the one the read grew.
func TestReadIntoCapMemory(t *testing.T) {
	d := tree(t)
	big := filepath.Join(d, "sys/big")
	f, err := os.Create(big)
	must(t, err)
	must(t, f.Truncate(1<<30))
	must(t, f.Close())
	const limit = 1 << 20
	b, err := New(d).ReadInto("/sys/big", nil, limit)
	if !errors.Is(err, ErrTooLarge) || cap(b) != 0 {
		t.Errorf("the snapshot's 1 GiB file: %v, a buffer of %d bytes; want ErrTooLarge before any read", err, cap(b))
	}
	must(t, os.Truncate(big, 3*limit))
	b, err = New("").ReadInto(big, nil, limit)
	if !errors.Is(err, ErrTooLarge) || cap(b) > limit+limit/8 {
		t.Errorf("a 3 MiB file against a 1 MiB cap: %v, a buffer of %d bytes", err, cap(b))
	}
}
