package irq

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/netnstest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
	"github.com/safchain/ethtool"
)

func TestParseQueueStatName(t *testing.T) {
	for _, c := range []struct {
		name  string
		dir   QueueKind
		index int
		bytes bool
	}{
		{"rx_queue_0_packets", KindRX, 0, false}, // igb, igc, ixgbe, ice, hv_netvsc, old virtio_net
		{"rx_queue_15_bytes", KindRX, 15, true},
		{"tx_queue_3_packets", KindTX, 3, false},
		{"tx_queue_3_bytes", KindTX, 3, true},
		{"rx-0.packets", KindRX, 0, false}, // i40e, iavf
		{"tx-7.bytes", KindTX, 7, true},
		{"rx-2.rx_packets", KindRX, 2, false}, // sfc, old i40e
		{"tx-2.tx_bytes", KindTX, 2, true},
		{"rx0_packets", KindRX, 0, false}, // mlx5, mlx4
		{"rx63_bytes", KindRX, 63, true},
		{"tx12_packets", KindTX, 12, false},
		{"tx12_bytes", KindTX, 12, true},
		{"queue_0_rx_cnt", KindRX, 0, false}, // ena
		{"queue_4_rx_bytes", KindRX, 4, true},
		{"queue_4_tx_cnt", KindTX, 4, false},
		{"queue_4_tx_bytes", KindTX, 4, true},
		{"[0]: rx_ucast_packets", KindRX, 0, false}, // bnxt_en
		{"[9]: rx_bcast_bytes", KindRX, 9, true},
		{"[9]: tx_mcast_packets", KindTX, 9, false},
	} {
		q, ok := parseQueueStatName(c.name)
		if !ok || q.dir != c.dir || q.index != c.index || q.bytes != c.bytes {
			t.Errorf("%q → %+v %v, want %s %d bytes=%v", c.name, q, ok, c.dir, c.index, c.bytes)
		}
	}
	for _, name := range []string{
		"", "rx", "rx_packets", "tx_bytes", // totals
		"rx0_drops", "rx0_kicks", "tx0_xdp_tx", "rx_queue_0_drops", // virtio_net 6.10+, igb drops
		"rx_queue_0_xdp_packets", "rx_queue_0_xdp_bytes", "tx_queue_0_xdp_xmit", // veth: XDP only
		"rx0_xdp_tx_xmit", "ptp_rx0_packets", "qos_tx0_packets", "rx00_packets", "rx-01.packets",
		"rx123456_packets", "rx-1.tx_packets", "rx-1.", "rx_queue__packets", "rx_queue_1packets",
		"queue_0_rx_drops", "queue_0_xdp_tx_cnt", "queue_0_rx", "[0] rx_ucast_packets",
		"[0]: rx_discards", "[0]: rx_ucast_pkts", "[]: rx_ucast_packets", "RX0_packets", "rx0_packets ",
		"rx-0.packets\x00",
	} {
		if q, ok := parseQueueStatName(name); ok {
			t.Errorf("%q parsed as %+v", name, q)
		}
	}
}

// queueStatForms renders every name form parseQueueStatName accepts.
func queueStatForms(kind QueueKind, index int, bytes bool) []string {
	dir := string(kind)
	field, ena := "packets", "cnt"
	if bytes {
		field, ena = "bytes", "bytes"
	}
	n := strconv.Itoa(index)
	return []string{
		dir + "_queue_" + n + "_" + field,
		dir + "-" + n + "." + field,
		dir + "-" + n + "." + dir + "_" + field,
		dir + n + "_" + field,
		"queue_" + n + "_" + dir + "_" + ena,
		"[" + n + "]: " + dir + "_ucast_" + field,
		"[" + n + "]: " + dir + "_mcast_" + field,
		"[" + n + "]: " + dir + "_bcast_" + field,
	}
}

