package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// nestedArchive is n entries of depth nested directories each
// ("0000/a/a/.../a/"): a small archive of many directories.
func nestedArchive(t testing.TB, n, depth int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for i := range n {
		name := fmt.Sprintf("%04d/", i) + strings.Repeat("a/", depth-1)
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// 3,000 entries of 62 nested directories: 23 KB that would make 186,000
// directories, 690 MB of disk. The directories' blocks go past MaxBytes in
// the pass that writes nothing, so nothing reaches the disk.
func TestOpenNestedDirectories(t *testing.T) {
	a := nestedArchive(t, 3000, 62)
	p := filepath.Join(t.TempDir(), "nested.tar.gz")
	if err := os.WriteFile(p, a, 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	s, err := Open(context.Background(), p, WithTempDir(tmp))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "MaxBytes" {
		s.Close()
		t.Fatalf("Open of %d bytes = %v; want a MaxBytes refusal", len(a), err)
	}
	if want := DefaultLimits().MaxBytes / entryBlock; int64(le.Entries) > want {
		t.Errorf("counted %d entries; the blocks allow %d", le.Entries, want)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("%d entries written to the temporary directory", len(ents))
	}
	t.Log(err)
}

// Every entry, empty file or not, is charged a block: 100 empty files
// (51 KB of tar stream) do not fit in 100 blocks.
func TestUnpackChargesEntries(t *testing.T) {
	var ents []entry
	for i := range 100 {
		ents = append(ents, entry{name: fmt.Sprintf("sys/f%03d", i), typ: tar.TypeReg})
	}
	a := archive(t, ents...)
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.Copy(io.Discard, zr)
	fits := stream + 101*entryBlock // the files and sys/
	if err := Unpack(context.Background(), bytes.NewReader(a), t.TempDir(), WithLimits(Limits{MaxBytes: fits})); err != nil {
		t.Fatalf("with MaxBytes %d (the stream and 101 blocks): %v", fits, err)
	}
	err = Unpack(context.Background(), bytes.NewReader(a), t.TempDir(), WithLimits(Limits{MaxBytes: fits - 1}))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "MaxBytes" {
		t.Fatalf("with MaxBytes %d: %v; want a MaxBytes refusal", fits-1, err)
	}
}

// Each directory is made once, by one mkdir, parents before children,
// whether an entry names it or implies it, however many entries lie
// below it.
func TestUnpackMakesEachDirectoryOnce(t *testing.T) {
	a := archive(t,
		entry{name: "sys/devices/pci0000:00/0000:00:1c.0/vendor", typ: tar.TypeReg, body: "0x8086\n"},
		entry{name: "sys/devices/pci0000:00/0000:00:1c.0/device", typ: tar.TypeReg, body: "0x1234\n"},
		entry{name: "sys/devices/", typ: tar.TypeDir},
		entry{name: "sys/devices/pci0000:00/0000:00:1c.0/net/", typ: tar.TypeDir},
		entry{name: "sys/class/net/eth0", link: "../../devices/pci0000:00/0000:00:1c.0/net/eth0", typ: tar.TypeSymlink},
		entry{name: "proc/interrupts", typ: tar.TypeReg, body: "CPU0\n"},
	)
	dir := t.TempDir()
	var made []string
	defer func(f func(string, os.FileMode) error) { mkdir = f }(mkdir)
	mkdir = func(p string, m os.FileMode) error {
		rel, _ := filepath.Rel(dir, p)
		made = append(made, filepath.ToSlash(rel))
		return os.Mkdir(p, m)
	}
	if err := Unpack(context.Background(), bytes.NewReader(a), dir); err != nil {
		t.Fatal(err)
	}
	want := []string{"sys", "sys/devices", "sys/devices/pci0000:00", "sys/devices/pci0000:00/0000:00:1c.0",
		"sys/devices/pci0000:00/0000:00:1c.0/net", "sys/class", "sys/class/net", "proc"}
	if strings.Join(made, " ") != strings.Join(want, " ") {
		t.Errorf("mkdir calls:\n %q\nwant\n %q", made, want)
	}
	var got []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if rel, _ := filepath.Rel(dir, p); rel != "." {
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	sort.Strings(got)
	if len(got) != len(want)+4 {
		t.Errorf("tree: %q", got)
	}
}

// BenchmarkUnpackNested unpacks 200 entries of 62 nested directories
// (12,400 directories): one mkdir each.
func BenchmarkUnpackNested(b *testing.B) {
	a := nestedArchive(b, 200, 62)
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "root")
		if err := Unpack(context.Background(), bytes.NewReader(a), dir); err != nil {
			b.Fatal(err)
		}
	}
}
