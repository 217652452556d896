package stack

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestParseTables(t *testing.T) {
	var c counters
	in := "Tcp: RtoAlgorithm MaxConn InSegs\nTcp: 1 -1 42\nUdp: InDatagrams RcvbufErrors\nUdp: 7 3\n"
	if err := parseTables(snmpFile, []byte(in), &c); err != nil {
		t.Fatal(err)
	}
	if c[cTCPInSegs] != 42 || c[cUDPIn] != 7 || c[cUDPRcvbuf] != 3 {
		t.Errorf("%v", c)
	}
	for _, bad := range []string{
		"Udp: InDatagrams\n",                               // names without values
		"Udp: InDatagrams\nTcp: 1\n",                       // another section's values
		"Udp: InDatagrams NoPorts\nUdp: 1\n",               // fewer values
		"Udp: InDatagrams\nUdp: 1 2\n",                     // more values
		"Udp: InDatagrams\nUdp: -1\n",                      // a kept counter negative
		"Udp: InDatagrams\nUdp: 12x\n",                     // not a number
		"Udp InDatagrams\nUdp 1\n",                         // no colon
		"Udp: InDatagrams\nUdp: 99999999999999999999999\n", // past 2^64
		"Udp: " + strings.Repeat("x", maxLine) + "\nUdp: 1\n",
	} {
		var c counters
		err := parseTables(snmpFile, []byte(bad), &c)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%.40q: %v", bad, err)
		}
	}
	var e counters
	if err := parseTables(snmpFile, nil, &e); err != nil || e != (counters{}) {
		t.Errorf("empty: %v %v", e, err)
	}
	long := "Udp: " + strings.Repeat("x", maxLine) + "\nUdp: 1\n"
	if err := parseTables(snmpFile, []byte(long), &e); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a long line: %v", err)
	}
}

