package irq

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/nicinfo"
	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestKernelConnMatchesSources reads a veth pair that carried 200 frames,
// in a throwaway network namespace (and a mount namespace whose /sys is
// that namespace's), through the kept sockets of nsConn and through the
// sources they replace: interface counters over RTM_GETSTATS against
// sysfs's statistics files and against package netlink's RTM_GETLINK
// (rtmGetlink), the driver's ethtool statistics over nsConn's SIOCETHTOOL
// against safchain/ethtool's, and netdev qstats. The link is quiet when
// read (no addresses, IPv6 off): the values must be equal.
func TestKernelConnMatchesSources(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for network and mount namespaces")
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWNET); err != nil {
			fail("unshare: %v", err)
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			fail("private /: %v", err)
			return
		}
		if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
			fail("sysfs: %v", err)
			return
		}
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/default/disable_ipv6", []byte("1\n"), 0o644)
		h, err := netlink.NewHandle()
		if err != nil {
			fail("netlink: %v", err)
			return
		}
		defer h.Close()
		la := netlink.NewLinkAttrs()
		la.Name, la.NumTxQueues, la.NumRxQueues = "ndc0", 4, 4
		if err := h.LinkAdd(&netlink.Veth{LinkAttrs: la, PeerName: "ndc1"}); err != nil {
			fail("veth: %v", err)
			return
		}
		for _, n := range []string{"ndc0", "ndc1"} {
			l, err := h.LinkByName(n)
			if err == nil {
				err = h.LinkSetUp(l)
			}
			if err != nil {
				fail("up %s: %v", n, err)
				return
			}
		}
		if err := sendFrames("ndc0", 200); err != nil {
			fail("send: %v", err)
			return
		}
		time.Sleep(20 * time.Millisecond)

		c := newNSConn("")
		defer c.close()
		et, err := ethtool.NewEthtool()
		if err != nil {
			fail("safchain/ethtool: %v", err)
			return
		}
		defer et.Close()
		sysfs := &sysfsStats{r: fsroot.New("")}
		defer sysfs.close()
		for _, n := range []string{"ndc0", "ndc1"} {
			matchSources(n, c, et, sysfs, h, fail)
		}
		if _, err := c.linkStats("ndc-none"); !errors.Is(err, unix.ENODEV) {
			fail("unknown interface: %v", err)
		}
	}()
	<-done
	for _, e := range errs {
		t.Error(e)
	}
}

// matchSources reads n's counters through c and through the sources c
// replaces (sysfs, RTM_GETLINK over h, safchain/ethtool's et), and tells
// fail where they differ.
func matchSources(n string, c *nsConn, et *ethtool.Ethtool, sysfs *sysfsStats, h *netlink.Handle, fail func(string, ...any)) {
	for reading := range 2 { // alone, then in a reading (the dump)
		if reading == 1 {
			c.begin()
		}
		got, err := c.linkStats(n)
		if reading == 1 {
			c.end()
		}
		if err != nil {
			fail("%s: nsConn: %v", n, err)
			continue
		}
		want, err := sysfs.counters(n)
		if err != nil || got != want {
			fail("%s: RTM_GETSTATS %+v, sysfs %+v (%v)", n, got, want, err)
		}
		if old, err := rtmGetlink(h, n); err != nil || got != old {
			fail("%s: RTM_GETSTATS %+v, RTM_GETLINK %+v (%v)", n, got, old, err)
		}
		if got.TXPackets+got.RXPackets < 200 {
			fail("%s: %d packets: the frames were not counted", n, got.TXPackets+got.RXPackets)
		}
	}

	raw, oerr := et.Stats(n)
	old := safchainCounters(raw)
	cur, cerr := (ethtoolQueueStats{conn: c}).counters(n)
	if (oerr == nil) != (cerr == nil) || !reflect.DeepEqual(old, cur) {
		fail("%s: ethtool queues %+v (%v), safchain %+v (%v)", n, cur, cerr, old, oerr)
	}
	cl, cerr := (ethtoolLossStats{conn: c}).losses(n)
	if cerr != nil || !maps.Equal(old.Losses, cl) {
		fail("%s: ethtool losses %v (%v), safchain %v", n, cl, cerr, old.Losses)
	}
	if t, err := c.ethtoolStats(n); err != nil || t.n == 0 {
		fail("%s: veth has ethtool statistics: %v", n, err)
	}

	var q queueCounters
	if err := c.qstatsInto(new(genlFamily), n, &q); !errors.Is(err, errNoQstats) {
		fail("%s: qstats %v: veth has none", n, err)
	}
}

