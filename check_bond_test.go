package nicdiag

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/internal/snaptest"
	"github.com/nicdiag/nicdiag/option"
	"github.com/nicdiag/nicdiag/snapshot"
)

// bondTree is the 82576 mini-PCIe card's two 1000 Mb/s ports bonded as
// bond0, with a VLAN bond0.10 on top. This kernel has no bonding or 8021q
// module, so the bond and VLAN directories are reconstructed by hand from
// the layout the kernel writes (Documentation/networking/bonding.rst;
// net/core/net-sysfs.c, net/bonding/bond_sysfs.c): bonding/mode and
// xmit_hash_policy as "NAME NUMBER", bonding/slaves as names separated by
// spaces, each member's master link to the bond, and the bond's (and the
// VLAN's) lower_IFACE links to what it sits on. f1mbps replaces the second
// port's speed (0: keep 1000); f1state its operstate ("": up).
func bondTree(t *testing.T, mode, policy string, f1mbps int, f1state string) string {
	dir := snaptest.Copy(t, snaps+"82576-minipcie-x1")
	const p0 = "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0/net/enp1s0f0"
	const p1 = "sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.1/net/enp1s0f1"
	const b = "sys/devices/virtual/net/bond0"
	const v = "sys/devices/virtual/net/bond0.10"
	files := map[string]string{
		"sys/class/net/bond0":    "->../../devices/virtual/net/bond0",
		"sys/class/net/bond0.10": "->../../devices/virtual/net/bond0.10",
		b + "/ifindex":           "5\n",
		b + "/address":           "00:1b:21:aa:bb:c0\n",
		b + "/mtu":               "1500\n",
		b + "/operstate":         "up\n",
		b + "/type":              "1\n",
		b + "/uevent":            "DEVTYPE=bond\nINTERFACE=bond0\nIFINDEX=5\n",
		b + "/bonding/mode":      mode + "\n",
		b + "/bonding/slaves":    "enp1s0f0 enp1s0f1\n",
		b + "/lower_enp1s0f0":    "->../../../pci0000:00/0000:00:1c.0/0000:01:00.0/net/enp1s0f0",
		b + "/lower_enp1s0f1":    "->../../../pci0000:00/0000:00:1c.0/0000:01:00.1/net/enp1s0f1",
		p0 + "/master":           "->../../../../../virtual/net/bond0",
		p1 + "/master":           "->../../../../../virtual/net/bond0",
		v + "/ifindex":           "6\n",
		v + "/address":           "00:1b:21:aa:bb:c0\n",
		v + "/mtu":               "1500\n",
		v + "/operstate":         "up\n",
		v + "/type":              "1\n",
		v + "/uevent":            "DEVTYPE=vlan\nINTERFACE=bond0.10\nIFINDEX=6\n",
		v + "/lower_bond0":       "->../bond0",
	}
	if policy != "" {
		files[b+"/bonding/xmit_hash_policy"] = policy + "\n"
	}
	if strings.HasPrefix(mode, "active-backup") {
		files[b+"/bonding/active_slave"] = "enp1s0f1\n"
	}
	if f1state != "" {
		files[p1+"/operstate"] = f1state + "\n"
	}
	if f1mbps != 0 {
		js, err := os.ReadFile(dir + "/ethtool/enp1s0f1.json")
		if err != nil {
			t.Fatal(err)
		}
		files["ethtool/enp1s0f1.json"] = strings.Replace(string(js), `"speed_mbps": 1000`, `"speed_mbps": `+itoa(f1mbps), 1)
		files[p1+"/speed"] = itoa(f1mbps) + "\n"
		os.Remove(dir + "/ethtool/enp1s0f1.json")
		os.Remove(dir + "/" + p1 + "/speed")
	}
	if f1state != "" {
		os.Remove(dir + "/" + p1 + "/operstate")
	}
	snaptest.Add(t, dir, files)
	return dir
}

func itoa(i int) string { return strconv.Itoa(i) }

func bondFindings(t *testing.T, dir string, names ...string) map[finding.Code]finding.Finding {
	t.Helper()
	r, err := Check(context.Background(), option.Root(dir), WithInterfaces(names...))
	if err != nil {
		t.Fatal(err)
	}
	out := map[finding.Code]finding.Finding{}
	for _, f := range r.Findings {
		if f.Code == finding.BondSingleFlow || f.Code == finding.BondMemberMismatch {
			if f.Subject != "bond0" {
				t.Errorf("%s subject %q, want bond0", f.Code, f.Subject)
			}
			out[f.Code] = f
		}
	}
	return out
}

func TestBondData(t *testing.T) {
	dir := bondTree(t, "802.3ad 4", "layer2 0", 0, "")
	h, err := Inspect(context.Background(), option.Root(dir), WithInventoryOnly())
	if err != nil {
		t.Fatal(err)
	}
	b := h.named("bond0")
	if b == nil || b.Bond == nil {
		t.Fatalf("bond0: no Bond: %+v", b)
	}
	if b.Bond.Mode != "802.3ad" || b.Bond.HashPolicy != "layer2" || strings.Join(b.Bond.Slaves, " ") != "enp1s0f0 enp1s0f1" {
		t.Errorf("Bond = %+v", *b.Bond)
	}
	if got := strings.Join(b.Lower, " "); got != "enp1s0f0 enp1s0f1" {
		t.Errorf("bond0.Lower = %q", got)
	}
	if got := strings.Join(h.named("bond0.10").Lower, " "); got != "bond0" {
		t.Errorf("bond0.10.Lower = %q", got)
	}
	if m := h.named("enp1s0f0"); m.Bond != nil || m.Lower != nil {
		t.Errorf("member has Bond %v Lower %v", m.Bond, m.Lower)
	}
}

func TestBondVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name          string
		mode, policy  string
		f1mbps        int
		f1state       string
		flow, mismatc finding.Severity // -1: none
		flowText      string
	}{
		{"802.3ad layer2", "802.3ad 4", "layer2 0", 0, "", finding.Warn, -1, "all traffic between two hosts"},
		{"balance-xor layer2+3", "balance-xor 2", "layer2+3 2", 0, "", finding.Warn, -1, "1000 Mb/s at most"},
		{"802.3ad layer3+4", "802.3ad 4", "layer3+4 1", 0, "", finding.Info, -1, "2 × 1000 = 2000 Mb/s only across flows"},
		{"802.3ad layer3+4, one at 100", "802.3ad 4", "layer3+4 1", 100, "", finding.Info, finding.Warn, "one flow uses one member"},
		{"balance-xor layer3+4, one down", "balance-xor 2", "layer3+4 1", 0, "down", finding.Info, finding.Warn, "one flow uses one member"},
		{"active-backup healthy", "active-backup 1", "layer2 0", 0, "", finding.Info, -1, "only enp1s0f1 carries traffic"},
		{"active-backup, active slower", "active-backup 1", "", 100, "", finding.Info, finding.Warn, "only enp1s0f1"},
		{"balance-rr", "balance-rr 0", "layer2 0", 0, "", -1, -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := bondFindings(t, bondTree(t, tc.mode, tc.policy, tc.f1mbps, tc.f1state))
			f, ok := got[finding.BondSingleFlow]
			switch {
			case tc.flow < 0 && ok:
				t.Errorf("unexpected %v", f)
			case tc.flow >= 0 && !ok:
				t.Errorf("no bond.single_flow; got %v", got)
			case ok && (f.Severity != tc.flow || !strings.Contains(f.Summary, tc.flowText)):
				t.Errorf("single_flow %v %q, want %v with %q", f.Severity, f.Summary, tc.flow, tc.flowText)
			}
			if ok && f.Severity == finding.Warn && !strings.Contains(f.Fix, "ip link set bond0 type bond xmit_hash_policy layer3+4") {
				t.Errorf("fix %q", f.Fix)
			}
			m, ok := got[finding.BondMemberMismatch]
			switch {
			case tc.mismatc < 0 && ok:
				t.Errorf("unexpected %v", m)
			case tc.mismatc >= 0 && (!ok || m.Severity != tc.mismatc):
				t.Errorf("member_mismatch %v (%v), want %v", m.Severity, ok, tc.mismatc)
			}
		})
	}
}

// TestBondOneMember: a bond of one member says nothing.
func TestBondOneMember(t *testing.T) {
	dir := bondTree(t, "802.3ad 4", "layer2 0", 0, "")
	snaptest.Add(t, dir, nil)
	os.WriteFile(dir+"/sys/devices/virtual/net/bond0/bonding/slaves", []byte("enp1s0f0\n"), 0o644)
	if got := bondFindings(t, dir); len(got) != 0 {
		t.Errorf("one-member bond: %v", got)
	}
}

// TestSelectWalksDown: naming a VLAN over a bond selects the bond and its
// physical members, and the bond's finding is kept.
func TestSelectWalksDown(t *testing.T) {
	dir := bondTree(t, "802.3ad 4", "layer2 0", 0, "")
	r, err := Check(context.Background(), option.Root(dir), WithInterfaces("bond0.10"))
	if err != nil {
		t.Fatal(err)
	}
	var sel []string
	for _, n := range r.Host.Selected {
		sel = append(sel, n.Name)
	}
	if got := strings.Join(sel, " "); got != "bond0.10 bond0 enp1s0f0 enp1s0f1" {
		t.Errorf("Selected = %q", got)
	}
	found := false
	for _, f := range r.Findings {
		found = found || f.Code == finding.BondSingleFlow
	}
	if !found {
		t.Error("no bond.single_flow for bond0.10")
	}
	// Naming one member alone keeps the bond's finding but selects only it.
	r, err = Check(context.Background(), option.Root(dir), WithInterfaces("enp1s0f0"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Host.Selected) != 1 {
		t.Errorf("Selected = %d NICs", len(r.Host.Selected))
	}
}

// TestBondCapture: a capture of the bond tree keeps bonding/ and the
// lower_IFACE links, so the snapshot reads the same bond and stack.
func TestBondCapture(t *testing.T) {
	src := bondTree(t, "802.3ad 4", "layer2 0", 0, "")
	dst := t.TempDir() + "/snap"
	if _, err := snapshot.Capture(context.Background(), dst, snapshot.FromRoot(src)); err != nil {
		t.Fatal(err)
	}
	h, err := Inspect(context.Background(), option.Root(dst), WithInventoryOnly())
	if err != nil {
		t.Fatal(err)
	}
	b := h.named("bond0")
	if b == nil || b.Bond == nil || b.Bond.Mode != "802.3ad" || b.Bond.HashPolicy != "layer2" ||
		strings.Join(b.Bond.Slaves, " ") != "enp1s0f0 enp1s0f1" || strings.Join(b.Lower, " ") != "enp1s0f0 enp1s0f1" {
		t.Fatalf("captured bond0 %+v", b)
	}
	if v := h.named("bond0.10"); v == nil || strings.Join(v.Lower, " ") != "bond0" {
		t.Errorf("captured bond0.10 %+v", v)
	}
}
