package pcie

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// countingReader reads b, counting the bytes it hands out; past limit it
// reads nothing, as sysfs does past the header for a reader without root.
type countingReader struct {
	b     []byte
	limit int
	read  int
	calls int
}

func (r *countingReader) ReadAt(p []byte, off int64) (int, error) {
	r.calls++
	if off >= int64(min(len(r.b), r.limit)) {
		return 0, io.EOF
	}
	n := copy(p, r.b[off:min(len(r.b), r.limit)])
	r.read += n
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestReadConfigSnapshots: on every config file of the bundled snapshots
// (real dumps, 64 to 4096 bytes), ReadConfig decodes what DecodeConfig
// decodes from the whole file, reading a fraction of it: at most the
// 64-byte header and 128 bytes more for a function without Intel's
// extended capabilities to search.
func TestReadConfigSnapshots(t *testing.T) {
	files, _ := filepath.Glob("../testdata/snapshots/*/sys/devices/pci*/*/config")
	more, _ := filepath.Glob("../testdata/snapshots/*/sys/devices/pci*/*/*/config")
	files = append(files, more...)
	if len(files) < 20 {
		t.Fatalf("only %d config files", len(files))
	}
	var all, read int
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want, werr := DecodeConfig(b)
		r := &countingReader{b: b, limit: len(b)}
		got, err := ReadConfig(r, len(b))
		if !reflect.DeepEqual(got, want) || (err == nil) != (werr == nil) {
			t.Errorf("%s: ReadConfig %+v, %v; DecodeConfig %+v, %v", p, got, err, want, werr)
			continue
		}
		if want != nil && want.VendorID != vendorIntel && r.read > 64+128 {
			t.Errorf("%s: read %d of %d bytes in %d reads", p, r.read, len(b), r.calls)
		}
		all, read = all+len(b), read+r.read
	}
	t.Logf("%d config files: %d of %d bytes read", len(files), read, all)
}

// Without root sysfs gives the header alone: a 256-byte file reads as 64,
// with the capabilities unreadable, as DecodeConfig says of a 64-byte dump.
func TestReadConfigWithoutRoot(t *testing.T) {
	full := readDumps(t, "82576-et-dual.lspci")["01:00.0"].Config
	r := &countingReader{b: full, limit: 64}
	c, err := ReadConfig(r, 256)
	want, _ := DecodeConfig(full[:64])
	if err != nil || !reflect.DeepEqual(c, want) || c.Size != 64 || c.CapsReadable {
		t.Fatalf("%+v, %v; want %+v", c, err, want)
	}
	if _, err := ReadConfig(&countingReader{b: full, limit: 10}, 256); !errors.Is(err, ErrConfigTruncated) {
		t.Errorf("10 bytes readable: %v", err)
	}
	broken := errors.New("EIO")
	if _, err := ReadConfig(failingReader{broken}, 256); !errors.Is(err, broken) {
		t.Errorf("a failing read: %v", err)
	}
}

type failingReader struct{ err error }

func (f failingReader) ReadAt([]byte, int64) (int, error) { return 0, f.err }

// FuzzReadConfig: read on demand, any input decodes as the whole of it
// does.
func FuzzReadConfig(f *testing.F) {
	b := readDumps(f, "82576-et-dual.lspci")["01:00.0"].Config
	f.Add(b)
	f.Add(b[:64])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		want, werr := DecodeConfig(b)
		got, err := ReadConfig(bytes.NewReader(b), len(b))
		if len(b) > maxConfig {
			return // ReadConfig reads at most 4096
		}
		if !reflect.DeepEqual(got, want) || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("ReadConfig %+v, %v; DecodeConfig %+v, %v", got, err, want, werr)
		}
	})
}

// BenchmarkConfigRead reads the live host's first network function's
// config space whole (as the path walk did: 256 or 4096 bytes, a config
// access per dword, each a VM exit in a guest) and as ReadConfig reads
// it (the bytes decoded).
func BenchmarkConfigRead(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root: without it sysfs gives the 64-byte header")
	}
	var p string
	fns, _ := filepath.Glob("/sys/bus/pci/devices/*/class")
	for _, c := range fns {
		if v, err := os.ReadFile(c); err == nil && bytes.HasPrefix(v, []byte("0x02")) {
			p = filepath.Join(filepath.Dir(c), "config")
			break
		}
	}
	if p == "" {
		b.Skip("no network function")
	}
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			buf, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := DecodeConfig(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoded", func(b *testing.B) {
		for b.Loop() {
			f, err := os.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			fi, _ := f.Stat()
			if _, err := ReadConfig(f, int(fi.Size())); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	})
}
