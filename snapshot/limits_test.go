package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// rawHeader is a ustar header block, for entries archive/tar will not
// write (PAX headers of one's own, GNU sparse).
func rawHeader(name string, typ byte, size int) []byte {
	b := make([]byte, 512)
	copy(b[0:100], name)
	copy(b[100:], "0000644\x00")
	copy(b[108:], "0000000\x00")
	copy(b[116:], "0000000\x00")
	copy(b[124:], fmt.Sprintf("%011o\x00", size))
	copy(b[136:], "00000000000\x00")
	b[156] = typ
	copy(b[257:], "ustar\x0000")
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// gnuSparse is an old GNU sparse entry: 5 bytes of data standing for a
// file of 1e9 bytes.
func gnuSparse(name string) []byte {
	b := rawHeader(name, 'S', 5)
	copy(b[257:], "ustar  \x00")
	copy(b[386:], "00000000000\x00") // the first hole-less block at 0...
	copy(b[398:], "00000000005\x00") // ...is 5 bytes long
	copy(b[483:], "07346545000\x00") // the real size
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return append(append(b, "12345"...), make([]byte, 507)...)
}

// paxRecord is one "LEN key=value\n" record; LEN counts itself.
func paxRecord(k, v string) string {
	r := " " + k + "=" + v + "\n"
	n := len(r) + len(strconv.Itoa(len(r)))
	if len(strconv.Itoa(n)) > len(strconv.Itoa(len(r))) {
		n++
	}
	return strconv.Itoa(n) + r
}

// rawEntry is a header and its data, padded to whole blocks.
func rawEntry(name string, typ byte, data string) []byte {
	b := append(rawHeader(name, typ, len(data)), data...)
	return append(b, make([]byte, (512-len(data)%512)%512)...)
}

func gz(t testing.TB, parts ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, p := range parts {
		zw.Write(p)
	}
	zw.Write(make([]byte, 1024)) // end of archive
	zw.Close()
	return buf.Bytes()
}

// bomb is an archive of n files of size zero bytes each.
func bomb(t testing.TB, n, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	zeros := make([]byte, size)
	for i := 0; i < n; i++ {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("sys/f%d", i), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(size)}); err != nil {
			t.Fatal(err)
		}
		tw.Write(zeros)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// usage counts what is under dir: entries (files, directories, symlinks;
// not dir itself), file bytes, and the largest file.
func usage(t testing.TB, dir string) (entries int, total, largest int64) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		entries++
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
			largest = max(largest, fi.Size())
		}
		return nil
	})
	return
}

// Each cap stops Unpack with a *LimitError naming it, and what reached the
// disk stays within every cap.
func TestUnpackLimits(t *testing.T) {
	deep := strings.Repeat("d/", 19) + "f" // one entry, 19 directories implied
	var many []entry
	for i := 0; i < 20; i++ {
		many = append(many, entry{name: fmt.Sprintf("sys/f%d", i), typ: tar.TypeReg, body: "x"})
	}
	var fives []entry
	for i := 0; i < 5; i++ {
		fives = append(fives, entry{name: fmt.Sprintf("f%d", i), typ: tar.TypeReg, body: strings.Repeat("x", 300)})
	}
	comment := paxRecord("comment", strings.Repeat("c", 100<<10))
	var chain [][]byte
	for i := 0; i < 100; i++ { // 10 MB of PAX headers before one entry
		chain = append(chain, rawEntry("pax", 'x', comment))
	}
	chain = append(chain, rawEntry("sys/a", '0', "1"))
	lim := Limits{MaxEntries: 10, MaxFileBytes: 1000, MaxBytes: 1 << 20}
	for name, tc := range map[string]struct {
		archive []byte
		limit   string
	}{
		"entries":          {archive(t, many...), "MaxEntries"},
		"implied dirs":     {archive(t, entry{name: deep, typ: tar.TypeReg, body: "x"}), "MaxEntries"},
		"file bytes":       {archive(t, entry{name: "big", typ: tar.TypeReg, body: strings.Repeat("x", 2000)}), "MaxFileBytes"},
		"total bytes":      {archive(t, fives...), "MaxBytes"},
		"gzip bomb":        {bomb(t, 8, 1000), "MaxBytes"},
		"PAX header flood": {gz(t, chain...), "MaxBytes"},
	} {
		t.Run(name, func(t *testing.T) {
			l := lim
			if name == "total bytes" || name == "gzip bomb" {
				l.MaxBytes = 2000
			}
			root := filepath.Join(t.TempDir(), "root")
			err := Unpack(context.Background(), bytes.NewReader(tc.archive), root, WithLimits(l))
			var le *LimitError
			if !errors.Is(err, ErrLimit) || !errors.As(err, &le) || le.Limit != tc.limit {
				t.Fatalf("Unpack = %v; want a %s refusal", err, tc.limit)
			}
			n, total, largest := usage(t, root)
			if n > l.MaxEntries || total > l.MaxBytes || largest > l.MaxFileBytes {
				t.Errorf("on disk: %d entries, %d bytes, largest file %d; limits %+v", n, total, largest, l)
			}
			t.Log(err)
		})
	}
}

