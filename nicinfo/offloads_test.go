package nicinfo

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
)

// featureStrings lays names out as ETHTOOL_GSTRINGS does: 32 NUL-padded
// bytes each.
func featureStrings(names ...string) []byte {
	b := make([]byte, len(names)*featureStringBytes)
	for i, n := range names {
		copy(b[i*featureStringBytes:], n)
	}
	return b
}

// The kernel's feature strings start with these (netdev_features_strings,
// NETIF_F_*_BIT order in include/linux/netdev_features.h); indexes past 32
// land in the second block.
func TestDecodeFeatures(t *testing.T) {
	names := make([]string, 40)
	for i := range names {
		names[i] = "other-" + string(rune('a'+i%26))
	}
	names[0], names[1], names[3] = FeatureScatterGather, FeatureTXChecksumIPv4, FeatureTXChecksumIPv6
	names[14], names[16] = FeatureGRO, FeatureTSO
	names[33], names[39] = FeatureLRO, FeatureRXChecksum
	bit := func(i int) uint32 { return 1 << (i % 32) }
	// block 0: available, requested, active, never_changed; block 1 the same
	blocks := []uint32{
		bit(0) | bit(14) | bit(16), // SG, GRO, TSO changeable; csums not
		bit(0) | bit(16),           // SG, TSO requested
		bit(0) | bit(1),            // SG, csum-ipv4 on; TSO dropped, GRO off
		0,
		bit(33) | bit(39), // LRO, rx-checksum changeable
		bit(39),
		bit(39),
		bit(33), // LRO never changes
	}
	got := decodeFeatures(names, blocks)
	want := map[string]Feature{
		FeatureScatterGather:  {Active: true, Requested: true},
		FeatureTXChecksumIPv4: {Active: true, Fixed: true},
		FeatureTXChecksumIPv6: {Fixed: true},
		FeatureGRO:            {},
		FeatureTSO:            {Requested: true},
		FeatureLRO:            {Fixed: true},
		FeatureRXChecksum:     {Active: true, Requested: true},
	}
	if len(got) != len(want) {
		t.Errorf("got %d features %v, want %d", len(got), got, len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %+v, want %+v", k, got[k], w)
		}
	}
	// The kernel filled one block only: the second block's names are out.
	if got := decodeFeatures(names, blocks[:4]); len(got) != 5 {
		t.Errorf("features past the filled block decoded: %v", got)
	}
}

func TestParseFeatureStrings(t *testing.T) {
	b := featureStrings("rx-gro", "", "tx-checksum-ip-generic")
	b[featureStringBytes+3] = 'x' // a name after the NUL is not part of slot 1
	names, err := parseFeatureStrings(b, 3)
	if err != nil || len(names) != 3 || names[0] != "rx-gro" || names[1] != "" || names[2] != "tx-checksum-ip-generic" {
		t.Errorf("%q %v", names, err)
	}
	full := featureStrings(strings.Repeat("a", 40)) // no NUL in 32 bytes: cut at 32
	if names, err := parseFeatureStrings(full, 1); err != nil || names[0] != strings.Repeat("a", 32) {
		t.Errorf("%q %v", names, err)
	}
	for _, n := range []int{-1, 4, maxFeatureStrings + 1} {
		if _, err := parseFeatureStrings(b, n); !errors.Is(err, ErrMalformed) {
			t.Errorf("n=%d: %v", n, err)
		}
	}
}

