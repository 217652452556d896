package irq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// nsConn is the sockets the live NIC counters are asked over, in one
// network namespace (WithNetns's, else the caller's): a routing netlink
// socket (RTM_GETSTATS), a generic netlink one (netdev qstats, ethtool
// pause) and an ioctl socket (SIOCGIFINDEX, SIOCETHTOOL). Opening them,
// and the namespace, for every question was most of a live sample; they
// are opened on first use and kept until close.
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
	route int            // sockets, -1 while closed
	genl  int
	ioctl int
	seq   uint32
	buf   []byte // replies
	msg   []byte // requests

	inReading bool
	idx       map[string]ifindexAt
	qacc      qstatsAcc

	// At a reading, the interface counters of every link and the queue
	// statistics of every interface are dumped once (while there are not
	// too many of them: then each interface is asked alone).
	stats                map[uint32]linkCounters
	statsDone, statsEach bool
	statsErr             error
	qrows                []qstatsRow
	qDone, qEach         bool
	qErr                 error
	eth                  map[string]*ethtoolTable
	ethBuf               []byte
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
	return &nsConn{path: path, ns: netns.None(), route: -1, genl: -1, ioctl: -1}
}

// begin starts a reading.
func (c *nsConn) begin() {
	c.inReading = true
	clear(c.idx)
	c.nsErr = nil
	c.statsDone, c.qDone = false, false
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
	for _, fd := range []*int{&c.route, &c.genl, &c.ioctl} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
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

// socket returns the socket *fd, opening it in the namespace when closed.
func (c *nsConn) socket(fd *int, domain, typ, proto int) (int, error) {
	if *fd >= 0 {
		return *fd, nil
	}
	var s int
	err := c.inNS(func() error {
		var err error
		s, err = unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
		return err
	})
	if err != nil {
		return -1, err
	}
	if domain == unix.AF_NETLINK {
		tv := nl.SocketTimeoutTv
		if err := unix.SetsockoptTimeval(s, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err == nil {
			err = unix.SetsockoptTimeval(s, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
		}
		if err == nil {
			err = unix.Bind(s, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
		}
		if err != nil {
			unix.Close(s)
			return -1, err
		}
	}
	*fd = s
	return s, nil
}

// inNS runs f in the namespace: a socket stays in the namespace it was
// made in, so it is made on a thread switched there and back (or, if that
// fails, left locked to die with its goroutine).
func (c *nsConn) inNS(f func() error) error {
	if !c.ns.IsOpen() {
		return f()
	}
	if err := inNetns(c.ns, f); err != nil {
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

// ssetInfo is struct ethtool_sset_info asking for one set.
type ssetInfo struct {
	cmd, _ uint32
	mask   uint64
	n      uint32
	_      uint32
}

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
	fd, err := c.socket(&c.ioctl, unix.AF_INET, unix.SOCK_DGRAM, 0)
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

// request sends the netlink message c.msg (its length and sequence number
// set here) on fd and calls f with the type and payload of each reply to
// it, until NLMSG_DONE, an NLMSG_ERROR (its errno is the error; 0 is an
// acknowledgement) or, unless dump, the first reply. Replies to earlier
// requests (one that timed out) are skipped.
func (c *nsConn) request(fd int, dump bool, f func(typ uint16, payload []byte) error) error {
	c.seq++
	binary.NativeEndian.PutUint32(c.msg[0:], uint32(len(c.msg)))
	binary.NativeEndian.PutUint32(c.msg[8:], c.seq)
	for {
		_, err := unix.Write(fd, c.msg)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	if c.buf == nil {
		c.buf = make([]byte, 64<<10)
	}
	var ferr error
	for {
		n, err := recvTrunc(fd, c.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n > len(c.buf) { // MSG_TRUNC: the datagram's length, not what fit
			return fmt.Errorf("%w: netlink reply of %d bytes over the %d-byte buffer", ErrMalformed, n, len(c.buf))
		}
		for b := c.buf[:n]; len(b) >= unix.NLMSG_HDRLEN; {
			l := int(binary.NativeEndian.Uint32(b[0:]))
			if l < unix.NLMSG_HDRLEN || l > len(b) {
				return fmt.Errorf("%w: netlink message of %d bytes with %d left", ErrMalformed, l, len(b))
			}
			typ := binary.NativeEndian.Uint16(b[4:])
			seq := binary.NativeEndian.Uint32(b[8:])
			payload := b[unix.NLMSG_HDRLEN:l]
			b = b[min(len(b), (l+3)&^3):]
			if seq != c.seq {
				continue
			}
			switch typ {
			case unix.NLMSG_DONE: // a dump that failed on the way says so here
				if len(payload) >= 4 {
					if errno := int32(binary.NativeEndian.Uint32(payload)); errno < 0 {
						return unix.Errno(-errno)
					}
				}
				return ferr
			case unix.NLMSG_ERROR:
				if len(payload) < 4 {
					return fmt.Errorf("%w: short NLMSG_ERROR", ErrMalformed)
				}
				if errno := int32(binary.NativeEndian.Uint32(payload)); errno < 0 {
					return unix.Errno(-errno)
				}
				return ferr
			}
			if ferr == nil {
				ferr = f(typ, payload)
			}
			if !dump {
				return ferr
			}
		}
	}
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

// startMsg starts c.msg: a netlink header of type typ and flags
// (NLM_F_REQUEST added), then the fixed header hdr.
func (c *nsConn) startMsg(typ uint16, flags uint16, hdr ...byte) {
	c.msg = append(c.msg[:0], make([]byte, unix.NLMSG_HDRLEN)...)
	binary.NativeEndian.PutUint16(c.msg[4:], typ)
	binary.NativeEndian.PutUint16(c.msg[6:], flags|unix.NLM_F_REQUEST)
	c.msg = append(c.msg, hdr...)
}

// attr appends a netlink attribute of a u32.
func (c *nsConn) attrU32(typ uint16, v uint32) {
	c.msg = binary.NativeEndian.AppendUint16(c.msg, 8)
	c.msg = binary.NativeEndian.AppendUint16(c.msg, typ)
	c.msg = binary.NativeEndian.AppendUint32(c.msg, v)
}

// Above these, a reading asks each interface alone instead of dumping all.
const (
	maxDumpLinks  = 256
	maxDumpQueues = 4096
)

// linkStats reads iface's interface counters (RTM_GETSTATS with
// IFLA_STATS_LINK_64: the rtnl_link_stats64 the kernel's dev_get_stats
// fills, as sysfs's statistics files print them). In a reading they come
// from one dump of every link's.
func (c *nsConn) linkStats(iface string) (linkCounters, error) {
	idx, err := c.ifindex(iface)
	if err != nil {
		return linkCounters{}, err
	}
	fd, err := c.socket(&c.route, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
	if err != nil {
		return linkCounters{}, err
	}
	if c.inReading && !c.statsEach {
		if !c.statsDone {
			c.statsDone = true
			c.statsErr = c.dumpLinkStats(fd)
		}
		if c.statsErr != nil {
			return linkCounters{}, fmt.Errorf("%s: %w", iface, c.statsErr)
		}
		if v, ok := c.stats[idx]; ok {
			return v, nil
		}
		// made after the dump: asked alone
	}
	var hdr [12]byte // struct if_stats_msg
	binary.NativeEndian.PutUint32(hdr[4:], idx)
	binary.NativeEndian.PutUint32(hdr[8:], 1<<(unix.IFLA_STATS_LINK_64-1))
	c.startMsg(unix.RTM_GETSTATS, 0, hdr[:]...)
	var out linkCounters
	found := false
	err = c.request(fd, false, func(typ uint16, p []byte) error {
		var err error
		_, out, found, err = parseLinkStats(typ, p)
		return err
	})
	if err != nil {
		return linkCounters{}, fmt.Errorf("%s: %w", iface, err)
	}
	if !found {
		return linkCounters{}, fmt.Errorf("%s: no statistics over netlink", iface)
	}
	return out, nil
}

// dumpLinkStats reads every link's counters into c.stats; with more links
// than maxDumpLinks, the next readings ask each interface alone.
func (c *nsConn) dumpLinkStats(fd int) error {
	if c.stats == nil {
		c.stats = map[uint32]linkCounters{}
	}
	clear(c.stats)
	var hdr [12]byte
	binary.NativeEndian.PutUint32(hdr[8:], 1<<(unix.IFLA_STATS_LINK_64-1))
	c.startMsg(unix.RTM_GETSTATS, unix.NLM_F_DUMP, hdr[:]...)
	err := c.request(fd, true, func(typ uint16, p []byte) error {
		idx, v, ok, err := parseLinkStats(typ, p)
		if ok {
			c.stats[idx] = v
		}
		return err
	})
	if len(c.stats) > maxDumpLinks {
		c.statsEach = true
	}
	return err
}

// parseLinkStats reads an RTM_NEWSTATS message (struct if_stats_msg, then
// attributes): the link's index and its IFLA_STATS_LINK_64 counters; ok
// is false when it has none.
func parseLinkStats(typ uint16, p []byte) (idx uint32, out linkCounters, ok bool, err error) {
	const hdr = 12
	if typ != unix.RTM_NEWSTATS || len(p) < hdr {
		return 0, out, false, fmt.Errorf("%w: RTM_GETSTATS reply of type %d, %d bytes", ErrMalformed, typ, len(p))
	}
	idx = binary.NativeEndian.Uint32(p[4:])
	err = walkAttrs(p[hdr:], func(t uint16, v []byte) error {
		if t != unix.IFLA_STATS_LINK_64 {
			return nil
		}
		if len(v) < 16*8 {
			return fmt.Errorf("%w: rtnl_link_stats64 of %d bytes", ErrMalformed, len(v))
		}
		u := func(i int) uint64 { return binary.NativeEndian.Uint64(v[8*i:]) }
		// struct rtnl_link_stats64: rx_packets, tx_packets, rx_bytes,
		// tx_bytes, rx_errors, tx_errors, rx_dropped, tx_dropped,
		// multicast, collisions, rx_length_errors, rx_over_errors,
		// rx_crc_errors, rx_frame_errors, rx_fifo_errors,
		// rx_missed_errors, ...
		out = linkCounters{RXPackets: u(0), TXPackets: u(1), RXBytes: u(2), TXBytes: u(3), RXDropped: u(6),
			TXDropped: u(7), RXOverErrors: u(11), RXFIFOErrors: u(14), RXMissedErrors: u(15), Has: hasAllLinkLosses}
		ok = true
		return nil
	})
	if err != nil {
		return idx, linkCounters{}, false, err
	}
	return idx, out, ok, nil
}

// genlFamilyID looks a generic netlink family up through f, once (family
// ids are the same in every namespace).
func (c *nsConn) genlFamilyID(f *genlFamily, name string) (uint16, error) {
	if id := f.known(); id != 0 {
		return id, nil
	}
	return f.id(&netlink.Handle{}, name)
}

// qstatsInto reads iface's netdev queue statistics (one QSTATS_GET dump
// at queue scope, on the kept socket) into dst, reusing its maps; an
// interface without rows, or a kernel without them, is errNoQstats
// itself, as netdevQueueStats says (unwrapped: the default source falls
// back to ethtool at every reading, and makes no message for it).
func (c *nsConn) qstatsInto(f *genlFamily, iface string, dst *queueCounters) error {
	idx, err := c.ifindex(iface)
	if err != nil {
		return err
	}
	fam, err := c.genlFamilyID(f, netdevFamilyName)
	if err != nil {
		return errNoQstats
	}
	fd, err := c.socket(&c.genl, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_GENERIC)
	if err != nil {
		return err
	}
	c.qacc.out, c.qacc.ifindex = dst, idx
	c.qacc.reset()
	if c.inReading && !c.qEach && !c.qDone {
		c.qDone = true
		if c.qErr = c.dumpQstats(fd, fam); c.qErr != nil {
			// One interface's failure ends a dump of all: each is asked
			// alone from now on, as before the dump.
			c.qEach = true
		}
	}
	if c.inReading && !c.qEach {
		for i := 0; err == nil && i < len(c.qrows); i++ {
			err = c.qacc.addRow(&c.qrows[i])
		}
	} else {
		c.startMsg(fam, unix.NLM_F_DUMP, netdevCmdQstatsGet, netdevFamilyVersion, 0, 0)
		c.attrU32(netdevAQstatsIfindex, idx)
		c.attrU32(netdevAQstatsScope, netdevQstatsScopeQueue)
		rows := 0
		err = c.request(fd, true, func(typ uint16, p []byte) error {
			if typ != fam {
				return nil
			}
			if rows++; rows > maxQstatsMsgs {
				return fmt.Errorf("%w: more than %d replies", ErrMalformed, maxQstatsMsgs)
			}
			return c.qacc.add(p)
		})
	}
	c.qacc.out = nil
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL) {
			return errNoQstats // the caller falls back: no message made
		}
		return fmt.Errorf("%s: netdev qstats: %w", iface, err)
	}
	if len(dst.RX) == 0 && len(dst.TX) == 0 {
		return errNoQstats
	}
	return nil
}

// dumpQstats reads the queue statistics rows of every interface into
// c.qrows; with more rows than maxDumpQueues, the next readings ask each
// interface alone.
func (c *nsConn) dumpQstats(fd int, fam uint16) error {
	c.qrows = c.qrows[:0]
	c.startMsg(fam, unix.NLM_F_DUMP, netdevCmdQstatsGet, netdevFamilyVersion, 0, 0)
	c.attrU32(netdevAQstatsScope, netdevQstatsScopeQueue)
	err := c.request(fd, true, func(typ uint16, p []byte) error {
		if typ != fam {
			return nil
		}
		if len(c.qrows) >= maxQstatsMsgs {
			return fmt.Errorf("%w: more than %d replies", ErrMalformed, maxQstatsMsgs)
		}
		r, err := parseQstatsMsg(p)
		if err != nil {
			return fmt.Errorf("netdev qstats message %d: %w", len(c.qrows), err)
		}
		c.qrows = append(c.qrows, r)
		return nil
	})
	if len(c.qrows) > maxDumpQueues {
		c.qEach = true
	}
	return err
}

// pauseCounts reads iface's pause frame counters (PAUSE_GET with
// statistics, on the kept socket), as ethtoolPauseStats.counts does.
func (c *nsConn) pauseCounts(f *genlFamily, iface string) (pauseCounts, error) {
	var p pauseCounts
	idx, err := c.ifindex(iface)
	if err != nil {
		return p, err
	}
	fam, err := c.genlFamilyID(f, ethtoolFamilyName)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return p, nil // no ethtool netlink
		}
		return p, fmt.Errorf("%s: %w", iface, err)
	}
	fd, err := c.socket(&c.genl, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_GENERIC)
	if err != nil {
		return p, err
	}
	c.startMsg(fam, unix.NLM_F_ACK, ethtoolMsgPauseGet, ethtoolFamilyVersion, 0, 0)
	c.msg = binary.NativeEndian.AppendUint16(c.msg, 4+8+8)
	c.msg = binary.NativeEndian.AppendUint16(c.msg, unix.NLA_F_NESTED|ethtoolAPauseHeader)
	c.attrU32(ethtoolAHeaderDevIndex, idx)
	c.attrU32(ethtoolAHeaderFlags, ethtoolFlagStats)
	replies := 0
	err = c.request(fd, true, func(typ uint16, b []byte) error {
		if typ != fam {
			return nil
		}
		replies++
		var err error
		p, err = parsePauseStats(b)
		return err
	})
	switch {
	case errors.Is(err, unix.EOPNOTSUPP):
		return pauseCounts{}, nil // no get_pauseparam
	case err != nil:
		return pauseCounts{}, fmt.Errorf("%s: ethtool pause: %w", iface, err)
	case replies != 1:
		return pauseCounts{}, fmt.Errorf("%s: ethtool pause: %w: %d replies", iface, ErrMalformed, replies)
	}
	return p, nil
}

// ethtoolTable is an interface's ethtool statistics names as read last,
// what each counts for the sampler, and the buffer their values are read
// into.
type ethtoolTable struct {
	ifindex uint32
	n       uint32
	names   []string
	kind    []statKind
	queue   []queueStat
	class   []LossClass
	loss    []string // LossRate.Name of a loss counter
	vals    []uint64 // ethtool_stats: its header, then the values
}

// statKind is what one ethtool statistic is to the sampler.
type statKind uint8

const (
	statOther     statKind = iota
	statQueue              // a per-queue packet or byte counter (parseQueueStatName)
	statLoss               // a loss counter (lossClass)
	statQueueLoss          // both
)

// ethtoolStats reads iface's ethtool statistics (`ethtool -S`) into its
// table: ETHTOOL_GSSET_INFO for their number, ETHTOOL_GSTRINGS for their
// names when the number or the interface changed, ETHTOOL_GSTATS for the
// values. A driver without statistics gives an empty table and no error.
func (c *nsConn) ethtoolStats(iface string) (*ethtoolTable, error) {
	idx, err := c.ifindex(iface)
	if err != nil {
		return nil, err
	}
	fd, err := c.socket(&c.ioctl, unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return nil, err
	}
	if c.eth == nil {
		c.eth = map[string]*ethtoolTable{}
	}
	t := c.eth[iface]
	if t == nil {
		t = new(ethtoolTable)
		c.eth[iface] = t
	}
	r := &c.ifrData
	if err := setName(&r.name, iface); err != nil {
		return nil, fmt.Errorf("%s: %w", iface, err)
	}
	for try := 0; ; try++ {
		info := &c.sset
		*info = ssetInfo{cmd: unix.ETHTOOL_GSSET_INFO, mask: 1 << ethSSStats}
		r.data = unsafe.Pointer(info)
		if err := ioctl(fd, unix.SIOCETHTOOL, unsafe.Pointer(r)); err != nil {
			if errors.Is(err, unix.EOPNOTSUPP) {
				t.n, t.ifindex = 0, idx
				return t, nil
			}
			return nil, fmt.Errorf("%s: %w", iface, err)
		}
		n := info.n
		if info.mask&(1<<ethSSStats) == 0 {
			n = 0
		}
		if n > maxEthtoolStats {
			return nil, fmt.Errorf("%s: %w: %d ethtool statistics", iface, ErrMalformed, n)
		}
		if n == 0 {
			t.n, t.ifindex = 0, idx
			return t, nil
		}
		if n != t.n || idx != t.ifindex {
			if err := c.ethtoolNames(fd, r, t, n); err != nil {
				return nil, fmt.Errorf("%s: %w", iface, err)
			}
			t.ifindex = idx
		}
		// The kernel writes as many values as the driver has at the
		// call, whatever the count given: the buffer has room for the
		// count to double between the two calls.
		if need := 1 + 2*int(n) + 64; len(t.vals) < need {
			t.vals = make([]uint64, need)
		}
		hdr := (*[2]uint32)(unsafe.Pointer(&t.vals[0]))
		hdr[0], hdr[1] = unix.ETHTOOL_GSTATS, n
		r.data = unsafe.Pointer(&t.vals[0])
		if err := ioctl(fd, unix.SIOCETHTOOL, unsafe.Pointer(r)); err != nil {
			if errors.Is(err, unix.EOPNOTSUPP) {
				t.n = 0
				return t, nil
			}
			return nil, fmt.Errorf("%s: %w", iface, err)
		}
		if hdr[1] == n {
			return t, nil
		}
		t.n = 0 // the set changed between the calls: names again
		if try == 1 {
			return nil, fmt.Errorf("%s: ethtool statistics changed while read", iface)
		}
	}
}

// maxEthtoolStats bounds a driver's statistics (mlx5 has a few thousand).
const maxEthtoolStats = 1 << 16

// From the kernel's include/uapi/linux/ethtool.h.
const (
	ethSSStats    = 1  // ETH_SS_STATS
	ethGStringLen = 32 // ETH_GSTRING_LEN
)

// ethtoolNames reads the n statistics names into t and classifies them.
func (c *nsConn) ethtoolNames(fd int, r *ifreqData, t *ethtoolTable, n uint32) error {
	need := 12 + 2*int(n)*ethGStringLen + 64*ethGStringLen // room to double, as for the values
	if len(c.ethBuf) < need {
		c.ethBuf = make([]byte, need)
	}
	b := c.ethBuf
	binary.NativeEndian.PutUint32(b[0:], unix.ETHTOOL_GSTRINGS)
	binary.NativeEndian.PutUint32(b[4:], ethSSStats)
	binary.NativeEndian.PutUint32(b[8:], n)
	r.data = unsafe.Pointer(&b[0])
	if err := ioctl(fd, unix.SIOCETHTOOL, unsafe.Pointer(r)); err != nil {
		return err
	}
	if got := binary.NativeEndian.Uint32(b[8:]); got != n {
		return fmt.Errorf("ethtool statistics changed while read (%d names for %d)", got, n)
	}
	names := make([]string, n)
	for i := range names {
		s := b[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
		for j, ch := range s {
			if ch == 0 {
				s = s[:j]
				break
			}
		}
		names[i] = string(s)
	}
	t.setNames(names)
	return nil
}

// setNames makes names the table's statistics and classifies each.
func (t *ethtoolTable) setNames(names []string) {
	t.n = uint32(len(names))
	t.names, t.kind, t.queue, t.class, t.loss = names, t.kind[:0], t.queue[:0], t.class[:0], t.loss[:0]
	last := make(map[string]int, len(names))
	for i, name := range names {
		last[name] = i
	}
	for i, name := range t.names {
		k := statOther
		q, isQueue := parseQueueStatName(name)
		cl, isLoss := lossClass(name)
		if last[name] != i { // of two statistics of one name the last counts, as in a map
			isQueue, isLoss = false, false
		}
		switch {
		case isQueue && isLoss:
			k = statQueueLoss
		case isQueue:
			k = statQueue
		case isLoss:
			k = statLoss
		}
		lname := ""
		if isLoss {
			lname = lossEthtool + name
		}
		t.kind, t.queue, t.class, t.loss = append(t.kind, k), append(t.queue, q), append(t.class, cl), append(t.loss, lname)
	}
}

// values returns the statistics' values read last.
func (t *ethtoolTable) values() []uint64 {
	if t.n == 0 {
		return nil
	}
	return t.vals[1 : 1+t.n]
}

// queuesInto puts t's per-queue counters (as parseQueueStats reads them)
// and its loss counters (as ethtoolLosses) into dst, reusing its maps.
func (t *ethtoolTable) queuesInto(dst *queueCounters) {
	dst.reset()
	dst.Ethtool = true
	vals := t.values()
	for i, k := range t.kind[:len(vals)] {
		if k == statQueue || k == statQueueLoss {
			q := t.queue[i]
			m := dst.RX
			if q.dir == KindTX {
				m = dst.TX
			}
			c := m[q.index]
			if q.bytes {
				c.Bytes += vals[i]
				c.HasBytes = true
			} else {
				c.Packets += vals[i]
				c.HasPackets = true
			}
			m[q.index] = c
		}
		if k == statLoss || k == statQueueLoss {
			dst.Losses[t.loss[i]] = lossCounter{t.class[i], vals[i]}
		}
	}
}

// lossesInto appends t's loss counters to dst.
func (t *ethtoolTable) lossesInto(dst *lossList) {
	vals := t.values()
	for i, k := range t.kind[:len(vals)] {
		if k == statLoss || k == statQueueLoss {
			*dst = append(*dst, lossEntry{t.loss[i], lossCounter{t.class[i], vals[i]}})
		}
	}
}