func FuzzParseQueueStatName(f *testing.F) {
	for _, s := range []string{"rx_queue_0_packets", "tx-7.bytes", "rx-2.rx_packets", "rx63_bytes",
		"queue_4_tx_cnt", "[9]: rx_bcast_bytes", "rx0_drops", "rx_queue_0_xdp_packets", "rx00_packets"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, ok := parseQueueStatName(s)
		if !ok {
			return
		}
		if (q.dir != KindRX && q.dir != KindTX) || q.index < 0 || q.index >= 100000 {
			t.Fatalf("%q → %+v", s, q)
		}
		// What it accepts is exactly one of the documented forms.
		for _, form := range queueStatForms(q.dir, q.index, q.bytes) {
			if form == s {
				return
			}
		}
		t.Fatalf("%q → %+v, which is none of the documented forms", s, q)
	})
}

func TestParseQueueStatsDrivers(t *testing.T) {
	// An igb-like NIC with two queues, the NIC-wide totals and other
	// per-queue statistics mixed in.
	igb := parseQueueStats(map[string]uint64{
		"rx_packets": 999, "tx_packets": 999,
		"rx_queue_0_packets": 10, "rx_queue_0_bytes": 1000, "rx_queue_0_drops": 5,
		"rx_queue_1_packets": 20, "rx_queue_1_bytes": 2000,
		"tx_queue_0_packets": 30, "tx_queue_0_bytes": 3000, "tx_queue_0_restart": 1,
	})
	want := queueCounter{Packets: 20, Bytes: 2000, HasPackets: true, HasBytes: true}
	if len(igb.RX) != 2 || igb.RX[1] != want || len(igb.TX) != 1 || igb.TX[0].Bytes != 3000 {
		t.Errorf("igb: %+v", igb)
	}
	// bnxt_en counts unicast, multicast and broadcast apart: summed.
	bnxt := parseQueueStats(map[string]uint64{
		"[0]: rx_ucast_packets": 100, "[0]: rx_mcast_packets": 2, "[0]: rx_bcast_packets": 1,
		"[0]: rx_ucast_bytes": 1e5, "[0]: rx_mcast_bytes": 200, "[0]: rx_bcast_bytes": 64,
		"[0]: rx_discards": 7,
	})
	if c := bnxt.RX[0]; c.Packets != 103 || c.Bytes != 100264 {
		t.Errorf("bnxt: %+v", bnxt)
	}
	// sfc counts packets only: bytes are absent, not 0.
	sfc := parseQueueStats(map[string]uint64{"rx-0.rx_packets": 5, "tx-0.tx_packets": 6})
	if c := sfc.RX[0]; !c.HasPackets || c.HasBytes || c.Packets != 5 {
		t.Errorf("sfc: %+v", sfc)
	}
}

// TestParseQueueStatsVirtio618 reads a real `ethtool -S` of virtio_net on
// Linux 6.18: per-queue drops and kicks, but no per-queue packets or bytes.
func TestParseQueueStatsVirtio618(t *testing.T) {
	f, err := os.Open("testdata/virtio_net-6.18-ethtool-S.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if !ok {
			t.Fatalf("line %q", sc.Text())
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		m[k] = n
	}
	if len(m) < 10 || m["rx0_kicks"] == 0 {
		t.Fatalf("fixture: %v", m)
	}
	if c := parseQueueStats(m); len(c.RX)+len(c.TX) != 0 {
		t.Errorf("found per-queue counters in virtio_net 6.18 statistics: %+v", c)
	}
}

