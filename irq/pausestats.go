package irq

import (
	"encoding/binary"
	"fmt"
)

// The ethtool generic netlink family's pause statistics (PAUSE_GET with
// ETHTOOL_FLAG_STATS, Linux 5.11 and later: what `ethtool -I -a IFACE`
// prints), from the kernel's include/uapi/linux/ethtool_netlink.h, since
// 6.14 include/uapi/linux/ethtool_netlink_generated.h; the Linux test
// checks them against golang.org/x/sys/unix. A driver fills them in
// get_pause_stats, independent of its ethtool -S names.
const (
	ethtoolFamilyName    = "ethtool" // ETHTOOL_GENL_NAME
	ethtoolFamilyVersion = 1         // ETHTOOL_GENL_VERSION

	ethtoolMsgPauseGet      = 21 // ETHTOOL_MSG_PAUSE_GET
	ethtoolMsgPauseGetReply = 22 // ETHTOOL_MSG_PAUSE_GET_REPLY

	ethtoolAHeaderDevIndex = 1 // ETHTOOL_A_HEADER_DEV_INDEX, u32
	ethtoolAHeaderFlags    = 3 // ETHTOOL_A_HEADER_FLAGS, u32
	ethtoolFlagStats       = 4 // ETHTOOL_FLAG_STATS

	ethtoolAPauseHeader = 1 // ETHTOOL_A_PAUSE_HEADER, nested
	ethtoolAPauseStats  = 5 // ETHTOOL_A_PAUSE_STATS, nested

	ethtoolAPauseStatPad      = 1 // ETHTOOL_A_PAUSE_STAT_PAD
	ethtoolAPauseStatTxFrames = 2 // ETHTOOL_A_PAUSE_STAT_TX_FRAMES, u64
	ethtoolAPauseStatRxFrames = 3 // ETHTOOL_A_PAUSE_STAT_RX_FRAMES, u64
)

// pauseCounts are the pause frame counters of a PAUSE_GET reply. HasTX and
// HasRX say the kernel reported them: a driver without get_pause_stats
// leaves the ETHTOOL_A_PAUSE_STATS nest empty (or, asked without
// ETHTOOL_FLAG_STATS, the kernel omits it), which is "not counted", not 0.
type pauseCounts struct {
	TX, RX       uint64
	HasTX, HasRX bool
}

// losses adds the reported counters to dst, as ethtool-nl:tx_pause_frames
// and ethtool-nl:rx_pause_frames.
func (p pauseCounts) losses(dst lossCounters) {
	if p.HasTX {
		dst[lossEthtoolNL+"tx_pause_frames"] = lossCounter{LossPauseTX, p.TX}
	}
	if p.HasRX {
		dst[lossEthtoolNL+"rx_pause_frames"] = lossCounter{LossPauseRX, p.RX}
	}
}

// parsePauseStats reads a PAUSE_GET reply (the payload after the nlmsghdr:
// genlmsghdr, then attributes). Attributes other than the stats nest (the
// reply header, autoneg, rx, tx, the stats source) and, inside it, the
// padding and unknown ones are skipped. A truncated message, a counter not
// of 8 bytes, or a nest or counter given twice is an error.
func parsePauseStats(b []byte) (pauseCounts, error) {
	var p pauseCounts
	if len(b) < genlHdrLen {
		return p, fmt.Errorf("%w: %d bytes, shorter than a genlmsghdr", ErrMalformed, len(b))
	}
	if b[0] != ethtoolMsgPauseGetReply {
		return p, fmt.Errorf("%w: command %d, not PAUSE_GET_REPLY", ErrMalformed, b[0])
	}
	nests := 0
	err := walkAttrs(b[genlHdrLen:], func(typ uint16, v []byte) error {
		if typ != ethtoolAPauseStats {
			return nil
		}
		if nests++; nests > 1 {
			return fmt.Errorf("%w: pause stats nest twice", ErrMalformed)
		}
		return walkAttrs(v, func(typ uint16, v []byte) error {
			var dst *uint64
			var has *bool
			switch typ {
			case ethtoolAPauseStatTxFrames:
				dst, has = &p.TX, &p.HasTX
			case ethtoolAPauseStatRxFrames:
				dst, has = &p.RX, &p.HasRX
			case ethtoolAPauseStatPad: // aligns the u64 that follows
				return nil
			default: // newer counters
				return nil
			}
			if *has {
				return fmt.Errorf("%w: pause stat %d twice", ErrMalformed, typ)
			}
			if len(v) != 8 {
				return fmt.Errorf("%w: pause stat %d of %d bytes, not a u64", ErrMalformed, typ, len(v))
			}
			*dst, *has = binary.NativeEndian.Uint64(v), true
			return nil
		})
	})
	if err != nil {
		return pauseCounts{}, err
	}
	return p, nil
}
