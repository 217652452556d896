package nicdiag

import (
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// conntrackStat is /proc/net/stat/nf_conntrack as Linux 6.18 writes it
// (the header and layout captured from this project's development VM, two
// CPUs); the values are set per test.
func conntrackStat(cpu0, cpu1 string) string {
	return "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n" +
		cpu0 + "\n" + cpu1 + "\n"
}

// softnetFiles adds the connection-tracking files to a tree: count, max,
// buckets and the statistics.
func conntrackFiles(count, max, stat string) map[string]string {
	return map[string]string{
		"proc/sys/net/netfilter/nf_conntrack_count": count + "\n", "proc/sys/net/netfilter/nf_conntrack_max": max + "\n",
		"proc/sys/net/netfilter/nf_conntrack_buckets": "65536\n", "proc/net/stat/nf_conntrack": stat,
	}
}

// x722-lewisburg with the connection-tracking table's files added
// (reconstructed, in the kernel's formats): 250000 of 262144 entries and
// 0x12 + 0x30 = 66 drops is warn; drops beside early drops with the table
// nearly empty now is warn (it was full); drops alone are info (a tracker
// refusing packets counts there too); 1200 entries and no drops is the
// healthy host, silent; early drops alone are info.
func TestConntrackFull(t *testing.T) {
	zero := "00000000  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000  00000000 00000000 00000000 00000000"
	drops := "0003d090  00000000 00001234 00000000 00000002 00000000 00000000 00000000 00000456 00000001 00000012 00000003 00000000  00000000 00000000 00000000 00000000"
	drops1 := "0003d090  00000000 00000987 00000000 00000000 00000000 00000000 00000000 00000321 00000000 00000030 00000000 00000000  00000000 00000000 00000000 00000000"
	dropOnly := "00000000  00000000 00000000 00000000 00000012 00000000 00000000 00000000 00000000 00000000 00000012 00000000 00000000  00000000 00000000 00000000 00000000"
	early := "00000000  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000005 00000000  00000000 00000000 00000000 00000000"
	for _, tc := range []struct {
		name             string
		count, max, stat string
		sev              finding.Severity
		says             string
	}{
		{"full and dropping", "250000", "262144", conntrackStat(drops, drops1), finding.Warn, "holds 250000 of its 262144 entries (95 %); it counted 66 drops since boot (table full or a tracker refused)"},
		{"dropping and evicting, not full now", "1200", "262144", conntrackStat(drops, zero), finding.Warn, "it counted 18 drops since boot (table full or a tracker refused): with the table near full or evicting"},
		{"drops alone", "1200", "262144", conntrackStat(dropOnly, zero), finding.Info, "counted 18 drops since boot (table full or a tracker refused); with the table this empty and no early drops"},
		{"early drops", "1200", "262144", conntrackStat(early, zero), finding.Info, "evicted 5 unconfirmed entries"},
		{"healthy", "1200", "262144", conntrackStat(zero, zero), -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := variant(t, "x722-lewisburg").files(conntrackFiles(tc.count, tc.max, tc.stat))
			f := find(checkTree(t, v.dir), finding.StackConntrackFull, HostSubject)
			switch {
			case tc.sev < 0 && f != nil:
				t.Fatalf("unexpected %s", f)
			case tc.sev < 0:
			case f == nil || f.Severity != tc.sev || !strings.Contains(f.Summary, tc.says) || !strings.Contains(f.Fix, "nf_conntrack_max=524288"):
				t.Errorf("got %v, want %s with %q", f, tc.sev, tc.says)
			}
		})
	}
	// A count that is not a number: named, not judged as healthy.
	v := variant(t, "x722-lewisburg").files(conntrackFiles("lots", "262144", ""))
	r, err := Check(t.Context(), option.Root(v.dir))
	if err != nil {
		t.Fatal(err)
	}
	if f := find(r.Findings, finding.NicdiagIncomplete, HostSubject); f == nil || !strings.Contains(f.Summary, "connection tracking") {
		t.Errorf("malformed count: %v", r.Findings)
	}
}