// nlattr appends one netlink attribute (4-byte header, data, padding to 4).
func nlattr(b []byte, typ uint16, data []byte) []byte {
	h := make([]byte, 4)
	binary.NativeEndian.PutUint16(h, uint16(4+len(data)))
	binary.NativeEndian.PutUint16(h[2:], typ)
	b = append(append(b, h...), data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func le32(v uint32) []byte { b := make([]byte, 4); binary.NativeEndian.PutUint32(b, v); return b }

// An igb reply as the kernel builds it (coalesce_fill_reply): the header
// nest, then rx-usecs and tx-usecs (its supported_coalesce_params is
// ETHTOOL_COALESCE_USECS), every unsupported zero left out.
func TestParseCoalesceAttrs(t *testing.T) {
	hdr := nlattr(nlattr(nil, 1, le32(2)), 2, []byte("eth0\x00"))
	b := nlattr(nil, 1|0x8000, hdr)
	b = nlattr(b, coalesceAttrRXUsecs, le32(0))
	b = nlattr(b, coalesceAttrTXUsecs, le32(3))
	b = nlattr(b, 24, []byte{1}) // use_cqe_mode_tx: not kept
	c, err := parseCoalesceAttrs(b)
	if err != nil {
		t.Fatal(err)
	}
	if c.RXUsecs == nil || *c.RXUsecs != 0 || c.TXUsecs == nil || *c.TXUsecs != 3 ||
		c.RXFrames != nil || c.TXFrames != nil || c.AdaptiveRX != nil || c.AdaptiveTX != nil || c.Source != CoalesceNetlink {
		t.Errorf("%+v", c)
	}
	// mlx5: frames and adaptive flags too
	b = nlattr(nil, coalesceAttrRXUsecs, le32(8))
	b = nlattr(b, coalesceAttrRXFrames, le32(128))
	b = nlattr(b, coalesceAttrAdaptiveRX, []byte{1})
	b = nlattr(b, coalesceAttrAdaptiveTX, []byte{0})
	c, err = parseCoalesceAttrs(b)
	if err != nil || *c.RXUsecs != 8 || *c.RXFrames != 128 || !*c.AdaptiveRX || *c.AdaptiveTX {
		t.Errorf("%+v %v", c, err)
	}
	for name, bad := range map[string][]byte{
		"truncated header":   {8, 0},
		"length past end":    nlattr(nil, coalesceAttrRXUsecs, le32(1))[:6],
		"length under 4":     {2, 0, 2, 0},
		"u32 of 2 bytes":     nlattr(nil, coalesceAttrRXUsecs, []byte{1, 2}),
		"flag of 4 bytes":    nlattr(nil, coalesceAttrAdaptiveRX, le32(1)),
		"u32 of 8 bytes":     nlattr(nil, coalesceAttrTXFrames, append(le32(1), le32(2)...)),
		"trailing 2 bytes":   append(nlattr(nil, coalesceAttrRXUsecs, le32(1)), 1, 0),
		"zero-length middle": append([]byte{0, 0, 0, 0}, nlattr(nil, coalesceAttrRXUsecs, le32(1))...),
	} {
		if _, err := parseCoalesceAttrs(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if c, err := parseCoalesceAttrs(nil); err != nil || c.RXUsecs != nil {
		t.Errorf("empty reply: %+v %v", c, err)
	}
}

func TestCoalesceFromIoctl(t *testing.T) {
	var w [coalesceWords]uint32
	w[1], w[2], w[5], w[6], w[10], w[11] = 50, 1, 100, 32, 1, 0
	c := coalesceFromIoctl(&w)
	if *c.RXUsecs != 50 || *c.RXFrames != 1 || *c.TXUsecs != 100 || *c.TXFrames != 32 || !*c.AdaptiveRX || *c.AdaptiveTX || c.Source != CoalesceIoctl {
		t.Errorf("%+v", c)
	}
}

// ethtool/IFACE.json files written before Features and Coalesce existed
// read as before, with both nil; new ones keep the judged features only.
func TestEthtoolAnswersFeaturesOptional(t *testing.T) {
	ctx := context.Background()
	for _, snap := range []string{"x722-lewisburg", "82576-minipcie-x1", "virtio-kvm", "rtl8156-cdc-ncm"} {
		dir := filepath.Join(snapDir, snap)
		ents, err := os.ReadDir(filepath.Join(dir, "ethtool"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			iface := strings.TrimSuffix(e.Name(), ".json")
			a, err := EthtoolFiles(dir).Answers(ctx, iface)
			if err != nil {
				t.Fatalf("%s/%s: %v", snap, iface, err)
			}
			if a.Features != nil || a.Coalesce != nil {
				t.Errorf("%s/%s: features %v coalesce %+v from an old file", snap, iface, a.Features, a.Coalesce)
			}
			n, err := Get(ctx, iface, option.Root(dir), WithPCIIDs("testdata/pci.ids"))
			if err != nil {
				t.Fatal(err)
			}
			if n.Features != nil || n.Coalesce != nil || n.Bridge != "" {
				t.Errorf("%s/%s: %v %+v %q", snap, iface, n.Features, n.Coalesce, n.Bridge)
			}
		}
	}
	a, err := parseEthtoolAnswers([]byte(`{"schema":1,"features":{"rx-gro":{"active":false},"rx-lro":{"active":true,"fixed":true},"highdma":{"active":true}},
		"coalesce":{"rx_usecs":0,"rx_frames":1,"adaptive_rx":false,"source":"net\u001blink"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Features) != 2 || a.Features[FeatureGRO].Active || !a.Features[FeatureLRO].Fixed {
		t.Errorf("features %v", a.Features)
	}
	if c := a.Coalesce; c.RXUsecs == nil || *c.RXUsecs != 0 || *c.RXFrames != 1 || *c.AdaptiveRX || c.TXUsecs != nil || strings.ContainsRune(c.Source, 0x1b) {
		t.Errorf("coalesce %+v", c)
	}
	for _, bad := range []string{`{"schema":1,"coalesce":{"rx_usecs":-1}}`, `{"schema":1,"coalesce":{"rx_usecs":4294967296}}`, `{"schema":1,"features":{"rx-gro":true}}`} {
		if _, err := parseEthtoolAnswers([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestReadForwarding(t *testing.T) {
	for _, tc := range []struct {
		name       string
		files      map[string]string
		ipv4, ipv6 string // "" nil, else "true"/"false"
		err        bool
	}{
		{"router", map[string]string{"proc/sys/net/ipv4/ip_forward": "1\n", "proc/sys/net/ipv6/conf/all/forwarding": "0\n"}, "true", "false", false},
		{"ipv4 only", map[string]string{"proc/sys/net/ipv4/ip_forward": "0\n"}, "false", "", false},
		{"old snapshot", map[string]string{"proc/interrupts": ""}, "", "", false},
		{"malformed", map[string]string{"proc/sys/net/ipv4/ip_forward": "yes\n", "proc/sys/net/ipv6/conf/all/forwarding": "1"}, "", "true", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := snaptest.Write(t, tc.files)
			f, err := ReadForwarding(option.Root(dir))
			if (err != nil) != tc.err || tc.err && !errors.Is(err, ErrMalformed) {
				t.Errorf("err %v", err)
			}
			str := func(p *bool) string {
				if p == nil {
					return ""
				}
				if *p {
					return "true"
				}
				return "false"
			}
			if str(f.IPv4) != tc.ipv4 || str(f.IPv6) != tc.ipv6 {
				t.Errorf("ipv4 %q ipv6 %q", str(f.IPv4), str(f.IPv6))
			}
			if f.On() != (tc.ipv4 == "true" || tc.ipv6 == "true") || f.Known() != (tc.ipv4 != "" || tc.ipv6 != "") {
				t.Errorf("On %v Known %v", f.On(), f.Known())
			}
		})
	}
}

// netdevTree lays out a virtual interface the way sysfs has it:
// /sys/class/net/NAME -> ../../devices/virtual/net/NAME.
func netdevTree(files map[string]string, name string, extra map[string]string) {
	dev := "sys/devices/virtual/net/" + name
	files["sys/class/net/"+name] = "->../../devices/virtual/net/" + name
	files[dev+"/ifindex"] = "3\n"
	files[dev+"/mtu"] = "1500\n"
	for k, v := range extra {
		files[dev+"/"+k] = v
	}
}

// Bridge ports as sysfs shows them (net/bridge/br_sysfs_if.c: brport/ with
// a "bridge" link; every enslaved netdev has a "master" link): a direct
// port, a bond slave whose bond is the port, an Open vSwitch port, and a
// bond slave outside any bridge.
func TestReadBridge(t *testing.T) {
	files := map[string]string{}
	netdevTree(files, "br0", map[string]string{"bridge/stp_state": "0\n"})
	netdevTree(files, "eth0", map[string]string{"master": "->../br0", "brport/bridge": "->../../br0", "brport/state": "3\n"})
	netdevTree(files, "bond0", map[string]string{"master": "->../br0", "brport/bridge": "->../../br0"})
	netdevTree(files, "eth1", map[string]string{"master": "->../bond0"})
	netdevTree(files, "ovs-system", nil)
	netdevTree(files, "eth2", map[string]string{"master": "->../ovs-system"})
	netdevTree(files, "bond1", nil)
	netdevTree(files, "eth3", map[string]string{"master": "->../bond1"})
	netdevTree(files, "eth4", map[string]string{"brport/state": "3\n"}) // the links gone
	dir := snaptest.Write(t, files)
	nics, err := List(context.Background(), option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"br0": "", "eth0": "br0", "bond0": "br0", "eth1": "br0", "ovs-system": "", "eth2": "ovs-system", "bond1": "", "eth3": "", "eth4": "(unknown)"}
	for _, n := range nics {
		if w, ok := want[n.Name]; !ok || n.Bridge != w {
			t.Errorf("%s: bridge %q, want %q", n.Name, n.Bridge, w)
		}
	}
	if len(nics) != len(want) {
		t.Errorf("%d interfaces", len(nics))
	}
}

// FuzzCoalesceAttrs: a hostile netlink reply never panics, and what it
// accepts holds the values of the attributes it names.
func FuzzCoalesceAttrs(f *testing.F) {
	f.Add(nlattr(nlattr(nil, coalesceAttrRXUsecs, le32(0)), coalesceAttrAdaptiveRX, []byte{1}))
	f.Add([]byte{8, 0, 2, 0, 1, 0, 0, 0, 5, 0, 11, 0, 1, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseCoalesceAttrs(b)
		if err != nil {
			if c != nil || !errors.Is(err, ErrMalformed) {
				t.Fatalf("%+v %v", c, err)
			}
			return
		}
		if c.Source != CoalesceNetlink {
			t.Fatalf("source %q", c.Source)
		}
	})
}

// FuzzFeatureStrings: any string set and any blocks decode without panic
// into judged features only.
func FuzzFeatureStrings(f *testing.F) {
	f.Add(featureStrings(FeatureGRO, FeatureLRO), 2, []byte{1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte("rx-gro"), 1, []byte{})
	f.Fuzz(func(t *testing.T, b []byte, n int, raw []byte) {
		names, err := parseFeatureStrings(b, n)
		if err != nil {
			return
		}
		if len(names) != n {
			t.Fatalf("%d names for %d", len(names), n)
		}
		blocks := make([]uint32, len(raw)/4)
		for i := range blocks {
			blocks[i] = binary.NativeEndian.Uint32(raw[i*4:])
		}
		for k := range decodeFeatures(names, blocks) {
			if !slices.Contains(JudgedFeatures, k) {
				t.Fatalf("kept %q", k)
			}
		}
	})
}

// FuzzSysctlBool: only decimal integers are accepted.
func FuzzSysctlBool(f *testing.F) {
	for _, s := range []string{"1\n", "0", " 2 ", "-1", "yes", "", "0x1", "99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseSysctlBool(s)
		if err == nil && v != (strings.Trim(strings.TrimSpace(s), "+-0") != "") {
			t.Fatalf("%q = %v", s, v)
		}
	})
}
