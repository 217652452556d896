package nicinfo

import (
	"strings"
	"testing"
)

func TestParseBondSetting(t *testing.T) {
	for in, want := range map[string]string{
		"802.3ad 4\n": "802.3ad", "layer3+4 1\n": "layer3+4", "active-backup 1": "active-backup",
		"vlan+srcmac 5\n": "vlan+srcmac", "balance-rr 0\n": "balance-rr",
		"": "", "802.3ad four\n": "", "a b c": "", "LAYER2 0": "", "x 999": "",
	} {
		if got, ok := ParseBondSetting(in); got != want || ok != (want != "") {
			t.Errorf("ParseBondSetting(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestParseBondSlaves(t *testing.T) {
	if got := strings.Join(ParseBondSlaves("eth0 eth1 eth0 a/b\n"), ","); got != "eth0,eth1" {
		t.Errorf("got %q", got)
	}
	if ParseBondSlaves("\n") != nil {
		t.Error("empty slaves not nil")
	}
}

func FuzzParseBondSetting(f *testing.F) {
	for _, s := range []string{"802.3ad 4\n", "layer2 0", "", "a b c", "x\x00 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, ok := ParseBondSetting(s)
		if ok != (name != "") || len(name) > 32 || strings.ContainsAny(name, " \n\x00/") {
			t.Fatalf("%q -> %q %v", s, name, ok)
		}
	})
}

func FuzzParseBondSlaves(f *testing.F) {
	for _, s := range []string{"eth0 eth1\n", "", " \t", "a/b ..", strings.Repeat("e ", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seen := map[string]bool{}
		for _, n := range ParseBondSlaves(s) {
			if !validIfaceName(n) || seen[n] {
				t.Fatalf("%q -> bad or repeated %q", s, n)
			}
			seen[n] = true
		}
	})
}