// bridgeTree is x722-lewisburg with a software bridge br0 (its sysfs
// entry as the kernel lays out a bridge: uevent DEVTYPE=bridge, under
// devices/virtual/net) and br_netfilter's sysctls set to on.
func bridgeTree(t *testing.T, iptables string) tree {
	d := "sys/devices/virtual/net/br0/"
	return variant(t, "x722-lewisburg").files(map[string]string{
		"sys/class/net/br0": "->../../devices/virtual/net/br0",
		d + "uevent":        "DEVTYPE=bridge\nINTERFACE=br0\nIFINDEX=9\n", d + "ifindex": "9\n", d + "mtu": "1500\n",
		d + "operstate": "up\n", d + "address": "02:42:ac:11:00:01\n", d + "type": "1\n",
		"proc/sys/net/bridge/bridge-nf-call-iptables":  iptables + "\n",
		"proc/sys/net/bridge/bridge-nf-call-ip6tables": iptables + "\n",
		"proc/sys/net/bridge/bridge-nf-call-arptables": "0\n",
	})
}

func TestBridgeNetfilter(t *testing.T) {
	f := find(checkTree(t, bridgeTree(t, "1").dir), finding.StackBridgeNetfilter, HostSubject)
	if f == nil || f.Severity != finding.Info || !strings.Contains(f.Summary, "bridge-nf-call-iptables and bridge-nf-call-ip6tables on, and this host has bridges (br0)") ||
		!strings.Contains(f.Fix, "net.bridge.bridge-nf-call-iptables=0") || !strings.Contains(f.Fix, "Kubernetes") {
		t.Errorf("on: %v", f)
	}
	if f := find(checkTree(t, bridgeTree(t, "0").dir), finding.StackBridgeNetfilter, HostSubject); f != nil {
		t.Errorf("off: %s", f)
	}
	// Loaded, no bridge: nothing.
	v := variant(t, "x722-lewisburg").files(map[string]string{"proc/sys/net/bridge/bridge-nf-call-iptables": "1\n"})
	if f := find(checkTree(t, v.dir), finding.StackBridgeNetfilter, HostSubject); f != nil {
		t.Errorf("no bridge: %s", f)
	}
}

// tunnelTree is x722-lewisburg (eno1 and eno2 up at MTU 1500) with a
// VXLAN device vxlan.calico as Calico creates it (MTU mtu, VNI 4096, port
// 4789, on eno1), its ethtool features and its netlink answers
// (reconstructed in the formats nicdiag snapshot writes).
func tunnelTree(t *testing.T, mtu string, csum bool) tree {
	d := "sys/devices/virtual/net/vxlan.calico/"
	v := variant(t, "x722-lewisburg").files(map[string]string{
		"sys/class/net/vxlan.calico": "->../../devices/virtual/net/vxlan.calico",
		d + "uevent":                 "DEVTYPE=vxlan\nINTERFACE=vxlan.calico\nIFINDEX=12\n", d + "ifindex": "12\n",
		d + "mtu": mtu + "\n", d + "operstate": "unknown\n", d + "address": "66:1b:2c:3d:4e:5f\n", d + "type": "1\n",
		"ethtool/vxlan.calico.json": `{"schema": 1, "driver": "vxlan", "features": {"tx-checksum-ip-generic": {"active": ` +
			map[bool]string{true: "true", false: "false"}[csum] + `, "requested": true}}}`,
		"netlink/vxlan.calico.json": `{"schema": 1, "tunnel": {"kind": "vxlan", "vni": 4096, "port": 4789, "link": "eno1"}}`,
	})
	return v
}

