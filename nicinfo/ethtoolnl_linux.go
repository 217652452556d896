package nicinfo

import (
	"fmt"

	"github.com/nicdiag/nicdiag/internal/genl"
	"golang.org/x/sys/unix"
)

// ethtoolNL is the ethtool generic netlink family as liveEthtool asks it:
// a socket kept open (in the namespace of the thread that first asks),
// the family's id, looked up once, and the request built in msg.
type ethtoolNL struct {
	conn *genl.Conn
	// family is the family's id; err says why there is none (a kernel
	// before 5.6, or ETHTOOL_NETLINK=n).
	family uint16
	err    error
	msg    genl.Msg
}

// close closes the socket; the next request opens one again.
func (e *ethtoolNL) close() {
	e.conn.Close()
	e.conn, e.family, e.err = nil, 0, nil
}

// ready opens the socket and looks the family up, once; the error is the
// one of the first attempt.
func (e *ethtoolNL) ready() error {
	if e.conn != nil || e.err != nil {
		return e.err
	}
	c, err := genl.Dial(unix.NETLINK_GENERIC)
	if err != nil {
		e.err = err
		return err
	}
	if e.family, e.err = c.FamilyID(unix.ETHTOOL_GENL_NAME); e.err != nil {
		c.Close()
		return e.err
	}
	e.conn = c
	return nil
}

// get sends the ethtool netlink request cmd (a *_GET) for iface, its
// request header (the nested attribute hdrAttr) naming the interface and
// holding flags (ETHTOOL_FLAG_*, 0 for none), with extra attributes that
// add appends when not nil, and returns the payload of the one reply
// (genlmsghdr, then attributes) after checking its command is reply. The
// payload is valid until the next request.
func (e *ethtoolNL) get(cmd, reply uint8, hdrAttr uint16, iface string, flags uint32, add func(*genl.Msg)) ([]byte, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	m := &e.msg
	m.Genl(e.family, 0, cmd, unix.ETHTOOL_GENL_VERSION)
	at := m.Nest(hdrAttr)
	m.String(unix.ETHTOOL_A_HEADER_DEV_NAME, iface)
	if flags != 0 {
		m.U32(unix.ETHTOOL_A_HEADER_FLAGS, flags)
	}
	m.End(at)
	if add != nil {
		add(m)
	}
	var out []byte
	n := 0
	err := e.conn.Do(m, false, func(typ uint16, p []byte) error {
		n++
		if typ != e.family || len(p) < genl.GenlHeaderLen || p[0] != reply {
			return fmt.Errorf("%w: ethtool request %d answered with type %d, %d bytes", ErrMalformed, cmd, typ, len(p))
		}
		out = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, fmt.Errorf("%w: ethtool request %d answered %d messages", ErrMalformed, cmd, n)
	}
	return out, nil
}
