package nicdiag

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/netnstest"
	"github.com/nicdiag/nicdiag/option"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestKernelStackWalkDown stacks interfaces in a throwaway network
// namespace and reads its sysfs as a root: a bridge over a veth (the
// kernel's lower_IFACE link names the port), and, where the kernel has the
// modules, a VLAN over the veth's peer and an 802.3ad bond over two more
// veths with layer2 hashing. Naming the upper interface selects what it
// sits on; the bond reads as 802.3ad/layer2 with its members and gives
// bond.single_flow at warn. This test VM's kernel has no bonding or 8021q
// (`ip link add type bond` answers "Unknown device type"): those parts log
// and are skipped, and check_bond_test.go's hand-built trees cover them.
func TestKernelStackWalkDown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace and a sysfs mount")
	}
	root := t.TempDir()
	sys := filepath.Join(root, "sys")
	if err := os.Mkdir(sys, 0o755); err != nil {
		t.Fatal(err)
	}
	vlanE, bondE := stackedLinks(t, sys)
	vlan, bond := vlanE == nil, bondE == nil
	selected := func(name string) []string {
		h, err := Inspect(context.Background(), option.Root(root), WithInterfaces(name), WithInventoryOnly())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range h.Selected {
			out = append(out, n.Name)
		}
		return out
	}
	if got := strings.Join(selected("ndwbr0"), " "); got != "ndwbr0 ndw0" {
		t.Errorf("ndwbr0 selects %q, want its port ndw0 too", got)
	}
	if !vlan {
		t.Logf("no VLAN on this kernel: %v", vlanE)
	} else if got := strings.Join(selected("ndw1.10"), " "); got != "ndw1.10 ndw1" {
		t.Errorf("ndw1.10 selects %q", got)
	}
	if !bond {
		t.Logf("no bonding on this kernel: %v", bondE)
		return
	}
	h, err := Inspect(context.Background(), option.Root(root), WithInterfaces("ndwbond0"))
	if err != nil {
		t.Fatal(err)
	}
	b := h.named("ndwbond0")
	if b.Bond == nil || b.Bond.Mode != "802.3ad" || b.Bond.HashPolicy != "layer2" || !slices.Equal(b.Bond.Slaves, []string{"ndwm0", "ndwm2"}) {
		t.Fatalf("bond %+v", b.Bond)
	}
	var flow *finding.Finding
	for _, f := range h.Check(Checkers()...) {
		if f.Code == finding.BondSingleFlow {
			flow = &f
		}
	}
	if flow == nil || flow.Severity != finding.Warn {
		t.Errorf("bond.single_flow %v", flow)
	}
}

// stackedLinks makes, in a throwaway namespace whose sysfs it mounts
// read-only at sys, the bridge ndwbr0 over the veth ndw0–ndw1, and where
// the kernel can, the VLAN ndw1.10 and the 802.3ad bond ndwbond0 over
// ndwm0 and ndwm2: vlanE and bondE say why one could not be made. It
// skips the test when the bridge or the mount fails.
func stackedLinks(t *testing.T, sys string) (vlanE, bondE error) {
	t.Helper()
	var (
		setupErr error
		mounted  bool
	)
	vlanE, bondE = errors.New("not made"), errors.New("not made")
	ns := netnstest.New(t)
	netnstest.Do(t, ns, func() {
		attrs := func(name string) netlink.LinkAttrs {
			la := netlink.NewLinkAttrs()
			la.Name = name
			return la
		}
		br := &netlink.Bridge{LinkAttrs: attrs("ndwbr0")}
		veth := &netlink.Veth{LinkAttrs: attrs("ndw0"), PeerName: "ndw1"}
		if setupErr = netlink.LinkAdd(br); setupErr != nil {
			return
		}
		if setupErr = netlink.LinkAdd(veth); setupErr != nil {
			return
		}
		if setupErr = netlink.LinkSetMaster(veth, br); setupErr != nil {
			return
		}
		peer, err := netlink.LinkByName("ndw1")
		if err != nil {
			setupErr = err
			return
		}
		va := attrs("ndw1.10")
		va.ParentIndex = peer.Attrs().Index
		vlanE = netlink.LinkAdd(&netlink.Vlan{LinkAttrs: va, VlanId: 10})
		b := netlink.NewLinkBond(attrs("ndwbond0"))
		b.Mode = netlink.BOND_MODE_802_3AD
		b.XmitHashPolicy = netlink.BOND_XMIT_HASH_POLICY_LAYER2
		if bondE = netlink.LinkAdd(b); bondE == nil {
			for _, m := range []string{"ndwm0", "ndwm2"} {
				v := &netlink.Veth{LinkAttrs: attrs(m), PeerName: m + "p"}
				if bondE = netlink.LinkAdd(v); bondE == nil {
					bondE = netlink.LinkSetBondSlave(v, b)
				}
				if bondE != nil {
					break
				}
			}
		}
		if setupErr = unix.Mount("sysfs", sys, "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); setupErr != nil {
			return
		}
		mounted = true
	})
	if mounted {
		t.Cleanup(func() { unix.Unmount(sys, unix.MNT_DETACH) })
	}
	if setupErr != nil {
		t.Skipf("no bridge over veth in a namespace with its sysfs: %v", setupErr)
	}
	return vlanE, bondE
}
