package nicinfo

import (
	"errors"
	"net"

	"github.com/vishvananda/netlink"
)

// linkFacts is what the netlink dump says about one link that sysfs does
// not: its kind and, for an SR-IOV PF, its VFs' settings.
type linkFacts struct {
	kind   string
	vfs    []VFConfig
	xdp    *XDP
	tunnel *Tunnel
}

// linkInfo asks netlink for every link's kind ("veth", "bridge", "device";
// "loopback" for lo, which netlink also calls "device") and VF settings
// (the dump carries RTEXT_FILTER_VF), the facts sysfs does not hold. An
// interrupted dump is retried, and its data used if it keeps being
// interrupted.
func linkInfo() (map[string]linkFacts, error) {
	var links []netlink.Link
	var err error
	for try := 0; try < 3; try++ {
		links, err = netlink.LinkList()
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return nil, err
	}
	names := make(map[int]string, len(links))
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	out := make(map[string]linkFacts, len(links))
	for _, l := range links {
		a := l.Attrs()
		k := l.Type()
		if k == "device" && a.Flags&net.FlagLoopback != 0 {
			k = "loopback" // netlink's "device" is any link without a kind
		}
		f := linkFacts{kind: k}
		for _, v := range a.Vfs {
			f.vfs = append(f.vfs, vfFromNetlink(v))
		}
		if x := a.Xdp; x != nil && x.Attached && xdpMode(x.AttachMode) != "" {
			f.xdp = &XDP{Mode: xdpMode(x.AttachMode), ProgID: x.ProgId}
		}
		switch t := l.(type) {
		case *netlink.Vxlan:
			f.tunnel = &Tunnel{Kind: TunnelVXLAN, VNI: uint32(t.VxlanId), Port: t.Port, Link: names[t.VtepDevIndex]}
		case *netlink.Geneve:
			f.tunnel = &Tunnel{Kind: TunnelGeneve, VNI: t.ID, Port: int(t.Dport)}
		}
		out[a.Name] = f
	}
	return out, nil
}

// vfFromNetlink converts the library's VF record. The transmit cap is
// IFLA_VF_RATE's max_tx_rate, or the older IFLA_VF_TX_RATE that drivers
// without min/max rates fill.
func vfFromNetlink(v netlink.VfInfo) VFConfig {
	c := VFConfig{
		VF: v.ID, VLAN: v.Vlan, QoS: v.Qos,
		MaxTxRateMbps: int(v.MaxTxRate), MinTxRateMbps: int(v.MinTxRate),
		SpoofCheck: v.Spoofchk, Trust: v.Trust != 0, LinkState: vfLinkState(v.LinkState),
	}
	if c.MaxTxRateMbps == 0 && v.TxRate > 0 {
		c.MaxTxRateMbps = v.TxRate
	}
	if len(v.Mac) == 6 && !allZero(v.Mac) { // 00:00:00:00:00:00: none set
		c.MAC = v.Mac.String()
	}
	return c
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
