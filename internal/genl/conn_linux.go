package genl

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Conn is a netlink socket kept open for requests: one at a time, each
// answered before the next is sent. It is not safe for concurrent use.
type Conn struct {
	fd  int
	seq uint32
	buf []byte // replies
	msg Msg    // FamilyID's request
}

// Dial opens a netlink socket of protocol proto (unix.NETLINK_ROUTE,
// unix.NETLINK_GENERIC) in the network namespace of the calling thread,
// where it stays: a caller that wants another namespace dials on a thread
// switched there. Sends and receives time out after
// nl.SocketTimeoutTv, as package netlink's own sockets do.
func Dial(proto int) (*Conn, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return nil, err
	}
	tv := nl.SocketTimeoutTv
	if err = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err == nil {
		err = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	}
	if err == nil {
		err = unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Conn{fd: fd}, nil
}

// Close closes the socket.
func (c *Conn) Close() error {
	if c == nil || c.fd < 0 {
		return nil
	}
	err := unix.Close(c.fd)
	c.fd = -1
	return err
}

// replyBuf is the receive buffer: a netlink dump part is at most a page
// of messages, or 32 KiB (NLMSG_GOODSIZE and the kernel's dump size).
const replyBuf = 64 << 10

// Do sends m (its length and sequence number set here) and calls f with
// the type and payload of each reply to it, until NLMSG_DONE, an
// NLMSG_ERROR (its errno is the error, 0 an acknowledgement) or, unless
// dump, the first reply. After f's first error the replies are read to
// their end and the error returned. Replies to an earlier request that
// gave up (a timeout) are told by their sequence number and skipped.
func (c *Conn) Do(m *Msg, dump bool, f func(typ uint16, payload []byte) error) error {
	c.seq++
	b := m.Bytes()
	binary.NativeEndian.PutUint32(b[8:], c.seq)
	for {
		_, err := unix.Write(c.fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	if c.buf == nil {
		c.buf = make([]byte, replyBuf)
	}
	var ferr error
	for {
		n, err := recvTrunc(c.fd, c.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n > len(c.buf) { // MSG_TRUNC: the datagram's length, not what fit
			return fmt.Errorf("%w: reply of %d bytes over the %d-byte buffer", ErrMalformed, n, len(c.buf))
		}
		done, err := c.replies(c.buf[:n], dump, f, &ferr)
		if done {
			return err
		}
	}
}

// replies goes through one datagram's messages; done is true when the
// request's answer is complete, with its error.
func (c *Conn) replies(b []byte, dump bool, f func(uint16, []byte) error, ferr *error) (done bool, err error) {
	for len(b) >= HeaderLen {
		l := int(binary.NativeEndian.Uint32(b[0:]))
		if l < HeaderLen || l > len(b) {
			return true, fmt.Errorf("%w: message of %d bytes with %d left", ErrMalformed, l, len(b))
		}
		typ := binary.NativeEndian.Uint16(b[4:])
		seq := binary.NativeEndian.Uint32(b[8:])
		payload := b[HeaderLen:l]
		b = b[min(len(b), (l+3)&^3):]
		if seq != c.seq {
			continue
		}
		switch typ {
		case unix.NLMSG_DONE, unix.NLMSG_ERROR: // a dump that failed on the way says so in its DONE
			if len(payload) < 4 {
				if typ == unix.NLMSG_DONE {
					return true, *ferr
				}
				return true, fmt.Errorf("%w: short NLMSG_ERROR", ErrMalformed)
			}
			if errno := int32(binary.NativeEndian.Uint32(payload)); errno < 0 {
				return true, unix.Errno(-errno)
			}
			return true, *ferr
		}
		if *ferr == nil {
			*ferr = f(typ, payload)
		}
		if !dump {
			return true, *ferr
		}
	}
	return false, nil
}

// recvTrunc receives one datagram into b and returns its length, which is
// larger than b when it did not fit (MSG_TRUNC). unix.Recvfrom would
// allocate the sender's address.
func recvTrunc(fd int, b []byte) (int, error) {
	n, _, e := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), unix.MSG_TRUNC, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// The kernel's nlctrl family (include/uapi/linux/genetlink.h).
const (
	ctrlID             = 0x10 // GENL_ID_CTRL
	ctrlVersion        = 2
	ctrlCmdNewFamily   = 1 // CTRL_CMD_NEWFAMILY, the reply
	ctrlCmdGetFamily   = 3 // CTRL_CMD_GETFAMILY
	ctrlAttrFamilyID   = 1 // CTRL_ATTR_FAMILY_ID, u16
	ctrlAttrFamilyName = 2 // CTRL_ATTR_FAMILY_NAME, string
)

// FamilyID asks the kernel for the id of the generic netlink family
// called name; a kernel without it answers ENOENT. Family ids are the
// same in every network namespace.
func (c *Conn) FamilyID(name string) (uint16, error) {
	c.msg.Genl(ctrlID, 0, ctrlCmdGetFamily, ctrlVersion)
	c.msg.String(ctrlAttrFamilyName, name)
	var id uint16
	err := c.Do(&c.msg, false, func(typ uint16, p []byte) error {
		if typ != ctrlID || len(p) < GenlHeaderLen || p[0] != ctrlCmdNewFamily {
			return fmt.Errorf("%w: GETFAMILY answered type %d", ErrMalformed, typ)
		}
		return Attrs(p[GenlHeaderLen:], func(t uint16, v []byte) error {
			if t == ctrlAttrFamilyID && len(v) == 2 {
				id = binary.NativeEndian.Uint16(v)
			}
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("generic netlink family %q: %w", name, err)
	}
	if id == 0 {
		return 0, fmt.Errorf("generic netlink family %q: %w: no id", name, ErrMalformed)
	}
	return id, nil
}