// TestSamplerQueueRatesAcrossReset feeds fixed per-queue counters through
// three readings: a normal interval, then one in which the driver's
// counters restarted (ethtool -L, driver reload).
func TestSamplerQueueRatesAcrossReset(t *testing.T) {
	root := t.TempDir()
	h := hostState{
		cpus: []int{0, 1}, irq38: []uint64{0, 100}, stat: [][3]int{{0, 1000, 0}, {0, 1000, 0}},
		netRX: []uint64{0, 0, 0}, softnet: [][3]uint32{{0, 0, 0}, {0, 0, 0}}, rxPkts: 1,
	}
	h.write(t, root)
	now := time.Unix(1000, 0)
	var cur queueCounters
	var curErr error
	reads := 0
	fake := queueStatsFunc(func(iface string) (queueCounters, error) {
		if iface != "eth0" {
			t.Errorf("queue counters of %q", iface)
		}
		reads++
		return cur, curErr
	})
	set := func(rxPkts, rxBytes, txPkts uint64) { cur = queue0(rxPkts, rxBytes, txPkts) }
	set(1000, 1_500_000, 7)
	nic := nicinfo.NIC{Name: "eth0", Bus: nicinfo.BusPCI, PCI: &nicinfo.PCIFunction{Address: "0000:00:03.0", IRQs: []int{38}}}
	s, err := NewSampler(context.Background(), []nicinfo.NIC{nic}, option.Root(root), WithInterval(time.Millisecond),
		withClock(func() time.Time { return now }), withQueueStats(fake))
	if err != nil {
		t.Fatal(err)
	}
	next := func() QueueRate {
		t.Helper()
		now = now.Add(2 * time.Second)
		return nextRXQueue(t, s)
	}
	// 3000 packets and 4.5 MB in 2 s.
	set(4000, 6_000_000, 9)
	q := next()
	if q.RXPacketsPerS == nil || *q.RXPacketsPerS != 1500 || q.RXBytesPerS == nil || *q.RXBytesPerS != 2_250_000 {
		t.Errorf("interval 1: rx %v pkt/s %v B/s", ptrStr(q.RXPacketsPerS), ptrStr(q.RXBytesPerS))
	}
	// The counters restarted and have counted 600 packets since.
	set(600, 900_000, 0)
	q = next()
	if q.RXPacketsPerS == nil || *q.RXPacketsPerS != 300 || q.RXBytesPerS == nil || *q.RXBytesPerS != 450_000 {
		t.Errorf("after reset: rx %v pkt/s %v B/s", ptrStr(q.RXPacketsPerS), ptrStr(q.RXBytesPerS))
	}
	// The driver no longer has queue 0: no rate, not 0.
	cur = queueCounters{}
	if q = next(); q.HasTraffic() {
		t.Errorf("queue without counters: %+v", q)
	}
	// A read error is reported on the NIC.
	set(700, 1_000_000, 0)
	curErr = errors.New("boom")
	now = now.Add(2 * time.Second)
	x, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if x.NICs[0].QueueStatsError != "boom" || x.NICs[0].Queues[0].HasTraffic() {
		t.Errorf("read error: %+v", x.NICs[0])
	}
	if reads != 5 {
		t.Errorf("%d reads of the queue counters, want one per reading (5)", reads)
	}
	if sum := Summarize([]Sample{x}); sum.NICs[0].QueueStatsError != "boom" {
		t.Errorf("summary lost the queue stats error: %+v", sum.NICs[0])
	}
}

// queue0 is the driver's counters of queue 0: rx packets and bytes, and
// tx packets (vector 38 is virtio2-input.0, rx only: its tx counter must
// not reach it).
func queue0(rxPkts, rxBytes, txPkts uint64) queueCounters {
	return queueCounters{
		RX: map[int]queueCounter{0: {Packets: rxPkts, Bytes: rxBytes, HasPackets: true, HasBytes: true}},
		TX: map[int]queueCounter{0: {Packets: txPkts, HasPackets: true}},
	}
}

// nextRXQueue takes s's next sample and returns its one NIC's one queue,
// which must be rx queue 0 with no tx rates.
func nextRXQueue(t *testing.T, s *Sampler) QueueRate {
	t.Helper()
	x, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(x.NICs) != 1 || len(x.NICs[0].Queues) != 1 {
		t.Fatalf("NICs = %+v", x.NICs)
	}
	q := x.NICs[0].Queues[0]
	if q.Kind != KindRX || q.Index != 0 {
		t.Fatalf("queue = %+v", q)
	}
	if q.TXPacketsPerS != nil || q.TXBytesPerS != nil {
		t.Errorf("rx vector got tx rates %v %v", q.TXPacketsPerS, q.TXBytesPerS)
	}
	return q
}

