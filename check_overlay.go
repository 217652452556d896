package nicdiag

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
)

// tunnelOverhead is what VXLAN and Geneve add to an inner frame over an
// IPv4 underlay: outer Ethernet 14, IPv4 20, UDP 8 and the 8-byte header
// (Geneve's options come on top); 70 over IPv6.
const tunnelOverhead = 50

// nativeXDP are the drivers with native (driver-mode) XDP: they implement
// ndo_bpf in Linux 6.1's drivers/net.
var nativeXDP = []string{"ixgbe", "ixgbevf", "i40e", "ice", "igb", "igc", "mlx4_en", "mlx4_core", "mlx5_core",
	"bnxt_en", "nfp", "qede", "ena", "virtio_net", "veth", "tun", "sfc", "hv_netvsc", "atlantic", "stmmac",
	"mvneta", "mvpp2", "fec", "tsnep", "nicvf", "dpaa2-eth", "fsl_dpaa_eth", "enetc", "lan966x-switch", "cpsw"}

// overlayCheck: VXLAN and Geneve devices (nic.tunnel_offload) and XDP in
// generic mode (nic.xdp_generic).
//
//   - nic.tunnel_offload: an inner MTU that the underlay cannot carry with
//     the tunnel's 50 bytes (warn: the outer packets are fragmented or
//     dropped), or transmit checksum offload (tx-checksum-ip-generic) on a
//     VXLAN device, which has cut single tunnels to 50-300 Mbit/s on
//     6.12 kernels and broken checksums under MASQUERADE --random-fully
//     before 5.7 (info: most hosts run fine with it).
//   - nic.xdp_generic: an XDP program attached in generic (skb) mode to a
//     NIC whose driver runs XDP natively: warn at 10 Gb/s or more, info
//     below.
var overlayCheck = Checker{
	Name:  "overlays",
	Codes: []finding.Code{finding.NICTunnelOffload, finding.NICXDPGeneric},
	Run: func(h *Host) []finding.Finding {
		var out []finding.Finding
		for _, n := range h.NICs {
			if f, ok := h.tunnelOffload(n); ok {
				out = append(out, f)
			}
		}
		for _, n := range h.Selected {
			if f, ok := h.xdpGeneric(n); ok {
				out = append(out, f)
			}
		}
		return out
	},
}

// tunnelKind is "vxlan" or "geneve" for a tunnel device, "" otherwise.
func tunnelKind(n *NIC) string {
	if n.Tunnel != nil {
		return n.Tunnel.Kind
	}
	if n.Kind == nicinfo.TunnelVXLAN || n.Kind == nicinfo.TunnelGeneve {
		return n.Kind
	}
	return ""
}

