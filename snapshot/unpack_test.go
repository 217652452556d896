package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type entry struct {
	name, link string
	typ        byte
	body       string
}

func archive(t testing.TB, ents ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: 0o644, Size: int64(len(e.body))}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestUnpackRefuses(t *testing.T) {
	cases := map[string][]entry{
		"absolute path":         {{name: "/etc/passwd", typ: tar.TypeReg, body: "x"}},
		"dot-dot":               {{name: "sys/../../x", typ: tar.TypeReg, body: "x"}},
		"absolute symlink":      {{name: "sys/class/net/eth0", link: "/sys/devices/x", typ: tar.TypeSymlink}},
		"symlink above root":    {{name: "sys/l", link: "../../etc", typ: tar.TypeSymlink}},
		"write through symlink": {{name: "sys/d", link: ".", typ: tar.TypeSymlink}, {name: "sys/d/x", typ: tar.TypeReg, body: "x"}},
		"device node":           {{name: "dev/null", typ: tar.TypeChar}},
		"hard link":             {{name: "x", link: "y", typ: tar.TypeLink}},
	}
	for name, ents := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			err := Unpack(context.Background(), bytes.NewReader(archive(t, ents...)), filepath.Join(dir, "root"))
			if !errors.Is(err, ErrUnsafeArchive) {
				t.Fatalf("Unpack = %v; want ErrUnsafeArchive", err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "x")); err == nil {
				t.Fatal("wrote outside the root")
			}
		})
	}
}

// A link that stays inside lexically but climbs through another link:
// sys/d -> "." is harmless alone, but sys/e -> "d/x/../.." resolved by the
// kernel goes sys -> sys/x -> sys -> / (root) -> above it... The check must
// hold after the kernel resolves the links, not only lexically.
func TestUnpackChainedLinks(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	err := Unpack(context.Background(), bytes.NewReader(archive(t,
		entry{name: "a/x/", typ: tar.TypeDir},
		entry{name: "a/d", link: ".", typ: tar.TypeSymlink},
		entry{name: "a/e", link: "d/x/../../..", typ: tar.TypeSymlink},
	)), root)
	if err != nil {
		return // refused: fine
	}
	got, err := filepath.EvalSymlinks(filepath.Join(root, "a/e"))
	if err == nil {
		if rel, _ := filepath.Rel(root, got); rel == ".." || filepath.IsAbs(rel) || len(rel) >= 2 && rel[:2] == ".." {
			t.Errorf("a/e resolves to %s, outside the snapshot root %s", got, root)
		}
	}
}

func TestUnpackGood(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	err := Unpack(context.Background(), bytes.NewReader(archive(t,
		entry{name: "sys/devices/pci0000:00/0000:00:03.0/vendor", typ: tar.TypeReg, body: "0x1af4\n"},
		entry{name: "sys/class/net/eth0", link: "../../devices/pci0000:00/0000:00:03.0", typ: tar.TypeSymlink},
	)), root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "sys/class/net/eth0/vendor"))
	if err != nil || string(b) != "0x1af4\n" {
		t.Fatalf("read through link: %q, %v", b, err)
	}
}

