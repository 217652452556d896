package text

// Uint parses an unsigned decimal without allocating: digits only, no sign,
// no spaces, no overflow past 2^64-1. It is the one parser of the counters
// that /proc and /sys print (task stat fields, AER counts, CPU times).
func Uint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}
