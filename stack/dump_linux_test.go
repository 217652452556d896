package stack

import (
	"net"
	"testing"

	"github.com/nicdiag/nicdiag/internal/netnstest"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// quietPair makes, in ns, a loopback TCP connection that moved n bytes
// each way and then went quiet, and returns its two ends.
func quietPair(t *testing.T, ns netns.NsHandle, n int) (net.Conn, net.Conn) {
	t.Helper()
	var c, s net.Conn
	netnstest.Do(t, ns, func() {
		lo, err := netlink.LinkByName("lo")
		if err == nil {
			err = netlink.LinkSetUp(lo)
		}
		ln, err2 := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil || err2 != nil {
			t.Errorf("loopback: %v %v", err, err2)
			return
		}
		defer ln.Close()
		if c, err = net.Dial("tcp4", ln.Addr().String()); err == nil {
			s, err = ln.Accept()
		}
		if err != nil {
			t.Error(err)
		}
	})
	if c == nil || s == nil {
		t.FailNow()
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	out, in := make([]byte, n), make([]byte, n)
	for _, p := range [][2]net.Conn{{c, s}, {s, c}} {
		go p[0].Write(out)
		got := 0
		for got < n {
			k, err := p[1].Read(in)
			if err != nil {
				t.Fatal(err)
			}
			got += k
		}
	}
	return c, s
}

// The dump with the socket's memory asked for agrees with the library's
// own dump (netlink.SocketDiagTCPInfo, its test oracle) on every field
// both read, for two quiet sockets of a throwaway namespace.
func TestDumpMatchesLibrary(t *testing.T) {
	ns := netnstest.New(t)
	quietPair(t, ns, 300000)
	d, err := openDiag(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_INET_DIAG) // the library's sock_diag socket in ns
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	lib, err := h.SocketDiagTCPInfo(unix.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	mine := map[uint32]diagMsg{}
	if err := d.dump(unix.AF_INET, unix.IPPROTO_TCP, func(m *diagMsg) { mine[m.inode] = *m }); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, r := range lib {
		if r.InetDiagMsg.State != netlink.TCP_ESTABLISHED || r.TCPInfo == nil {
			continue
		}
		m, ok := mine[r.InetDiagMsg.INode]
		if !ok {
			t.Fatalf("inode %d in the library's dump, not in this one", r.InetDiagMsg.INode)
		}
		compareDiag(t, &m, r)
		compared++
	}
	if compared != 2 {
		t.Fatalf("compared %d sockets, want 2", compared)
	}
}

// compareDiag compares one socket of both dumps.
func compareDiag(t *testing.T, m *diagMsg, r *netlink.InetDiagTCPInfoResp) {
	t.Helper()
	s, i := r.InetDiagMsg, r.TCPInfo
	local, peer := m.addrs()
	want := []struct {
		name      string
		got, want any
	}{
		{"local", local, net.JoinHostPort(s.ID.Source.String(), itoa(int(s.ID.SourcePort)))},
		{"peer", peer, net.JoinHostPort(s.ID.Destination.String(), itoa(int(s.ID.DestinationPort)))},
		{"cookie", m.cookie, uint64(s.ID.Cookie[0]) | uint64(s.ID.Cookie[1])<<32},
		{"state", m.state, s.State},
		{"tcpi_state", m.info.state, i.State},
		{"snd_mss", m.info.sndMSS, i.Snd_mss},
		{"rcv_mss", m.info.rcvMSS, i.Rcv_mss},
		{"snd_cwnd", m.info.cwnd, i.Snd_cwnd},
		{"snd_ssthresh", m.info.ssthresh, i.Snd_ssthresh},
		{"rcv_space", m.info.rcvSpace, i.Rcv_space},
		{"rcv_ssthresh", m.info.rcvSsthresh, i.Rcv_ssthresh},
		{"total_retrans", m.info.totalRetrans, i.Total_retrans},
		{"bytes_acked", m.info.bytesAcked, i.Bytes_acked},
		{"bytes_received", m.info.bytesRecv, i.Bytes_received},
		{"segs_out", m.info.segsOut, i.Segs_out},
		{"segs_in", m.info.segsIn, i.Segs_in},
		{"min_rtt", m.info.minRTT, i.Min_rtt},
		{"busy_time", m.info.busy, i.Busy_time},
		{"rwnd_limited", m.info.rwndLimited, i.Rwnd_limited},
		{"sndbuf_limited", m.info.sndbufLimited, i.Sndbuf_limited},
		{"bytes_sent", m.info.bytesSent, i.Bytes_sent},
		{"bytes_retrans", m.info.bytesRetrans, i.Bytes_retrans},
		{"snd_wnd", m.info.sndWnd, i.Snd_wnd},
	}
	for _, w := range want {
		if w.got != w.want {
			t.Errorf("inode %d %s: %v, the library %v", m.inode, w.name, w.got, w.want)
		}
	}
	if !m.hasInfo || !m.info.hasTimers || m.info.bytesAcked < 300000 || m.memN < maxMemInfo || m.mem[memRcvbuf] == 0 {
		t.Errorf("inode %d: %+v", m.inode, m)
	}
}
