package stack

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nicdiag/nicdiag/internal/genl"
	"github.com/nicdiag/nicdiag/internal/nsthread"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// sockDiagByFamily is SOCK_DIAG_BY_FAMILY, the request and its answers'
// type (include/uapi/linux/sock_diag.h).
const sockDiagByFamily = 20

// States dumped: every TCP state but listening, TIME_WAIT and closed
// (no data moves there); every UDP socket (an unconnected one is "close").
const (
	tcpStatesMask = 0xfff &^ (1<<netlink.TCP_LISTEN | 1<<netlink.TCP_TIME_WAIT | 1<<netlink.TCP_CLOSE)
	udpStatesMask = 0xfff
)

// diagConn is a kept sock_diag socket in one namespace, asked over the
// project's netlink transport (internal/genl). The request is the
// library's (netlink.SocketDiagTCPInfo) with INET_DIAG_SKMEMINFO asked for
// too.
type diagConn struct {
	c   *genl.Conn
	msg genl.Msg
	req [56]byte // struct inet_diag_req_v2; its socket id (all zero) matches any
}

// dialIn opens a netlink socket of protocol proto in ns (netns.None():
// the caller's namespace).
func dialIn(ns netns.NsHandle, proto int) (*genl.Conn, error) {
	if !ns.IsOpen() {
		return genl.Dial(proto)
	}
	var c *genl.Conn
	err := nsthread.Run(ns, func() error {
		var err error
		c, err = genl.Dial(proto)
		return err
	})
	return c, err
}

// openDiag opens a sock_diag socket in ns (netns.None(): the caller's).
func openDiag(ns netns.NsHandle) (*diagConn, error) {
	c, err := dialIn(ns, unix.NETLINK_INET_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag socket: %w", err)
	}
	return &diagConn{c: c}, nil
}

// close closes the socket.
func (d *diagConn) close() {
	if d != nil && d.c != nil {
		d.c.Close()
		d.c = nil
	}
}

// dump asks for every socket of protocol (IPPROTO_TCP or IPPROTO_UDP) and
// family (AF_INET, AF_INET6), with tcp_info (TCP) and the socket's memory,
// and calls f with each. A kernel without the protocol's sock_diag
// answers ENOENT: ErrNotApplicable.
func (d *diagConn) dump(family, protocol uint8, f func(*diagMsg)) error {
	ext, states := uint8(1<<(netlink.INET_DIAG_SKMEMINFO-1)), uint32(udpStatesMask)
	if protocol == unix.IPPROTO_TCP {
		ext |= 1 << (netlink.INET_DIAG_INFO - 1)
		states = tcpStatesMask
	}
	d.req[0], d.req[1], d.req[2] = family, protocol, ext
	binary.NativeEndian.PutUint32(d.req[4:], states)
	d.msg.Start(sockDiagByFamily, unix.NLM_F_DUMP, d.req[:])
	var m diagMsg
	err := d.c.Do(&d.msg, true, func(typ uint16, p []byte) error {
		if typ != sockDiagByFamily {
			return nil
		}
		if err := parseDiagMsg(p, &m); err != nil {
			return err
		}
		f(&m)
		return nil
	})
	if errors.Is(err, unix.ENOENT) {
		name := "udp_diag"
		if protocol == unix.IPPROTO_TCP {
			name = "tcp_diag"
		}
		return fmt.Errorf("no %s in this kernel (modprobe %s): %w", name, name, ErrNotApplicable)
	}
	return genl.Malformed(err, ErrMalformed)
}
