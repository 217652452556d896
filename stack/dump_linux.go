package stack

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// diagReq is struct inet_diag_req_v2: the library's request
// (netlink.SocketDiagTCPInfo) with INET_DIAG_SKMEMINFO asked for too.
type diagReq struct {
	family, protocol, ext uint8
	states                uint32
}

// Len is the request's size: inet_diag_req_v2 is 56 bytes.
func (r *diagReq) Len() int { return 56 }

// Serialize renders the request; the socket id (all zero) matches any.
func (r *diagReq) Serialize() []byte {
	b := make([]byte, 56)
	b[0], b[1], b[2] = r.family, r.protocol, r.ext
	nl.NativeEndian().PutUint32(b[4:], r.states)
	return b
}

// States dumped: every TCP state but listening, TIME_WAIT and closed
// (no data moves there); every UDP socket (an unconnected one is "close").
const (
	tcpStatesMask = 0xfff &^ (1<<netlink.TCP_LISTEN | 1<<netlink.TCP_TIME_WAIT | 1<<netlink.TCP_CLOSE)
	udpStatesMask = 0xfff
)

// diagConn is a kept NETLINK_SOCK_DIAG socket in one namespace.
type diagConn struct {
	sh *nl.SocketHandle
}

// openDiag opens a sock_diag socket in ns (netns.None(): the caller's).
func openDiag(ns netns.NsHandle) (*diagConn, error) {
	s, err := nl.GetNetlinkSocketAt(ns, netns.None(), unix.NETLINK_INET_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag socket: %w", err)
	}
	tv := unix.Timeval{Sec: 5}
	if err := s.SetReceiveTimeout(&tv); err != nil {
		s.Close()
		return nil, err
	}
	return &diagConn{sh: &nl.SocketHandle{Socket: s}}, nil
}

// close closes the socket.
func (c *diagConn) close() {
	if c != nil && c.sh != nil {
		c.sh.Close()
		c.sh = nil
	}
}

// dump asks for every socket of protocol (IPPROTO_TCP or IPPROTO_UDP) and
// family (AF_INET, AF_INET6), with tcp_info (TCP) and the socket's memory,
// and calls f with each. A dump the kernel interrupted (sockets came and
// went) is used as it is.
func (c *diagConn) dump(family, protocol uint8, f func(*diagMsg)) error {
	req := nl.NewNetlinkRequest(nl.SOCK_DIAG_BY_FAMILY, unix.NLM_F_DUMP)
	r := &diagReq{family: family, protocol: protocol, ext: 1 << (netlink.INET_DIAG_SKMEMINFO - 1), states: udpStatesMask}
	if protocol == unix.IPPROTO_TCP {
		r.ext |= 1 << (netlink.INET_DIAG_INFO - 1)
		r.states = tcpStatesMask
	}
	req.AddData(r)
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_INET_DIAG: c.sh}
	var m diagMsg
	var perr error
	err := req.ExecuteIter(unix.NETLINK_INET_DIAG, nl.SOCK_DIAG_BY_FAMILY, func(b []byte) bool {
		if perr = parseDiagMsg(b, &m); perr != nil {
			return false
		}
		f(&m)
		return true
	})
	if errors.Is(err, nl.ErrDumpInterrupted) {
		err = nil
	}
	if err == nil {
		err = perr
	}
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("sock_diag for protocol %d: %w", protocol, ErrNotApplicable)
	}
	return err
}
