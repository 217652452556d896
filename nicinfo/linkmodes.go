package nicinfo

import (
	"strconv"
	"strings"
)

// LinkModeName returns the kernel's name for link-mode bit n
// ("1000baseT/Full", "25000baseSR/Full", "Autoneg", "TP"), or "bit N" for a
// bit newer than this table.
func LinkModeName(n int) string {
	if n >= 0 && n < len(linkModeNames) && linkModeNames[n] != "" {
		return linkModeNames[n]
	}
	return "bit " + strconv.Itoa(n)
}

// DecodeLinkModes turns a link-mode bitmap (32-bit words, least significant
// first, as ETHTOOL_GLINKSETTINGS returns it) into the names of the speed
// modes set in it, the list ethtool prints as "Supported link modes".
// Ports, pause and FEC bits are left out; unknown bits are kept as "bit N".
func DecodeLinkModes(words []uint32) []string {
	var out []string
	for w, v := range words {
		for b := 0; v != 0 && b < 32; b++ {
			if v&(1<<b) == 0 {
				continue
			}
			v &^= 1 << b
			n := w*32 + b
			name := LinkModeName(n)
			if isSpeedMode(name) || strings.HasPrefix(name, "bit ") {
				out = append(out, name)
			}
		}
	}
	return out
}

func isSpeedMode(name string) bool {
	return strings.HasSuffix(name, "/Full") || strings.HasSuffix(name, "/Half")
}
