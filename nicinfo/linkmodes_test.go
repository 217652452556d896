package nicinfo

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// The table agrees with x/sys/unix's bit numbers where unix has them.
func TestLinkModeTable(t *testing.T) {
	for bit, name := range map[int]string{
		unix.ETHTOOL_LINK_MODE_10baseT_Half_BIT:           "10baseT/Half",
		unix.ETHTOOL_LINK_MODE_1000baseT_Full_BIT:         "1000baseT/Full",
		unix.ETHTOOL_LINK_MODE_Autoneg_BIT:                "Autoneg",
		unix.ETHTOOL_LINK_MODE_25000baseCR_Full_BIT:       "25000baseCR/Full",
		unix.ETHTOOL_LINK_MODE_25000baseSR_Full_BIT:       "25000baseSR/Full",
		unix.ETHTOOL_LINK_MODE_100000baseLR4_ER4_Full_BIT: "100000baseLR4_ER4/Full",
		unix.ETHTOOL_LINK_MODE_FEC_RS_BIT:                 "RS",
		unix.ETHTOOL_LINK_MODE_400000baseCR4_Full_BIT:     "400000baseCR4/Full",
		unix.ETHTOOL_LINK_MODE_100baseFX_Full_BIT:         "100baseFX/Full",
		unix.ETHTOOL_LINK_MODE_10000baseR_FEC_BIT:         "10000baseR_FEC",
	} {
		if got := linkModeName(bit); got != name {
			t.Errorf("bit %d = %q; want %q", bit, got, name)
		}
	}
	if got := linkModeName(200); got != "bit 200" {
		t.Errorf("unknown bit: %q", got)
	}
}

// Modes of 25G and up live above bit 31: decoding a 3-word mask keeps them.
func TestDecodeLinkModes(t *testing.T) {
	words := make([]uint32, 4)
	set := func(b int) { words[b/32] |= 1 << (b % 32) }
	set(unix.ETHTOOL_LINK_MODE_1000baseT_Full_BIT)
	set(unix.ETHTOOL_LINK_MODE_Autoneg_BIT) // not a speed mode
	set(unix.ETHTOOL_LINK_MODE_25000baseSR_Full_BIT)
	set(unix.ETHTOOL_LINK_MODE_100000baseCR4_Full_BIT)
	set(120) // unknown to the table
	got := decodeLinkModes(words)
	want := []string{"1000baseT/Full", "25000baseSR/Full", "100000baseCR4/Full", "bit 120"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
}