// An archive exactly at every cap unpacks; one entry or byte less refuses
// it. MaxBytes counts the decompressed stream and a block per entry.
func TestUnpackAtLimits(t *testing.T) {
	a := archive(t, entry{name: "sys/", typ: tar.TypeDir}, entry{name: "sys/a", typ: tar.TypeReg, body: strings.Repeat("x", 100)}, entry{name: "sys/b", typ: tar.TypeReg, body: strings.Repeat("y", 50)})
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	size, _ := io.Copy(io.Discard, zr)
	size += 3 * entryBlock
	at := Limits{MaxEntries: 3, MaxFileBytes: 100, MaxBytes: size}
	if err := Unpack(context.Background(), bytes.NewReader(a), t.TempDir(), WithLimits(at)); err != nil {
		t.Fatalf("at the limits %+v: %v", at, err)
	}
	for _, l := range []Limits{
		{MaxEntries: 2, MaxFileBytes: 100, MaxBytes: size},
		{MaxEntries: 3, MaxFileBytes: 99, MaxBytes: size},
		{MaxEntries: 3, MaxFileBytes: 100, MaxBytes: size - 1},
	} {
		if err := Unpack(context.Background(), bytes.NewReader(a), t.TempDir(), WithLimits(l)); !errors.Is(err, ErrLimit) {
			t.Errorf("limits %+v: %v; want ErrLimit", l, err)
		}
	}
}

// Entries a snapshot never holds, which could expand or loop, are refused:
// sparse files (PAX and old GNU), and symlink targets too long or too deep.
func TestUnpackRefusesTraps(t *testing.T) {
	sparse := paxRecord("GNU.sparse.major", "0") + paxRecord("GNU.sparse.minor", "1") +
		paxRecord("GNU.sparse.size", "1000000000000") + paxRecord("GNU.sparse.numblocks", "1") + paxRecord("GNU.sparse.map", "0,5")
	for name, a := range map[string][]byte{
		"PAX sparse":        gz(t, rawEntry("pax", 'x', sparse), rawEntry("sys/s", '0', "12345")),
		"GNU sparse":        gz(t, gnuSparse("sys/s")),
		"long link target":  archive(t, entry{name: "sys/l", link: strings.Repeat("n", 2000), typ: tar.TypeSymlink}),
		"deep link target":  archive(t, entry{name: "sys/l", link: strings.Repeat("a/", 100) + "b", typ: tar.TypeSymlink}),
		"global PAX header": gz(t, rawEntry("g", 'g', paxRecord("comment", "x")), rawEntry("sys/a", '0', "1")),
	} {
		t.Run(name, func(t *testing.T) {
			err := Unpack(context.Background(), bytes.NewReader(a), filepath.Join(t.TempDir(), "root"))
			if !errors.Is(err, ErrUnsafeArchive) {
				t.Fatalf("Unpack = %v; want ErrUnsafeArchive", err)
			}
			t.Log(err)
		})
	}
}

