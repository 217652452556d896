package budget

import (
	"fmt"

	"github.com/nicdiag/nicdiag/pcie"
)

// LinkParams is one hop of the path from the NIC to its root port: a PCIe
// link with the values lspci -vv shows for it. Hop 0 is the NIC's own link;
// later hops go up through switches toward the root port. Zero means unknown
// for MPS, MRRS, RCB, MaxGTs, MaxWidth and Shared.
type LinkParams struct {
	// Addr labels the hop in the result; For uses the PCI address of the
	// hop's upstream port.
	Addr string `json:"addr,omitempty"`
	// GTs and Width are the trained speed (GT/s) and width (lanes).
	GTs   float64 `json:"gts"`
	Width int     `json:"width"`
	// MaxGTs and MaxWidth are what both ends of the hop support; the
	// at-capability counterfactual uses them. 0 means as trained.
	MaxGTs   float64 `json:"max_gts,omitempty"`
	MaxWidth int     `json:"max_width,omitempty"`
	// MPS is the Max Payload Size from DevCtl (not DevCap). The path uses
	// the smallest known value, 128 B if none is known.
	MPS int `json:"mps,omitempty"`
	// MRRS is the Max Read Request Size from the requester's DevCtl. The
	// path uses hop 0's value if known, else the smallest known one, else
	// 512 B (the Linux default).
	MRRS int `json:"mrrs,omitempty"`
	// RCB is the Read Completion Boundary (64 or 128) from LnkCtl. The path
	// uses the smallest known value, 64 B if none is known.
	RCB int `json:"rcb,omitempty"`
	// Shared counts the NIC ports (functions) whose traffic can cross this
	// hop: every function of a multi-port card shares the card's link, and
	// everything below a switch shares its uplink. The ports in use
	// (Workload.Ports) are taken to crowd onto every hop as far as its
	// Shared count allows, the worst case: min(Ports, Shared) of them cross
	// it, each with an equal share. 0 means all the ports in use.
	Shared int `json:"shared,omitempty"`
	// Active counts the Shared ports that can carry traffic now (a port
	// without a carrier carries none); the default workload
	// (Workload.Ports 0) takes the narrowest hop's Active ports. 0 means
	// all of Shared.
	Active int `json:"active,omitempty"`
	// TunnelGbps, when set, is the PCIe data a Thunderbolt or USB4 tunnel
	// carries per direction; it replaces the link its bridges report and
	// bounds the frame bytes that cross it directly (the published figures
	// are data rates, their TLP overhead already paid).
	TunnelGbps float64 `json:"tunnel_gbps,omitempty"`
}

// Link values assumed when unknown (docs/pcie-model.md §2.4).
const (
	defaultMPS  = 128 // the usual client root port value, and the pessimistic one
	defaultMRRS = 512 // the Linux default
	defaultRCB  = 64
)

// dllpMode says how the Ack and UpdateFC intervals of the spec tables, given
// in symbol times, become bytes.
type dllpMode int

const (
	// dllpScaled takes an interval of N symbol times as N × width bytes,
	// since a symbol time carries one byte per lane. It fits the X520 Gen2 x4
	// measurement; docs/pcie-model.md §2.2 recommends it.
	dllpScaled dllpMode = iota
	// dllpPaper takes N symbol times as N bytes, as pcie-bench/pcie-model
	// does. Exact for x1; it overstates the tax on wide links.
	dllpPaper
)

// Data-link and physical-layer tax (docs/pcie-model.md §2.2).
const (
	dllpSz = 8          // Ack or UpdateFC DLLP: 6 B plus 2 B framing
	skpTax = 4.0 / 1538 // SKP ordered sets: 4 symbols per 1538 on every lane
)

// linkCapacityGbps is C_dir for one link: the Gb/s per direction left for
// TLPs (their framing included) after line encoding, Ack and UpdateFC
// DLLPs at the spec's recommended intervals for the link's MPS, and SKP
// ordered sets. MPS 0 means defaultMPS.
func linkCapacityGbps(l LinkParams, mode dllpMode) (float64, error) {
	g, err := checkSpeedWidth(l.GTs, l.Width)
	if err != nil {
		return 0, err
	}
	mps := l.MPS
	if mps == 0 {
		mps = defaultMPS
	}
	if !pow2In(mps, 128, 4096) {
		return 0, fmt.Errorf("%w: MPS %d", ErrInvalidLink, mps)
	}
	return capacityGbps(g, l.Width, mps, mode), nil
}

