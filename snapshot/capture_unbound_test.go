package snapshot

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// A port bound to vfio-pci has no netdev, so nothing under /sys/class/net
// leads to it: the capture must still copy it (modalias included, which
// ghw needs) with its path to the root port, through a .tar.gz as well.
func TestCaptureKeepsNoNetdevFunction(t *testing.T) {
	src := filepath.Join("..", "testdata", "snapshots", "i350-dpdk-vfio")
	if _, err := os.Stat(src); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	dst := filepath.Join(t.TempDir(), "copy")
	if _, err := Capture(ctx, dst, FromRoot(src)); err != nil {
		t.Fatal(err)
	}
	fn := "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.1"
	for _, f := range []string{fn + "/modalias", "sys/devices/pci0000:00/0000:00:1c.0/modalias", fn + "/config", fn + "/current_link_speed"} {
		a, _ := os.ReadFile(filepath.Join(src, f))
		b, err := os.ReadFile(filepath.Join(dst, f))
		if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: captured %q, source %q (%v)", f, b, a, err)
		}
	}
	var packed bytes.Buffer
	if err := Pack(ctx, &packed, dst); err != nil {
		t.Fatal(err)
	}
	unpacked := t.TempDir()
	if err := Unpack(ctx, &packed, unpacked); err != nil {
		t.Fatal(err)
	}
	ids := nicinfo.WithPCIIDs("../nicinfo/testdata/pci.ids")
	want, err := nicinfo.NoNetdev(ctx, option.Root(src), ids)
	if err != nil || len(want) != 1 {
		t.Fatalf("source: %v %+v", err, want)
	}
	for _, root := range []string{dst, unpacked} {
		got, err := nicinfo.NoNetdev(ctx, option.Root(root), ids)
		if err != nil {
			t.Fatal(err)
		}
		if asJSON(t, got) != asJSON(t, want) {
			t.Errorf("%s lists\n%s\nsource lists\n%s", root, asJSON(t, got), asJSON(t, want))
		}
	}
}
