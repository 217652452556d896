package stack

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/nicdiag/nicdiag/internal/genl"
)

// What the sock_diag dump answers, parsed here: struct inet_diag_msg
// (include/uapi/linux/inet_diag.h) and its attributes INET_DIAG_INFO
// (struct tcp_info, include/uapi/linux/tcp.h) and INET_DIAG_SKMEMINFO (the
// SK_MEMINFO_* array, include/uapi/linux/sock_diag.h). Numbers in the
// socket's id are big-endian, the rest in the host's order; tcp_info has
// grown over the kernel's versions, and a field is read only when the
// kernel's struct reaches it.

const (
	sizeofDiagMsg = 72 // struct inet_diag_msg
	attrInfo      = 2  // INET_DIAG_INFO
	attrSKMemInfo = 7  // INET_DIAG_SKMEMINFO
	maxMemInfo    = 9  // SK_MEMINFO_VARS on Linux 4.x and later
)

// The SK_MEMINFO_* indexes used.
const (
	memRmemAlloc  = 0
	memRcvbuf     = 1
	memSndbuf     = 3
	memWmemQueued = 5
	memDrops      = 8
)

// diagMsg is one socket of a sock_diag dump.
type diagMsg struct {
	family, state uint8
	sport, dport  uint16
	src, dst      [16]byte
	ifindex       uint32
	cookie        uint64
	inode         uint32
	info          tcpInfo
	hasInfo       bool
	mem           [maxMemInfo]uint32
	memN          int // SK_MEMINFO values present
}

// tcpInfo is the part of struct tcp_info kept; len is how many bytes the
// kernel's struct had.
type tcpInfo struct {
	len                                  int
	state, caState, options, appLimited  uint8
	sndMSS, rcvMSS, unacked, lost        uint32
	rtt, rttvar, ssthresh, cwnd          uint32
	rcvRTT, rcvSpace, rcvSsthresh        uint32
	totalRetrans, notsent, minRTT        uint32
	pacingRate, bytesAcked, bytesRecv    uint64
	segsOut, segsIn                      uint32
	deliveryRate                         uint64
	busy, rwndLimited, sndbufLimited     uint64
	bytesSent, bytesRetrans              uint64
	sndWnd, rcvWnd                       uint32
	hasRate, hasTimers, hasSent, hasWnds bool
	hasRcvWnd                            bool
}

// Sizes of struct tcp_info at which fields appear.
const (
	tcpInfoMin    = 104 // up to tcpi_total_retrans (Linux 2.6)
	tcpInfoBytes  = 136 // tcpi_bytes_acked, tcpi_bytes_received
	tcpInfoSegs   = 144
	tcpInfoMinRTT = 152
	tcpInfoRate   = 168 // tcpi_delivery_rate
	tcpInfoTimers = 192 // tcpi_busy_time, tcpi_rwnd_limited, tcpi_sndbuf_limited
	tcpInfoSent   = 216 // tcpi_bytes_sent, tcpi_bytes_retrans
	tcpInfoSndWnd = 232 // tcpi_snd_wnd
	tcpInfoRcvWnd = 236 // tcpi_rcv_wnd
)

// parseDiagMsg parses one sock_diag answer, b (the payload after the
// netlink header), into m.
func parseDiagMsg(b []byte, m *diagMsg) error {
	if len(b) < sizeofDiagMsg {
		return malformed("sock_diag", 0, "a message of %d bytes, under the %d of inet_diag_msg", len(b), sizeofDiagMsg)
	}
	ne := binary.NativeEndian
	*m = diagMsg{family: b[0], state: b[1]}
	m.sport = binary.BigEndian.Uint16(b[4:])
	m.dport = binary.BigEndian.Uint16(b[6:])
	copy(m.src[:], b[8:24])
	copy(m.dst[:], b[24:40])
	m.ifindex = ne.Uint32(b[40:])
	m.cookie = uint64(ne.Uint32(b[44:])) | uint64(ne.Uint32(b[48:]))<<32
	m.inode = ne.Uint32(b[68:])
	err := genl.Attrs(b[sizeofDiagMsg:], func(typ uint16, v []byte) error {
		switch typ {
		case attrInfo:
			if err := parseTCPInfo(v, &m.info); err != nil {
				return err
			}
			m.hasInfo = true
		case attrSKMemInfo:
			m.memN = min(len(v)/4, maxMemInfo)
			for i := range m.memN {
				m.mem[i] = ne.Uint32(v[4*i:])
			}
		}
		return nil
	})
	return genl.Malformed(err, ErrMalformed)
}

