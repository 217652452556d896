package irq

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/nicdiag/nicdiag/internal/netnstest"
)

func sysfsCounter(t *testing.T, iface, name string) uint64 {
	t.Helper()
	b, err := os.ReadFile("/sys/class/net/" + iface + "/statistics/" + name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestKernelNetdevQueueStatsEth0 reads this host's eth0 over netdev
// netlink qstats and checks queue 0 and the per-queue sums against the
// interface totals in sysfs, read just before and after. It skips where
// the kernel (before 6.8) or the driver has no queue statistics.
func TestKernelNetdevQueueStatsEth0(t *testing.T) {
	if _, err := os.Stat("/sys/class/net/eth0"); err != nil {
		t.Skip("no eth0")
	}
	const slack = 64 // packets that may arrive between two reads
	rxBefore, txBefore := sysfsCounter(t, "eth0", "rx_packets"), sysfsCounter(t, "eth0", "tx_packets")
	c, err := (&netdevQueueStats{conn: testConn(t, "")}).counters("eth0")
	rxAfter, txAfter := sysfsCounter(t, "eth0", "rx_packets"), sysfsCounter(t, "eth0", "tx_packets")
	if errors.Is(err, errNoQstats) {
		t.Skipf("no netdev queue statistics for eth0: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	rx0, tx0 := c.RX[0], c.TX[0]
	if !rx0.HasPackets || !tx0.HasPackets {
		t.Fatalf("queue 0 lacks packet counters: rx %+v tx %+v", rx0, tx0)
	}
	var rx, tx uint64
	for _, q := range c.RX {
		rx += q.Packets
	}
	for _, q := range c.TX {
		tx += q.Packets
	}
	if rx+slack < rxBefore || rx > rxAfter+slack {
		t.Errorf("rx packets over %d queues = %d, sysfs %d..%d", len(c.RX), rx, rxBefore, rxAfter)
	}
	if tx+slack < txBefore || tx > txAfter+slack {
		t.Errorf("tx packets over %d queues = %d, sysfs %d..%d", len(c.TX), tx, txBefore, txAfter)
	}
	t.Logf("eth0: %d rx queues, %d packets (sysfs %d..%d); %d tx queues, %d packets (sysfs %d..%d); queue 0 rx %+v tx %+v",
		len(c.RX), rx, rxBefore, rxAfter, len(c.TX), tx, txBefore, txAfter, rx0, tx0)
}

// TestKernelNetdevQueueStatsNoRows checks that an interface whose driver
// has no queue statistics (lo) says so with errNoQstats, so the default
// falls back to ethtool, and that an unknown one is an error.
func TestKernelNetdevQueueStatsNoRows(t *testing.T) {
	s := &netdevQueueStats{conn: testConn(t, "")}
	if _, err := s.counters("lo"); !errors.Is(err, errNoQstats) {
		t.Errorf("lo: %v, want errNoQstats", err)
	}
	if _, err := s.counters("nicdiag-nope0"); err == nil || errors.Is(err, errNoQstats) {
		t.Errorf("unknown interface: %v", err)
	}
	if _, err := defaultQueueStats(testConn(t, "")).counters("lo"); err != nil {
		t.Errorf("default on lo: %v (ethtool fallback)", err)
	}
}

// TestKernelNetdevQueueStatsNetns reads a veth made in a throwaway
// namespace through a source bound to it: the link resolves there (veth
// has no queue statistics, so errNoQstats), and not in the caller's.
func TestKernelNetdevQueueStatsNetns(t *testing.T) {
	ns, _ := vethInNS(t, "ndqs0", "ndqs1")
	if _, err := (&netdevQueueStats{conn: testConn(t, netnstest.Path(ns))}).counters("ndqs0"); !errors.Is(err, errNoQstats) {
		t.Errorf("veth in its namespace: %v, want errNoQstats", err)
	}
	if _, err := (&netdevQueueStats{conn: testConn(t, "")}).counters("ndqs0"); err == nil || errors.Is(err, errNoQstats) {
		t.Errorf("veth from the caller's namespace: %v, want not found", err)
	}
}
