package nicinfo

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Every bit x/sys/unix names (0-91) has the kernel's link_mode_names
// spelling: the unix constant with _Full/_Half as /Full, /Half and the FEC_
// prefix dropped (FEC_NONE is "None").
func TestLinkModeTableAllUnixBits(t *testing.T) {
	for bit, c := range unixLinkModes {
		g := linkModeName(bit)
		k := c
		if strings.HasSuffix(k, "_Full") {
			k = strings.TrimSuffix(k, "_Full") + "/Full"
		}
		if strings.HasSuffix(k, "_Half") {
			k = strings.TrimSuffix(k, "_Half") + "/Half"
		}
		if k == "FEC_NONE" {
			k = "None"
		}
		k = strings.TrimPrefix(k, "FEC_")
		if g != k {
			t.Errorf("bit %d: table %q, unix %s", bit, g, c)
		}
	}
}

// unixLinkModes are the link mode bits x/sys/unix names, by the name of
// their constant without its ETHTOOL_LINK_MODE_ prefix and _BIT suffix.
var unixLinkModes = map[int]string{
	unix.ETHTOOL_LINK_MODE_100000baseCR2_Full_BIT:         "100000baseCR2_Full",
	unix.ETHTOOL_LINK_MODE_100000baseCR4_Full_BIT:         "100000baseCR4_Full",
	unix.ETHTOOL_LINK_MODE_100000baseCR_Full_BIT:          "100000baseCR_Full",
	unix.ETHTOOL_LINK_MODE_100000baseDR2_Full_BIT:         "100000baseDR2_Full",
	unix.ETHTOOL_LINK_MODE_100000baseDR_Full_BIT:          "100000baseDR_Full",
	unix.ETHTOOL_LINK_MODE_100000baseKR2_Full_BIT:         "100000baseKR2_Full",
	unix.ETHTOOL_LINK_MODE_100000baseKR4_Full_BIT:         "100000baseKR4_Full",
	unix.ETHTOOL_LINK_MODE_100000baseKR_Full_BIT:          "100000baseKR_Full",
	unix.ETHTOOL_LINK_MODE_100000baseLR2_ER2_FR2_Full_BIT: "100000baseLR2_ER2_FR2_Full",
	unix.ETHTOOL_LINK_MODE_100000baseLR4_ER4_Full_BIT:     "100000baseLR4_ER4_Full",
	unix.ETHTOOL_LINK_MODE_100000baseLR_ER_FR_Full_BIT:    "100000baseLR_ER_FR_Full",
	unix.ETHTOOL_LINK_MODE_100000baseSR2_Full_BIT:         "100000baseSR2_Full",
	unix.ETHTOOL_LINK_MODE_100000baseSR4_Full_BIT:         "100000baseSR4_Full",
	unix.ETHTOOL_LINK_MODE_100000baseSR_Full_BIT:          "100000baseSR_Full",
	unix.ETHTOOL_LINK_MODE_10000baseCR_Full_BIT:           "10000baseCR_Full",
	unix.ETHTOOL_LINK_MODE_10000baseER_Full_BIT:           "10000baseER_Full",
	unix.ETHTOOL_LINK_MODE_10000baseKR_Full_BIT:           "10000baseKR_Full",
	unix.ETHTOOL_LINK_MODE_10000baseKX4_Full_BIT:          "10000baseKX4_Full",
	unix.ETHTOOL_LINK_MODE_10000baseLRM_Full_BIT:          "10000baseLRM_Full",
	unix.ETHTOOL_LINK_MODE_10000baseLR_Full_BIT:           "10000baseLR_Full",
	unix.ETHTOOL_LINK_MODE_10000baseR_FEC_BIT:             "10000baseR_FEC",
	unix.ETHTOOL_LINK_MODE_10000baseSR_Full_BIT:           "10000baseSR_Full",
	unix.ETHTOOL_LINK_MODE_10000baseT_Full_BIT:            "10000baseT_Full",
	unix.ETHTOOL_LINK_MODE_1000baseKX_Full_BIT:            "1000baseKX_Full",
	unix.ETHTOOL_LINK_MODE_1000baseT1_Full_BIT:            "1000baseT1_Full",
	unix.ETHTOOL_LINK_MODE_1000baseT_Full_BIT:             "1000baseT_Full",
	unix.ETHTOOL_LINK_MODE_1000baseT_Half_BIT:             "1000baseT_Half",
	unix.ETHTOOL_LINK_MODE_1000baseX_Full_BIT:             "1000baseX_Full",
	unix.ETHTOOL_LINK_MODE_100baseFX_Full_BIT:             "100baseFX_Full",
	unix.ETHTOOL_LINK_MODE_100baseFX_Half_BIT:             "100baseFX_Half",
	unix.ETHTOOL_LINK_MODE_100baseT1_Full_BIT:             "100baseT1_Full",
	unix.ETHTOOL_LINK_MODE_100baseT_Full_BIT:              "100baseT_Full",
	unix.ETHTOOL_LINK_MODE_100baseT_Half_BIT:              "100baseT_Half",
	unix.ETHTOOL_LINK_MODE_10baseT_Full_BIT:               "10baseT_Full",
	unix.ETHTOOL_LINK_MODE_10baseT_Half_BIT:               "10baseT_Half",
	unix.ETHTOOL_LINK_MODE_200000baseCR2_Full_BIT:         "200000baseCR2_Full",
	unix.ETHTOOL_LINK_MODE_200000baseCR4_Full_BIT:         "200000baseCR4_Full",
	unix.ETHTOOL_LINK_MODE_200000baseDR2_Full_BIT:         "200000baseDR2_Full",
	unix.ETHTOOL_LINK_MODE_200000baseDR4_Full_BIT:         "200000baseDR4_Full",
	unix.ETHTOOL_LINK_MODE_200000baseKR2_Full_BIT:         "200000baseKR2_Full",
	unix.ETHTOOL_LINK_MODE_200000baseKR4_Full_BIT:         "200000baseKR4_Full",
	unix.ETHTOOL_LINK_MODE_200000baseLR2_ER2_FR2_Full_BIT: "200000baseLR2_ER2_FR2_Full",
	unix.ETHTOOL_LINK_MODE_200000baseLR4_ER4_FR4_Full_BIT: "200000baseLR4_ER4_FR4_Full",
	unix.ETHTOOL_LINK_MODE_200000baseSR2_Full_BIT:         "200000baseSR2_Full",
	unix.ETHTOOL_LINK_MODE_200000baseSR4_Full_BIT:         "200000baseSR4_Full",
	unix.ETHTOOL_LINK_MODE_20000baseKR2_Full_BIT:          "20000baseKR2_Full",
	unix.ETHTOOL_LINK_MODE_20000baseMLD2_Full_BIT:         "20000baseMLD2_Full",
	unix.ETHTOOL_LINK_MODE_25000baseCR_Full_BIT:           "25000baseCR_Full",
	unix.ETHTOOL_LINK_MODE_25000baseKR_Full_BIT:           "25000baseKR_Full",
	unix.ETHTOOL_LINK_MODE_25000baseSR_Full_BIT:           "25000baseSR_Full",
	unix.ETHTOOL_LINK_MODE_2500baseT_Full_BIT:             "2500baseT_Full",
	unix.ETHTOOL_LINK_MODE_2500baseX_Full_BIT:             "2500baseX_Full",
	unix.ETHTOOL_LINK_MODE_400000baseCR4_Full_BIT:         "400000baseCR4_Full",
	unix.ETHTOOL_LINK_MODE_400000baseCR8_Full_BIT:         "400000baseCR8_Full",
	unix.ETHTOOL_LINK_MODE_400000baseDR4_Full_BIT:         "400000baseDR4_Full",
	unix.ETHTOOL_LINK_MODE_400000baseDR8_Full_BIT:         "400000baseDR8_Full",
	unix.ETHTOOL_LINK_MODE_400000baseKR4_Full_BIT:         "400000baseKR4_Full",
	unix.ETHTOOL_LINK_MODE_400000baseKR8_Full_BIT:         "400000baseKR8_Full",
	unix.ETHTOOL_LINK_MODE_400000baseLR4_ER4_FR4_Full_BIT: "400000baseLR4_ER4_FR4_Full",
	unix.ETHTOOL_LINK_MODE_400000baseLR8_ER8_FR8_Full_BIT: "400000baseLR8_ER8_FR8_Full",
	unix.ETHTOOL_LINK_MODE_400000baseSR4_Full_BIT:         "400000baseSR4_Full",
	unix.ETHTOOL_LINK_MODE_400000baseSR8_Full_BIT:         "400000baseSR8_Full",
	unix.ETHTOOL_LINK_MODE_40000baseCR4_Full_BIT:          "40000baseCR4_Full",
	unix.ETHTOOL_LINK_MODE_40000baseKR4_Full_BIT:          "40000baseKR4_Full",
	unix.ETHTOOL_LINK_MODE_40000baseLR4_Full_BIT:          "40000baseLR4_Full",
	unix.ETHTOOL_LINK_MODE_40000baseSR4_Full_BIT:          "40000baseSR4_Full",
	unix.ETHTOOL_LINK_MODE_50000baseCR2_Full_BIT:          "50000baseCR2_Full",
	unix.ETHTOOL_LINK_MODE_50000baseCR_Full_BIT:           "50000baseCR_Full",
	unix.ETHTOOL_LINK_MODE_50000baseDR_Full_BIT:           "50000baseDR_Full",
	unix.ETHTOOL_LINK_MODE_50000baseKR2_Full_BIT:          "50000baseKR2_Full",
	unix.ETHTOOL_LINK_MODE_50000baseKR_Full_BIT:           "50000baseKR_Full",
	unix.ETHTOOL_LINK_MODE_50000baseLR_ER_FR_Full_BIT:     "50000baseLR_ER_FR_Full",
	unix.ETHTOOL_LINK_MODE_50000baseSR2_Full_BIT:          "50000baseSR2_Full",
	unix.ETHTOOL_LINK_MODE_50000baseSR_Full_BIT:           "50000baseSR_Full",
	unix.ETHTOOL_LINK_MODE_5000baseT_Full_BIT:             "5000baseT_Full",
	unix.ETHTOOL_LINK_MODE_56000baseCR4_Full_BIT:          "56000baseCR4_Full",
	unix.ETHTOOL_LINK_MODE_56000baseKR4_Full_BIT:          "56000baseKR4_Full",
	unix.ETHTOOL_LINK_MODE_56000baseLR4_Full_BIT:          "56000baseLR4_Full",
	unix.ETHTOOL_LINK_MODE_56000baseSR4_Full_BIT:          "56000baseSR4_Full",
	unix.ETHTOOL_LINK_MODE_AUI_BIT:                        "AUI",
	unix.ETHTOOL_LINK_MODE_Asym_Pause_BIT:                 "Asym_Pause",
	unix.ETHTOOL_LINK_MODE_Autoneg_BIT:                    "Autoneg",
	unix.ETHTOOL_LINK_MODE_BNC_BIT:                        "BNC",
	unix.ETHTOOL_LINK_MODE_Backplane_BIT:                  "Backplane",
	unix.ETHTOOL_LINK_MODE_FEC_BASER_BIT:                  "FEC_BASER",
	unix.ETHTOOL_LINK_MODE_FEC_LLRS_BIT:                   "FEC_LLRS",
	unix.ETHTOOL_LINK_MODE_FEC_NONE_BIT:                   "FEC_NONE",
	unix.ETHTOOL_LINK_MODE_FEC_RS_BIT:                     "FEC_RS",
	unix.ETHTOOL_LINK_MODE_FIBRE_BIT:                      "FIBRE",
	unix.ETHTOOL_LINK_MODE_MII_BIT:                        "MII",
	unix.ETHTOOL_LINK_MODE_Pause_BIT:                      "Pause",
	unix.ETHTOOL_LINK_MODE_TP_BIT:                         "TP",
}
