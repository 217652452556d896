package nicinfo

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nicdiag/nicdiag/option"
)

// The window's size changes nothing: a window of 256 bytes, whose edges
// fall inside lines all through the file (the longest is 170 bytes),
// reads the same names as one of 16 KiB, for every ID of the snapshots
// and random IDs.
func TestScanWindowEdges(t *testing.T) {
	for _, file := range []string{"testdata/pci.ids", hostPCIIDs} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Log(err)
			continue
		}
		var q PCIQuery
		for _, x := range snapshotIDs(t) {
			q.Add(x.v, x.d, x.sv, x.sd, 0x020000)
		}
		r := rand.New(rand.NewPCG(3, 4))
		for range 20 { // an absent vendor costs a read through the file
			q.Add(uint16(r.Uint32()), uint16(r.Uint32()), uint16(r.Uint32()), uint16(r.Uint32()), r.Uint32()&0xffff00)
		}
		q.Add(0xffff, 0, 0, 0, 0xff0000) // past the last vendor; a class pci.ids lacks
		want, err := scanWindowed(bytes.NewReader(data), int64(len(data)), &q, idsWindow)
		if err != nil {
			t.Fatal(err)
		}
		got, err := scanWindowed(bytes.NewReader(data), int64(len(data)), &q, 256)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []struct {
			name      string
			got, want int
		}{{"vendors", len(got.vendors), len(want.vendors)}, {"devices", len(got.devices), len(want.devices)},
			{"subsystems", len(got.subs), len(want.subs)}, {"classes", len(got.classes), len(want.classes)},
			{"subclasses", len(got.subclass), len(want.subclass)}} {
			if m.got != m.want {
				t.Errorf("%s: %s: %d names with a 256-byte window, %d with %d bytes", file, m.name, m.got, m.want, idsWindow)
			}
		}
		for k, v := range want.devices {
			if got.devices[k] != v {
				t.Errorf("%s: device %08x: %q; want %q", file, k, got.devices[k], v)
			}
		}
		if len(want.devices) < 10 || len(want.classes) == 0 {
			t.Errorf("%s: only %d devices and %d classes named", file, len(want.devices), len(want.classes))
		}
	}
}

// A snapshot's pci.ids that a writer truncates and rewrites while nicdiag
// reads it: every lookup returns (names or fewer names), none faults. A
// mapping of the file would take SIGBUS on a page past the new end.
func TestPCIIDsTruncatedWhileRead(t *testing.T) {
	data, err := os.ReadFile(hostPCIIDs)
	if err != nil {
		if data, err = os.ReadFile("testdata/pci.ids"); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	p := filepath.Join(root, "usr/share/misc/pci.ids")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the writer: cut the file short, then put it back
		defer wg.Done()
		r := rand.New(rand.NewPCG(5, 6))
		for {
			select {
			case <-stop:
				return
			default:
			}
			f.Truncate(int64(r.IntN(len(data))))
			f.WriteAt(data, 0)
		}
	}()
	var q PCIQuery
	q.Add(0x8086, 0x1521, 0x8086, 0x0001, 0x020000)
	q.Add(0xffff, 0, 0, 0, 0xff0000)
	named := 0
	for range 300 {
		n, err := LookupNames(&q, option.Root(root))
		if err == nil && n.Device(0x8086, 0x1521) != "" {
			named++
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("300 lookups, %d named the I350, while the file was cut and rewritten", named)
}
