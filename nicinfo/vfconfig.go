package nicinfo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/text"
	"github.com/nicdiag/nicdiag/pcie"
)

// NetlinkSchema is the version of the NetlinkAnswers JSON layout.
const NetlinkSchema = 1

// NetlinkAnswers is what rtnetlink (RTM_GETLINK with RTEXT_FILTER_VF)
// answered for one interface that sysfs does not hold: the settings of an
// SR-IOV physical function's virtual functions, an attached XDP program, a
// VXLAN or Geneve device's setup. On the live host nicdiag asks the
// kernel; a snapshot keeps it in netlink/IFACE.json, written only for
// interfaces that have one of them:
//
//	{
//	  "schema": 1,
//	  "vfs": [
//	    {"vf": 0, "mac": "52:54:00:aa:00:01", "max_tx_rate_mbps": 100,
//	     "spoofchk": true, "trust": false, "link_state": "auto"}
//	  ],
//	  "xdp": {"mode": "generic", "prog_id": 42},
//	  "tunnel": {"kind": "vxlan", "vni": 4096, "port": 4789, "link": "eth0"}
//	}
type NetlinkAnswers struct {
	Schema int        `json:"schema"`
	VFs    []VFConfig `json:"vfs,omitempty"`
	// XDP is the attached XDP program (IFLA_XDP); nil for none, and in
	// files that predate it.
	XDP *XDP `json:"xdp,omitempty"`
	// Tunnel is a VXLAN or Geneve device's setup; nil for every other.
	Tunnel *Tunnel `json:"tunnel,omitempty"`
}

// Empty reports whether a holds nothing worth a file.
func (a *NetlinkAnswers) Empty() bool { return len(a.VFs) == 0 && a.XDP == nil && a.Tunnel == nil }

// VFConfig is what an SR-IOV physical function's driver reports for one of
// its virtual functions (IFLA_VFINFO_LIST): the settings `ip link set PF vf
// N ...` makes and `ip link show PF` prints.
type VFConfig struct {
	// VF is the VF's index on its PF (ip link's "vf N").
	VF int `json:"vf"`
	// Function is the VF's PCI address, from the PF's virtfnN link; ""
	// when sysfs does not say (it is filled by List, not stored).
	Function pcie.Address `json:"function,omitempty"`
	MAC      string       `json:"mac,omitempty"`
	VLAN     int          `json:"vlan,omitempty"`
	QoS      int          `json:"qos,omitempty"`
	// MaxTxRateMbps is the transmit cap the PF enforces on the VF, in
	// Mb/s (IFLA_VF_RATE's max_tx_rate, or the older IFLA_VF_TX_RATE); 0
	// for none.
	MaxTxRateMbps int `json:"max_tx_rate_mbps,omitempty"`
	// MinTxRateMbps is the transmit rate guaranteed to the VF; 0 for none.
	MinTxRateMbps int  `json:"min_tx_rate_mbps,omitempty"`
	SpoofCheck    bool `json:"spoofchk"`
	Trust         bool `json:"trust"`
	// LinkState is "auto", "enable" or "disable" (IFLA_VF_LINK_STATE).
	LinkState string `json:"link_state,omitempty"`
}

// VF link states, as ip link names them.
const (
	VFLinkAuto    = "auto"
	VFLinkEnable  = "enable"
	VFLinkDisable = "disable"
)

// maxNetlinkJSON bounds one netlink/IFACE.json.
const maxNetlinkJSON = 4 << 20

// VFConfigs returns the VF settings of every interface that has VFs: from
// rtnetlink on the live host, from the snapshot's netlink/IFACE.json files
// under option.Root (a snapshot without them has none). Function is left
// empty; List fills it.
func VFConfigs(ctx context.Context, opts ...Option) (map[string][]VFConfig, error) {
	all, err := NetlinkFacts(ctx, opts...)
	if err != nil {
		return nil, err
	}
	out := map[string][]VFConfig{}
	for name, a := range all {
		if len(a.VFs) > 0 {
			out[name] = a.VFs
		}
	}
	return out, nil
}

