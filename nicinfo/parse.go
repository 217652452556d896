package nicinfo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/internal/text"
)

// parseNetSpeed parses /sys/class/net/IFACE/speed. The kernel's "unknown"
// spellings ("-1", "4294967295", old drivers' "65535", and "0") give
// SpeedUnknown; anything that is not a decimal integer wraps ErrMalformed.
func parseNetSpeed(s string) (int, error) {
	t := strings.TrimSpace(s)
	switch t {
	case "-1", "4294967295", "65535", "0":
		return SpeedUnknown, nil
	}
	if t == "" || len(t) > 10 {
		return SpeedUnknown, fmt.Errorf("%w: speed %q", ErrMalformed, text.Clip(s))
	}
	v, err := strconv.ParseUint(t, 10, 32)
	if err != nil || v > 1<<31-1 {
		return SpeedUnknown, fmt.Errorf("%w: speed %q", ErrMalformed, text.Clip(s))
	}
	if v == 0 {
		return SpeedUnknown, nil // "00"
	}
	return int(v), nil
}

// parseDuplex parses /sys/class/net/IFACE/duplex: "full", "half" or
// "unknown".
func parseDuplex(s string) (string, error) {
	switch t := strings.TrimSpace(s); t {
	case "full", "half", "unknown":
		return t, nil
	}
	return "", fmt.Errorf("%w: duplex %q", ErrMalformed, text.Clip(s))
}

// parseQueueDirs counts the rx-N and tx-N entries of a queues/ directory.
// Other names are ignored.
func parseQueueDirs(names []string) (rx, tx int) {
	for _, n := range names {
		if q, ok := strings.CutPrefix(n, "rx-"); ok && isDec(q) {
			rx++
		} else if q, ok := strings.CutPrefix(n, "tx-"); ok && isDec(q) {
			tx++
		}
	}
	return rx, tx
}

// parseIRQDir turns the entry names of a msi_irqs/ directory into sorted IRQ
// numbers. A name that is not a decimal IRQ number wraps ErrMalformed; the
// good numbers are returned with it.
func parseIRQDir(names []string) ([]int, error) {
	out := make([]int, 0, len(names))
	var bad error
	for _, n := range names {
		v, err := strconv.ParseUint(n, 10, 31)
		if err != nil || !isDec(n) {
			if bad == nil {
				bad = fmt.Errorf("%w: msi_irqs entry %q", ErrMalformed, text.Clip(n))
			}
			continue
		}
		out = append(out, int(v))
	}
	sort.Ints(out)
	return out, bad
}

// parseCPUMask reports whether a sysfs CPU mask ("00000000,0000000f") has any
// bit set. It wraps ErrMalformed for anything but hex digits and commas.
func parseCPUMask(s string) (bool, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return false, fmt.Errorf("%w: empty CPU mask", ErrMalformed)
	}
	set := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == ',' || c == '0':
		case isHexByte(c):
			set = true
		default:
			return false, fmt.Errorf("%w: CPU mask %q", ErrMalformed, text.Clip(s))
		}
	}
	return set, nil
}

// parseHexID parses a sysfs ID attribute ("0x8086") of exactly bits/4
// hex digits.
func parseHexID(s string, bits int) (uint32, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X")
	if t == "" || !isHex(t) {
		return 0, fmt.Errorf("%w: hex ID %q", ErrMalformed, text.Clip(s))
	}
	v, err := strconv.ParseUint(t, 16, bits)
	if err != nil {
		return 0, fmt.Errorf("%w: hex ID %q wider than %d bits", ErrMalformed, text.Clip(s), bits)
	}
	if len(t) != bits/4 {
		// The kernel pads each ID to its width ("0x%06x" for a class): a
		// shorter one was cut, and "0x02" is not class 0x000002.
		return 0, fmt.Errorf("%w: hex ID %q is not %d digits", ErrMalformed, text.Clip(s), bits/4)
	}
	return uint32(v), nil
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHexByte(s[i]) {
			return false
		}
	}
	return true
}

func isHexByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDec(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
