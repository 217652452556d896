package nicinfo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/internal/netnstest"
	"github.com/nicdiag/nicdiag/option"
	"github.com/vishvananda/netlink"
)

// A file written before nicdiag asked for rings and loss counters reads as
// before: no rings, no loss stats, no error.
func TestEthtoolAnswersWithoutRings(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(needSnap(t, "82576-minipcie-x1"), "ethtool", "enp1s0f0.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "rings") {
		t.Fatal("the fixture has rings already")
	}
	a, err := parseEthtoolAnswers(b)
	if err != nil || a.Rings != nil || a.LossStats != nil || a.Driver != "igb" {
		t.Fatalf("%+v %v", a, err)
	}
	n, err := Get(context.Background(), "enp1s0f0", option.Root(needSnap(t, "82576-minipcie-x1")))
	if err != nil || n.Rings != nil || n.LossStats != nil {
		t.Fatalf("%+v %v", n, err)
	}
}

// The new fields read back from ethtool/IFACE.json into the NIC; the
// names of hand-made loss counters lose their control characters, and an
// empty map is none.
func TestEthtoolAnswersRings(t *testing.T) {
	dir := copyTree(t, needSnap(t, "82576-minipcie-x1"))
	p := filepath.Join(dir, "ethtool", "enp1s0f0.json")
	b, _ := os.ReadFile(p)
	s := strings.Replace(string(b), `"schema": 1,`, `"schema": 1, "rings": {"rx": 80, "tx": 256, "rx_max": 4096, "tx_max": 4096},
	"loss_stats": {"rx_no_buffer_count": 12, "rx_\u001b[31mmissed": 3},`, 1)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := Get(context.Background(), "enp1s0f0", option.Root(dir))
	if err != nil {
		t.Fatal(err)
	}
	if r := n.Rings; r == nil || *r != (Rings{RX: 80, TX: 256, RXMax: 4096, TXMax: 4096}) {
		t.Errorf("rings %+v", r)
	}
	if len(n.LossStats) != 2 || n.LossStats["rx_no_buffer_count"] != 12 || n.LossStats["rx_[31mmissed"] != 3 {
		t.Errorf("loss stats %v", n.LossStats)
	}
	a, err := parseEthtoolAnswers([]byte(`{"schema":1,"loss_stats":{}}`))
	if err != nil || a.LossStats != nil {
		t.Errorf("empty loss_stats: %v %v", a.LossStats, err)
	}
}

// Values outside the kernel's fields are refused.
func TestEthtoolAnswersRingsRefused(t *testing.T) {
	many := make([]string, maxLossStats+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"s%d": 1`, i)
	}
	for _, doc := range []string{
		`{"schema":1,"rings":{"rx":-1,"rx_max":4096}}`,
		`{"schema":1,"rings":{"rx":256,"tx_max":4294967296}}`,
		`{"schema":1,"rings":{"rx":"256"}}`,
		`{"schema":1,"loss_stats":{"rx_missed":-1}}`,
		`{"schema":1,"loss_stats":{"rx_missed":18446744073709551616}}`,
		`{"schema":1,"loss_stats":{` + strings.Join(many, ",") + `}}`,
	} {
		if a, err := parseEthtoolAnswers([]byte(doc)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%.60s: %+v, %v; want ErrMalformed", doc, a, err)
		}
	}
	// A size above its maximum is kept as read.
	a, err := parseEthtoolAnswers([]byte(`{"schema":1,"rings":{"rx":9000,"rx_max":4096,"tx":4294967295}}`))
	if err != nil || a.Rings.RX != 9000 || a.Rings.TX != 1<<32-1 {
		t.Errorf("%+v %v", a, err)
	}
}

func TestKeepStats(t *testing.T) {
	m := map[string]uint64{"rx_missed": 1, "rx_packets": 2, "rx_\x1bmissed": 3, strings.Repeat("x", 32): 4, "": 5}
	got := keepStats(m, func(s string) bool { return s != "rx_packets" })
	if len(got) != 1 || got["rx_missed"] != 1 {
		t.Errorf("%v", got)
	}
	if keepStats(m, func(string) bool { return false }) != nil || keepStats(nil, func(string) bool { return true }) != nil {
		t.Error("nothing kept is nil")
	}
	big := map[string]uint64{}
	for i := range 2 * maxLossStats {
		big[fmt.Sprintf("s%d", i)] = 1
	}
	if got := keepStats(big, func(string) bool { return true }); len(got) != maxLossStats {
		t.Errorf("kept %d", len(got))
	}
}

// FuzzEthtoolRings: hostile rings and loss_stats never panic; what is
// accepted is within the kernel's fields and bounded.
func FuzzEthtoolRings(f *testing.F) {
	f.Add([]byte(`{"schema":1,"rings":{"rx":256,"tx":256,"rx_max":4096,"tx_max":4096},"loss_stats":{"rx_no_buffer_count":3}}`))
	f.Add([]byte(`{"schema":1,"rings":{"rx":-1}}`))
	f.Add([]byte(`{"schema":1,"rings":null,"loss_stats":{"\u0000":1}}`))
	f.Add([]byte(`{"schema":1,"rings":{"rx_jumbo_max":4294967295}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseEthtoolAnswers(b)
		if err != nil {
			return
		}
		if r := a.Rings; r != nil {
			for _, v := range []int{r.RX, r.RXMini, r.RXJumbo, r.TX, r.RXMax, r.RXMiniMax, r.RXJumboMax, r.TXMax} {
				if v < 0 || int64(v) > maxRingDescriptors {
					t.Fatalf("ring size %d accepted", v)
				}
			}
		}
		if len(a.LossStats) > maxLossStats {
			t.Fatalf("%d loss stats", len(a.LossStats))
		}
	})
}