// Unpack writes into an empty or absent directory only: it trusts every
// symlink there to be one it made.
func TestUnpackNonEmptyDir(t *testing.T) {
	dir := t.TempDir()
	os.Symlink("/", filepath.Join(dir, "sys"))
	err := Unpack(context.Background(), bytes.NewReader(archive(t, entry{name: "sys/x", typ: tar.TypeReg, body: "x"})), dir)
	if err == nil {
		t.Fatal("unpacked into a directory holding a symlink")
	}
}

// A cancelled context stops Unpack inside a file's data, not only between
// entries.
func TestUnpackCancelMidFile(t *testing.T) {
	a := bomb(t, 1, 32<<20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &cancelAt{r: bytes.NewReader(a), at: len(a) / 2, cancel: cancel}
	root := filepath.Join(t.TempDir(), "root")
	err := Unpack(ctx, r, root)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Unpack = %v; want context.Canceled", err)
	}
	if _, total, _ := usage(t, root); total >= 32<<20 {
		t.Errorf("wrote the whole file (%d bytes) after the cancel", total)
	}
}

// cancelAt calls cancel once at bytes of r have been read.
type cancelAt struct {
	r      io.Reader
	n, at  int
	cancel func()
}

func (c *cancelAt) Read(p []byte) (int, error) {
	if len(p) > 512 {
		p = p[:512]
	}
	n, err := c.r.Read(p)
	if c.n += n; c.n >= c.at {
		c.cancel()
	}
	return n, err
}

// openIn opens the archive a from a file, unpacking under tmp.
func openIn(t *testing.T, ctx context.Context, a []byte, tmp string, opts ...OpenOption) (*Snapshot, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.tar.gz")
	if err := os.WriteFile(p, a, 0o644); err != nil {
		t.Fatal(err)
	}
	return Open(ctx, p, append([]OpenOption{WithTempDir(tmp)}, opts...)...)
}

func empty(t *testing.T, dir string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%s holds %s", dir, ents[0].Name())
	}
}

// Open leaves no temporary directory behind on any way out: an error mid-
// unpack, a cancelled context, a panic (and, in TestCloseRemovesTempDir,
// a limit and Close).
func TestOpenRemovesTempDir(t *testing.T) {
	ents := tenFiles()
	good := archive(t, ents...)
	// Passes the check, fails on disk: the second sys/f0 exists.
	dup := archive(t, append(ents, entry{name: "sys/f0", typ: tar.TypeReg, body: "y"})...)

	t.Run("error mid-unpack", func(t *testing.T) {
		tmp := t.TempDir()
		if _, err := openIn(t, context.Background(), dup, tmp); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("Open = %v; want the duplicate refused", err)
		}
		empty(t, tmp)
	})

	// entryHook fires for the check's 10 entries, then the unpack's.
	hookAt := func(t *testing.T, n int, f func()) {
		calls := 0
		entryHook = func(*tar.Header) {
			if calls++; calls == n {
				f()
			}
		}
		t.Cleanup(func() { entryHook = nil })
	}

	t.Run("cancelled mid-unpack", func(t *testing.T) {
		tmp := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		hookAt(t, 15, func() {
			if ents, _ := os.ReadDir(tmp); len(ents) != 1 {
				t.Error("the hook did not fire during the unpack")
			}
			cancel()
		})
		if _, err := openIn(t, ctx, good, tmp); !errors.Is(err, context.Canceled) {
			t.Fatalf("Open = %v; want context.Canceled", err)
		}
		empty(t, tmp)
	})

	t.Run("panic mid-unpack", func(t *testing.T) {
		tmp := t.TempDir()
		hookAt(t, 15, func() { panic("unpacker bug") })
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			openIn(t, context.Background(), good, tmp)
		}()
		empty(t, tmp)
	})
}

// tenFiles are the entries of ten one-byte files, sys/f0 to sys/f9.
func tenFiles() []entry {
	var ents []entry
	for i := 0; i < 10; i++ {
		ents = append(ents, entry{name: fmt.Sprintf("sys/f%d", i), typ: tar.TypeReg, body: "x"})
	}
	return ents
}

