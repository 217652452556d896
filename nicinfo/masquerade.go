package nicinfo

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nicdiag/nicdiag/finding"
	"github.com/nicdiag/nicdiag/pcie"
)

// masquerade is a device known to borrow another chip's PCI ID, recognised
// by that ID together with a PCIe link capability the real chip lacks.
type masquerade struct {
	vendor, device uint16
	gts            float64
	width          int
	probably       string // completes "probably ..."
	bound          string // completes "its throughput is bound by ..."
	fix            string
	source         string
	// movesMbps is what the real device is known to move per direction,
	// over all its functions; movesSource cites the measurement.
	movesMbps   int
	movesSource string
}

var masquerades = []masquerade{{
	vendor: 0x1969, device: 0x1083, gts: 8, width: 8,
	probably: "a MikroTik CCR2004-1G-2XS-PCIe router card emulating it",
	bound:    "the card's CPU forwarding every packet",
	fix: "Treat the AR8151 name and the 25000 Mb/s figure as nominal: the host talks to a " +
		"RouterOS router whose ARM CPU forwards each packet (Fast Path/FastTrack on, and per-core " +
		"load on the card, decide what it carries); atl1c offers no offloads.",
	source: "Annapurna Labs SoC emulating the AR8151 programming interface (1969:1083, atl1c); " +
		"card LnkCap 8 GT/s x8 (PCIe 3.0 x8 per the review at https://bokehui.net/article/100113552)",
	movesMbps: 9400,
	movesSource: "iperf3 through the card on a 10G path: 9.08-9.36 Gb/s one way with 5.6 Gb/s the other at once " +
		"(https://gist.github.com/alyxw/46fc9f7cf66b61c6b506c9f43bdb724c)",
}}

// findMasquerade matches a known masquerade by ID and LnkCap.
func findMasquerade(n NIC, gts float64, width int) (masquerade, bool) {
	if n.PCI == nil {
		return masquerade{}, false
	}
	for _, m := range masquerades {
		if m.vendor == n.PCI.VendorID && m.device == n.PCI.DeviceID &&
			math.Abs(gts-m.gts) <= 0.02*m.gts && width == m.width {
			return m, true
		}
	}
	return masquerade{}, false
}

// wordNotTheChip words the verdict on a device that is not the chip its ID
// names (its PCIe capability or function count says so): a known masquerade
// by name, else another device that reuses the ID.
func (c *unitCheck) wordNotTheChip(f *finding.Finding, who, texts string) {
	row, ev := c.row, c.ev
	if m, ok := findMasquerade(c.first, c.lnkGTs, c.lnkWidth); ok {
		c.masq = &m
		ev["probably"] = strings.TrimSuffix(m.probably, " emulating it")
		ev["probably_source"] = m.source
		f.Summary = fmt.Sprintf("%s %s: not a genuine %s (%s) but probably %s; its throughput is bound by %s, "+
			"and at most by the PCIe %s link", who, texts, row.Chip, row.Describe(),
			m.probably, m.bound, linkText(c.lnkGTs, c.lnkWidth))
		f.Fix = m.fix
	} else {
		bound := "what the device really is"
		if c.lnkGTs > 0 && c.lnkWidth > 0 {
			bound += ", and at most by the PCIe " + linkText(c.lnkGTs, c.lnkWidth) + " link"
		}
		f.Summary = fmt.Sprintf("%s %s: not a genuine %s (%s) but probably another device that reuses "+
			"its ID; its throughput is bound by %s", who, texts, row.Chip, row.Describe(), bound)
		f.Fix = "Treat the reported name and speed as nominal; identify the card from its label or " +
			"vendor, and measure throughput instead of trusting the reported speed."
	}
	if g, ok := pcie.GenBySpeed(c.lnkGTs); ok && c.lnkWidth > 0 {
		ev["pcie_link_raw_mbps"] = strconv.Itoa(int(math.Round(g.RawGbps(c.lnkWidth) * 1000)))
	}
}