// A VXLAN device: inner MTU 1500 over eno1's 1500 is warn (needs 1550);
// 1450 with checksum offload on is info naming the Calico cases; 1450
// with it off is the healthy tunnel, silent. A malformed netlink file is
// refused with its name.
func TestTunnelOffload(t *testing.T) {
	f := find(checkTree(t, tunnelTree(t, "1500", false).dir), finding.NICTunnelOffload, "vxlan.calico")
	if f == nil || f.Severity != finding.Warn || !strings.Contains(f.Summary, "its MTU of 1500 needs 1550 bytes on the underlay") ||
		!strings.Contains(f.Fix, "ip link set vxlan.calico mtu 1450") || f.Evidence["underlay"] != "eno1" {
		t.Errorf("MTU: %v", f)
	}
	f = find(checkTree(t, tunnelTree(t, "1450", true).dir), finding.NICTunnelOffload, "vxlan.calico")
	if f == nil || f.Severity != finding.Info || !strings.Contains(f.Summary, "projectcalico/calico#11435") ||
		!strings.Contains(f.Fix, "ethtool -K vxlan.calico tx-checksum-ip-generic off") {
		t.Errorf("checksum: %v", f)
	}
	if f := find(checkTree(t, tunnelTree(t, "1450", false).dir), finding.NICTunnelOffload, "vxlan.calico"); f != nil {
		t.Errorf("healthy: %s", f)
	}
	// Named on the command line, the tunnel alone is checked.
	if f := find(checkTree(t, tunnelTree(t, "1500", false).dir, WithInterfaces("eno2")), finding.NICTunnelOffload, "vxlan.calico"); f != nil {
		t.Errorf("eno2 only: %s", f)
	}
	bad := tunnelTree(t, "1450", false).files(map[string]string{"netlink/vxlan.calico.json": `{"schema": 1, "tunnel": {"kind": "gre"}}`})
	h, err := Inspect(t.Context(), option.Root(bad.dir))
	if err != nil {
		t.Fatal(err)
	}
	n := h.named("vxlan.calico")
	if n == nil || n.Tunnel != nil || !strings.Contains(strings.Join(n.Missing, ";"), "tunnel kind") {
		t.Errorf("bad netlink file: %+v", n)
	}
}

// x722-lewisburg's eno1 (i40e, native XDP, 10 Gb/s) with an XDP program
// in generic mode: warn; in driver mode: silent. The e1000e I219 (no
// native XDP) in generic mode: nothing to say.
func TestXDPGeneric(t *testing.T) {
	xdp := func(mode string) string { return `{"schema": 1, "xdp": {"mode": "` + mode + `", "prog_id": 42}}` }
	v := variant(t, "x722-lewisburg").files(map[string]string{"netlink/eno1.json": xdp("generic")})
	f := find(checkTree(t, v.dir), finding.NICXDPGeneric, "eno1")
	if f == nil || f.Severity != finding.Warn || !strings.Contains(f.Summary, "(id 42) in generic mode") || !strings.Contains(f.Fix, "xdpdrv") {
		t.Errorf("generic: %v", f)
	}
	v = variant(t, "x722-lewisburg").files(map[string]string{"netlink/eno1.json": xdp("driver")})
	if f := find(checkTree(t, v.dir), finding.NICXDPGeneric, "eno1"); f != nil {
		t.Errorf("native: %s", f)
	}
	v = variant(t, "i219-optiplex").files(map[string]string{"netlink/eno1.json": xdp("generic")})
	if f := find(checkTree(t, v.dir), finding.NICXDPGeneric, "eno1"); f != nil {
		t.Errorf("e1000e: %s", f)
	}
}

// The I219-LM (e1000e) with TSO, GSO and GRO off, the Hardware Unit Hang
// workaround: nic.known_workaround names it, and nic.offload_off does not
// ask to undo it. The same offloads off on an i40e are nic.offload_off.
func TestKnownWorkaround(t *testing.T) {
	off := map[string]nicinfo.Feature{
		nicinfo.FeatureTSO: {}, nicinfo.FeatureTSO6: {}, nicinfo.FeatureGSO: {}, nicinfo.FeatureGRO: {},
		nicinfo.FeatureScatterGather: {Active: true}, nicinfo.FeatureTXChecksumIP: {Active: true}, nicinfo.FeatureRXChecksum: {Active: true},
	}
	v := variant(t, "i219-optiplex").ethtool("eno1", func(a *nicinfo.EthtoolAnswers) { a.Features = off })
	fs := checkTree(t, v.dir)
	w := find(fs, finding.NICKnownWorkaround, "eno1")
	if w == nil || w.Severity != finding.Info || !strings.Contains(w.Summary, "Detected Hardware Unit Hang") ||
		!strings.Contains(w.Summary, "does not suggest turning them back on") || !strings.Contains(w.Fix, "unit hang") {
		t.Errorf("workaround: %v", w)
	}
	if f := find(fs, finding.NICOffloadOff, "eno1"); f != nil {
		t.Errorf("undoes the workaround: %s", f)
	}
	v = variant(t, "x722-lewisburg").ethtool("eno1", func(a *nicinfo.EthtoolAnswers) { a.Features = off })
	fs = checkTree(t, v.dir, WithInterfaces("eno1"))
	if f := find(fs, finding.NICOffloadOff, "eno1"); f == nil || find(fs, finding.NICKnownWorkaround, "eno1") != nil {
		t.Errorf("i40e: %v", fs)
	}
}