// rtmGetlink reads iface's counters as package netlink's LinkByName
// returns them (RTM_GETLINK's IFLA_STATS64): the oracle of RTM_GETSTATS.
func rtmGetlink(h *netlink.Handle, iface string) (linkCounters, error) {
	l, err := h.LinkByName(iface)
	if err != nil {
		return linkCounters{}, err
	}
	st := l.Attrs().Statistics
	if st == nil {
		return linkCounters{}, fmt.Errorf("%s: no statistics over netlink", iface)
	}
	return linkCounters{RXPackets: st.RxPackets, TXPackets: st.TxPackets, RXBytes: st.RxBytes,
		TXBytes: st.TxBytes, RXDropped: st.RxDropped,
		RXMissedErrors: st.RxMissedErrors, RXFIFOErrors: st.RxFifoErrors, RXOverErrors: st.RxOverErrors,
		TXDropped: st.TxDropped, Has: hasAllLinkLosses}, nil
}

// sendFrames sends n Ethernet broadcast frames (of the local experimental
// ethertype) out of iface through a packet socket.
func sendFrames(iface string, n int) error {
	l, err := netlink.LinkByName(iface)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	addr := &unix.SockaddrLinklayer{Ifindex: l.Attrs().Index, Halen: 6, Addr: [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	frame := make([]byte, 100)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(frame[6:], l.Attrs().HardwareAddr)
	binary.BigEndian.PutUint16(frame[12:], 0x88b5)
	for range n {
		if err := unix.Sendto(fd, frame, 0, addr); err != nil {
			return err
		}
	}
	return nil
}

// FuzzEthtoolTable classifies a driver's statistics names (one a line) as
// nsConn does once per name table, and wants the counters the sampler
// made of a name → value map before: parseQueueStats and ethtoolLosses,
// the last of two statistics of one name counting.
func FuzzEthtoolTable(f *testing.F) {
	f.Add("rx_queue_0_packets\nrx_queue_0_bytes\ntx_queue_1_packets\nrx_no_buffer_count\nrx_missed_errors", uint64(1))
	f.Add("[0]: rx_ucast_packets\n[0]: rx_mcast_packets\n[1]: tx_bcast_bytes\nrx_discards", uint64(2))
	f.Add("rx0_packets\nrx0_packets\nrx-1.packets\nqueue_2_tx_cnt\ntx_timeout_count\nrx_pause", uint64(3))
	f.Add("", uint64(4))
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		names := strings.Split(s, "\n")
		rng := rand.New(rand.NewPCG(seed, 2))
		var tbl ethtoolTable
		tbl.setNames(names)
		tbl.vals = make([]uint64, 1+len(names))
		m := map[string]uint64{}
		for i, name := range names {
			v := rng.Uint64() >> rng.IntN(64)
			tbl.vals[1+i] = v
			m[name] = v
		}
		var got queueCounters
		tbl.queuesInto(&got)
		want := parseQueueStats(m)
		want.Losses, want.Ethtool = lossCounters{}, true
		ethtoolLosses(m, want.Losses)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("table %+v, map %+v", got, want)
		}
		var l lossList
		tbl.lossesInto(&l)
		gl := lossCounters{}
		for _, e := range l {
			gl[e.name] = e.lossCounter
		}
		if len(gl) != len(l) || !maps.Equal(gl, want.Losses) {
			t.Fatalf("losses %v, map %v", l, want.Losses)
		}
		got.reset() // reused: no counter of before stays
		if len(got.RX)+len(got.TX)+len(got.Losses) != 0 || got.Ethtool {
			t.Fatalf("reset left %+v", got)
		}
	})
}

