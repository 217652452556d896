package nicinfo

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jaypipes/pcidb"
	"github.com/nicdiag/nicdiag/internal/text"
)

const hostPCIIDs = "/usr/share/misc/pci.ids"

// pcidbNames is the reference: pcidb parses the whole file; the subsystem
// is matched on vendor and device by hand (pcidb keeps both).
func pcidbNames(db *pcidb.PCIDB, v, d, sv, sd uint16) (vendor, device, sub string) {
	if x, ok := db.Vendors[fmt.Sprintf("%04x", v)]; ok {
		vendor = x.Name
	}
	p, ok := db.Products[fmt.Sprintf("%04x%04x", v, d)]
	if !ok {
		return vendor, "", ""
	}
	for _, s := range p.Subsystems {
		if s.VendorID == fmt.Sprintf("%04x", sv) && s.ID == fmt.Sprintf("%04x", sd) {
			sub = s.Name
			break
		}
	}
	return vendor, p.Name, sub
}

type quad struct{ v, d, sv, sd uint16 }

// snapshotIDs collects the PCI IDs of every function in testdata/snapshots.
func snapshotIDs(t *testing.T) []quad {
	var out []quad
	dirs, _ := filepath.Glob(filepath.Join(snapDir, "*", "sys", "bus", "pci", "devices", "*"))
	for _, d := range dirs {
		var q [4]uint16
		ok := true
		for i, f := range []string{"vendor", "device", "subsystem_vendor", "subsystem_device"} {
			b, err := os.ReadFile(filepath.Join(d, f))
			if err != nil {
				ok = false
				break
			}
			v, err := parseHexID(string(b), 16)
			if err != nil {
				ok = false
				break
			}
			q[i] = uint16(v)
		}
		if ok {
			out = append(out, quad{q[0], q[1], q[2], q[3]})
		}
	}
	return out
}

// TestAgainstPCIDB checks the lookup against jaypipes/pcidb on the same
// file, for every ID in the snapshots and for random IDs drawn from the file.
func TestAgainstPCIDB(t *testing.T) {
	for _, file := range []string{"testdata/pci.ids", hostPCIIDs} {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Skip(err)
			}
			db, err := pcidb.New(pcidb.WithPath(file))
			if err != nil {
				t.Fatal(err)
			}
			ids := snapshotIDs(t)
			if len(ids) < 10 {
				t.Fatalf("only %d IDs from the snapshots", len(ids))
			}
			// Random real entries: pick products and one of their subsystems.
			r := rand.New(rand.NewPCG(1, 2))
			keys := make([]string, 0, len(db.Products))
			for k := range db.Products {
				keys = append(keys, k)
			}
			for i := 0; i < 300 && len(keys) > 0; i++ {
				p := db.Products[keys[r.IntN(len(keys))]]
				var v, d, sv, sd uint16
				fmt.Sscanf(p.VendorID+p.ID, "%04x%04x", &v, &d)
				if len(p.Subsystems) > 0 {
					s := p.Subsystems[r.IntN(len(p.Subsystems))]
					fmt.Sscanf(s.VendorID+s.ID, "%04x%04x", &sv, &sd)
				}
				ids = append(ids, quad{v, d, sv, sd}, quad{v, d, sd, sv}, quad{uint16(r.Uint32()), uint16(r.Uint32()), 0, 0})
			}
			var q PCIQuery
			for _, x := range ids {
				q.Add(x.v, x.d, x.sv, x.sd, 0x020000)
			}
			n := scanPCIIDs(data, &q)
			named := 0
			for _, x := range ids {
				wv, wd, ws := pcidbNames(db, x.v, x.d, x.sv, x.sd)
				gv, gd, gs := n.Vendor(x.v), n.Device(x.v, x.d), n.subsystem(x.v, x.d, x.sv, x.sd)
				if gv != wv || gd != wd || gs != ws {
					t.Errorf("%04x:%04x %04x:%04x: got %q/%q/%q; pcidb %q/%q/%q", x.v, x.d, x.sv, x.sd, gv, gd, gs, wv, wd, ws)
				}
				if gs != "" {
					named++
				}
			}
			if named < 50 {
				t.Errorf("only %d subsystem names compared", named)
			}
		})
	}
}

// FuzzScanPCIIDs: any file is read without panic, and every name returned
// is text from that file, without its control characters (text.Clean).
func FuzzScanPCIIDs(f *testing.F) {
	f.Add([]byte("8086  Intel\n\t1521  I350\n\t\t8086 0001  I350-T4\nC 02  Network controller\n\t00  Ethernet controller\n"))
	f.Add([]byte("8086"))
	f.Add([]byte("\t\t\t\n8086  \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var q PCIQuery
		q.Add(0x8086, 0x1521, 0x8086, 0x0001, 0x020000)
		n := scanPCIIDs(b, &q)
		// A window of 24 bytes, whose edges fall inside lines, reads the
		// same names where no line is longer (cut to it otherwise).
		small, err := scanWindowed(bytes.NewReader(b), int64(len(b)), &q, 24)
		if err != nil {
			t.Fatal(err)
		}
		longest := 0
		for _, l := range bytes.Split(b, []byte("\n")) {
			longest = max(longest, len(l))
		}
		if longest < 24 && (small.Vendor(0x8086) != n.Vendor(0x8086) || small.Device(0x8086, 0x1521) != n.Device(0x8086, 0x1521) ||
			small.subsystem(0x8086, 0x1521, 0x8086, 1) != n.subsystem(0x8086, 0x1521, 0x8086, 1) || small.class(0x020000) != n.class(0x020000)) {
			t.Fatalf("a 24-byte window reads other names: %+v; %+v", small, n)
		}
		for _, s := range []string{n.Vendor(0x8086), n.Device(0x8086, 0x1521), n.subsystem(0x8086, 0x1521, 0x8086, 1), n.class(0x020000)} {
			if s != "" && !strings.Contains(text.Clean(string(b)), s) {
				t.Fatalf("name %q is not in the input", s)
			}
			if text.Clean(s) != s {
				t.Fatalf("name %q keeps control characters", s)
			}
			if strings.ContainsAny(s, "\n") {
				t.Fatalf("name %q spans lines", s)
			}
		}
	})
}

// BenchmarkPCINames is what one nicdiag run pays for names: open the host's
// pci.ids and look up one NIC.
func BenchmarkPCINames(b *testing.B) {
	if _, err := os.Stat(hostPCIIDs); err != nil {
		b.Skip(err)
	}
	var q PCIQuery
	q.Add(0x8086, 0x1521, 0x8086, 0x0001, 0x020000)
	q.Add(0x1af4, 0x1041, 0x1af4, 0x1100, 0x020000)
	for b.Loop() {
		f, err := os.Open(hostPCIIDs)
		if err != nil {
			b.Fatal(err)
		}
		n, err := readPCIIDs(f, hostPCIIDs, &q)
		f.Close()
		if err != nil || n.Device(0x8086, 0x1521) == "" {
			b.Fatal("no name", err)
		}
	}
}

// BenchmarkPCIDBNew is the cost this package avoids: a full pcidb parse.
func BenchmarkPCIDBNew(b *testing.B) {
	if _, err := os.Stat(hostPCIIDs); err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		if _, err := pcidb.New(pcidb.WithPath(hostPCIIDs)); err != nil {
			b.Fatal(err)
		}
	}
}