// NetlinkFacts returns what rtnetlink says of each interface that sysfs
// does not hold (NetlinkAnswers: VFs, XDP, a tunnel's setup), for those
// that have any: from the kernel on the live host, from the snapshot's
// netlink/IFACE.json files under option.Root.
func NetlinkFacts(ctx context.Context, opts ...Option) (map[string]NetlinkAnswers, error) {
	o := applyOptions(opts)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := map[string]NetlinkAnswers{}
	if o.root.Live() {
		links, err := linkInfo()
		if err != nil {
			return nil, wrapErr(err)
		}
		for name, l := range links {
			a := NetlinkAnswers{Schema: NetlinkSchema, VFs: l.vfs, XDP: l.xdp, Tunnel: l.tunnel}
			if !a.Empty() {
				out[name] = a
			}
		}
		return out, nil
	}
	names, err := o.root.ReadDir("/netlink")
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, wrapErr(err)
	}
	for _, n := range names {
		iface, ok := strings.CutSuffix(n, ".json")
		if !ok || !validIfaceName(iface) {
			continue
		}
		a, err := readNetlinkFile(o.root, iface)
		if err != nil {
			return nil, wrapErr(err)
		}
		if !a.Empty() {
			out[iface] = *a
		}
	}
	return out, nil
}

// readNetlinkFile reads a snapshot's netlink/IFACE.json; an absent file is
// empty answers.
func readNetlinkFile(root fsroot.Root, iface string) (*NetlinkAnswers, error) {
	b, err := root.ReadFileMax("/netlink/"+iface+".json", maxNetlinkJSON)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &NetlinkAnswers{Schema: NetlinkSchema}, nil
	case errors.Is(err, fsroot.ErrTooLarge):
		return nil, fmt.Errorf("netlink/%s.json: %w: larger than %d bytes", iface, ErrMalformed, maxNetlinkJSON)
	case err != nil:
		return nil, err
	}
	a, err := parseNetlinkAnswers(b)
	if err != nil {
		return nil, fmt.Errorf("netlink/%s.json: %w", iface, err)
	}
	return a, nil
}

// parseNetlinkAnswers decodes a netlink/IFACE.json document. It refuses a
// schema newer than NetlinkSchema and values outside their kernel ranges
// (VF index, VLAN 0-4095, QoS 0-7, rates in Mb/s as u32, link states).
func parseNetlinkAnswers(b []byte) (*NetlinkAnswers, error) {
	var a NetlinkAnswers
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("%w: netlink answers: %v", ErrMalformed, err)
	}
	if a.Schema < 1 || a.Schema > NetlinkSchema {
		return nil, fmt.Errorf("%w: netlink answers schema %d (this nicdiag reads %d)", ErrMalformed, a.Schema, NetlinkSchema)
	}
	if err := a.checkOverlay(); err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	for i := range a.VFs {
		v := &a.VFs[i]
		switch {
		case v.VF < 0 || v.VF > 1<<16 || seen[v.VF]:
			return nil, fmt.Errorf("%w: VF index %d", ErrMalformed, v.VF)
		case v.VLAN < 0 || v.VLAN > 4095 || v.QoS < 0 || v.QoS > 7:
			return nil, fmt.Errorf("%w: VF %d VLAN %d QoS %d", ErrMalformed, v.VF, v.VLAN, v.QoS)
		case !u32(v.MaxTxRateMbps) || !u32(v.MinTxRateMbps):
			return nil, fmt.Errorf("%w: VF %d rates %d/%d Mb/s", ErrMalformed, v.VF, v.MinTxRateMbps, v.MaxTxRateMbps)
		}
		switch v.LinkState {
		case "", VFLinkAuto, VFLinkEnable, VFLinkDisable:
		default:
			return nil, fmt.Errorf("%w: VF %d link state %q", ErrMalformed, v.VF, text.Clip(v.LinkState))
		}
		seen[v.VF] = true
		v.MAC = text.Clip(text.Clean(v.MAC))
		if v.Function != "" && !v.Function.Valid() {
			v.Function = ""
		}
	}
	return &a, nil
}

// u32 reports whether v fits the kernel's u32.
func u32(v int) bool { return v >= 0 && int64(v) <= math.MaxUint32 }

// vfLinkState names IFLA_VF_LINK_STATE's values.
func vfLinkState(s uint32) string {
	switch s {
	case 0:
		return VFLinkAuto
	case 1:
		return VFLinkEnable
	case 2:
		return VFLinkDisable
	}
	return ""
}

// joinVFs ties each VF to its PCI function through the PF's virtfnN
// links.
func (r *reader) joinVFs(pciDir string, vfs []VFConfig) {
	if len(vfs) == 0 {
		return
	}
	out := make([]VFConfig, len(vfs))
	copy(out, vfs)
	for i := range out {
		if pciDir == "" {
			break
		}
		if t, err := r.root.LinkBase(pciDir + "/virtfn" + strconv.Itoa(out[i].VF)); err == nil && pcie.Address(t).Valid() {
			out[i].Function = pcie.Address(t)
		}
	}
	r.nic.VFConfig = out
}
