package stack

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/netnstest"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Sizes of the busy host of BenchmarkSample.
const (
	benchConns   = 1000 // TCP connections: 2000 sockets
	benchClasses = 100  // htb classes on the watched interface
	benchProcs   = 5000 // processes in the fixture /proc
)

// benchNS makes a throwaway namespace holding benchConns established TCP
// connections over 10.77.0.1, the address of the veth interface bench0
// (so that every socket is a flow of the watched interface), which has an
// htb qdisc of benchClasses classes.
func benchNS(b *testing.B) netns.NsHandle {
	b.Helper()
	ns := netnstest.New(b)
	h := netnstest.Handle(b, ns)
	lo, err := h.LinkByName("lo")
	if err != nil {
		b.Fatal(err)
	}
	if err := h.LinkSetUp(lo); err != nil {
		b.Fatal(err)
	}
	netnstest.Veth(b, h, "bench0", "bench1") // veth: the kernel here has no dummy
	d, err := h.LinkByName("bench0")
	if err != nil {
		b.Fatal(err)
	}
	addr, _ := netlink.ParseAddr("10.77.0.1/8")
	if err := h.AddrAdd(d, addr); err != nil {
		b.Fatal(err)
	}
	if err := h.LinkSetUp(d); err != nil {
		b.Fatal(err)
	}
	root := netlink.NewHtb(netlink.QdiscAttrs{LinkIndex: d.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT})
	if err := h.QdiscAdd(root); err != nil {
		b.Fatal(err)
	}
	for i := range benchClasses {
		c := netlink.NewHtbClass(netlink.ClassAttrs{LinkIndex: d.Attrs().Index, Parent: netlink.MakeHandle(1, 0), Handle: netlink.MakeHandle(1, uint16(i+1))},
			netlink.HtbClassAttrs{Rate: 1e8, Ceil: 1e8})
		if err := h.ClassAdd(c); err != nil {
			b.Fatal(err)
		}
	}
	var conns []net.Conn
	netnstest.Do(b, ns, func() {
		ln, err := net.Listen("tcp4", "10.77.0.1:0")
		if err != nil {
			b.Error(err)
			return
		}
		defer ln.Close()
		for range benchConns {
			c, err := net.Dial("tcp4", ln.Addr().String())
			if err != nil {
				b.Error(err)
				return
			}
			s, err := ln.Accept()
			if err != nil {
				b.Error(err)
				return
			}
			conns = append(conns, c, s)
		}
	})
	b.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return ns
}

// benchProcRoot writes a /proc of benchProcs single-threaded processes
// (statLine's lines) under a temp root.
func benchProcRoot(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	for pid := 1; pid <= benchProcs; pid++ {
		dir := filepath.Join(root, "proc", fmt.Sprint(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		line := statLine(pid, "worker", 1, 0x400000, uint64(pid), 1, 1, uint64(pid), pid%128)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// BenchmarkSample takes one steady-state reading (after the first: files
// open, buffers sized, sockets kept) of each new source alone and of a
// whole Sampler:
//
//   - sockdiag: the TCP dump (tcp_info and SK_MEMINFO) of a namespace
//     holding 2000 established sockets, every one parsed;
//   - qdisc: the qdiscs and classes of an interface with an htb of 100
//     classes (the library's dumps);
//   - files: /proc/net/snmp, snmp6, netstat, nf_conntrack's statistics,
//     count and max, and the six buffer sysctls of a namespace;
//   - scan-5000: the process scan of a fixture /proc of 5000 processes;
//     scan-live: of this host's /proc;
//   - sampler: Sampler.Read of that namespace (2000 flows, listed up to
//     MaxFlows) with the htb interface watched, and a process scan of this
//     host (which WithScanEvery and the 2 % bound make rarer than the
//     readings).
//
// cpu-ns/op is the process's CPU time per reading, the kernel's work for
// it included: on a loaded machine a steadier figure than ns/op.
func BenchmarkSample(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root for a network namespace")
	}
	ns := benchNS(b)
	path := netnstest.Path(ns)
	b.Run("sockdiag", func(b *testing.B) {
		d, err := openDiag(ns)
		if err != nil {
			b.Fatal(err)
		}
		defer d.close()
		n := 0
		loop(b, func() {
			n = 0
			if err := d.dump(unix.AF_INET, unix.IPPROTO_TCP, func(*diagMsg) { n++ }); err != nil {
				b.Fatal(err)
			}
		})
		if n < 2*benchConns {
			b.Fatalf("%d sockets", n)
		}
	})
	s, err := NewSampler(context.Background(), WithNetns(path), WithInterfaces("bench0"), WithScanEvery(0))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var x Sample
	n := s.ns[nsKey(b, path)]
	b.Run("qdisc", func(b *testing.B) {
		loop(b, func() {
			x = Sample{}
			s.gen++
			s.readQdiscs(n, map[int]bool{n.live.ifidx["bench0"]: true}, &x)
		})
		if len(x.Qdiscs) != benchClasses+1 {
			b.Fatalf("%d qdiscs and classes: %v", len(x.Qdiscs), x.Missing)
		}
	})
	b.Run("files", func(b *testing.B) {
		loop(b, func() {
			x = Sample{}
			var ns Namespace
			s.readCounters(n, &ns, &x)
			s.readBuffers(n, &x)
			s.readConntrack(n, &ns, &x)
		})
		if len(x.Missing) > 0 {
			b.Fatal(x.Missing)
		}
	})
	for _, c := range []struct {
		name, root string
	}{{"scan-5000", benchProcRoot(b)}, {"scan-live", "/"}} {
		b.Run(c.name, func(b *testing.B) {
			sc := newScanner(fsroot.New(c.root))
			defer sc.close()
			now := time.Now()
			loop(b, func() {
				now = now.Add(time.Second)
				if _, _, err := sc.scan(now, 0, nil); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(len(sc.cur)), "procs")
		})
	}
	b.Run("sampler", func(b *testing.B) {
		loop(b, func() {
			s.lastScan = time.Time{} // a scan at every reading: the most a reading costs
			if x, err = s.Read(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
		if len(x.Flows) != MaxFlows || x.FlowsOmitted < 2*benchConns-MaxFlows {
			b.Fatalf("%d flows, %d omitted: %v", len(x.Flows), x.FlowsOmitted, x.Missing)
		}
	})
}

// cpuTime is this process's user and system time: on a loaded machine it
// shows the work a reading costs (the kernel's included), where ns/op
// also counts waiting for a CPU.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs f b.N times and reports its CPU time per run as cpu-ns/op.
func loop(b *testing.B, f func()) {
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// nsKey returns the id of the namespace at path.
func nsKey(b *testing.B, path string) uint64 {
	id, err := nsInode(path)
	if err != nil {
		b.Fatal(err)
	}
	return id
}
