package irq

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/netnstest"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// TestKernelVethTraffic joins two throwaway namespaces with a veth pair,
// sends UDP from one to the other for about 2.5 s, and checks that the
// sampler sees NET_RX softirqs rise and packets arrive on the veth.
func TestKernelVethTraffic(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	if testing.Short() {
		t.Skip("sends traffic for 3 s")
	}
	nsB, rx, tx := udpOverVeth(t)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	nic := nicinfo.NIC{Name: "ndtest1", Bus: nicinfo.BusVirtual, Kind: "veth"}
	s, err := NewSampler(ctx, []nicinfo.NIC{nic}, WithInterval(500*time.Millisecond), WithNetns(netnstest.Path(nsB)))
	if err != nil {
		t.Fatal(err)
	}
	received := make(chan int)
	go func() {
		n := 0
		buf := make([]byte, 2048)
		rx.SetReadDeadline(time.Now().Add(3500 * time.Millisecond))
		for {
			if _, err := rx.Read(buf); err != nil {
				received <- n
				return
			}
			n++
		}
	}()
	sendErrs := make(chan int, 1)
	go func() {
		msg := make([]byte, 512)
		errs := 0
		end := time.Now().Add(2500 * time.Millisecond)
		for time.Now().Before(end) {
			if _, err := tx.Write(msg); err != nil {
				errs++ // the link may take a moment to come up
			}
		}
		sendErrs <- errs
	}()
	var samples []Sample
	for {
		x, err := s.Next(ctx)
		if err != nil {
			break
		}
		samples = append(samples, x)
	}
	got := <-received
	t.Logf("%d send errors", <-sendErrs)
	// About 5 samples on a quiet machine; a loaded one (the race detector,
	// other packages' tests) may take only 2 in the 3 s.
	if len(samples) < 2 || got == 0 {
		t.Fatalf("%d samples, %d datagrams received", len(samples), got)
	}
	var netRX, pkts float64
	for _, x := range samples {
		for _, c := range x.CPUs {
			netRX += c.NetRXPerS * x.IntervalS
		}
		pkts += x.NICs[0].RXPacketsPerS * x.IntervalS
		if x.NICs[0].StatsError != "" {
			t.Fatal(x.NICs[0].StatsError)
		}
		// veth has no NIC to miss or overrun; its rx/tx drops (a full
		// backlog) may move under this load.
		checkVethLosses(t, x.NICs[0].Losses, "sysfs:rx_missed_errors", "sysfs:rx_fifo_errors", "sysfs:rx_over_errors")
	}
	t.Logf("%d datagrams received; sampler saw %.0f NET_RX softirqs and %.0f packets on ndtest1", got, netRX, pkts)
	if netRX <= 0 {
		t.Error("NET_RX softirqs did not rise while a veth received traffic")
	}
	if pkts < float64(got)/2 {
		t.Errorf("ndtest1 rx packets %.0f, listener got %d", pkts, got)
	}
}

// udpOverVeth joins two throwaway namespaces with the veth pair
// ndtest0 (192.0.2.1, in the first) – ndtest1 (192.0.2.2, in nsB), and
// returns a UDP listener on ndtest1's port 9999 and a socket of the first
// namespace sending to it; both close when the test ends.
func udpOverVeth(t *testing.T) (nsB netns.NsHandle, rx, tx *net.UDPConn) {
	t.Helper()
	nsA := netnstest.New(t)
	nsB = netnstest.New(t)
	hA, hB := netnstest.Handle(t, nsA), netnstest.Handle(t, nsB)
	netnstest.Veth(t, hA, "ndtest0", "ndtest1")
	peer, err := hA.LinkByName("ndtest1")
	if err != nil {
		t.Fatal(err)
	}
	if err := hA.LinkSetNsFd(peer, int(nsB)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		h    *netlink.Handle
		name string
		addr string
	}{{hA, "ndtest0", "192.0.2.1/24"}, {hB, "ndtest1", "192.0.2.2/24"}} {
		l, err := s.h.LinkByName(s.name)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := netlink.ParseAddr(s.addr)
		if err := s.h.AddrAdd(l, a); err != nil {
			t.Fatal(err)
		}
		if err := s.h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	netnstest.Do(t, nsB, func() {
		rx, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(192, 0, 2, 2), Port: 9999})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rx.Close() })
	netnstest.Do(t, nsA, func() {
		tx, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(192, 0, 2, 2), Port: 9999})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Close() })
	return nsB, rx, tx
}

// vethLosses are the loss entries of a veth read over netlink: the
// interface's, none from ethtool (veth's statistics are XDP counters) or
// qstats (veth has none).
var vethLosses = []string{"sysfs:rx_dropped", "sysfs:rx_fifo_errors", "sysfs:rx_missed_errors", "sysfs:rx_over_errors", "sysfs:tx_dropped"}

// checkVethLosses checks that a veth's loss entries are vethLosses, in
// that order, and that those named in zero are at 0/s.
func checkVethLosses(t *testing.T, losses []LossRate, zero ...string) {
	t.Helper()
	var names []string
	for _, l := range losses {
		names = append(names, l.Name)
		if slices.Contains(zero, l.Name) && l.PerS != 0 {
			t.Errorf("%s = %v/s on a veth", l.Name, l.PerS)
		}
	}
	if !slices.Equal(names, vethLosses) {
		t.Errorf("veth loss entries = %q, want %q", names, vethLosses)
	}
}

// testConn is a live transport in the network namespace at path ("": the
// caller's), closed when the test ends.
func testConn(t testing.TB, path string) *nsConn {
	c := newNSConn(path)
	t.Cleanup(c.close)
	return c
}

// vethInNS makes a throwaway namespace holding the veth pair name–peer and
// returns it with a netlink handle in it (closed when the test ends).
func vethInNS(t *testing.T, name, peer string) (netns.NsHandle, *netlink.Handle) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	ns := netnstest.New(t)
	h := netnstest.Handle(t, ns)
	netnstest.Veth(t, h, name, peer)
	return ns, h
}

// TestKernelSamplerWithNetns samples a veth that exists only in a throwaway
// namespace: through WithNetns its link and queue counters read without
// error; without it, and through a path that is no namespace, they fail.
func TestKernelSamplerWithNetns(t *testing.T) {
	ns, _ := vethInNS(t, "ndns0", "ndns1")
	nic := nicinfo.NIC{Name: "ndns0", Bus: nicinfo.BusVirtual, Kind: "veth"}
	sample := func(opts ...Option) NICRate {
		t.Helper()
		s, err := NewSampler(context.Background(), []nicinfo.NIC{nic}, append(opts, WithInterval(time.Millisecond))...)
		if err != nil {
			t.Fatal(err)
		}
		x, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return x.NICs[0]
	}
	n := sample(WithNetns(netnstest.Path(ns)))
	if n.StatsError != "" || n.QueueStatsError != "" {
		t.Errorf("in its namespace: stats %q, queue stats %q", n.StatsError, n.QueueStatsError)
	}
	// An idle veth: every loss counter there, at 0/s.
	checkVethLosses(t, n.Losses, vethLosses...)
	if n := sample(); n.StatsError == "" || len(n.Losses) != 0 {
		t.Errorf("the caller's namespace has counters for ndns0: %q %v", n.StatsError, n.Losses)
	}
	bad := filepath.Join(t.TempDir(), "nope")
	if n := sample(WithNetns(bad)); !strings.Contains(n.StatsError, bad) || !strings.Contains(n.QueueStatsError, bad) {
		t.Errorf("missing namespace file: stats %q, queue stats %q", n.StatsError, n.QueueStatsError)
	}
}
