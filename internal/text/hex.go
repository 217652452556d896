package text

// HexDigit returns the value of the hexadecimal digit c: 0-9, a-f or A-F.
func HexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Hex parses an unsigned hexadecimal number without allocating: digits
// only (leading zeros allowed), no prefix, sign or spaces, no overflow
// past 2^64-1. It is the one parser of the hex counters and masks that
// /proc and /sys print (softnet_stat, nf_conntrack statistics).
func Hex(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		d, ok := HexDigit(c)
		if !ok || v > (1<<64-1)>>4 {
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}