// The real kernel: a veth pair in a throwaway network namespace. veth has
// no ETHTOOL_GRINGPARAM (6.18 checked): no rings, the error named as for
// every other request; its ETHTOOL_GSTATS are read and filtered by the
// KeepStats function (peer_ifindex is the peer's ifindex).
func TestLiveEthtoolVeth(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace")
	}
	var (
		a        *EthtoolAnswers
		err      error
		peerIdx  int
		setupErr error
	)
	ns := netnstest.New(t)
	netnstest.Do(t, ns, func() {
		la := netlink.NewLinkAttrs()
		la.Name = "ndring0"
		if setupErr = netlink.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "ndring1"}); setupErr != nil {
			return
		}
		peer, e := netlink.LinkByName("ndring1")
		if e != nil {
			setupErr = e
			return
		}
		peerIdx = peer.Attrs().Index
		src := LiveEthtool(KeepStats(func(s string) bool { return s == "peer_ifindex" }))
		defer src.(interface{ Close() error }).Close()
		a, err = src.Answers(context.Background(), "ndring0")
	})
	if setupErr != nil {
		t.Skipf("no veth in a namespace: %v", setupErr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if a.Driver != "veth" || a.Rings != nil || a.Errors["rings"] != "operation not supported" {
		t.Errorf("driver %q rings %+v errors %v; want veth without rings", a.Driver, a.Rings, a.Errors)
	}
	if len(a.LossStats) != 1 || a.LossStats["peer_ifindex"] != uint64(peerIdx) || peerIdx == 0 {
		t.Errorf("stats %v; want peer_ifindex %d only", a.LossStats, peerIdx)
	}
	// The kernel's FEC_GET and MODULE_EEPROM_GET for a driver without
	// them (EOPNOTSUPP): no FEC, no pages, and no error.
	if a.FEC != nil || a.Module != nil || a.Errors["fec"] != "" || a.Errors["module_eeprom"] != "" {
		t.Errorf("veth FEC %+v module %+v errors %v", a.FEC, a.Module, a.Errors)
	}
	// Without KeepStats no statistics are read.
	plain := LiveEthtool()
	defer plain.(interface{ Close() error }).Close()
	if b, err := plain.Answers(context.Background(), "lo"); err != nil || b.LossStats != nil || b.Errors["rings"] == "" {
		t.Errorf("lo: %+v %v", b, err)
	}
}

// The real kernel where the call exists: this host's eth0, when it is
// virtio_net, answers GRINGPARAM with a ring within its maximum, and
// List carries it.
func TestLiveEthtoolRingsEth0(t *testing.T) {
	drv, _ := os.Readlink("/sys/class/net/eth0/device/driver")
	if filepath.Base(drv) != "virtio_net" {
		t.Skip("eth0 is not virtio_net here")
	}
	n, err := Get(context.Background(), "eth0")
	if err != nil {
		t.Fatal(err)
	}
	if r := n.Rings; r == nil || r.RX <= 0 || r.RX > r.RXMax || r.TX <= 0 || r.TX > r.TXMax {
		t.Errorf("eth0 rings %+v (missing %v)", r, n.Missing)
	}
}
