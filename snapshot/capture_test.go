package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// liveOnly blanks the fields documented as possibly differing between a
// host and its snapshot (NIC.Kind: netlink on the host, uevent DEVTYPE in a
// snapshot) and the pci.config note, which says "needs root" on a host and
// "N bytes in the snapshot" in one. LossStats are counters (and the
// default live listing reads none).
func liveOnly(nics []nicinfo.NIC) []nicinfo.NIC {
	for i := range nics {
		nics[i].Kind = ""
		nics[i].LossStats = nil
		var keep []string
		for _, m := range nics[i].Missing {
			if !strings.HasPrefix(m, "pci.config:") {
				keep = append(keep, m)
			}
		}
		nics[i].Missing = keep
	}
	return nics
}

func asJSON(t *testing.T, v any) string {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The live host and a .tar.gz snapshot of it list the same NICs, field for
// field.
func TestLiveRoundTrip(t *testing.T) {
	if _, err := os.Stat("/sys/class/net"); err != nil {
		t.Skip("no sysfs")
	}
	ctx := context.Background()
	before, err := nicinfo.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	m, err := CaptureArchive(ctx, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Interfaces) != len(before) {
		t.Errorf("manifest lists %v; host has %d interfaces", m.Interfaces, len(before))
	}
	after, err := nicinfo.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "host.tar.gz")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := nicinfo.List(ctx, option.Root(s.Dir))
	if err != nil {
		t.Fatal(err)
	}
	// Counters move between two reads of a live host; compare to whichever
	// live listing matches (none of the listed fields are counters).
	g := asJSON(t, liveOnly(got))
	if g != asJSON(t, liveOnly(before)) && g != asJSON(t, liveOnly(after)) {
		t.Errorf("snapshot lists\n%s\nlive host lists\n%s", g, asJSON(t, liveOnly(after)))
	}
}

// Capturing from a snapshot directory reproduces its listing: every file
// List reads is captured, symlinks included, and so are the platform's
// signals (ReadPlatform) and the VF settings of netlink/IFACE.json.
func TestCaptureFromRoot(t *testing.T) {
	for _, name := range []string{"xeon-i350-sriov-bcm5709", "virtio-kvm", "82576-minipcie-x1", "qemu-lab-links", "qemu-lab-igb-vfs"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join("..", "testdata", "snapshots", name)
			if _, err := os.Stat(src); err != nil {
				t.Skip(err)
			}
			ctx := context.Background()
			dst := filepath.Join(t.TempDir(), "copy")
			if _, err := Capture(ctx, dst, FromRoot(src)); err != nil {
				t.Fatal(err)
			}
			ids := nicinfo.WithPCIIDs("../nicinfo/testdata/pci.ids")
			want, err := nicinfo.List(ctx, option.Root(src), ids)
			if err != nil {
				t.Fatal(err)
			}
			got, err := nicinfo.List(ctx, option.Root(dst), ids)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatal("fixture lists no NICs")
			}
			if asJSON(t, got) != asJSON(t, want) {
				t.Errorf("captured copy lists\n%s\nsource lists\n%s", asJSON(t, got), asJSON(t, want))
			}
			if p, q := nicinfo.ReadPlatform(ctx, option.Root(dst)), nicinfo.ReadPlatform(ctx, option.Root(src)); p != q {
				t.Errorf("captured platform %+v, source %+v", p, q)
			}
			// Links are relative and stay inside.
			l, err := os.Readlink(filepath.Join(dst, "sys/class/net", want[0].Name))
			if err != nil || filepath.IsAbs(l) || !strings.HasPrefix(l, "../../devices/") {
				t.Errorf("class/net link %q, %v", l, err)
			}
		})
	}
}

// Pack writes relative names and Unpack takes them back.
func TestPackUnpack(t *testing.T) {
	src := filepath.Join("..", "testdata", "snapshots", "virtio-kvm")
	if _, err := os.Stat(src); err != nil {
		t.Skip(err)
	}
	var buf bytes.Buffer
	if err := Pack(context.Background(), &buf, src); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := Unpack(context.Background(), &buf, dst); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(src, "sys/class/net/eth0/address"))
	b, err := os.ReadFile(filepath.Join(dst, "sys/class/net/eth0/address"))
	if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("address through the link: %q vs %q (%v)", a, b, err)
	}
}
