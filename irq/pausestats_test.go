package irq

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/nicdiag/nicdiag/internal/genl"
)

// nlAttr builds a netlink attribute: header, value, padding to 4 bytes.
func nlAttr(typ uint16, v []byte) []byte {
	b := make([]byte, genl.AttrHeaderLen, genl.AttrHeaderLen+len(v)+3)
	binary.NativeEndian.PutUint16(b[0:2], uint16(genl.AttrHeaderLen+len(v)))
	binary.NativeEndian.PutUint16(b[2:4], typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u64Bytes(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// pauseReply builds a PAUSE_GET_REPLY as the kernel writes it
// (pause_fill_reply): the reply header, autoneg, rx, tx, then, when asked
// for, the stats source and the stats nest.
func pauseReply(stats ...[]byte) []byte {
	const nested = 0x8000 // NLA_F_NESTED
	hdr := nlAttr(nested|ethtoolAPauseHeader, cat(
		nlAttr(ethtoolAHeaderDevIndex, binary.NativeEndian.AppendUint32(nil, 2)),
		nlAttr(2, []byte("eth0\x00")))) // ETHTOOL_A_HEADER_DEV_NAME
	b := cat([]byte{ethtoolMsgPauseGetReply, ethtoolFamilyVersion, 0, 0}, hdr,
		nlAttr(2, []byte{1}), nlAttr(3, []byte{1}), nlAttr(4, []byte{0})) // AUTONEG, RX, TX
	if stats != nil {
		b = cat(b, nlAttr(6, binary.NativeEndian.AppendUint32(nil, 0)), // STATS_SRC aggregate
			nlAttr(nested|ethtoolAPauseStats, cat(stats...)))
	}
	return b
}

func TestParsePauseStats(t *testing.T) {
	tx := nlAttr(ethtoolAPauseStatTxFrames, u64Bytes(7))
	rx := nlAttr(ethtoolAPauseStatRxFrames, u64Bytes(1<<40))
	pad := nlAttr(ethtoolAPauseStatPad, nil)
	for _, c := range []struct {
		name string
		b    []byte
		want pauseCounts
	}{
		{"both", pauseReply(tx, rx), pauseCounts{TX: 7, RX: 1 << 40, HasTX: true, HasRX: true}},
		{"padded", pauseReply(pad, tx, pad, rx), pauseCounts{TX: 7, RX: 1 << 40, HasTX: true, HasRX: true}},
		{"rx only", pauseReply(rx), pauseCounts{RX: 1 << 40, HasRX: true}},
		{"zero is reported", pauseReply(nlAttr(ethtoolAPauseStatTxFrames, u64Bytes(0))), pauseCounts{HasTX: true}},
		{"unknown stat", pauseReply(nlAttr(9, u64Bytes(3)), tx), pauseCounts{TX: 7, HasTX: true}},
		// get_pauseparam without get_pause_stats: an empty nest.
		{"empty nest", pauseReply([]byte{}), pauseCounts{}},
		// asked without ETHTOOL_FLAG_STATS: no nest.
		{"no nest", pauseReply(), pauseCounts{}},
		{"no attributes", []byte{ethtoolMsgPauseGetReply, 1, 0, 0}, pauseCounts{}},
	} {
		got, err := parsePauseStats(c.b)
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	full := pauseReply(tx, rx)
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"short genlmsghdr", []byte{ethtoolMsgPauseGetReply, 1}},
		{"other command", append([]byte{ethtoolMsgPauseGet}, full[1:]...)},
		{"truncated", full[:len(full)-3]},
		{"truncated header", full[:len(full)-len(rx)-len(tx)+2]},
		{"u32 counter", pauseReply(nlAttr(ethtoolAPauseStatTxFrames, []byte{1, 0, 0, 0}))},
		{"counter twice", pauseReply(tx, tx)},
		{"nest twice", cat(pauseReply(tx), nlAttr(ethtoolAPauseStats, rx))},
		{"attribute length below header", cat(pauseReply(), []byte{2, 0, 5, 0})},
		{"nested length past nest", pauseReply([]byte{12, 0, ethtoolAPauseStatTxFrames, 0, 1, 2, 3, 4})},
	} {
		if got, err := parsePauseStats(c.b); !errors.Is(err, ErrMalformed) || got != (pauseCounts{}) {
			t.Errorf("%s: %+v, %v; want ErrMalformed", c.name, got, err)
		}
	}
}

func TestPauseCountsLosses(t *testing.T) {
	m := lossCounters{}
	pauseCounts{TX: 3, HasTX: true}.losses(m)
	if len(m) != 1 || m["ethtool-nl:tx_pause_frames"] != (lossCounter{LossPauseTX, 3}) {
		t.Errorf("tx only: %v", m)
	}
	pauseCounts{RX: 5, HasRX: true}.losses(m)
	if m["ethtool-nl:rx_pause_frames"] != (lossCounter{LossPauseRX, 5}) {
		t.Errorf("rx: %v", m)
	}
	m = lossCounters{}
	pauseCounts{}.losses(m)
	if len(m) != 0 {
		t.Errorf("not reported: %v", m)
	}
}