func TestParseSNMP6(t *testing.T) {
	var c counters
	if err := parseSNMP6([]byte("Ip6InReceives   \t9\nUdp6RcvbufErrors 5\n\nUdp6InDatagrams 11\n"), &c); err != nil {
		t.Fatal(err)
	}
	if c[cUDPRcvbuf] != 5 || c[cUDPIn] != 11 {
		t.Errorf("%v", c)
	}
	for _, bad := range []string{"Udp6InDatagrams\n", "Udp6InDatagrams 1 2\n", "Udp6InDatagrams x\n"} {
		if err := parseSNMP6([]byte(bad), &c); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestParseConntrackStat(t *testing.T) {
	b, err := os.ReadFile("testdata/conntrack-full/after/proc/net/stat/nf_conntrack")
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseConntrackStat(b)
	if err != nil || s[ctDrop] != 412 || s[ctEarlyDrop] != 3072 || s[ctInsertFailed] != 12 || s[ctFound] != 330 {
		t.Errorf("%v %v", s, err)
	}
	for _, bad := range []string{"", "entries drop\n00000001\n", "entries drop\n1 2 3\n", "entries drop\n1 xyz\n",
		"entries drop\n1 11112222333344445\n"} {
		if _, err := parseConntrackStat([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestParseSysctls(t *testing.T) {
	v, err := parseTriplet(tcpRmemFile, []byte("4096\t131072\t33554432\n"))
	if err != nil || v != [3]int64{4096, 131072, 33554432} {
		t.Errorf("%v %v", v, err)
	}
	if n, err := parseInt(rmemMaxFile, []byte("-5\n")); err != nil || n != -5 {
		t.Errorf("%v %v", n, err)
	}
	for _, bad := range []string{"", "1 2", "1 2 3 4", "a b c", "1 2 9223372036854775808"} {
		if _, err := parseTriplet(tcpRmemFile, []byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("triplet %q: %v", bad, err)
		}
	}
	for _, bad := range []string{"", "1 2", "x", "-"} {
		if _, err := parseInt(rmemMaxFile, []byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("int %q: %v", bad, err)
		}
	}
}

// diagMessage builds a sock_diag answer as the kernel lays it out: an
// inet_diag_msg for 10.0.0.1:5201 → 10.0.0.2:40000 (inode 77, cookie
// 0x100000002), tcp_info of infoLen bytes whose tcpi_bytes_acked is 1e6,
// tcpi_rwnd_limited 5000 and tcpi_snd_wnd 65536 where the size reaches
// them, and the 9 SK_MEMINFO values with rcvbuf 16384 and drops 3.
func diagMessage(infoLen int) []byte {
	ne := binary.NativeEndian
	b := make([]byte, sizeofDiagMsg)
	b[0], b[1] = 2, 1
	binary.BigEndian.PutUint16(b[4:], 5201)
	binary.BigEndian.PutUint16(b[6:], 40000)
	copy(b[8:], []byte{10, 0, 0, 1})
	copy(b[24:], []byte{10, 0, 0, 2})
	ne.PutUint32(b[44:], 2)
	ne.PutUint32(b[48:], 1)
	ne.PutUint32(b[68:], 77)
	info := make([]byte, infoLen)
	info[0] = 1
	ne.PutUint32(info[16:], 1448)
	put64 := func(off int, v uint64) {
		if off+8 <= len(info) {
			ne.PutUint64(info[off:], v)
		}
	}
	put64(120, 1e6)
	put64(176, 5000)
	if 232 <= len(info) {
		ne.PutUint32(info[228:], 65536)
	}
	mem := make([]byte, 36)
	ne.PutUint32(mem[4:], 16384)
	ne.PutUint32(mem[32:], 3)
	for _, a := range []struct {
		typ uint16
		v   []byte
	}{{attrInfo, info}, {attrSKMemInfo, mem}} {
		h := make([]byte, 4)
		ne.PutUint16(h, uint16(4+len(a.v)))
		ne.PutUint16(h[2:], a.typ)
		b = append(b, h...)
		b = append(b, a.v...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
	}
	return b
}

func TestParseDiagMsg(t *testing.T) {
	var m diagMsg
	if err := parseDiagMsg(diagMessage(280), &m); err != nil {
		t.Fatal(err)
	}
	l, p := m.addrs()
	if l != "10.0.0.1:5201" || p != "10.0.0.2:40000" || m.inode != 77 || m.cookie != 0x100000002 || !m.hasInfo ||
		m.info.bytesAcked != 1e6 || m.info.rwndLimited != 5000 || !m.info.hasTimers || !m.info.hasWnds ||
		m.info.sndWnd != 65536 || m.info.sndMSS != 1448 || m.memN != 9 || m.mem[memRcvbuf] != 16384 || m.mem[memDrops] != 3 {
		t.Errorf("%+v", m)
	}
	// An old kernel's 104-byte tcp_info: no byte counts, no timers.
	if err := parseDiagMsg(diagMessage(104), &m); err != nil || m.info.hasTimers || m.info.hasWnds || m.info.bytesAcked != 0 {
		t.Errorf("104 bytes: %+v %v", m.info, err)
	}
	full := diagMessage(280)
	for _, bad := range [][]byte{nil, full[:71], full[:sizeofDiagMsg+2], diagMessage(100)} {
		if err := parseDiagMsg(bad, &m); !errors.Is(err, ErrMalformed) {
			t.Errorf("%d bytes: %v", len(bad), err)
		}
	}
	bad := append([]byte(nil), full...)
	binary.NativeEndian.PutUint16(bad[sizeofDiagMsg:], 9999) // an attribute longer than the message
	if err := parseDiagMsg(bad, &m); !errors.Is(err, ErrMalformed) {
		t.Errorf("long attribute: %v", err)
	}
}

// cakeMessage is the attributes of an RTM_NEWQDISC answer for a cake
// qdisc (after struct tcmsg) with its TCA_OPTIONS holding
// TCA_CAKE_BASE_RATE64, as sch_cake's cake_dump writes them (the rate
// nested first; NLA_F_NESTED set on the options, which a reader masks).
func cakeMessage(kind string, rate uint64) []byte {
	ne := binary.NativeEndian
	attr := func(typ uint16, v []byte) []byte {
		h := make([]byte, 4, 4+len(v)+3)
		ne.PutUint16(h, uint16(4+len(v)))
		ne.PutUint16(h[2:], typ)
		h = append(h, v...)
		for len(h)%4 != 0 {
			h = append(h, 0)
		}
		return h
	}
	r := make([]byte, 8)
	ne.PutUint64(r, rate)
	opts := append(attr(2, r), attr(5, []byte{1, 0, 0, 0})...) // BASE_RATE64, then DIFFSERV_MODE
	return append(attr(1, append([]byte(kind), 0)), attr(2|0x8000, opts)...)
}

func TestCakeRate(t *testing.T) {
	if r, ok, err := cakeRate(cakeMessage("cake", 12500000)); !ok || err != nil || r != 12500000 {
		t.Errorf("%d %v %v", r, ok, err)
	}
	if _, ok, err := cakeRate(cakeMessage("fq_codel", 12500000)); ok || err != nil {
		t.Errorf("fq_codel: %v %v", ok, err)
	}
	m := cakeMessage("cake", 1)
	if _, _, err := cakeRate(m[:len(m)-3]); !errors.Is(err, ErrMalformed) {
		t.Errorf("cut: %v", err)
	}
}

func TestHandleNames(t *testing.T) {
	for _, c := range []struct {
		h     uint32
		class bool
		want  string
	}{{0x80020000, false, "8002:"}, {0x00010010, true, "1:10"}} {
		if got := handleName(c.h, c.class); got != c.want {
			t.Errorf("%#x: %q", c.h, got)
		}
	}
	for h, want := range map[uint32]string{tcRoot: "root", tcIngress: "ingress", 0x10000: "1:", 0x10001: "1:1", 0: "none"} {
		if got := parentName(h); got != want {
			t.Errorf("parent %#x: %q, want %q", h, got, want)
		}
	}
}
