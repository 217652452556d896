package irq

import (
	"fmt"
	"unsafe"

	"github.com/nicdiag/nicdiag/internal/genl"
	"github.com/nicdiag/nicdiag/internal/nsthread"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// nsConn is the transport the live NIC counters are asked over, in one
// network namespace (WithNetns's, else the caller's): a routing netlink
// socket (RTM_GETSTATS, linkstats_linux.go), a generic netlink one (netdev
// qstats, qstats_linux.go; ethtool pause, pausestats_linux.go) and an
// ioctl socket (SIOCGIFINDEX; SIOCETHTOOL, ethtoolstats_linux.go).
// Opening them, and the namespace, for every question was most of a live
// sample; they are opened on first use and kept until close.
//
// A reading starts with begin: the namespace file is looked at again, as
// WithNetns promises, and when it names another namespace the sockets are
// opened there; when it is gone every question of the reading fails. An
// interface's index is looked up by name once a reading, so a renamed or
// re-created interface is the one now called so. Outside begin and end
// (a source used alone) every lookup asks the kernel. It is not safe for
// concurrent use.
type nsConn struct {
	path  string
	ns    netns.NsHandle // when path is set and the namespace open
	nsID  [2]uint64      // its device and inode
	nsErr error          // why the namespace could not be opened this reading
	route *genl.Conn     // nil while closed
	gen   *genl.Conn
	ioctl int // -1 while closed
	msg   genl.Msg

	inReading bool
	idx       map[string]ifindexAt
	link      linkDump
	q         qstatsDump
	eth       map[string]*ethtoolTable
	ethBuf    []byte
	// ioctl arguments, here so that no call allocates them
	ifrIndex ifreqIndex
	ifrData  ifreqData
	sset     ssetInfo
}

// ifindexAt is an interface's index at a reading, or why there is none.
type ifindexAt struct {
	idx uint32
	err error
}

// newNSConn returns the connection to the namespace at path ("": the
// caller's); it opens nothing yet.
func newNSConn(path string) *nsConn {
	return &nsConn{path: path, ns: netns.None(), ioctl: -1}
}

// begin starts a reading.
func (c *nsConn) begin() {
	c.inReading = true
	clear(c.idx)
	c.nsErr = nil
	c.link.done, c.q.done = false, false
	if c.path == "" {
		return
	}
	var st unix.Stat_t
	if err := unix.Stat(c.path, &st); err != nil {
		c.closeAll()
		c.nsErr = fmt.Errorf("network namespace %s: %w", c.path, err)
		return
	}
	if c.ns.IsOpen() && c.nsID == [2]uint64{st.Dev, st.Ino} {
		return
	}
	c.closeAll() // another namespace now, or the first reading
	ns, err := netns.GetFromPath(c.path)
	if err != nil {
		c.nsErr = fmt.Errorf("network namespace %s: %w", c.path, err)
		return
	}
	c.ns, c.nsID = ns, [2]uint64{st.Dev, st.Ino}
}

// end ends a reading.
func (c *nsConn) end() { c.inReading = false }

// closeAll closes the sockets and the namespace.
func (c *nsConn) closeAll() {
	c.route.Close()
	c.gen.Close()
	c.route, c.gen = nil, nil
	if c.ioctl >= 0 {
		unix.Close(c.ioctl)
		c.ioctl = -1
	}
	if c.ns.IsOpen() {
		c.ns.Close()
	}
	c.ns = netns.None()
	clear(c.eth)
}

// close releases everything; the next use opens again.
func (c *nsConn) close() {
	if c != nil {
		c.closeAll()
	}
}

// ready makes sure the namespace is usable: outside a reading it is
// looked at now.
func (c *nsConn) ready() error {
	if !c.inReading {
		c.begin()
		c.inReading = false
	}
	return c.nsErr
}

// netlink returns the kept netlink socket *conn of protocol proto, dialled
// in the namespace when closed.
func (c *nsConn) netlink(conn **genl.Conn, proto int) (*genl.Conn, error) {
	if *conn != nil {
		return *conn, nil
	}
	err := c.inNS(func() (err error) {
		*conn, err = genl.Dial(proto)
		return err
	})
	return *conn, err
}

// ioctlFD returns the kept ioctl socket, opened in the namespace when
// closed.
func (c *nsConn) ioctlFD() (int, error) {
	if c.ioctl >= 0 {
		return c.ioctl, nil
	}
	err := c.inNS(func() (err error) {
		c.ioctl, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		return err
	})
	if err != nil {
		c.ioctl = -1
	}
	return c.ioctl, err
}

// inNS runs f in the namespace: a socket stays in the namespace it was
// made in, so it is made on a thread switched there and back (or, if that
// fails, left locked to die with its goroutine).
func (c *nsConn) inNS(f func() error) error {
	if !c.ns.IsOpen() {
		return f()
	}
	if err := nsthread.Run(c.ns, f); err != nil {
		return fmt.Errorf("network namespace %s: %w", c.path, err)
	}
	return nil
}

// ifreqIndex is struct ifreq with its ifr_ifindex member; ifreqData with
// its ifr_data member (the union after the name is 24 bytes).
type (
	ifreqIndex struct {
		name  [unix.IFNAMSIZ]byte
		index int32
		_     [20]byte
	}
	ifreqData struct {
		name [unix.IFNAMSIZ]byte
		data unsafe.Pointer
		_    [16]byte
	}
)

// setName puts iface, NUL-terminated, in name.
func setName(name *[unix.IFNAMSIZ]byte, iface string) error {
	if len(iface) >= unix.IFNAMSIZ || iface == "" {
		return unix.ENODEV
	}
	clear(name[:])
	copy(name[:], iface)
	return nil
}

// ifindex returns iface's index in the namespace (SIOCGIFINDEX), looked up
// once a reading.
func (c *nsConn) ifindex(iface string) (uint32, error) {
	if c.inReading {
		if e, ok := c.idx[iface]; ok {
			return e.idx, e.err
		}
	}
	idx, err := c.lookup(iface)
	if c.inReading {
		if c.idx == nil {
			c.idx = map[string]ifindexAt{}
		}
		c.idx[iface] = ifindexAt{idx, err}
	}
	return idx, err
}

func (c *nsConn) lookup(iface string) (uint32, error) {
	if err := c.ready(); err != nil {
		return 0, err
	}
	fd, err := c.ioctlFD()
	if err != nil {
		return 0, err
	}
	r := &c.ifrIndex
	if err := setName(&r.name, iface); err != nil {
		return 0, fmt.Errorf("%s: %w", iface, err)
	}
	if err := ioctl(fd, unix.SIOCGIFINDEX, unsafe.Pointer(r)); err != nil {
		return 0, fmt.Errorf("%s: %w", iface, err)
	}
	return uint32(r.index), nil
}

func ioctl(fd int, req uintptr, arg unsafe.Pointer) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		}
		return e
	}
}

// request sends c.msg on conn and calls f with each reply (genl.Conn.Do);
// a malformed reply is an error wrapping ErrMalformed.
func (c *nsConn) request(conn *genl.Conn, dump bool, f func(typ uint16, payload []byte) error) error {
	return netlinkErr(conn.Do(&c.msg, dump, f))
}
