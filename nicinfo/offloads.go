package nicinfo

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/nicdiag/nicdiag/internal/genl"
	"github.com/nicdiag/nicdiag/internal/text"
)

// The offload features nicdiag judges, by the kernel's names for them
// (netdev_features_strings in net/ethtool/common.c, what `ethtool -k`
// prints with --show-features, or in its legacy form: "rx-gro" is
// generic-receive-offload, "rx-lro" large-receive-offload,
// "tx-generic-segmentation" generic-segmentation-offload).
const (
	FeatureGRO            = "rx-gro"
	FeatureLRO            = "rx-lro"
	FeatureTSO            = "tx-tcp-segmentation"
	FeatureTSO6           = "tx-tcp6-segmentation"
	FeatureGSO            = "tx-generic-segmentation"
	FeatureRXChecksum     = "rx-checksum"
	FeatureTXChecksumIPv4 = "tx-checksum-ipv4"
	FeatureTXChecksumIP   = "tx-checksum-ip-generic"
	FeatureTXChecksumIPv6 = "tx-checksum-ipv6"
	FeatureScatterGather  = "tx-scatter-gather"
)

// Coalesce.Source values.
const (
	// CoalesceNetlink: ETHTOOL_MSG_COALESCE_GET, where a parameter the
	// driver does not support is absent (unless it reads non-zero).
	CoalesceNetlink = "netlink"
	// CoalesceIoctl: the legacy ETHTOOL_GCOALESCE, which fills every
	// parameter, an unsupported one as 0.
	CoalesceIoctl = "ioctl"
)

const (
	maxFeatureStrings    = 1024 // the kernel has about 70; more is a broken answer
	featureStringBytes   = 32   // ETH_GSTRING_LEN
	featureBlockWords    = 4    // available, requested, active, never_changed
	featureWordsPerBlock = 32
)

// JudgedFeatures are the features read into EthtoolAnswers.Features (and
// so NIC.Features); a device's other features are not kept.
var JudgedFeatures = []string{
	FeatureGRO, FeatureLRO, FeatureTSO, FeatureTSO6, FeatureGSO, FeatureRXChecksum,
	FeatureTXChecksumIPv4, FeatureTXChecksumIP, FeatureTXChecksumIPv6, FeatureScatterGather,
}

// Feature is one offload's state as ETHTOOL_GFEATURES reports it.
type Feature struct {
	// Active is whether the feature is on now.
	Active bool `json:"active"`
	// Requested is what was last asked for; a feature requested on that
	// is not active was dropped by the kernel for a dependency (TSO needs
	// scatter-gather and transmit checksumming).
	Requested bool `json:"requested,omitempty"`
	// Fixed is what `ethtool -k` marks "[fixed]": the driver does not let
	// it change (not in the device's hw_features, or never-change).
	Fixed bool `json:"fixed,omitempty"`
}

// Coalesce is a NIC's interrupt moderation (`ethtool -c`). From
// ETHTOOL_MSG_COALESCE_GET a parameter the driver does not support is
// absent (nil) unless it reads non-zero; the legacy ETHTOOL_GCOALESCE
// ioctl (kernels without ethtool netlink) fills every field, an
// unsupported one as 0.
type Coalesce struct {
	RXUsecs    *uint32 `json:"rx_usecs,omitempty"`
	RXFrames   *uint32 `json:"rx_frames,omitempty"`
	TXUsecs    *uint32 `json:"tx_usecs,omitempty"`
	TXFrames   *uint32 `json:"tx_frames,omitempty"`
	AdaptiveRX *bool   `json:"adaptive_rx,omitempty"`
	AdaptiveTX *bool   `json:"adaptive_tx,omitempty"`
	// Source is CoalesceNetlink or CoalesceIoctl.
	Source string `json:"source,omitempty"`
}

// parseFeatureStrings splits the ETH_SS_FEATURES string set (n names of 32
// NUL-padded bytes each, as ETHTOOL_GSTRINGS returns them) into names; ""
// for an empty slot.
func parseFeatureStrings(b []byte, n int) ([]string, error) {
	if n < 0 || n > maxFeatureStrings || len(b) < n*featureStringBytes {
		return nil, fmt.Errorf("%w: %d feature strings in %d bytes", ErrMalformed, n, len(b))
	}
	names := make([]string, n)
	for i := range names {
		s := b[i*featureStringBytes : (i+1)*featureStringBytes]
		if j := bytes.IndexByte(s, 0); j >= 0 {
			s = s[:j]
		}
		names[i] = text.Clean(string(s))
	}
	return names, nil
}