// TestSamplerQueueStatsOffUnderRoot checks that a snapshot root does not
// read the live host's ethtool counters by default.
func TestSamplerQueueStatsOffUnderRoot(t *testing.T) {
	if o := newOptions([]Option{option.Root(t.TempDir())}); o.queueStats != nil {
		t.Errorf("queue stats under a root: %T", o.queueStats)
	}
	if o := newOptions(nil); o.queueStats == nil {
		t.Error("no queue stats on the live host")
	}
	if o := newOptions([]Option{withQueueStats(nil)}); o.queueStats != nil {
		t.Error("withQueueStats(nil) did not turn them off")
	}
}

func ptrStr(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// TestKernelEthtoolQueueStatsEth0 reads this host's eth0 through the live
// source. It skips when there is no eth0 or its driver exposes no per-queue
// packet counters through ethtool (virtio_net since 6.10).
func TestKernelEthtoolQueueStatsEth0(t *testing.T) {
	if _, err := os.Stat("/sys/class/net/eth0"); err != nil {
		t.Skip("no eth0")
	}
	src := ethtoolQueueStats{conn: testConn(t, "")}
	a, err := src.counters("eth0")
	if err != nil {
		t.Fatalf("eth0: %v", err)
	}
	if len(a.RX) == 0 && len(a.TX) == 0 {
		raw, _ := ethtool.Stats("eth0")
		drv, _ := ethtool.DriverName("eth0")
		names := make([]string, 0, len(raw))
		for k := range raw {
			names = append(names, k)
		}
		t.Skipf("eth0 (%s) has no per-queue packet counters in its ethtool statistics: %v", drv, names)
	}
	rx0, okRX := a.RX[0]
	tx0, okTX := a.TX[0]
	if !okRX && !okTX {
		t.Fatalf("per-queue counters without queue 0: %+v", a)
	}
	if okRX && !rx0.HasPackets && !rx0.HasBytes || okTX && !tx0.HasPackets && !tx0.HasBytes {
		t.Fatalf("queue 0 counters are empty: rx %+v tx %+v", rx0, tx0)
	}
	b, err := src.counters("eth0")
	if err != nil {
		t.Fatal(err)
	}
	if okRX && b.RX[0].Packets < rx0.Packets || okTX && b.TX[0].Packets < tx0.Packets {
		t.Errorf("queue 0 counters went down: %+v then %+v", a, b)
	}
	t.Logf("eth0 queue 0: rx %+v tx %+v", rx0, tx0)
}

// TestKernelEthtoolQueueStatsVethNetns makes a veth pair in a throwaway
// namespace and reads it through a source bound to it, against
// safchain/ethtool's reading through a handle made there (the oracle).
// veth has only XDP per-queue counters, which are not packet counters of
// the queue.
func TestKernelEthtoolQueueStatsVethNetns(t *testing.T) {
	ns, _ := vethInNS(t, "ndq0", "ndq1")
	var e *ethtool.Ethtool
	var err error
	netnstest.Do(t, ns, func() { e, err = ethtool.NewEthtool() })
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	raw, err := e.Stats("ndq0")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := raw["rx_queue_0_xdp_packets"]; !ok {
		t.Logf("veth statistics changed: %v", raw)
	}
	want := safchainCounters(raw)
	c, err := (ethtoolQueueStats{conn: testConn(t, netnstest.Path(ns))}).counters("ndq0")
	if err != nil || !reflect.DeepEqual(c, want) {
		t.Errorf("veth through its namespace's path: %+v, %v; safchain %+v", c, err, want)
	}
	if len(c.RX)+len(c.TX) != 0 {
		t.Errorf("veth per-queue counters: %+v (from %v)", c, raw)
	}
	// The caller's namespace has no ndq0.
	if _, err := (ethtoolQueueStats{conn: testConn(t, "")}).counters("ndq0"); err == nil {
		t.Error("a socket in the caller's namespace found ndq0")
	}
}

// safchainCounters makes the counters the ethtool sources read of a
// driver's statistics as safchain/ethtool returns them (a name → value
// map): their oracle.
func safchainCounters(m map[string]uint64) queueCounters {
	c := parseQueueStats(m)
	c.Losses, c.Ethtool = lossCounters{}, true
	ethtoolLosses(m, c.Losses)
	return c
}
