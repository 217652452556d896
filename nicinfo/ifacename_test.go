package nicinfo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nicdiag/nicdiag/option"
)

// An interface name that a terminal would not print as it is (control or
// bidirectional characters, bytes that are not UTF-8) is not read as one,
// wherever it comes from: the kernel would take it, nicdiag skips it.
func TestIfaceNameForTerminal(t *testing.T) {
	for s, want := range map[string]bool{
		"eth0": true, "enp5s0f1": true, "wlé0": true, "br-lan.10": true,
		"e\x1b[2Jx": false, "eth0\r": false, "e\u202ex": false, "e\u009bx": false, "e\xffx": false, "e\x7f": false,
	} {
		if got := validIfaceName(s); got != want {
			t.Errorf("validIfaceName(%q) = %v, want %v", s, got, want)
		}
	}
	if got := ParseBondSlaves("eth0 e\x1b[2J eth1\n"); !slices.Equal(got, []string{"eth0", "eth1"}) {
		t.Errorf("ParseBondSlaves = %q", got)
	}
	dir := copyTree(t, needSnap(t, "virtio-kvm"))
	if err := os.Symlink("../../devices/pci0000:00/0000:00:02.0/0000:01:00.0/virtio0/net/eth0",
		filepath.Join(dir, "sys/class/net/e\x1b[7mx")); err != nil {
		t.Fatal(err)
	}
	nics, err := List(context.Background(), option.Root(dir), WithPCIIDs("testdata/pci.ids"))
	if err != nil || len(nics) != 1 || nics[0].Name != "eth0" {
		t.Errorf("List = %d NICs, %v; want eth0 alone", len(nics), err)
	}
	if _, err := Get(context.Background(), "e\x1b[7mx", option.Root(dir)); !errors.Is(err, ErrNoInterface) {
		t.Errorf("Get(escape name) = %v; want ErrNoInterface", err)
	}
}
