package genl

import (
	"encoding/binary"
	"errors"
)

// Sizes and flags of the kernel's include/uapi/linux/netlink.h and
// genetlink.h, written out so that the builder is the same on every
// platform.
const (
	// HeaderLen is struct nlmsghdr's size (NLMSG_HDRLEN).
	HeaderLen = 16
	// GenlHeaderLen is struct genlmsghdr's: cmd, version, reserved u16.
	GenlHeaderLen = 4
	// AttrHeaderLen is struct nlattr's (NLA_HDRLEN).
	AttrHeaderLen = 4

	flagRequest = 0x1     // NLM_F_REQUEST
	flagNested  = 1 << 15 // NLA_F_NESTED
)

// ErrMalformed is wrapped by the errors for replies that do not have the
// shape the kernel writes.
var ErrMalformed = errors.New("malformed netlink message")

// Msg is a netlink request being built: a header, the fixed header of its
// family, then attributes. The zero Msg is ready; Genl or Start begins a
// request, reusing the buffer of the one before, so that a kept Msg
// allocates nothing once grown. It is not safe for concurrent use.
type Msg struct {
	b []byte
}

// Genl begins a generic netlink request to the family whose id is family,
// for command cmd of the family's version: a struct nlmsghdr of that type
// with flags and NLM_F_REQUEST, then a struct genlmsghdr whose reserved
// field is zero.
func (m *Msg) Genl(family, flags uint16, cmd, version uint8) {
	m.begin(family, flags)
	m.b = append(m.b, cmd, version, 0, 0)
}

// Start begins a request of type typ with flags and NLM_F_REQUEST,
// followed by hdr, the family's fixed header (struct if_stats_msg for
// RTM_GETSTATS, say), padded to 4 bytes.
func (m *Msg) Start(typ, flags uint16, hdr []byte) {
	m.begin(typ, flags)
	m.b = append(m.b, hdr...)
	m.pad()
}

func (m *Msg) begin(typ, flags uint16) {
	m.b = append(m.b[:0], make([]byte, HeaderLen)...)
	binary.NativeEndian.PutUint16(m.b[4:], typ)
	binary.NativeEndian.PutUint16(m.b[6:], flags|flagRequest)
}

// pad aligns the end of the message to 4 bytes (NLA_ALIGN) with zeros.
func (m *Msg) pad() {
	for len(m.b)%4 != 0 {
		m.b = append(m.b, 0)
	}
}

// attr appends an attribute header for n bytes of value.
func (m *Msg) attr(typ uint16, n int) {
	m.b = binary.NativeEndian.AppendUint16(m.b, uint16(AttrHeaderLen+n))
	m.b = binary.NativeEndian.AppendUint16(m.b, typ)
}

// U8 appends an attribute holding a u8.
func (m *Msg) U8(typ uint16, v uint8) {
	m.attr(typ, 1)
	m.b = append(m.b, v)
	m.pad()
}

// U32 appends an attribute holding a u32.
func (m *Msg) U32(typ uint16, v uint32) {
	m.attr(typ, 4)
	m.b = binary.NativeEndian.AppendUint32(m.b, v)
}

// String appends an attribute holding s, NUL-terminated (NLA_NUL_STRING,
// as an interface or family name is asked by).
func (m *Msg) String(typ uint16, s string) {
	m.attr(typ, len(s)+1)
	m.b = append(m.b, s...)
	m.b = append(m.b, 0)
	m.pad()
}

// Nest begins a nested attribute (NLA_F_NESTED set) and returns where it
// starts, for End.
func (m *Msg) Nest(typ uint16) int {
	at := len(m.b)
	m.attr(typ|flagNested, 0)
	return at
}

// End ends the nested attribute Nest began at at: its length becomes
// what was appended since.
func (m *Msg) End(at int) {
	binary.NativeEndian.PutUint16(m.b[at:], uint16(len(m.b)-at))
}

// Bytes returns the request with its length set. The sequence number is
// Conn's to set; the slice is the Msg's buffer until the next Genl or
// Start.
func (m *Msg) Bytes() []byte {
	binary.NativeEndian.PutUint32(m.b[0:], uint32(len(m.b)))
	return m.b
}
