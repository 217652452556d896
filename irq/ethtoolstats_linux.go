package irq

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ssetInfo is struct ethtool_sset_info asking for one set.
type ssetInfo struct {
	cmd, _ uint32
	mask   uint64
	n      uint32
	_      uint32
}

// ethtoolStats reads iface's ethtool statistics (`ethtool -S`) into its
// table: ETHTOOL_GSSET_INFO for their number, ETHTOOL_GSTRINGS for their
// names when the number or the interface changed, ETHTOOL_GSTATS for the
// values. A driver without statistics gives an empty table and no error.
func (c *nsConn) ethtoolStats(iface string) (*ethtoolTable, error) {
	idx, err := c.ifindex(iface)
	if err != nil {
		return nil, err
	}
	fd, err := c.ioctlFD()
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
		n, err := c.statsCount(fd, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", iface, err)
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
		same, err := t.readValues(fd, r, n)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: %w", iface, err)
		case same:
			return t, nil
		}
		t.n = 0 // the set changed between the calls: names again
		if try == 1 {
			return nil, fmt.Errorf("%s: ethtool statistics changed while read", iface)
		}
	}
}

// statsCount asks how many statistics the driver has
// (ETHTOOL_GSSET_INFO); a driver without them has 0.
func (c *nsConn) statsCount(fd int, r *ifreqData) (uint32, error) {
	info := &c.sset
	*info = ssetInfo{cmd: unix.ETHTOOL_GSSET_INFO, mask: 1 << ethSSStats}
	r.data = unsafe.Pointer(info)
	if err := ioctl(fd, unix.SIOCETHTOOL, unsafe.Pointer(r)); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			return 0, nil
		}
		return 0, err
	}
	if info.mask&(1<<ethSSStats) == 0 {
		return 0, nil
	}
	if info.n > maxEthtoolStats {
		return 0, fmt.Errorf("%w: %d ethtool statistics", ErrMalformed, info.n)
	}
	return info.n, nil
}

// readValues reads the n values (ETHTOOL_GSTATS) into t.vals; same is
// false when the driver answered with another count (its set changed
// since it was counted). A driver that refuses leaves t empty.
func (t *ethtoolTable) readValues(fd int, r *ifreqData, n uint32) (same bool, err error) {
	// The kernel writes as many values as the driver has at the call,
	// whatever the count given: the buffer has room for the count to
	// double between the two calls.
	if need := 1 + 2*int(n) + 64; len(t.vals) < need {
		t.vals = make([]uint64, need)
	}
	hdr := (*[2]uint32)(unsafe.Pointer(&t.vals[0]))
	hdr[0], hdr[1] = unix.ETHTOOL_GSTATS, n
	r.data = unsafe.Pointer(&t.vals[0])
	if err := ioctl(fd, unix.SIOCETHTOOL, unsafe.Pointer(r)); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			t.n = 0
			return true, nil
		}
		return false, err
	}
	return hdr[1] == n, nil
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
