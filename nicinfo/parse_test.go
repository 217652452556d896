package nicinfo

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseNetSpeed(t *testing.T) {
	for in, want := range map[string]int{
		"1000\n": 1000, "25000": 25000, "-1": SpeedUnknown, "4294967295": SpeedUnknown,
		"65535": SpeedUnknown, "0": SpeedUnknown,
	} {
		if got, err := parseNetSpeed(in); err != nil || got != want {
			t.Errorf("parseNetSpeed(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "fast", "-2", "1e3", "99999999999", "0x10", "+100"} {
		if got, err := parseNetSpeed(in); !errors.Is(err, ErrMalformed) || got != SpeedUnknown {
			t.Errorf("parseNetSpeed(%q) = %d, %v; want ErrMalformed", in, got, err)
		}
	}
}

func TestParseQueuesIRQsMasks(t *testing.T) {
	rx, tx := parseQueueDirs([]string{"rx-0", "rx-1", "tx-0", "rx-x", "tx-", "foo"})
	if rx != 2 || tx != 1 {
		t.Errorf("queues %d/%d; want 2/1", rx, tx)
	}
	irqs, err := parseIRQDir([]string{"40", "38", "bad", "39"})
	if !errors.Is(err, ErrMalformed) || len(irqs) != 3 || irqs[0] != 38 || irqs[2] != 40 {
		t.Errorf("irqs %v, %v", irqs, err)
	}
	for in, want := range map[string]bool{"0": false, "00000000,00000000": false, "00000000,00000010": true, "f": true} {
		if got, err := parseCPUMask(in); err != nil || got != want {
			t.Errorf("parseCPUMask(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := parseCPUMask("0-3"); !errors.Is(err, ErrMalformed) {
		t.Error("parseCPUMask accepted a list")
	}
	if v, err := parseHexID("0x020000\n", 24); err != nil || v != 0x020000 {
		t.Errorf("parseHexID = %x, %v", v, err)
	}
	if _, err := parseHexID("0x10000", 16); !errors.Is(err, ErrMalformed) {
		t.Error("parseHexID accepted 17 bits as 16")
	}
	if _, err := parseHexID("0x02\n", 24); !errors.Is(err, ErrMalformed) {
		t.Error("parseHexID accepted a class cut to 0x02")
	}
}

// FuzzSysfsValues feeds one string to every sysfs value parser: none may
// panic, and what they accept must read back.
func FuzzSysfsValues(f *testing.F) {
	for _, s := range []string{"1000", "-1", "4294967295", "0000:01:00.0", "0x8086", "00000000,0000000f", "rx-0", "", "\xff", "10000:e1:1f.7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := parseNetSpeed(s); err == nil && v != SpeedUnknown {
			if u, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32); err != nil || int(u) != v || v <= 0 {
				t.Fatalf("parseNetSpeed(%q) = %d", s, v)
			}
		}
		if v, err := parseHexID(s, 16); err == nil && v > 0xffff {
			t.Fatalf("parseHexID(%q) = %x", s, v)
		}
		parseDuplex(s)
		parseCPUMask(s)
		parts := strings.Split(s, "/")
		rx, tx := parseQueueDirs(parts)
		if rx+tx > len(parts) {
			t.Fatalf("%d queues from %d names", rx+tx, len(parts))
		}
		irqs, _ := parseIRQDir(parts)
		for _, i := range irqs {
			if i < 0 {
				t.Fatalf("negative IRQ %d", i)
			}
		}
	})
}

// FuzzEthtoolAnswers: hostile ethtool/IFACE.json never panics and never
// yields a speed below SpeedUnknown.
func FuzzEthtoolAnswers(f *testing.F) {
	f.Add([]byte(`{"schema":1,"driver":"igb","link":{"speed_mbps":1000,"duplex":"full","supported":["1000baseT/Full"]}}`))
	f.Add([]byte(`{"schema":1,"link":{"speed_mbps":0}}`))
	f.Add([]byte(`{"schema":1,"features":{"rx-gro":{"active":false},"rx-lro":{"active":true,"fixed":true}},"coalesce":{"rx_usecs":0,"rx_frames":1,"adaptive_rx":false,"source":"netlink"}}`))
	f.Add([]byte(`{"schema":2}`))
	f.Add([]byte(`{`))
	f.Add([]byte(`{"schema":1,"link":{"speed_mbps":1000,"partner_advertised":["1000baseT/Full","\u0007x"]},` +
		`"eee":{"supported":["1000baseT/Full"],"partner_advertised":["\u001b[31m"],"active":true},` +
		`"pause":{"autoneg":true,"rx":true,"tx":false}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseEthtoolAnswers(b)
		if err == nil && a.Link != nil && (a.Link.SpeedMbps < SpeedUnknown || a.Link.SpeedMbps == 0) {
			t.Fatalf("speed %d accepted", a.Link.SpeedMbps)
		}
		if err != nil {
			return
		}
		var modes []string
		if a.Link != nil {
			modes = append(modes, a.Link.PartnerAdvertised...)
		}
		if a.EEE != nil {
			modes = append(append(append(modes, a.EEE.Supported...), a.EEE.Advertised...), a.EEE.PartnerAdvertised...)
		}
		for _, m := range modes {
			if strings.ContainsAny(m, "\x00\x07\x1b\n") {
				t.Fatalf("control character kept in %q", m)
			}
		}
	})
}
