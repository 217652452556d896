package nicinfo

import (
	"context"
	"net"
	"testing"

	"github.com/nicdiag/nicdiag/internal/netnstest"
	"github.com/vishvananda/netlink"
)

// The rtnetlink dump on the real kernel, in a throwaway namespace with a
// veth pair: kinds come back, and links without VFs have no VF settings.
func TestKernelLinkInfo(t *testing.T) {
	var links map[string]linkFacts
	var vfs map[string][]VFConfig
	var err, vfErr error
	ns := netnstest.New(t)
	netnstest.Do(t, ns, func() {
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "nd-vf0"}, PeerName: "nd-vf1"}
		if e := netlink.LinkAdd(veth); e != nil {
			err = e
			return
		}
		links, err = linkInfo()
		vfs, vfErr = VFConfigs(context.Background())
	})
	if err != nil {
		t.Skipf("no namespace or veth (needs root): %v", err)
	}
	for _, name := range []string{"nd-vf0", "nd-vf1"} {
		if l := links[name]; l.kind != "veth" || l.vfs != nil {
			t.Errorf("%s: %+v", name, l)
		}
	}
	if links["lo"].kind != "loopback" {
		t.Errorf("lo: %+v", links["lo"])
	}
	if vfErr != nil || len(vfs) != 0 {
		t.Errorf("VFConfigs: %v %+v", vfErr, vfs)
	}
}

// The library's VF record as the kernel fills it for an igb PF after
// `ip link set eth0 vf 0 max_tx_rate 100` (the QEMU lab's igb boot), and
// for a driver that fills only the old IFLA_VF_TX_RATE.
func TestVFFromNetlink(t *testing.T) {
	mac, _ := net.ParseMAC("00:00:00:00:00:00")
	got := vfFromNetlink(netlink.VfInfo{ID: 0, Mac: mac, TxRate: 100, MaxTxRate: 100, Spoofchk: true, LinkState: 0})
	want := VFConfig{VF: 0, MaxTxRateMbps: 100, SpoofCheck: true, LinkState: VFLinkAuto}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	mac, _ = net.ParseMAC("52:54:00:aa:00:01")
	got = vfFromNetlink(netlink.VfInfo{ID: 3, Mac: mac, Vlan: 10, Qos: 2, TxRate: 500, Trust: 1, LinkState: 2})
	want = VFConfig{VF: 3, MAC: "52:54:00:aa:00:01", VLAN: 10, QoS: 2, MaxTxRateMbps: 500, Trust: true, LinkState: VFLinkDisable}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
