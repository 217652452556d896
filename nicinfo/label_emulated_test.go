package nicinfo

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicdiag/nicdiag/option"
)

// QEMU's e1000e presents Intel's 82574L with subsystem 8086:0000, its
// subsys_ven and subsys defaults (QEMU's hw/net/e1000e.c). On the QEMU
// lab guest (DMI sys_vendor "QEMU") that is the model, labelled emulated
// like the e1000 next to it; the same IDs off a QEMU guest (the chip's
// own default subsystem), or with a board's subsystem, are a real chip.
func TestLabelQEMUE1000e(t *testing.T) {
	const e1000e = "sys/devices/pci0000:00/0000:00:10.0/0000:01:00.0"
	for _, tc := range []struct {
		name     string
		edit     func(t *testing.T, dir string)
		label    string
		emulator string
	}{
		{"QEMU guest", nil, LabelEmulated, HypervisorQEMU},
		{"KVM product name", func(t *testing.T, dir string) {
			write(t, dir, "sys/class/dmi/id/sys_vendor", "Red Hat\n")
			write(t, dir, "sys/class/dmi/id/product_name", "KVM\n")
		}, LabelEmulated, HypervisorQEMU},
		{"no DMI", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "sys/class/dmi/id/sys_vendor"))
			os.Remove(filepath.Join(dir, "sys/class/dmi/id/product_name"))
		}, "", ""},
		{"another vendor's machine", func(t *testing.T, dir string) {
			write(t, dir, "sys/class/dmi/id/sys_vendor", "Supermicro\n")
			write(t, dir, "sys/class/dmi/id/product_name", "X8SIL\n")
		}, "", ""},
		{"a board's subsystem", func(t *testing.T, dir string) {
			write(t, dir, e1000e+"/subsystem_device", "0xa01f\n")
		}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTree(t, needSnap(t, "qemu-lab-links"))
			if tc.edit != nil {
				tc.edit(t, dir)
			}
			n, err := Get(context.Background(), "eth1", option.Root(dir), WithPCIIDs("testdata/pci.ids"))
			if err != nil {
				t.Fatal(err)
			}
			if got := Label(*n); got != tc.label || n.PCI.Emulator != tc.emulator {
				t.Errorf("eth1 (%s, subsystem %s): label %q emulator %q; want %q %q", n.PCI.PCIID, n.PCI.SubsystemID, got, n.PCI.Emulator, tc.label, tc.emulator)
			}
			// The e1000 carries QEMU's subsystem 1af4:1100: emulated whatever DMI says.
			if e, err := Get(context.Background(), "eth0", option.Root(dir)); err != nil || Label(*e) != LabelEmulated || e.PCI.Emulator != "" {
				t.Errorf("eth0: %+v, %v; want emulated by its subsystem", e, err)
			}
		})
	}
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