func (h *Host) tunnelOffload(n *NIC) (finding.Finding, bool) {
	kind := tunnelKind(n)
	if kind == "" || !n.Netdev() {
		return finding.Finding{}, false
	}
	ev := map[string]string{"kind": kind, "mtu": strconv.Itoa(n.MTU)}
	var says, fixes []string
	sev := finding.Severity(-1)
	if under, mtu, ok := h.underlay(n); ok && n.MTU+tunnelOverhead > mtu {
		sev = finding.Warn
		ev["underlay"], ev["underlay_mtu"] = under, strconv.Itoa(mtu)
		says = append(says, fmt.Sprintf("its MTU of %d needs %d bytes on the underlay with the tunnel's %d, but %s carries %d: full-size inner packets are fragmented or dropped",
			n.MTU, n.MTU+tunnelOverhead, tunnelOverhead, under, mtu))
		fixes = append(fixes, fmt.Sprintf("`ip link set %s mtu %d` (or an underlay MTU of %d: `ip link set %s mtu %d`, where the network carries it)",
			n.Name, mtu-tunnelOverhead, n.MTU+tunnelOverhead, under, n.MTU+tunnelOverhead))
	}
	if f, ok := n.Features[nicinfo.FeatureTXChecksumIP]; ok && f.Active && !f.Fixed && kind == nicinfo.TunnelVXLAN {
		sev = max(sev, finding.Info)
		ev[nicinfo.FeatureTXChecksumIP] = featureState(f)
		s := "transmit checksum offload (tx-checksum-ip-generic) is on: on some kernels it cuts a VXLAN tunnel to 50-300 Mbit/s (Calico's single vxlan.calico on 6.12 kernels, projectcalico/calico#11435) or, with iptables MASQUERADE --random-fully before Linux 5.7, sends packets with bad checksums that the receiver drops (projectcalico/felix#2811)"
		if maj, min, ok := nicinfo.KernelVersion(h.Facts.KernelRelease); ok {
			ev["kernel"] = h.Facts.KernelRelease
			if maj < 5 || maj == 5 && min < 7 {
				s += "; this kernel, " + h.Facts.KernelRelease + ", is one of those"
			}
		}
		says = append(says, s)
		fixes = append(fixes, fmt.Sprintf("if the tunnel is slower than its underlay, `ethtool -K %s tx-checksum-ip-generic off` and measure again (Calico: FelixConfiguration featureDetectOverride \"ChecksumOffloadBroken=true\")", n.Name))
	}
	if sev < 0 {
		return finding.Finding{}, false
	}
	if t := n.Tunnel; t != nil {
		ev["vni"], ev["port"] = strconv.FormatUint(uint64(t.VNI), 10), strconv.Itoa(t.Port)
	}
	return finding.Finding{
		Code:     finding.NICTunnelOffload,
		Severity: sev,
		Subject:  n.Name,
		Summary:  fmt.Sprintf("%s (%s): %s.", n.Name, kind, joinAnd(says)),
		Fix:      sentence(joinAnd(fixes)),
		Evidence: ev,
	}, true
}

// underlay is the device a tunnel sends through and its MTU: the VXLAN's
// own link when netlink named one, else the physical NIC with a carrier
// and the largest MTU (the best any route could do); ok is false when
// none is known.
func (h *Host) underlay(n *NIC) (string, int, bool) {
	if t := n.Tunnel; t != nil && t.Link != "" {
		if l := h.named(t.Link); l != nil && l.MTU > 0 {
			return l.Name, l.MTU, true
		}
	}
	best, mtu := "", 0
	for _, o := range h.NICs {
		if o.Physical() && o.Netdev() && o.OperState == nicinfo.OperUp && o.MTU > mtu {
			best, mtu = o.Name, o.MTU
		}
	}
	return best, mtu, mtu > 0
}

func (h *Host) xdpGeneric(n *NIC) (finding.Finding, bool) {
	x := n.XDP
	if x == nil || x.Mode != nicinfo.XDPGeneric || !n.Physical() || !slices.Contains(nativeXDP, n.Driver) {
		return finding.Finding{}, false
	}
	speed, basis := h.judgedSpeed(n)
	sev := finding.Info
	at := "an unknown speed"
	if speed > 0 {
		at = atSpeed(speed, basis)
		if speed >= offloadWarnMbps {
			sev = finding.Warn
		}
	}
	return finding.Finding{
		Code:     finding.NICXDPGeneric,
		Severity: sev,
		Subject:  n.Name,
		Summary: fmt.Sprintf("%s runs its XDP program (id %d) in generic mode, after the kernel has built an skb for every frame, though its driver %s runs XDP in its own receive path: at %s that costs an allocation and the stack's entry work per packet that native XDP avoids, several times the per-packet cost.",
			n.Name, x.ProgID, n.Driver, at),
		Fix: fmt.Sprintf("Attach it natively: `ip link set dev %s xdpgeneric off`, then `ip link set dev %s xdpdrv obj PROG.o sec SECTION` (libxdp: `xdp-loader load -m native %s PROG.o`); the loader fell back to generic mode if the driver refused (an MTU above what native XDP takes, too few queues).",
			n.Name, n.Name, n.Name),
		Evidence: map[string]string{"mode": x.Mode, "prog_id": strconv.FormatUint(uint64(x.ProgID), 10), "driver": n.Driver, "link_mbps": strconv.Itoa(n.Link.SpeedMbps)},
	}, true
}
