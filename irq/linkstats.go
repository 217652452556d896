package irq

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/nicdiag/nicdiag/internal/fsroot"
	"github.com/nicdiag/nicdiag/internal/text"
	"golang.org/x/sys/unix"
)

// linkCounters are an interface's packet and byte counters since it came up.
// The loss counters RXMissedErrors, RXFIFOErrors, RXOverErrors and TXDropped
// count only where Has says so (an older snapshot lacks their files).
type linkCounters struct {
	RXPackets, TXPackets, RXBytes, TXBytes, RXDropped uint64

	RXMissedErrors, RXFIFOErrors, RXOverErrors, TXDropped uint64
	Has                                                   linkHas
}

// linkHas says which optional counters of linkCounters were read.
type linkHas uint8

const (
	hasRXMissedErrors linkHas = 1 << iota
	hasRXFIFOErrors
	hasRXOverErrors
	hasTXDropped

	hasAllLinkLosses = hasRXMissedErrors | hasRXFIFOErrors | hasRXOverErrors | hasTXDropped
)

// linkStatser reads an interface's counters by name.
type linkStatser interface {
	counters(iface string) (linkCounters, error)
}

// sysfsStats reads /sys/class/net/IFACE/statistics under the root (on the
// live host it sees the network namespace sysfs was mounted in), keeping
// each interface's files open (kfile) and reading them into buf, reused:
// it is not safe for concurrent use. close closes the files.
type sysfsStats struct {
	r      fsroot.Root
	w      *fileWatch // of the files held off sysfs (a snapshot's)
	buf    []byte
	ifaces map[string]*[len(linkStatFiles)]kfile
}

// linkStatFiles are the files of linkCounters, in its field order; has is
// 0 for the required ones.
var linkStatFiles = [...]struct {
	name string
	has  linkHas
}{
	{"rx_packets", 0}, {"tx_packets", 0}, {"rx_bytes", 0}, {"tx_bytes", 0}, {"rx_dropped", 0},
	{"rx_missed_errors", hasRXMissedErrors}, {"rx_fifo_errors", hasRXFIFOErrors},
	{"rx_over_errors", hasRXOverErrors}, {"tx_dropped", hasTXDropped},
}

func (s *sysfsStats) counters(iface string) (linkCounters, error) {
	files := s.ifaces[iface]
	if files == nil {
		files = new([len(linkStatFiles)]kfile)
		dir := "/sys/class/net/" + iface + "/statistics/"
		for i, f := range linkStatFiles {
			files[i] = kfile{path: dir + f.name, once: true, w: s.w}
		}
		if s.ifaces == nil {
			s.ifaces = map[string]*[len(linkStatFiles)]kfile{}
		}
		s.ifaces[iface] = files
	}
	var c linkCounters
	dst := [len(linkStatFiles)]*uint64{&c.RXPackets, &c.TXPackets, &c.RXBytes, &c.TXBytes, &c.RXDropped,
		&c.RXMissedErrors, &c.RXFIFOErrors, &c.RXOverErrors, &c.TXDropped}
	for i, f := range linkStatFiles {
		var v int64
		var err error
		if v, s.buf, err = readIntAttr(s.r, &files[i], s.buf); err != nil {
			if f.has != 0 && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return c, err
		}
		*dst[i] = uint64(v)
		c.Has |= f.has
	}
	return c, nil
}

// close closes the files it keeps open.
func (s *sysfsStats) close() {
	for _, files := range s.ifaces {
		for i := range files {
			files[i].close()
		}
	}
}

// readIntAttr reads the integer attribute held in k (Root.ReadInt's
// syntax: decimal, or with a base prefix, and a sign) into buf's storage,
// and returns the buffer for the next call.
func readIntAttr(r fsroot.Root, k *kfile, buf []byte) (int64, []byte, error) {
	buf, err := k.read(r, buf, maxSysfsFile)
	if err != nil {
		return 0, buf, err
	}
	b := bytes.TrimSpace(buf)
	if len(b) > 0 && len(b) <= 18 && (b[0] != '0' || len(b) == 1) {
		if v, ok := text.Uint(b); ok {
			return int64(v), buf, nil
		}
	}
	v, err := strconv.ParseInt(string(b), 0, 64)
	if err != nil {
		return 0, buf, &fs.PathError{Op: "parse", Path: r.Path(k.path), Err: fmt.Errorf("not an integer: %q", text.Clip(string(b)))}
	}
	return v, buf, nil
}

// connLinkStats reads interface counters over conn's kept routing netlink
// socket (RTM_GETSTATS): the same rtnl_link_stats64 as sysfs's statistics
// files, for all nine counters one request, where sysfs takes nine reads.
// In the caller's namespace (netns ""), an interface the socket does not
// see is read from sysfs: sysfs shows the namespace it was mounted in, and
// nicinfo lists the NICs from there.
type connLinkStats struct {
	conn  *nsConn
	sysfs *sysfsStats // nil with WithNetns
}

func (s connLinkStats) counters(iface string) (linkCounters, error) {
	c, err := s.conn.linkStats(iface)
	if err != nil && s.sysfs != nil && errors.Is(err, unix.ENODEV) {
		return s.sysfs.counters(iface)
	}
	return c, err
}
