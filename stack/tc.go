package stack

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// tc handles (include/uapi/linux/pkt_sched.h).
const (
	tcRoot    = 0xFFFFFFFF
	tcIngress = 0xFFFFFFF1
)

// handleName renders a qdisc's handle as tc does ("1:") or a class's
// ("1:10").
func handleName(h uint32, class bool) string {
	if class {
		return fmt.Sprintf("%x:%x", h>>16, h&0xffff)
	}
	return fmt.Sprintf("%x:", h>>16)
}

// parentName renders a parent handle: "root", "ingress", "1:" or "1:10".
func parentName(h uint32) string {
	switch h {
	case tcRoot:
		return "root"
	case tcIngress:
		return "ingress"
	case 0:
		return "none"
	}
	return handleName(h, h&0xffff != 0)
}

// cakeRate finds cake's bandwidth in the attributes of a qdisc message, b
// (after struct tcmsg): TCA_KIND "cake" and, nested in TCA_OPTIONS,
// TCA_CAKE_BASE_RATE64 (bytes per second; 0: unlimited). It reports
// whether the message was a cake qdisc with a rate.
func cakeRate(b []byte) (uint64, bool, error) {
	const tcaKind, tcaOptions, cakeBaseRate64 = 1, 2, 2
	var kind, opts []byte
	err := attrs(b, func(typ uint16, v []byte) {
		switch typ & 0x3fff { // less NLA_F_NESTED and NLA_F_NET_BYTEORDER
		case tcaKind:
			kind = v
		case tcaOptions:
			opts = v
		}
	})
	if err != nil || !bytes.Equal(bytes.TrimRight(kind, "\x00"), []byte("cake")) || opts == nil {
		return 0, false, err
	}
	var rate uint64
	found := false
	err = attrs(opts, func(typ uint16, v []byte) {
		if typ&0x3fff == cakeBaseRate64 && len(v) >= 8 {
			rate, found = binary.NativeEndian.Uint64(v), true
		}
	})
	return rate, found && err == nil, err
}

// attrs calls f with the type and value of each netlink attribute in b.
func attrs(b []byte, f func(typ uint16, v []byte)) error {
	for len(b) > 0 {
		if len(b) < 4 {
			return malformed("netlink attributes", 0, "a header cut to %d bytes", len(b))
		}
		n := int(binary.NativeEndian.Uint16(b))
		if n < 4 || n > len(b) {
			return malformed("netlink attributes", 0, "an attribute of %d bytes in %d", n, len(b))
		}
		f(binary.NativeEndian.Uint16(b[2:]), b[4:n])
		b = b[min(len(b), (n+3)&^3):]
	}
	return nil
}
