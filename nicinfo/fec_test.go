package nicinfo

import (
	"encoding/binary"
	"errors"
	"testing"
)

// nla encodes one netlink attribute (native endian, padded to 4).
func nla(typ uint16, v []byte) []byte {
	b := make([]byte, 4, 4+len(v)+3)
	binary.NativeEndian.PutUint16(b, uint16(4+len(v)))
	binary.NativeEndian.PutUint16(b[2:], typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func u64s(v ...uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.NativeEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// fecReply is a FEC_GET reply's attributes laid out as
// net/ethtool/fec.c's fec_fill_reply writes them (the header nest, auto,
// active, then the statistics nest with its padding attribute and the
// total-then-lanes arrays): RS FEC, 1234 corrected blocks (lanes 1000 and
// 234), 7 uncorrectable, corrected bits not reported (ETHTOOL_STAT_NOT_SET).
func fecReply() []byte {
	active := make([]byte, 4)
	binary.NativeEndian.PutUint32(active, ethtoolFECModeBitRS)
	stats := append(nla(1, make([]byte, 0)), nla(ethtoolAFECStatCorrected, u64s(1234, 1000, 234))...)
	stats = append(stats, nla(ethtoolAFECStatUncorr, u64s(7, 3, 4))...)
	stats = append(stats, nla(ethtoolAFECStatCorrBits, u64s(^uint64(0)))...)
	b := nla(1, nla(2, []byte("eth0\x00")))
	b = append(b, nla(3, []byte{1})...)
	b = append(b, nla(ethtoolAFECActive, active)...)
	return append(b, nla(ethtoolAFECStats|0x8000, stats)...)
}

func TestParseFECAttrs(t *testing.T) {
	f, err := parseFECAttrs(fecReply())
	if err != nil {
		t.Fatal(err)
	}
	if f.Active != "RS" || f.Corrected == nil || *f.Corrected != 1234 || f.Uncorrectable == nil || *f.Uncorrectable != 7 || f.CorrectedBits != nil {
		t.Errorf("%+v", f)
	}
	for _, bad := range [][]byte{
		nla(ethtoolAFECActive, []byte{1, 2}),
		nla(ethtoolAFECStats, nla(ethtoolAFECStatUncorr, []byte{1, 2, 3})),
		nla(ethtoolAFECStats, nla(ethtoolAFECStatUncorr, u64s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10))),
		fecReply()[:9],
	} {
		if _, err := parseFECAttrs(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: %v", bad, err)
		}
	}
}

func FuzzFECAttrs(f *testing.F) {
	f.Add(fecReply())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := parseFECAttrs(b); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("%x: %v is not ErrMalformed", b, err)
		}
	})
}