// parseTCPInfo parses struct tcp_info, b, into t: the fields its size
// reaches.
func parseTCPInfo(b []byte, t *tcpInfo) error {
	if len(b) < tcpInfoMin {
		return malformed("sock_diag", 0, "tcp_info of %d bytes, under the %d of the oldest kernel's", len(b), tcpInfoMin)
	}
	ne := binary.NativeEndian
	u32 := func(off int) uint32 { return ne.Uint32(b[off:]) }
	u64 := func(off int) uint64 { return ne.Uint64(b[off:]) }
	*t = tcpInfo{len: len(b), state: b[0], caState: b[1], options: b[5], appLimited: b[7] & 1,
		sndMSS: u32(16), rcvMSS: u32(20), unacked: u32(24), lost: u32(32),
		rcvSsthresh: u32(64), rtt: u32(68), rttvar: u32(72), ssthresh: u32(76), cwnd: u32(80),
		rcvRTT: u32(92), rcvSpace: u32(96), totalRetrans: u32(100)}
	if len(b) >= tcpInfoBytes {
		t.pacingRate, t.bytesAcked, t.bytesRecv = u64(104), u64(120), u64(128)
	}
	if len(b) >= tcpInfoSegs {
		t.segsOut, t.segsIn = u32(136), u32(140)
	}
	if len(b) >= tcpInfoMinRTT {
		t.notsent, t.minRTT = u32(144), u32(148)
	}
	if t.hasRate = len(b) >= tcpInfoRate; t.hasRate {
		t.deliveryRate = u64(160)
	}
	if t.hasTimers = len(b) >= tcpInfoTimers; t.hasTimers {
		t.busy, t.rwndLimited, t.sndbufLimited = u64(168), u64(176), u64(184)
	}
	if t.hasSent = len(b) >= tcpInfoSent; t.hasSent {
		t.bytesSent, t.bytesRetrans = u64(200), u64(208)
	}
	if t.hasWnds = len(b) >= tcpInfoSndWnd; t.hasWnds {
		t.sndWnd = u32(228)
	}
	if t.hasRcvWnd = len(b) >= tcpInfoRcvWnd; t.hasRcvWnd {
		t.rcvWnd = u32(232)
	}
	return nil
}

// addrs returns the socket's local and remote address as "ip:port".
func (m *diagMsg) addrs() (local, peer string) {
	return addrPort(m.family, m.src, m.sport), addrPort(m.family, m.dst, m.dport)
}

// addrPort renders an address of family (AF_INET 2, AF_INET6 10) and port.
func addrPort(family uint8, a [16]byte, port uint16) string {
	return netip.AddrPortFrom(ipOf(family, a), port).String()
}

// ipOf returns the address of family held in a.
func ipOf(family uint8, a [16]byte) netip.Addr {
	if family == 2 {
		return netip.AddrFrom4([4]byte(a[:4]))
	}
	return netip.AddrFrom16(a).Unmap()
}

// tcpStates names the TCP states (include/net/tcp_states.h), by number.
var tcpStates = [...]string{1: "established", "syn_sent", "syn_recv", "fin_wait1", "fin_wait2", "time_wait",
	"close", "close_wait", "last_ack", "listen", "closing", "new_syn_recv"}

// stateName names a socket state.
func stateName(s uint8) string {
	if int(s) < len(tcpStates) && tcpStates[s] != "" {
		return tcpStates[s]
	}
	return "state_" + strconv.Itoa(int(s))
}
