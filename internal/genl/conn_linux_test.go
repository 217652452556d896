package genl

import (
	"errors"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// FamilyID asks the running kernel: nlctrl is itself (GENL_ID_CTRL), the
// families the sampler uses have the ids package netlink's GenlFamilyGet
// (the oracle) finds, and an unknown one is ENOENT. The same Conn answers
// every request: replies are matched by sequence number.
func TestKernelFamilyID(t *testing.T) {
	c, err := Dial(unix.NETLINK_GENERIC)
	if err != nil {
		t.Skip("no generic netlink:", err)
	}
	defer c.Close()
	if id, err := c.FamilyID("nlctrl"); err != nil || id != ctrlID {
		t.Fatalf("nlctrl: %d, %v; want %d", id, err, ctrlID)
	}
	for _, name := range []string{"ethtool", "netdev"} {
		want, werr := netlink.GenlFamilyGet(name)
		got, err := c.FamilyID(name)
		switch {
		case werr != nil:
			if err == nil {
				t.Errorf("%s: id %d here, package netlink: %v", name, got, werr)
			}
		case err != nil || got != want.ID:
			t.Errorf("%s: %d, %v; package netlink %d", name, got, err, want.ID)
		}
	}
	if _, err := c.FamilyID("nicdiag-none"); !errors.Is(err, unix.ENOENT) {
		t.Errorf("unknown family: %v, want ENOENT", err)
	}
	if _, err := c.FamilyID("nlctrl"); err != nil {
		t.Errorf("after an error: %v", err)
	}
}