// An archive over a limit makes no temporary directory, and Close, however
// often and at once, removes the one Open made.
func TestCloseRemovesTempDir(t *testing.T) {
	good := archive(t, tenFiles()...)
	t.Run("over a limit", func(t *testing.T) {
		// Refused by the check: no temporary directory is ever made.
		tmp := t.TempDir()
		entryHook = func(*tar.Header) { empty(t, tmp) }
		t.Cleanup(func() { entryHook = nil })
		_, err := openIn(t, context.Background(), bomb(t, 8, 1000), tmp, WithLimits(Limits{MaxBytes: 4000}))
		if !errors.Is(err, ErrLimit) {
			t.Fatalf("Open = %v; want ErrLimit", err)
		}
		empty(t, tmp)
	})

	t.Run("Close, twice and concurrently", func(t *testing.T) {
		tmp := t.TempDir()
		s, err := openIn(t, context.Background(), good, tmp)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(s.Dir, "sys/f9")); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.Close()
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		empty(t, tmp) // every Close returned after the removal
		if err := s.Close(); err != nil {
			t.Errorf("third Close: %v", err)
		}
	})
}

// manyEntries is a .tar.gz of n empty files.
func manyEntries(b *testing.B, n int) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	for i := 0; i < n; i++ {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("f%d", i), Typeflag: tar.TypeReg, Mode: 0o644}); err != nil {
			b.Fatal(err)
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// benchRefusal times Open and Unpack refusing archive a, and reports what
// each left on disk while refusing it: Open removes its directory, so its
// figure is the most its temporary parent held at any entry.
func benchRefusal(b *testing.B, a []byte, want error) {
	b.Logf("archive: %d bytes", len(a))
	p := filepath.Join(b.TempDir(), "a.tar.gz")
	if err := os.WriteFile(p, a, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("Open", func(b *testing.B) {
		tmp := b.TempDir()
		var peak int64
		entryHook = func(*tar.Header) {
			if _, total, _ := usage(b, tmp); total > peak {
				peak = total
			}
		}
		_, err := Open(context.Background(), p, WithTempDir(tmp))
		entryHook = nil
		b.Log(err)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := Open(context.Background(), p, WithTempDir(tmp)); !errors.Is(err, want) {
				b.Fatalf("Open = %v", err)
			}
		}
		b.ReportMetric(float64(peak), "disk-bytes")
	})
	b.Run("Unpack", func(b *testing.B) {
		var n int
		var total int64
		for i := 0; i < b.N; i++ {
			root := filepath.Join(b.TempDir(), "root")
			if err := Unpack(context.Background(), bytes.NewReader(a), root); !errors.Is(err, want) {
				b.Fatalf("Unpack = %v", err)
			}
			b.StopTimer()
			n, total, _ = usage(b, root)
			os.RemoveAll(root)
			b.StartTimer()
		}
		b.ReportMetric(float64(total), "disk-bytes")
		b.ReportMetric(float64(n), "disk-entries")
	})
}

// BenchmarkRefuseGzipBomb: 100 files of 10 MB of zeros (1 GB expanded,
// about 1 MB compressed), with the default limits.
func BenchmarkRefuseGzipBomb(b *testing.B) {
	benchRefusal(b, bomb(b, 100, 10<<20), ErrLimit)
}

// BenchmarkRefuseMillionEntries: 1,000,000 empty files, with the default
// limits.
func BenchmarkRefuseMillionEntries(b *testing.B) {
	benchRefusal(b, manyEntries(b, 1000000), ErrLimit)
}

// BenchmarkRefuseDeep: the case, 300 files 1000 directories deep
// (refused by the path length cap at the first entry).
func BenchmarkRefuseDeep(b *testing.B) {
	deep := strings.Repeat("d/", 1000)
	var ents []entry
	for i := 0; i < 300; i++ {
		ents = append(ents, entry{name: fmt.Sprintf("%sf%d", deep, i), typ: tar.TypeReg, body: "x"})
	}
	benchRefusal(b, archive(b, ents...), ErrUnsafeArchive)
}