// FuzzParseLinkStats reads an RTM_NEWSTATS payload: never a panic; a
// message without IFLA_STATS_LINK_64 is no counters; one with it has the
// nine the sampler reads, at their offsets in rtnl_link_stats64.
func FuzzParseLinkStats(f *testing.F) {
	st := make([]byte, 24*8)
	for i := range 24 {
		binary.NativeEndian.PutUint64(st[8*i:], uint64(1000+i))
	}
	msg := append(make([]byte, 12), nlAttr(unix.IFLA_STATS_LINK_64, st)...)
	binary.NativeEndian.PutUint32(msg[4:], 7)
	f.Add(uint16(unix.RTM_NEWSTATS), msg)
	f.Add(uint16(unix.RTM_NEWSTATS), msg[:12])
	f.Add(uint16(unix.RTM_NEWSTATS), msg[:20])
	f.Add(uint16(unix.RTM_NEWLINK), msg)
	f.Fuzz(func(t *testing.T, typ uint16, p []byte) {
		idx, c, ok, err := parseLinkStats(typ, p)
		if err != nil || !ok {
			if ok || c != (linkCounters{}) {
				t.Fatalf("not ok (%v) with counters %+v", err, c)
			}
			return
		}
		if typ != unix.RTM_NEWSTATS || len(p) < 12 || idx != binary.NativeEndian.Uint32(p[4:]) || c.Has != hasAllLinkLosses {
			t.Fatalf("type %d, %d bytes: index %d, %+v", typ, len(p), idx, c)
		}
		if bytesEqual(p, msg) && (c.RXPackets != 1000 || c.TXBytes != 1003 || c.RXDropped != 1006 || c.TXDropped != 1007 ||
			c.RXOverErrors != 1011 || c.RXFIFOErrors != 1014 || c.RXMissedErrors != 1015) {
			t.Fatalf("counters at the wrong offsets: %+v", c)
		}
	})
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// TestIfreqLayout: the ioctl arguments have the kernel's sizes and offsets
// (struct ifreq: 40 bytes, the union at 16; struct ethtool_sset_info with
// one data word: 24).
func TestIfreqLayout(t *testing.T) {
	var d ifreqData
	var x ifreqIndex
	if unsafe.Sizeof(d) != 40 || unsafe.Sizeof(x) != 40 || unsafe.Offsetof(d.data) != 16 || unsafe.Offsetof(x.index) != 16 {
		t.Errorf("ifreq %d/%d bytes, union at %d/%d", unsafe.Sizeof(d), unsafe.Sizeof(x), unsafe.Offsetof(d.data), unsafe.Offsetof(x.index))
	}
	var s ssetInfo
	if unsafe.Sizeof(s) != 24 || unsafe.Offsetof(s.mask) != 8 || unsafe.Offsetof(s.n) != 16 {
		t.Errorf("ethtool_sset_info %d bytes, mask at %d, data at %d", unsafe.Sizeof(s), unsafe.Offsetof(s.mask), unsafe.Offsetof(s.n))
	}
}

// TestSamplerCleanupClosesSockets: a live sampler keeps netlink and ioctl
// sockets open; dropped without Close, it closes them when collected. The
// sockets are told by their inodes: samplers of other tests, collected
// meanwhile, close theirs too.
func TestSamplerCleanupClosesSockets(t *testing.T) {
	if _, err := os.Stat("/sys/class/net/lo"); err != nil {
		t.Skip("no lo")
	}
	sockets := func() map[string]bool {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		out := map[string]bool{}
		for _, e := range ents {
			if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
				out[l] = true
			}
		}
		return out
	}
	before := sockets()
	var kept []string
	func() {
		s, err := NewSampler(context.Background(), []nicinfo.NIC{{Name: "lo"}}, WithInterval(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
		for l := range sockets() {
			if !before[l] {
				kept = append(kept, l)
			}
		}
		if len(kept) == 0 {
			t.Fatal("no socket kept open")
		}
	}()
	open := func() (n int) {
		now := sockets()
		for _, l := range kept {
			if now[l] {
				n++
			}
		}
		return n
	}
	for i := 0; i < 100 && open() > 0; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := open(); n > 0 {
		t.Errorf("%d of the sampler's %d sockets still open after it was collected", n, len(kept))
	}
}
