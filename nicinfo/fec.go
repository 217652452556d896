package nicinfo

import (
	"encoding/binary"
	"fmt"

	"github.com/nicdiag/nicdiag/internal/genl"
)

// FEC is the forward error correction on the link and what it counted
// (ETHTOOL_MSG_FEC_GET with ETHTOOL_FLAG_STATS, Linux 5.13 and later:
// `ethtool -I --show-fec`). A nil counter was not reported by the driver.
type FEC struct {
	// Active is the FEC mode in use ("RS", "BaseR", "LLRS", "None");
	// "" when the driver does not say.
	Active string `json:"active,omitempty"`
	// Corrected and Uncorrectable are FEC blocks (codewords) since the
	// driver started counting: corrected ones cost nothing, an
	// uncorrectable one is a frame lost. CorrectedBits are the bits
	// corrected.
	Corrected     *uint64 `json:"corrected_blocks,omitempty"`
	Uncorrectable *uint64 `json:"uncorrectable_blocks,omitempty"`
	CorrectedBits *uint64 `json:"corrected_bits,omitempty"`
}

// ETHTOOL_A_FEC_* and ETHTOOL_A_FEC_STAT_* of include/uapi/linux/
// ethtool_netlink.h (golang.org/x/sys/unix does not define them).
const (
	ethtoolAFECActive         = 4 // u32: the active mode's link-mode bit
	ethtoolAFECStats          = 5 // nest
	ethtoolAFECStatCorrected  = 2 // u64 array: total, then per lane
	ethtoolAFECStatUncorr     = 3
	ethtoolAFECStatCorrBits   = 4
	ethtoolFECModeBitNone     = 49 // ETHTOOL_LINK_MODE_FEC_NONE_BIT
	ethtoolFECModeBitRS       = 50
	ethtoolFECModeBitBaseR    = 51
	ethtoolFECModeBitLLRS     = 74
	ethtoolStatNotSet         = ^uint64(0) // ETHTOOL_STAT_NOT_SET
	fecStatMaxLanes           = 8
	ethtoolAFECStatsMaxLength = 8 * (1 + fecStatMaxLanes)
)

// fecModeName names ETHTOOL_A_FEC_ACTIVE's link-mode bit as ethtool
// prints it.
func fecModeName(bit uint32) string {
	switch bit {
	case ethtoolFECModeBitNone:
		return "None"
	case ethtoolFECModeBitRS:
		return "RS"
	case ethtoolFECModeBitBaseR:
		return "BaseR"
	case ethtoolFECModeBitLLRS:
		return "LLRS"
	}
	return fmt.Sprintf("bit %d", bit)
}

// parseFECAttrs reads a FEC_GET reply's attributes (after the
// genlmsghdr). Attributes it does not read (the header, the modes bitset,
// auto) are skipped; a counter array that is empty, longer than 1 + 8
// lanes or not whole u64s, or an active mode not of 4 bytes, is
// ErrMalformed.
func parseFECAttrs(b []byte) (*FEC, error) {
	f := &FEC{}
	err := genl.Attrs(b, func(typ uint16, v []byte) error {
		switch typ {
		case ethtoolAFECActive:
			if len(v) != 4 {
				return fmt.Errorf("%w: FEC active mode of %d bytes", ErrMalformed, len(v))
			}
			f.Active = fecModeName(binary.NativeEndian.Uint32(v))
		case ethtoolAFECStats:
			return genl.Attrs(v, func(typ uint16, v []byte) error {
				var dst **uint64
				switch typ {
				case ethtoolAFECStatCorrected:
					dst = &f.Corrected
				case ethtoolAFECStatUncorr:
					dst = &f.Uncorrectable
				case ethtoolAFECStatCorrBits:
					dst = &f.CorrectedBits
				default:
					return nil // padding, histograms
				}
				if len(v) == 0 || len(v)%8 != 0 || len(v) > ethtoolAFECStatsMaxLength {
					return fmt.Errorf("%w: FEC statistic %d of %d bytes", ErrMalformed, typ, len(v))
				}
				if total := binary.NativeEndian.Uint64(v); total != ethtoolStatNotSet {
					*dst = &total
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, genl.Malformed(err, ErrMalformed)
	}
	return f, nil
}