func TestUnpackGarbage(t *testing.T) {
	good := archive(t, entry{name: "a", typ: tar.TypeReg, body: "hello"})
	for name, b := range map[string][]byte{
		"empty":     nil,
		"not gzip":  []byte("plain text"),
		"truncated": good[:len(good)/2],
	} {
		if err := Unpack(context.Background(), bytes.NewReader(b), t.TempDir()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzUnpack: no archive makes Unpack panic, leave anything outside dir,
// or put more on disk than its limits allow (small here, so that the
// fuzzer reaches them).
func FuzzUnpack(f *testing.F) {
	lim := Limits{MaxEntries: 32, MaxFileBytes: 4 << 10, MaxBytes: 64 << 10}
	f.Add(archive(f, entry{name: "sys/a", typ: tar.TypeReg, body: "1"}, entry{name: "sys/l", link: "a", typ: tar.TypeSymlink}))
	f.Add(archive(f, entry{name: "../x", typ: tar.TypeReg, body: "1"}))
	f.Add([]byte{0x1f, 0x8b})
	f.Add(bomb(f, 4, 30000))                                                                                       // MaxFileBytes, MaxBytes
	f.Add(bomb(f, 40, 1))                                                                                          // MaxEntries
	f.Add(archive(f, entry{name: strings.Repeat("d/", 40) + "f", typ: tar.TypeReg, body: "x"}))                    // implied directories
	f.Add(gz(f, rawEntry("pax", 'x', paxRecord("comment", strings.Repeat("c", 70<<10))), rawEntry("a", '0', "1"))) // header flood
	f.Add(gz(f, rawEntry("pax", 'x', paxRecord("GNU.sparse.major", "0")+paxRecord("GNU.sparse.minor", "1")+
		paxRecord("GNU.sparse.size", "100000")+paxRecord("GNU.sparse.numblocks", "1")+paxRecord("GNU.sparse.map", "0,5")), rawEntry("s", '0', "12345")))
	f.Fuzz(func(t *testing.T, b []byte) {
		parent := t.TempDir()
		root := filepath.Join(parent, "root")
		os.Mkdir(root, 0o755)
		Unpack(context.Background(), bytes.NewReader(b), root, WithLimits(lim))
		ents, _ := os.ReadDir(parent)
		if len(ents) != 1 {
			t.Fatalf("%d entries beside the root", len(ents))
		}
		if n, total, largest := usage(t, root); n > lim.MaxEntries || total > lim.MaxBytes || largest > lim.MaxFileBytes {
			t.Fatalf("on disk: %d entries, %d bytes, largest file %d; limits %+v", n, total, largest, lim)
		}
	})
}

// An archive packed from above the snapshot (tar czf host.tar.gz host/)
// opens at its one top-level directory; one packed from inside opens as is.
func TestOpenTopLevelDirectory(t *testing.T) {
	for name, tc := range map[string]struct {
		ents []entry
		want string // the file that must be under Snapshot.Dir
	}{
		"packed from above":   {[]entry{{name: "host/", typ: tar.TypeDir}, {name: "host/sys/class/net/x", typ: tar.TypeReg, body: "1"}}, "sys/class/net/x"},
		"packed from inside":  {[]entry{{name: "sys/class/net/x", typ: tar.TypeReg, body: "1"}}, "sys/class/net/x"},
		"two top-level trees": {[]entry{{name: "sys/a", typ: tar.TypeReg}, {name: "proc/b", typ: tar.TypeReg}}, "proc/b"},
	} {
		p := filepath.Join(t.TempDir(), "s.tar.gz")
		if err := os.WriteFile(p, archive(t, tc.ents...), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(s.Dir, tc.want)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		dir := s.cleanup
		s.Close()
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: %s left behind", name, dir)
		}
	}
}

// TestUnpackDepth: an archive of a few hundred entries five hundred
// directories deep is refused at its first entry instead of checking a
// thousand parents per entry.
func TestUnpackDepth(t *testing.T) {
	deep := strings.Repeat("d/", 500) // 1000 bytes: under the length cap, 501 elements deep
	var ents []entry
	for i := 0; i < 300; i++ {
		ents = append(ents, entry{name: fmt.Sprintf("%sf%d", deep, i), typ: tar.TypeReg, body: "x"})
	}
	long := entry{name: "sys/" + strings.Repeat("n", 1100), typ: tar.TypeReg, body: "x"}
	for name, ents := range map[string][]entry{"deep": ents, "long": {long}} {
		t.Run(name, func(t *testing.T) {
			seen := 0
			entryHook = func(*tar.Header) { seen++ }
			defer func() { entryHook = nil }()
			err := Unpack(context.Background(), bytes.NewReader(archive(t, ents...)), filepath.Join(t.TempDir(), "root"))
			if !errors.Is(err, ErrUnsafeArchive) {
				t.Fatalf("Unpack = %v; want ErrUnsafeArchive", err)
			}
			if seen != 1 {
				t.Errorf("refused after %d entries; want the first (BenchmarkRefuseDeep times it)", seen)
			}
			t.Log(err)
		})
	}
	// The deepest real snapshot path still unpacks.
	ok := entry{name: "sys/devices/platform/scb/fd500000.pcie/pci0000:00/0000:00:00.0/0000:01:00.0/usb2/2-1/2-1:2.0/net/eth1/queues/tx-0/tx_timeout", typ: tar.TypeReg, body: "0\n"}
	if err := Unpack(context.Background(), bytes.NewReader(archive(t, ok)), filepath.Join(t.TempDir(), "root")); err != nil {
		t.Fatal(err)
	}
}
