package nicinfo

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/nicdiag/nicdiag/internal/genl"
	"golang.org/x/sys/unix"
)

// ethSSFeatures is ETH_SS_FEATURES, the string set of feature names.
const ethSSFeatures = 4

// ssetInfo is struct ethtool_sset_info asking for one string set: the
// kernel writes its count to data[0].
type ssetInfo struct {
	cmd      uint32
	reserved uint32
	mask     uint64
	data     [1]uint32
}

// features reads the judged features: ETHTOOL_GSSET_INFO for the number of
// feature names, ETHTOOL_GSTRINGS for the names, ETHTOOL_GFEATURES for
// their state. Written by hand rather than with safchain/ethtool's
// FeaturesWithState, which allocates a fixed 1 MiB string buffer per call
// and hands the kernel Go pointers as uintptr values across a function
// call; here every buffer is sized to the kernel's count and passed as an
// unsafe.Pointer to the ioctl itself.
func (l *liveEthtool) features(iface string) (map[string]Feature, error) {
	info := ssetInfo{cmd: unix.ETHTOOL_GSSET_INFO, mask: 1 << ethSSFeatures}
	if err := l.ioctl(iface, unsafe.Pointer(&info)); err != nil {
		return nil, err
	}
	n := int(info.data[0])
	if info.mask&(1<<ethSSFeatures) == 0 || n <= 0 || n > maxFeatureStrings {
		return nil, fmt.Errorf("%w: GSSET_INFO reports %d feature names (mask %#x)", ErrMalformed, info.data[0], info.mask)
	}
	// struct ethtool_gstrings: cmd, string_set, len, then len names of 32
	// bytes. The kernel writes as many names as it has, so the buffer is
	// sized by the count it just gave.
	gs := make([]byte, 12+n*featureStringBytes)
	binary.NativeEndian.PutUint32(gs[0:], unix.ETHTOOL_GSTRINGS)
	binary.NativeEndian.PutUint32(gs[4:], ethSSFeatures)
	binary.NativeEndian.PutUint32(gs[8:], uint32(n))
	if err := l.ioctl(iface, unsafe.Pointer(&gs[0])); err != nil {
		return nil, err
	}
	if got := int(binary.NativeEndian.Uint32(gs[8:])); got != n {
		return nil, fmt.Errorf("%w: GSTRINGS returned %d feature names after GSSET_INFO said %d", ErrMalformed, got, n)
	}
	names, err := parseFeatureStrings(gs[12:], n)
	if err != nil {
		return nil, err
	}
	// struct ethtool_gfeatures: cmd, size (blocks), then size blocks of
	// available, requested, active, never_changed.
	nb := (n + featureWordsPerBlock - 1) / featureWordsPerBlock
	gf := make([]uint32, 2+nb*featureBlockWords)
	gf[0], gf[1] = unix.ETHTOOL_GFEATURES, uint32(nb)
	if err := l.ioctl(iface, unsafe.Pointer(&gf[0])); err != nil {
		return nil, err
	}
	// The kernel answers with its own block count and copies at most
	// ours; decodeFeatures leaves out the names past what it filled.
	filled := min(int(gf[1]), nb)
	return decodeFeatures(names, gf[2:2+filled*featureBlockWords]), nil
}

// coalesce reads the interrupt moderation through ethtool netlink
// (ETHTOOL_MSG_COALESCE_GET), whose reply leaves out the parameters the
// driver does not support, and falls back to ETHTOOL_GCOALESCE on a kernel
// without the ethtool family (before 5.6).
func (l *liveEthtool) coalesce(iface string) (*Coalesce, error) {
	p, err := l.nl.get(unix.ETHTOOL_MSG_COALESCE_GET, unix.ETHTOOL_MSG_COALESCE_GET_REPLY,
		unix.ETHTOOL_A_COALESCE_HEADER, iface, 0, nil)
	if err != nil && l.nl.conn == nil { // no family, or no generic netlink at all
		return l.gcoalesce(iface)
	}
	if err != nil {
		return nil, err
	}
	return parseCoalesceAttrs(p[genl.GenlHeaderLen:])
}

// gcoalesce is the legacy ETHTOOL_GCOALESCE ioctl.
func (l *liveEthtool) gcoalesce(iface string) (*Coalesce, error) {
	var w [coalesceWords]uint32
	w[0] = unix.ETHTOOL_GCOALESCE
	if err := l.ioctl(iface, unsafe.Pointer(&w[0])); err != nil {
		return nil, err
	}
	return coalesceFromIoctl(&w), nil
}