// DLLP interval tables: the spec's Ack latency limits and UpdateFC
// guidelines in symbol times (PCIe Base Spec rev 5.0 Tables 3-7..3-9 and
// 2-46..2-48, as tabulated in pcie-bench/pcie-model model/pcie.py). The two
// tables agree except for two x32 cells where one of them breaks the
// table's own progression (Gen1 x32 MPS 2048 FC 248, Gen2 x32 MPS 4096 Ack
// 237); the regular values are used for both. Gen3 values hold for Gen3 to
// Gen5. Rows: x1, x2, x4, x8, x16, x32; columns: MPS 128 to 4096.
var dllpInterval = [3][6][6]uint16{
	{ // Gen1
		{237, 416, 559, 1071, 2095, 4143},
		{128, 217, 289, 545, 1057, 2081},
		{73, 118, 154, 282, 538, 1050},
		{67, 107, 86, 150, 278, 534},
		{48, 72, 86, 150, 278, 534},
		{33, 45, 52, 84, 148, 276},
	},
	{ // Gen2
		{288, 467, 610, 1122, 2146, 4194},
		{179, 268, 340, 596, 1108, 2132},
		{124, 169, 205, 333, 589, 1101},
		{118, 158, 137, 201, 329, 585},
		{99, 123, 137, 201, 329, 585},
		{84, 96, 103, 135, 199, 327},
	},
	{ // Gen3 and later
		{333, 512, 655, 1167, 2191, 4239},
		{224, 313, 385, 641, 1153, 2177},
		{169, 214, 250, 378, 634, 1146},
		{163, 203, 182, 246, 374, 630},
		{144, 168, 182, 246, 374, 630},
		{129, 141, 148, 180, 244, 372},
	},
}

// widthRow maps a link width to its row in dllpInterval; x12 uses the x8
// row (the tables here have no x12 row).
func widthRow(width int) int {
	switch width {
	case 1:
		return 0
	case 2:
		return 1
	case 4:
		return 2
	case 8, 12:
		return 3
	case 16:
		return 4
	case 32:
		return 5
	}
	return -1
}

// mpsCol maps an MPS (a power of two, 128 to 4096) to its column in
// dllpInterval: log2(MPS/128).
func mpsCol(mps int) int {
	c := 0
	for v := 128; v < mps; v <<= 1 {
		c++
	}
	return c
}

// pow2In reports whether v is a power of two from lo to hi.
func pow2In(v, lo, hi int) bool {
	return v >= lo && v <= hi && v&(v-1) == 0
}

// dllpEfficiency is the share of the encoded bandwidth left after Ack and
// UpdateFC DLLPs and SKP ordered sets. Gen6 FLIT mode carries DLLPs in the
// flit's own DLP bytes, already outside LaneGbps, so only SKP is taxed.
func dllpEfficiency(g pcie.Gen, width, mps int, mode dllpMode) float64 {
	if g.Number >= 6 {
		return 1 - skpTax
	}
	gi := g.Number - 1
	if gi > 2 {
		gi = 2
	}
	t := float64(dllpInterval[gi][widthRow(width)][mpsCol(mps)])
	if mode == dllpScaled {
		t *= float64(width)
	}
	return 1 - 2*dllpSz/t - skpTax
}

// capacityGbps is C_dir = RawGbps × η (docs/pcie-model.md §2.2).
func capacityGbps(g pcie.Gen, width, mps int, mode dllpMode) float64 {
	return g.RawGbps(width) * dllpEfficiency(g, width, mps, mode)
}

// checkSpeedWidth returns the generation of a link the model can take: a
// known speed and a width the DLLP tables have a row for.
func checkSpeedWidth(gts float64, width int) (pcie.Gen, error) {
	g, ok := pcie.GenBySpeed(gts)
	if !ok {
		return pcie.Gen{}, fmt.Errorf("%w: speed %v GT/s", ErrInvalidLink, gts)
	}
	if widthRow(width) < 0 {
		return pcie.Gen{}, fmt.Errorf("%w: width x%d", ErrInvalidLink, width)
	}
	return g, nil
}
