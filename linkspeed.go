package nicdiag

import (
	"fmt"

	"github.com/nicdiag/nicdiag/nicinfo"
)

// judgedSpeed is the port speed a check judges n at: the link speed its
// driver reports; else, while the link has no speed (no carrier yet, or a
// driver that does not say), the fastest mode the port supports, with
// basis saying so ("its fastest supported mode, 1000baseT/Full (link
// speed unknown)"). 0 for a paravirtual NIC or a misidentified device,
// whose speeds are nominal, and when neither is known.
func (h *Host) judgedSpeed(n *NIC) (mbps int, basis string) {
	if n.Virtual || h.ident[n.Name] != nil {
		return 0, ""
	}
	return portSpeed(n)
}

// portSpeed is the link speed, else the port's fastest supported mode with
// basis saying so; 0 when neither is known.
func portSpeed(n *NIC) (mbps int, basis string) {
	if s := n.Link.SpeedMbps; s > 0 {
		return s, ""
	}
	mode, top := nicinfo.FastestMode(n.Link.Supported)
	if top <= 0 {
		return 0, ""
	}
	return top, fmt.Sprintf("its fastest supported mode, %s (link speed unknown)", mode)
}

// atSpeed says what speed a sentence's arithmetic uses: "1000 Mb/s", or
// "1000 Mb/s, its fastest supported mode, 1000baseT/Full (link speed
// unknown)".
func atSpeed(mbps int, basis string) string {
	if basis == "" {
		return fmt.Sprintf("%d Mb/s", mbps)
	}
	return fmt.Sprintf("%d Mb/s, %s", mbps, basis)
}
