package stack

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/nicdiag/nicdiag/internal/genl"
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
	err := genl.Attrs(b, func(typ uint16, v []byte) error {
		switch typ {
		case tcaKind:
			kind = v
		case tcaOptions:
			opts = v
		}
		return nil
	})
	if err != nil || !bytes.Equal(bytes.TrimRight(kind, "\x00"), []byte("cake")) || opts == nil {
		return 0, false, genl.Malformed(err, ErrMalformed)
	}
	var rate uint64
	found := false
	err = genl.Attrs(opts, func(typ uint16, v []byte) error {
		if typ == cakeBaseRate64 && len(v) >= 8 {
			rate, found = binary.NativeEndian.Uint64(v), true
		}
		return nil
	})
	return rate, found && err == nil, genl.Malformed(err, ErrMalformed)
}
