package lab

import (
	"strconv"
	"strings"
	"testing"
)

// ethtoolRings reads what `ethtool -g` prints: the RX and TX rings under
// "Pre-set maximums:" and "Current hardware settings:".
type ethtoolRings struct{ RXMax, TXMax, RX, TX int }

func parseEthtoolRings(s string) (ethtoolRings, bool) {
	var r ethtoolRings
	var rx, tx *int
	seen := 0
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Pre-set maximums:"):
			rx, tx = &r.RXMax, &r.TXMax
		case strings.HasPrefix(line, "Current hardware settings:"):
			rx, tx = &r.RX, &r.TX
		case rx != nil && (strings.HasPrefix(line, "RX:") || strings.HasPrefix(line, "TX:")):
			v, err := strconv.Atoi(strings.TrimSpace(line[3:]))
			if err != nil {
				return r, false
			}
			if line[0] == 'R' {
				*rx = v
			} else {
				*tx = v
			}
			seen++
		}
	}
	return r, seen == 4
}

func TestParseEthtoolRings(t *testing.T) {
	// ethtool 6.1 on the guest's igb after `ethtool -G eth0 rx 80`.
	out := "Ring parameters for eth0:\nPre-set maximums:\nRX:\t\t\t4096\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t4096\n" +
		"Current hardware settings:\nRX:\t\t\t80\nRX Mini:\t\tn/a\nRX Jumbo:\t\tn/a\nTX:\t\t\t256\nRX Buf Len:\t\tn/a\n"
	if r, ok := parseEthtoolRings(out); !ok || r != (ethtoolRings{4096, 4096, 80, 256}) {
		t.Errorf("%+v %v", r, ok)
	}
	if _, ok := parseEthtoolRings("netlink error: Operation not supported\n"); ok {
		t.Error("parsed an error")
	}
}

// checkRings: after `ethtool -G eth0 rx 80` nicdiag reads the ring ethtool
// reads (show --json) and check says nic.ring_small at info with the
// numbers; after `ethtool -G eth0 rx 256` the ring is back and the finding
// gone. Neither time a nic.ring_drops: the guest has received almost
// nothing, and dropped nothing, since boot.
func checkRings(t *testing.T, secs map[string]Section) {
	for _, step := range []struct {
		n      string
		rx     int
		small  bool
		holdMS string
	}{{"1", 80, true, "0.98"}, {"2", 256, false, "3.15"}} {
		eth, ok := parseEthtoolRings(sec(t, secs, "ringeth"+step.n).Stdout)
		if !ok || eth.RX != step.rx {
			t.Fatalf("step %s: ethtool -g says %+v (parsed %v), want rx %d:\n%s", step.n, eth, ok, step.rx, sec(t, secs, "ringeth"+step.n).Stdout)
		}
		var show struct {
			NIC struct {
				Rings *struct {
					RX    int `json:"rx"`
					TX    int `json:"tx"`
					RXMax int `json:"rx_max"`
					TXMax int `json:"tx_max"`
				} `json:"rings"`
				Link struct {
					SpeedMbps int `json:"speed_mbps"`
				} `json:"link"`
			} `json:"nic"`
		}
		nicdiagJSON(t, sec(t, secs, "ringshow"+step.n), &show)
		r := show.NIC.Rings
		if r == nil || r.RX != eth.RX || r.TX != eth.TX || r.RXMax != eth.RXMax || r.TXMax != eth.TXMax {
			t.Errorf("step %s: nicdiag rings %+v, ethtool -g %+v", step.n, r, eth)
		}
		if show.NIC.Link.SpeedMbps != 1000 {
			t.Errorf("step %s: eth0 at %d Mb/s, want 1000 (carrier back after the reset)", step.n, show.NIC.Link.SpeedMbps)
		}
		var c checkDoc
		nicdiagJSON(t, sec(t, secs, "ringcheck"+step.n), &c)
		var small *findingJSON
		for i, f := range c.Findings {
			switch {
			case f.Code == "nic.ring_drops":
				t.Errorf("step %s: %+v", step.n, f)
			case f.Code == "nic.ring_small" && f.Subject == "eth0":
				small = &c.Findings[i]
			}
		}
		switch {
		case !step.small && small != nil:
			t.Errorf("step %s: ring %d still small: %+v", step.n, step.rx, small)
		case step.small && small == nil:
			t.Errorf("step %s: no nic.ring_small for ring %d in %+v", step.n, step.rx, c.Findings)
		case step.small:
			e := small.Evidence
			if small.Severity != "info" || e["rx_ring"] != "80" || e["rx_ring_max"] != strconv.Itoa(eth.RXMax) ||
				e["rx_ring_ms"] != step.holdMS || e["link_mbps"] != "1000" || e["dropped"] != "0" {
				t.Errorf("step %s: %+v", step.n, small)
			}
			t.Logf("ring 80: %s", small.Summary)
		}
	}
}
