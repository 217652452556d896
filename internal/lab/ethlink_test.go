package lab

import (
	"strconv"
	"strings"
	"testing"
)

// ethlinkShow is the part of `nicdiag show --json` the ethlink checks read.
type ethlinkShow struct {
	NIC struct {
		Link struct {
			SpeedMbps    int      `json:"speed_mbps"`
			PartnerModes []string `json:"partner_modes"`
		} `json:"link"`
		EEE   *struct{} `json:"eee"`
		Pause *struct {
			Autoneg bool `json:"autoneg"`
			RX      bool `json:"rx"`
			TX      bool `json:"tx"`
		} `json:"pause"`
		Carrier *struct {
			Changes int64  `json:"changes"`
			Down    *int64 `json:"down"`
		} `json:"carrier"`
	} `json:"nic"`
}

// ethtoolPause reads `ethtool -a`: "Autonegotiate: on", "RX: off", ...
func ethtoolPause(out string) (autoneg, rx, tx string) {
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "Autonegotiate":
			autoneg = v
		case "RX":
			rx = v
		case "TX":
			tx = v
		}
	}
	return
}

// partnerModes reads "Link partner advertised link modes:" of `ethtool
// IFACE` (the modes run on over the following indented lines).
func partnerModes(out string) []string {
	var modes []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(t, "Link partner advertised link modes:"); ok {
			in = true
			t = strings.TrimSpace(v)
		} else if in && strings.Contains(t, ":") {
			break
		}
		if in {
			for _, m := range strings.Fields(t) {
				if m != "Not" && m != "reported" {
					modes = append(modes, m)
				}
			}
		}
	}
	return modes
}

func checkEthlink(t *testing.T, secs map[string]Section) {
	var s0, s1 ethlinkShow
	nicdiagJSON(t, sec(t, secs, "ethshow0"), &s0)
	nicdiagJSON(t, sec(t, secs, "ethshow1"), &s1)
	// EEE: the 82576 has none (igb answers EEE for i350 and later only):
	// ethtool fails, nicdiag has no eee and no error.
	if e := sec(t, secs, "eee0"); e.RC == 0 && !strings.Contains(e.Stdout+e.Stderr, "not supported") {
		t.Logf("ethtool --show-eee eth0 answered:\n%s", e.Stdout)
	} else if s0.NIC.EEE != nil {
		t.Errorf("nicdiag has EEE where ethtool has none: %+v", s0.NIC.EEE)
	}
	checkEthlinkPause(t, secs, s0, s1)
	// The partner's modes: as ethtool prints them.
	want := partnerModes(sec(t, secs, "linkset0").Stdout)
	var got []string
	for _, m := range s0.NIC.Link.PartnerModes {
		got = append(got, m)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("partner modes: nicdiag %q, ethtool %q", got, want)
	}
	t.Logf("partner modes %q", got)
	checkEthlinkCarrier(t, secs)
}

// checkEthlinkPause: nicdiag's pause is as ethtool -a says, before and after
// `ethtool -A ... off`.
func checkEthlinkPause(t *testing.T, secs map[string]Section, s0, s1 ethlinkShow) {
	t.Helper()
	for i, step := range []struct {
		sec  string
		show ethlinkShow
	}{{"pause0", s0}, {"pause1", s1}} {
		a, rx, tx := ethtoolPause(sec(t, secs, step.sec).Stdout)
		p := step.show.NIC.Pause
		if a == "" || p == nil {
			t.Fatalf("step %d: ethtool -a %q/%q/%q, nicdiag %+v:\n%s", i, a, rx, tx, p, sec(t, secs, step.sec).Stdout)
		}
		onoff := func(b bool) string {
			if b {
				return "on"
			}
			return "off"
		}
		if onoff(p.Autoneg) != a || onoff(p.RX) != rx || onoff(p.TX) != tx {
			t.Errorf("step %d: nicdiag pause %+v, ethtool -a autoneg %s rx %s tx %s", i, *p, a, rx, tx)
		}
		t.Logf("step %d: pause autoneg %s rx %s tx %s", i, a, rx, tx)
	}
	if p := s1.NIC.Pause; p == nil || p.RX || p.TX {
		t.Errorf("after ethtool -A eth0 rx off tx off: %+v", p)
	}
}

// checkEthlinkCarrier: before the flaps no nic.link_flapping; 12 downs later
// carrier_down_count has moved by 12 and nic.link_flapping warns with sysfs's
// count.
func checkEthlinkCarrier(t *testing.T, secs map[string]Section) {
	t.Helper()
	count := func(name string) (changes, downs int) {
		f := strings.Fields(sec(t, secs, name).Stdout)
		if len(f) != 2 {
			t.Fatalf("%s: %q", name, sec(t, secs, name).Stdout)
		}
		changes, _ = strconv.Atoi(f[0])
		downs, _ = strconv.Atoi(f[1])
		return
	}
	c0, d0 := count("carrier0")
	c1, d1 := count("carrier1")
	t.Logf("carrier_changes %d -> %d, carrier_down_count %d -> %d", c0, c1, d0, d1)
	if d1-d0 != 12 || c1-c0 != 24 {
		t.Errorf("12 ip link down/up: carrier_down_count %d -> %d, carrier_changes %d -> %d", d0, d1, c0, c1)
	}
	flap := func(name string) *findingJSON {
		var c checkDoc
		nicdiagJSON(t, sec(t, secs, name), &c)
		for i, f := range c.Findings {
			if f.Code == "nic.link_flapping" && f.Subject == "eth0" {
				return &c.Findings[i]
			}
		}
		return nil
	}
	if f := flap("flapcheck0"); d0 < 10 && f != nil {
		t.Errorf("before the flaps (%d downs): %+v", d0, f)
	}
	f := flap("flapcheck1")
	if f == nil || f.Severity != "warn" || f.Evidence["carrier_down_count"] != strconv.Itoa(d1) {
		t.Fatalf("after %d downs: %+v", d1, f)
	}
	t.Logf("%s", f.Summary)
}
