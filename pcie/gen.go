package pcie

import "math"

// Gen describes one PCI Express generation: its signalling rate, its line
// encoding and what one lane carries per direction after that encoding.
type Gen struct {
	// Number is the generation, 1 to 6.
	Number int `json:"gen"`
	// GTs is the signalling rate in gigatransfers per second per lane.
	GTs float64 `json:"gts"`
	// Encoding names the line encoding: "8b/10b", "128b/130b", or the
	// Gen6 FLIT format.
	Encoding string `json:"encoding"`
	// LaneGbps is what one lane carries per direction after encoding, in
	// Gb/s. For Gen6 it is the share of each 256 B flit that carries TLP
	// bytes (236 B), the rest being DLLP payload, CRC and FEC.
	LaneGbps float64 `json:"lane_gbps"`
	// FramingBytes is the physical- and data-link-layer bytes added to
	// each TLP: STP/END or STP token, sequence number and LCRC (8 B at
	// Gen1–5). Gen6 FLIT mode carries sequence and CRC per flit, so 0.
	FramingBytes int `json:"framing_bytes"`
}

// genTable is the generation table; index i holds Gen i+1.
var genTable = [...]Gen{
	{Number: 1, GTs: 2.5, Encoding: "8b/10b", LaneGbps: 2.5 * 8 / 10, FramingBytes: 8},
	{Number: 2, GTs: 5, Encoding: "8b/10b", LaneGbps: 5 * 8 / 10, FramingBytes: 8},
	{Number: 3, GTs: 8, Encoding: "128b/130b", LaneGbps: 8 * 128.0 / 130, FramingBytes: 8},
	{Number: 4, GTs: 16, Encoding: "128b/130b", LaneGbps: 16 * 128.0 / 130, FramingBytes: 8},
	{Number: 5, GTs: 32, Encoding: "128b/130b", LaneGbps: 32 * 128.0 / 130, FramingBytes: 8},
	{Number: 6, GTs: 64, Encoding: "PAM4 FLIT (236 of 256 B carry TLPs)", LaneGbps: 64 * 236.0 / 256, FramingBytes: 0},
}

// Generations returns the generation table, Gen1 (2.5 GT/s) to Gen6
// (64 GT/s), in order. The slice is a copy.
func Generations() []Gen {
	out := make([]Gen, len(genTable))
	copy(out, genTable[:])
	return out
}

// GenBySpeed returns the generation whose signalling rate is gts GT/s. It
// accepts float noise and the sysfs spellings' values (2.5, 5, 5.0, 8, 16,
// 32, 64) within 2 %; ok is false for any other rate, 0 or NaN.
func GenBySpeed(gts float64) (g Gen, ok bool) {
	if !(gts > 0) || math.IsInf(gts, 0) {
		return Gen{}, false
	}
	for _, g := range genTable {
		if math.Abs(gts-g.GTs) <= 0.02*g.GTs {
			return g, true
		}
	}
	return Gen{}, false
}

// RawGbps is the link's bandwidth per direction after line encoding, in
// Gb/s, for width lanes: GTs × width × encoding efficiency (Gen1 x1 = 2.0,
// Gen3 x8 = 63.02, Gen3 x16 = 126.03). It counts no DLLP or SKP tax.
func (g Gen) RawGbps(width int) float64 {
	return g.LaneGbps * float64(width)
}