// decodeFeatures picks the judged features out of ETHTOOL_GFEATURES'
// blocks (available, requested, active, never_changed per 32 features)
// for the feature names of the string set, by position. A name past the
// blocks the kernel filled is left out.
func decodeFeatures(names []string, blocks []uint32) map[string]Feature {
	out := map[string]Feature{}
	for i, name := range names {
		if !slices.Contains(JudgedFeatures, name) {
			continue
		}
		b, bit := i/featureWordsPerBlock*featureBlockWords, uint32(1)<<(i%featureWordsPerBlock)
		if b+featureBlockWords > len(blocks) {
			continue
		}
		available, requested, active, never := blocks[b]&bit != 0, blocks[b+1]&bit != 0, blocks[b+2]&bit != 0, blocks[b+3]&bit != 0
		out[name] = Feature{Active: active, Requested: requested, Fixed: !available || never}
	}
	return out
}

// Netlink attribute types of ETHTOOL_MSG_COALESCE_GET_REPLY
// (include/uapi/linux/ethtool_netlink.h), written out so that the parser
// builds and is fuzzed on every platform.
const (
	coalesceAttrRXUsecs    = 2
	coalesceAttrRXFrames   = 3
	coalesceAttrTXUsecs    = 6
	coalesceAttrTXFrames   = 7
	coalesceAttrAdaptiveRX = 11
	coalesceAttrAdaptiveTX = 12
)

// parseCoalesceAttrs decodes the attributes of a COALESCE_GET reply (after
// the genetlink header): the u32 parameters and u8 flags nicdiag keeps.
// Unknown attributes are skipped; a truncated attribute, or a kept one of
// the wrong size, is ErrMalformed.
func parseCoalesceAttrs(b []byte) (*Coalesce, error) {
	c := &Coalesce{Source: CoalesceNetlink}
	err := genl.Attrs(b, func(typ uint16, data []byte) error {
		u32 := func(p **uint32) error {
			if len(data) != 4 {
				return fmt.Errorf("%w: coalesce attribute %d has %d bytes, want 4", ErrMalformed, typ, len(data))
			}
			v := binary.NativeEndian.Uint32(data)
			*p = &v
			return nil
		}
		u8 := func(p **bool) error {
			if len(data) != 1 {
				return fmt.Errorf("%w: coalesce attribute %d has %d bytes, want 1", ErrMalformed, typ, len(data))
			}
			v := data[0] != 0
			*p = &v
			return nil
		}
		switch typ {
		case coalesceAttrRXUsecs:
			return u32(&c.RXUsecs)
		case coalesceAttrRXFrames:
			return u32(&c.RXFrames)
		case coalesceAttrTXUsecs:
			return u32(&c.TXUsecs)
		case coalesceAttrTXFrames:
			return u32(&c.TXFrames)
		case coalesceAttrAdaptiveRX:
			return u8(&c.AdaptiveRX)
		case coalesceAttrAdaptiveTX:
			return u8(&c.AdaptiveTX)
		}
		return nil
	})
	if err != nil {
		return nil, genl.Malformed(err, ErrMalformed)
	}
	return c, nil
}

// coalesceFromIoctl is struct ethtool_coalesce (ETHTOOL_GCOALESCE) as
// words: cmd, rx_coalesce_usecs, rx_max_coalesced_frames, the two _irq
// values, tx_coalesce_usecs, tx_max_coalesced_frames, the two _irq values,
// stats_block_coalesce_usecs, use_adaptive_rx_coalesce,
// use_adaptive_tx_coalesce, then the rate-based values nicdiag does not
// keep.
func coalesceFromIoctl(w *[coalesceWords]uint32) *Coalesce {
	u := func(i int) *uint32 { v := w[i]; return &v }
	b := func(i int) *bool { v := w[i] != 0; return &v }
	return &Coalesce{RXUsecs: u(1), RXFrames: u(2), TXUsecs: u(5), TXFrames: u(6), AdaptiveRX: b(10), AdaptiveTX: b(11), Source: CoalesceIoctl}
}

// coalesceWords is the size of struct ethtool_coalesce in 32-bit words.
const coalesceWords = 23
