package irq

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/nicdiag/nicdiag/option"
)

// writeLinkStats writes eth0's optional loss counters under root; a
// negative value leaves its file out.
func writeLinkStats(t *testing.T, root string, missed, fifo, over, txDropped int) {
	t.Helper()
	dir := filepath.Join(root, "sys/class/net/eth0/statistics")
	for name, v := range map[string]int{"rx_missed_errors": missed, "rx_fifo_errors": fifo, "rx_over_errors": over, "tx_dropped": txDropped} {
		p := filepath.Join(dir, name)
		if v < 0 {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("%d\n", v)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func writeRXDropped(t *testing.T, root string, v int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, "sys/class/net/eth0/statistics/rx_dropped"), []byte(fmt.Sprint(v)), 0o644); err != nil {
		t.Fatal(err)
	}
}

var eth0 = nicinfo.NIC{Name: "eth0", Bus: nicinfo.BusPCI, PCI: &nicinfo.PCIFunction{Address: "0000:00:03.0", IRQs: []int{38}}}

// lossHost is a 2-CPU fixture host whose eth0 has no optional counters.
func lossHost(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	hostState{cpus: []int{0, 1}, irq38: []uint64{0, 0}, stat: [][3]int{{0, 1000, 0}, {0, 1000, 0}},
		netRX: []uint64{0, 0, 0}, softnet: [][3]uint32{{}, {}}, rxPkts: 1}.write(t, root)
	return root
}

func lossString(ls []LossRate) string {
	var s []string
	for _, l := range ls {
		s = append(s, fmt.Sprintf("%s %s %g", l.Name, l.Class, l.PerS))
	}
	return strings.Join(s, "; ")
}

// TestSamplerSysfsLosses reads eth0's interface loss counters from sysfs
// fixtures with known deltas over 2 s intervals.
func TestSamplerSysfsLosses(t *testing.T) {
	root := lossHost(t)
	writeLinkStats(t, root, 10, 20, 30, 40)
	now := time.Unix(1000, 0)
	s, err := NewSampler(context.Background(), []nicinfo.NIC{eth0}, option.Root(root), WithInterval(time.Millisecond),
		withClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	next := func() NICRate {
		t.Helper()
		now = now.Add(2 * time.Second)
		x, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return x.NICs[0]
	}
	// +20 missed, +2 fifo, over unchanged, +400 tx dropped, +6 rx dropped.
	writeLinkStats(t, root, 30, 22, 30, 440)
	writeRXDropped(t, root, 6)
	n := next()
	want := "sysfs:rx_dropped dropped 3; sysfs:rx_fifo_errors nic 1; sysfs:rx_missed_errors nic 10; sysfs:rx_over_errors nic 0; sysfs:tx_dropped tx 200"
	if got := lossString(n.Losses); got != want {
		t.Errorf("losses\n got %s\nwant %s", got, want)
	}
	if n.RXDroppedPerS != 3 {
		t.Errorf("RXDroppedPerS = %v, want 3 (kept as it was)", n.RXDroppedPerS)
	}
	// The driver was reloaded: rx_missed_errors restarted and has counted 4.
	writeLinkStats(t, root, 4, 22, 30, 440)
	if got := lossString(next().Losses); !strings.Contains(got, "sysfs:rx_missed_errors nic 2;") {
		t.Errorf("after a reset: %s", got)
	}
	// An older kernel (or snapshot) without the optional files: rx_dropped
	// stays, at 0/s, and the others are not counted (absent, not 0).
	writeLinkStats(t, root, -1, -1, -1, -1)
	if got := lossString(next().Losses); got != "sysfs:rx_dropped dropped 0" {
		t.Errorf("without the optional files: %s", got)
	}
	// A counter that appears between two readings has no rate yet.
	writeLinkStats(t, root, -1, 5, -1, -1)
	if got := lossString(next().Losses); got != "sysfs:rx_dropped dropped 0" {
		t.Errorf("rx_fifo_errors new at this reading: %s", got)
	}
	if got := lossString(next().Losses); got != "sysfs:rx_dropped dropped 0; sysfs:rx_fifo_errors nic 0" {
		t.Errorf("rx_fifo_errors at both readings: %s", got)
	}
	// A required counter missing fails the link read: no losses from it.
	if err := os.Remove(filepath.Join(root, "sys/class/net/eth0/statistics/rx_packets")); err != nil {
		t.Fatal(err)
	}
	if n := next(); n.StatsError == "" || len(n.Losses) != 0 {
		t.Errorf("without rx_packets: stats error %q, losses %s", n.StatsError, lossString(n.Losses))
	}
}

// TestSysfsStatsOptional reads the fixture without the optional files, as
// older fixtures are: the read succeeds and says they are absent.
func TestSysfsStatsOptional(t *testing.T) {
	root := lossHost(t)
	src := &sysfsStats{r: newOptions([]Option{option.Root(root)}).root}
	c, err := src.counters("eth0")
	if err != nil || c.Has != 0 || c.RXPackets != 1 {
		t.Errorf("no optional files: %+v, %v", c, err)
	}
	writeLinkStats(t, root, 1, -1, 3, -1)
	c, err = src.counters("eth0")
	if err != nil || c.Has != hasRXMissedErrors|hasRXOverErrors || c.RXMissedErrors != 1 || c.RXOverErrors != 3 {
		t.Errorf("two optional files: %+v, %v", c, err)
	}
	// An optional file that is there but unreadable is an error, as a
	// required one is.
	if err := os.WriteFile(filepath.Join(root, "sys/class/net/eth0/statistics/tx_dropped"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := src.counters("eth0"); err == nil {
		t.Error("malformed tx_dropped read without error")
	}
}

func TestLossClass(t *testing.T) {
	for name, want := range map[string]LossClass{
		// igb, igc, e1000e, ixgbe
		"rx_no_buffer_count": LossNIC, "rx_flow_control_xoff": LossPauseRX, "tx_flow_control_xon": LossPauseTX,
		// ixgbe
		"rx_no_dma_resources": LossNIC,
		// i40e
		"port.rx_dropped": LossNIC, "port.rx_discards": LossNIC, "port.tx_dropped_link_down": LossTX,
		"port.link_xoff_rx": LossPauseRX, "port.link_xon_tx": LossPauseTX, "link_xoff_tx": LossPauseTX,
		// ice
		"rx_dropped.nic": LossNIC, "link_xon_rx.nic": LossPauseRX, "link_xoff_tx.nic": LossPauseTX, "tx_dropped_link_down.nic": LossTX,
		// mlx5
		"rx_out_of_buffer": LossNIC, "rx_discards_phy": LossNIC, "tx_discards_phy": LossTX,
		"rx_pause_ctrl_phy": LossPauseRX, "tx_pause_ctrl_phy": LossPauseTX,
		// mlx4
		"rx_pause": LossPauseRX, "tx_pause": LossPauseTX,
		// bnxt_en
		"rx_pause_frames": LossPauseRX, "tx_pause_frames": LossPauseTX, "rx_total_ring_discards": LossNIC,
		"tx_total_ring_discards": LossTX, "rx_total_oom_discards": LossNIC, "rx_total_discard_pkts": LossNIC, "tx_total_discard_pkts": LossTX,
		// ena
		"bw_in_allowance_exceeded": LossAllowance, "bw_out_allowance_exceeded": LossAllowance, "pps_allowance_exceeded": LossAllowance,
		"conntrack_allowance_exceeded": LossAllowance, "linklocal_allowance_exceeded": LossAllowance,
		// r8169
		"rx_missed": LossNIC,
	} {
		if got, ok := lossClass(name); !ok || got != want {
			t.Errorf("lossClass(%q) = %q %v, want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{
		// interface statistics the drivers repeat: sysfs: has them
		"rx_dropped", "tx_dropped", "rx_missed_errors", "rx_fifo_errors", "rx_over_errors", "rx_drops",
		// per queue or per priority
		"rx_queue_0_drops", "rx0_drops", "rx_prio3_pause", "tx_pb_0_pxon", "rx_pause_prio_0", "[0]: rx_discards",
		// not drops, or not of packets
		"rx_packets", "alloc_rx_buff_failed", "rx_alloc_fail", "rx_buff_alloc_err", "rx_pause_duration",
		"conntrack_allowance_available", "rx_crc_errors", "", "RX_NO_BUFFER_COUNT", "rx_no_buffer_count ",
	} {
		if c, ok := lossClass(name); ok {
			t.Errorf("lossClass(%q) = %q", name, c)
		}
	}
	for name, c := range lossClasses {
		switch c {
		case LossNIC, LossTX, LossPauseRX, LossPauseTX, LossAllowance:
		default:
			t.Errorf("%q has class %q", name, c)
		}
	}
}

// TestEthtoolLosses picks the loss counters out of an igb-like ethtool -S.
func TestEthtoolLosses(t *testing.T) {
	m := lossCounters{}
	ethtoolLosses(map[string]uint64{
		"rx_packets": 100, "rx_no_buffer_count": 7, "rx_missed_errors": 3, "rx_flow_control_xoff": 0,
		"rx_queue_0_drops": 9, "tx_flow_control_xon": 2,
	}, m)
	want := lossCounters{
		"ethtool:rx_no_buffer_count":   {LossNIC, 7},
		"ethtool:rx_flow_control_xoff": {LossPauseRX, 0},
		"ethtool:tx_flow_control_xon":  {LossPauseTX, 2},
	}
	if len(m) != len(want) {
		t.Errorf("losses = %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %+v, want %+v", k, m[k], v)
		}
	}
}

// TestSamplerDriverLosses feeds fake queue and loss sources: the loss
// source is asked only where the queue read was not of ethtool already,
// entries come sysfs:, qstats:, ethtool:, and a failed read is named in
// Missing.
func TestSamplerDriverLosses(t *testing.T) {
	root := lossHost(t)
	now := time.Unix(1000, 0)
	var queue queueCounters
	var eth lossCounters
	var ethErr error
	ethReads := 0
	qs := queueStatsFunc(func(string) (queueCounters, error) { return queue, nil })
	ls := lossStatsFunc(func(iface string) (lossCounters, error) {
		if iface != "eth0" {
			t.Errorf("losses of %q", iface)
		}
		ethReads++
		return eth, ethErr
	})
	// netdev qstats answered (a driver like mlx5): its drop counters come
	// with the queue counters, the ethtool ones from the loss source.
	set := func(hwDrops, outOfBuffer, pause uint64) {
		queue = queueCounters{Losses: lossCounters{"qstats:rx-hw-drops": {LossNIC, hwDrops}}}
		eth = lossCounters{"ethtool:rx_out_of_buffer": {LossNIC, outOfBuffer}, "ethtool:rx_pause_ctrl_phy": {LossPauseRX, pause}}
	}
	set(100, 50, 7)
	s, err := NewSampler(context.Background(), []nicinfo.NIC{eth0}, option.Root(root), WithInterval(time.Millisecond),
		withClock(func() time.Time { return now }), withQueueStats(qs), withLossStats(ls))
	if err != nil {
		t.Fatal(err)
	}
	next := func() Sample {
		t.Helper()
		now = now.Add(2 * time.Second)
		x, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	set(140, 90, 7)
	x := next()
	want := "sysfs:rx_dropped dropped 0; qstats:rx-hw-drops nic 20; ethtool:rx_out_of_buffer nic 20; ethtool:rx_pause_ctrl_phy pause_rx 0"
	if got := lossString(x.NICs[0].Losses); got != want {
		t.Errorf("losses\n got %s\nwant %s", got, want)
	}
	if ethReads != 2 {
		t.Errorf("%d loss reads, want one per reading (2)", ethReads)
	}
	// The queue read fell back to ethtool (a driver like igb) and brought
	// the loss counters: no second read.
	queue = queueCounters{Ethtool: true, Losses: lossCounters{"ethtool:rx_no_buffer_count": {LossNIC, 10}}}
	next()
	queue.Losses = lossCounters{"ethtool:rx_no_buffer_count": {LossNIC, 16}}
	x = next()
	if got := lossString(x.NICs[0].Losses); got != "sysfs:rx_dropped dropped 0; ethtool:rx_no_buffer_count nic 3" {
		t.Errorf("losses from the queue read: %s", got)
	}
	if ethReads != 2 {
		t.Errorf("%d loss reads, want none after the queue read had ethtool's (2)", ethReads)
	}
	// The loss source fails: the interface's losses stay, Missing says why.
	queue = queueCounters{}
	ethErr = errors.New("boom")
	x = next()
	if got := lossString(x.NICs[0].Losses); got != "sysfs:rx_dropped dropped 0" {
		t.Errorf("losses with the loss source failing: %s", got)
	}
	if !slices.Contains(x.Missing, "ethtool -S eth0: boom") {
		t.Errorf("missing = %q", x.Missing)
	}
}

// TestSamplerPauseLosses checks that the ethtool netlink pause counters are
// read once per NIC per reading, also when the queue read brought the
// ethtool ones, come after ethtool:, and that a failed read is named in
// Missing.
func TestSamplerPauseLosses(t *testing.T) {
	root := lossHost(t)
	now := time.Unix(1000, 0)
	var pause pauseCounts
	var pauseErr error
	reads := 0
	qs := queueStatsFunc(func(string) (queueCounters, error) {
		return queueCounters{Ethtool: true, Losses: lossCounters{"ethtool:rx_pause": {LossPauseRX, pause.RX}}}, nil
	})
	ps := lossStatsFunc(func(iface string) (lossCounters, error) {
		reads++
		m := lossCounters{}
		pause.losses(m)
		return m, pauseErr
	})
	pause = pauseCounts{TX: 10, RX: 100, HasTX: true, HasRX: true}
	s, err := NewSampler(context.Background(), []nicinfo.NIC{eth0}, option.Root(root), WithInterval(time.Millisecond),
		withClock(func() time.Time { return now }), withQueueStats(qs), withLossStats(nil), withPauseStats(ps))
	if err != nil {
		t.Fatal(err)
	}
	next := func() Sample {
		t.Helper()
		now = now.Add(2 * time.Second)
		x, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	pause = pauseCounts{TX: 30, RX: 140, HasTX: true, HasRX: true}
	x := next()
	want := "sysfs:rx_dropped dropped 0; ethtool:rx_pause pause_rx 20; ethtool-nl:rx_pause_frames pause_rx 20; ethtool-nl:tx_pause_frames pause_tx 10"
	if got := lossString(x.NICs[0].Losses); got != want {
		t.Errorf("losses\n got %s\nwant %s", got, want)
	}
	if reads != 2 {
		t.Errorf("%d pause reads, want one per reading (2)", reads)
	}
	pause, pauseErr = pauseCounts{}, errors.New("boom")
	x = next()
	if got := lossString(x.NICs[0].Losses); got != "sysfs:rx_dropped dropped 0; ethtool:rx_pause pause_rx 0" {
		t.Errorf("losses with the pause source failing: %s", got)
	}
	if !slices.Contains(x.Missing, "ethtool pause eth0: boom") {
		t.Errorf("missing = %q", x.Missing)
	}
}

// TestSamplerLossesOffUnderRoot checks that a snapshot root does not read
// the live host's ethtool loss counters by default.
func TestSamplerLossesOffUnderRoot(t *testing.T) {
	if o := newOptions([]Option{option.Root(t.TempDir())}); o.pauseStats != nil {
		t.Errorf("pause stats under a root: %T", o.pauseStats)
	}
	if o := newOptions([]Option{withPauseStats(nil)}); o.pauseStats != nil {
		t.Error("withPauseStats(nil) did not turn them off")
	}
	if o := newOptions([]Option{option.Root(t.TempDir())}); o.lossStats != nil {
		t.Errorf("loss stats under a root: %T", o.lossStats)
	}
	// The live default reads in the namespace of WithNetns, over the
	// sockets the other live sources share.
	if o := newOptions([]Option{WithNetns("/run/netns/x")}); o.conn == nil || o.conn.path != "/run/netns/x" || o.lossStats != (ethtoolLossStats{conn: o.conn}) {
		t.Errorf("live loss stats = %#v", o.lossStats)
	}
	if o := newOptions([]Option{withLossStats(nil)}); o.lossStats != nil {
		t.Error("withLossStats(nil) did not turn them off")
	}
}

func TestSummarizeLosses(t *testing.T) {
	t0 := time.Unix(0, 0)
	nic := func(ls ...LossRate) []NICRate { return []NICRate{{Name: "eth0", Losses: ls}} }
	s := Summarize([]Sample{
		{Time: t0.Add(time.Second), IntervalS: 1, NICs: nic(
			LossRate{Name: "ethtool:rx_out_of_buffer", Class: LossNIC, PerS: 100},
			LossRate{Name: "sysfs:rx_dropped", Class: LossDropped, PerS: 8})},
		{Time: t0.Add(4 * time.Second), IntervalS: 3, NICs: nic(
			LossRate{Name: "sysfs:rx_dropped", Class: LossDropped, PerS: 0},
			LossRate{Name: "qstats:rx-hw-drops", Class: LossNIC, PerS: 4})},
	})
	// rx_dropped over 4 s: (8×1 + 0×3)/4; rx-hw-drops and rx_out_of_buffer
	// over the seconds they were counted in.
	want := "sysfs:rx_dropped dropped 2; qstats:rx-hw-drops nic 4; ethtool:rx_out_of_buffer nic 100"
	if got := lossString(s.NICs[0].Losses); got != want {
		t.Errorf("window losses\n got %s\nwant %s", got, want)
	}
}

// TestKernelEthtoolLossStats reads the live loss source: lo has no ethtool
// statistics (EOPNOTSUPP: no losses, no error), an unknown interface is an
// error, and eth0's driver answers.
func TestKernelEthtoolLossStats(t *testing.T) {
	src := ethtoolLossStats{conn: testConn(t, "")}
	if l, err := src.losses("lo"); err != nil || len(l) != 0 {
		t.Errorf("lo: %v, %v", l, err)
	}
	if _, err := src.losses("nicdiag-nope0"); err == nil {
		t.Error("unknown interface read without error")
	}
	if _, err := os.Stat("/sys/class/net/eth0"); err != nil {
		t.Skip("no eth0")
	}
	l, err := src.losses("eth0")
	if err != nil {
		t.Fatalf("eth0: %v", err)
	}
	for name, c := range l {
		if !strings.HasPrefix(name, lossEthtool) || c.Class == "" {
			t.Errorf("eth0 %s: %+v", name, c)
		}
	}
	t.Logf("eth0: %d ethtool loss counters: %v", len(l), l)
}
