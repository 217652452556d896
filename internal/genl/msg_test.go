package genl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/vishvananda/netlink/nl"
)

// A request built in a Msg whose buffer held other bytes before (a longer
// request, here all 0xff) has its genlmsghdr's reserved field zero, and
// every padding byte zero: nothing of the earlier request is sent.
func TestGenlReservedZero(t *testing.T) {
	var m Msg
	m.b = bytes.Repeat([]byte{0xff}, 256)[:0]
	m.Genl(0x1234, 0x300, 21, 1)
	at := m.Nest(1)
	m.U32(1, 7)
	m.String(2, "eth0") // 5 bytes: 3 of padding
	m.U8(3, 9)          // 1 byte: 3 of padding
	m.End(at)
	b := m.Bytes()
	if got := binary.NativeEndian.Uint32(b); int(got) != len(b) || len(b)%4 != 0 {
		t.Fatalf("length %d for %d bytes", got, len(b))
	}
	if typ, flags := binary.NativeEndian.Uint16(b[4:]), binary.NativeEndian.Uint16(b[6:]); typ != 0x1234 || flags != 0x301 {
		t.Errorf("type %#x flags %#x, want 0x1234 0x301", typ, flags)
	}
	if h := b[HeaderLen : HeaderLen+GenlHeaderLen]; h[0] != 21 || h[1] != 1 || h[2] != 0 || h[3] != 0 {
		t.Errorf("genlmsghdr % x, want 15 01 00 00", h)
	}
	if bytes.IndexByte(b, 0xff) >= 0 {
		t.Errorf("a byte of the earlier buffer was sent: % x", b)
	}
}

// The attributes are laid out as package nl serializes them (its RtAttr is
// the oracle), and Attrs reads them back.
func TestAttrsMatchNl(t *testing.T) {
	var m Msg
	m.Start(18, 0, []byte{1, 2, 3}) // a 3-byte fixed header, padded
	at := m.Nest(1)
	m.U32(1, 0xdeadbeef)
	m.String(4, "enp1s0f0")
	m.End(at)
	m.U8(2, 7)
	got := m.Bytes()[HeaderLen+4:]

	nest := nl.NewRtAttr(1|flagNested, nil)
	nest.AddRtAttr(1, nl.Uint32Attr(0xdeadbeef))
	nest.AddRtAttr(4, nl.ZeroTerminated("enp1s0f0"))
	want := append(nest.Serialize(), nl.NewRtAttr(2, nl.Uint8Attr(7)).Serialize()...)
	if !bytes.Equal(got, want) {
		t.Fatalf("attributes\n% x\nwant (package nl)\n% x", got, want)
	}
	var types []uint16
	err := Attrs(got, func(typ uint16, v []byte) error {
		types = append(types, typ)
		if typ == 1 {
			return Attrs(v, func(typ uint16, v []byte) error {
				types = append(types, typ)
				return nil
			})
		}
		return nil
	})
	if err != nil || len(types) != 4 || types[0] != 1 || types[1] != 1 || types[2] != 4 || types[3] != 2 {
		t.Errorf("Attrs: %v, %v", types, err)
	}
}

// FuzzAttrs: never a panic; a value is always within the input; an error
// is ErrMalformed or f's.
func FuzzAttrs(f *testing.F) {
	var m Msg
	m.Start(1, 0, nil)
	m.U32(1, 2)
	m.String(2, "x")
	f.Add(m.Bytes()[HeaderLen:])
	f.Add([]byte{8, 0, 1})
	f.Add([]byte{3, 0, 1, 0})
	f.Add([]byte{})
	stop := errors.New("stop")
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		err := Attrs(b, func(typ uint16, v []byte) error {
			if typ > typeMask || len(v) > len(b) {
				t.Fatalf("type %d, %d bytes of %d", typ, len(v), len(b))
			}
			if n++; n > 100 {
				return stop
			}
			return nil
		})
		if err != nil && !errors.Is(err, ErrMalformed) && err != stop {
			t.Fatalf("error %v", err)
		}
	})
}
