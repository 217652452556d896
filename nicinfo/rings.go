package nicinfo

import (
	"fmt"
	"maps"

	"github.com/nicdiag/nicdiag/internal/text"
)

// Rings is ETHTOOL_GRINGPARAM (what `ethtool -g` prints): the descriptors
// of each receive and transmit ring, now and at most. A maximum of 0 means
// the driver has no such ring (most have no mini or jumbo ring).
type Rings struct {
	RX         int `json:"rx"`
	RXMini     int `json:"rx_mini,omitempty"`
	RXJumbo    int `json:"rx_jumbo,omitempty"`
	TX         int `json:"tx"`
	RXMax      int `json:"rx_max"`
	RXMiniMax  int `json:"rx_mini_max,omitempty"`
	RXJumboMax int `json:"rx_jumbo_max,omitempty"`
	TXMax      int `json:"tx_max"`
}

// maxRingDescriptors bounds a ring size: the kernel's fields are u32.
const maxRingDescriptors = 1<<32 - 1

// check refuses ring sizes outside the kernel's u32 fields. A size above
// its maximum is kept as read (drivers have reported such), and judged by
// its maximum.
func (r *Rings) check() error {
	if r == nil {
		return nil
	}
	for _, v := range []int{r.RX, r.RXMini, r.RXJumbo, r.TX, r.RXMax, r.RXMiniMax, r.RXJumboMax, r.TXMax} {
		if v < 0 || int64(v) > maxRingDescriptors {
			return fmt.Errorf("%w: ethtool ring size %d", ErrMalformed, v)
		}
	}
	return nil
}

// maxLossStats bounds the driver statistics kept from one
// ethtool/IFACE.json: the loss counters irq knows are a few dozen names.
const maxLossStats = 256

// cleanLossStats drops control characters from the names of a hand-made
// file's loss_stats and refuses more than maxLossStats of them.
func (a *EthtoolAnswers) cleanLossStats() error {
	if len(a.LossStats) > maxLossStats {
		return fmt.Errorf("%w: %d loss_stats, more than %d", ErrMalformed, len(a.LossStats), maxLossStats)
	}
	if len(a.LossStats) == 0 {
		a.LossStats = nil
		return nil
	}
	m := make(map[string]uint64, len(a.LossStats))
	for k, v := range a.LossStats {
		m[text.Clean(k)] = v
	}
	a.LossStats = m
	return nil
}

// copyRings returns a copy of r (nil for nil).
func copyRings(r *Rings) *Rings {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// copyStats returns a copy of m (nil when empty).
func copyStats(m map[string]uint64) map[string]uint64 {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// EthtoolOption configures LiveEthtool.
type EthtoolOption func(*ethtoolOptions)

type ethtoolOptions struct {
	keep func(name string) bool
}

// KeepStats has LiveEthtool read the driver's statistics (ETHTOOL_GSTATS,
// what `ethtool -S` prints) and keep, in EthtoolAnswers.LossStats, those
// whose name keep accepts (nicdiag passes irq.IsLossStat and
// IsLinkErrorStat: the counters of packets lost, held back or received
// damaged), and read the FEC counters and the module EEPROM pages with
// diagnostics. Without it none of them is read.
func KeepStats(keep func(name string) bool) EthtoolOption {
	return func(o *ethtoolOptions) { o.keep = keep }
}

// keepStats returns the entries of m that keep accepts, at most
// maxLossStats of them (a file holding more would not read back); nil when
// none is.
func keepStats(m map[string]uint64, keep func(string) bool) map[string]uint64 {
	var out map[string]uint64
	for k, v := range m {
		if !keep(k) || !validStatName(k) {
			continue
		}
		if out == nil {
			out = map[string]uint64{}
		}
		if len(out) == maxLossStats {
			break
		}
		out[k] = v
	}
	return out
}

// validStatName is a name ethtool would print: ETH_GSTRING_LEN (32) bytes
// at most, no control characters.
func validStatName(s string) bool {
	return s != "" && len(s) < 32 && text.Clean(s) == s
}
