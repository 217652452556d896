package snapshot

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// What the offload, LRO and coalescing checks read survives a capture:
// the forwarding sysctls, a netdev's master link and brport/, and the
// features and coalescing in ethtool/IFACE.json. The source is
// x722-lewisburg with eno1 made a port of a bridge br0 (a virtual netdev
// laid out as sysfs has it), ip_forward 1, and feature and coalescing
// answers added to eno1's ethtool file; all of that is reconstructed.
func TestCaptureKeepsForwardingFacts(t *testing.T) {
	src := snaptest.Copy(t, filepath.Join("..", "testdata", "snapshots", "x722-lewisburg"))
	eno1, err := filepath.EvalSymlinks(filepath.Join(src, "sys/class/net/eno1"))
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(src, eno1)
	up := "" // from eno1's directory to sys/devices
	for d := filepath.Dir(rel); d != "sys/devices" && d != "."; d = filepath.Dir(d) {
		up += "../"
	}
	snaptest.Add(t, src, map[string]string{
		"proc/sys/net/ipv4/ip_forward":             "1\n",
		"proc/sys/net/ipv6/conf/all/forwarding":    "0\n",
		"sys/class/net/br0":                        "->../../devices/virtual/net/br0",
		"sys/devices/virtual/net/br0/ifindex":      "9\n",
		"sys/devices/virtual/net/br0/bridge/hello": "200\n",
		rel + "/master":                            "->" + up + "virtual/net/br0",
		rel + "/brport/bridge":                     "->../" + up + "virtual/net/br0",
		rel + "/brport/state":                      "3\n",
	})
	etFile := filepath.Join(src, "ethtool/eno1.json")
	var a nicinfo.EthtoolAnswers
	b, _ := os.ReadFile(etFile)
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	zero, one := uint32(0), uint32(1)
	a.Features = map[string]nicinfo.Feature{nicinfo.FeatureGRO: {}, nicinfo.FeatureLRO: {Active: true, Requested: true}}
	a.Coalesce = &nicinfo.Coalesce{RXUsecs: &zero, RXFrames: &one, Source: nicinfo.CoalesceNetlink}
	b, _ = json.Marshal(a)
	if err := os.WriteFile(etFile, b, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	dst := filepath.Join(t.TempDir(), "copy")
	if _, err := Capture(ctx, dst, FromRoot(src)); err != nil {
		t.Fatal(err)
	}
	ids := nicinfo.WithPCIIDs("../nicinfo/testdata/pci.ids")
	want, err := nicinfo.List(ctx, option.Root(src), ids)
	if err != nil {
		t.Fatal(err)
	}
	got, err := nicinfo.List(ctx, option.Root(dst), ids)
	if err != nil {
		t.Fatal(err)
	}
	if asJSON(t, got) != asJSON(t, want) {
		t.Errorf("captured copy lists\n%s\nsource lists\n%s", asJSON(t, got), asJSON(t, want))
	}
	var e *nicinfo.NIC
	for i := range got {
		if got[i].Name == "eno1" {
			e = &got[i]
		}
	}
	if e == nil || e.Bridge != "br0" || !e.Features[nicinfo.FeatureLRO].Active || e.Coalesce == nil || *e.Coalesce.RXFrames != 1 {
		t.Errorf("eno1 in the copy: %+v", e)
	}
	fw, err := nicinfo.ReadForwarding(option.Root(dst))
	if err != nil || fw.IPv4 == nil || !*fw.IPv4 || fw.IPv6 == nil || *fw.IPv6 {
		t.Errorf("forwarding in the copy: %+v %v", fw, err)
	}
}
