package budget

// The throughput model of docs/pcie-model.md: the link capacity per
// direction after line encoding, DLLP (Ack, UpdateFC) and SKP tax; the bytes
// every packet costs on the link in each direction (data TLPs, descriptor
// fetches and write-backs, doorbells, interrupts); and the packet rate the
// tightest hop allows, compared with the Ethernet line rate.
//
// Not modelled (the model is a bandwidth ceiling): read latency against
// outstanding tags, IOMMU misses, Relaxed Ordering, ASPM exit latency, ECRC,
// 4 KiB-boundary and misalignment splits, driver MMIO reads of head
// pointers, and CPU or interrupt limits.

import (
	"errors"
	"fmt"
	"math"

	"github.com/nicdiag/nicdiag/pcie"
)

// Errors returned by Solve and its relatives. They are wrapped with details;
// test for them with errors.Is.
var (
	// ErrInvalidLink reports a hop that cannot be modelled: no hops, an
	// unknown speed, a width that is not 1, 2, 4, 8, 12, 16 or 32, or an
	// MPS, MRRS or RCB the spec does not allow.
	ErrInvalidLink = errors.New("budget: invalid link parameters")
	// ErrInvalidWorkload reports a frame size outside 64..16384 B, an
	// unknown direction, a port count outside 0..1024 (or below 2 for
	// Forward), or a port speed that is not a positive finite number.
	ErrInvalidWorkload = errors.New("budget: invalid workload")
	// ErrInvalidProfile reports a DMA profile with a negative or absurdly
	// large field.
	ErrInvalidProfile = errors.New("budget: invalid DMA profile")
	// ErrVirtual reports a virtual device (virtio, vmxnet3): its "link" is
	// emulated and no DMA model applies.
	ErrVirtual = errors.New("budget: virtual device, no PCIe model applies")
)

// Defaults for values the caller does not know (passed as 0).
const (
	// DefaultMPS is the Max Payload Size assumed when unknown: 128 B, the
	// usual value on client root ports and small SoCs, and the pessimistic
	// one.
	DefaultMPS = 128
	// DefaultMRRS is the Max Read Request Size assumed when unknown: the
	// Linux default of 512 B.
	DefaultMRRS = 512
	// DefaultRCB is the Read Completion Boundary assumed when unknown.
	DefaultRCB = 64
	// DefaultFrameBytes is the Ethernet frame size (header and FCS) assumed
	// when a Workload gives none.
	DefaultFrameBytes = 1518
	// MinFrameBytes is the smallest Ethernet frame a Workload may give.
	MinFrameBytes = 64
	// MaxFrameBytes is the largest: jumbo frames up to 16 KiB.
	MaxFrameBytes = 16384
	// MaxPorts bounds Workload.Ports and LinkParams.Shared.
	MaxPorts = 1024
)

// Ethernet per-frame costs, in bytes.
const (
	ethGap = 20 // preamble and SFD 8 + inter-frame gap 12
	ethFCS = 4  // frame check sequence, not DMA'd
)

// TLP sizes without framing, in bytes (Base Spec; docs/pcie-model.md §2.3).
const (
	hdr32  = 12 // MWr/MRd header with a 32-bit address (3 DW)
	hdr64  = 16 // MWr/MRd header with a 64-bit address (4 DW)
	hdrCpl = 12 // CplD header (3 DW)
	msiLen = 4  // MSI/MSI-X payload
	dllpSz = 8  // Ack or UpdateFC DLLP: 6 B plus 2 B framing
)

// SKP ordered sets: 4 symbols per 1538 on every lane.
const skpTax = 4.0 / 1538

// LinkParams is one hop of the path from the NIC to its root port: a PCIe
// link with the values lspci -vv shows for it. Hop 0 is the NIC's own link;
// later hops go up through switches toward the root port. Zero means unknown
// for MPS, MRRS, RCB, MaxGTs, MaxWidth and Shared.
type LinkParams struct {
	// Addr labels the hop, usually the PCI address of its downstream end;
	// it is copied into the result.
	Addr string `json:"addr,omitempty"`
	// GTs and Width are the trained speed (GT/s) and width (lanes).
	GTs   float64 `json:"gts"`
	Width int     `json:"width"`
	// MaxGTs and MaxWidth are what both ends of the hop support; the
	// at-capability counterfactual uses them. 0 means as trained.
	MaxGTs   float64 `json:"max_gts,omitempty"`
	MaxWidth int     `json:"max_width,omitempty"`
	// MPS is the Max Payload Size from DevCtl (not DevCap). The path uses
	// the smallest known value; DefaultMPS if none is known.
	MPS int `json:"mps,omitempty"`
	// MRRS is the Max Read Request Size from the requester's DevCtl. The
	// path uses hop 0's value if known, else the smallest known one, else
	// DefaultMRRS.
	MRRS int `json:"mrrs,omitempty"`
	// RCB is the Read Completion Boundary (64 or 128) from LnkCtl. The path
	// uses the smallest known value; DefaultRCB if none is known.
	RCB int `json:"rcb,omitempty"`
	// Shared counts the NIC ports (functions) whose traffic can cross this
	// hop: every function of a multi-port card shares the card's link, and
	// everything below a switch shares its uplink. The ports in use
	// (Workload.Ports) are taken to crowd onto every hop as far as its
	// Shared count allows, the worst case: min(Ports, Shared) of them cross
	// it, each with an equal share. 0 means all the ports in use.
	Shared int `json:"shared,omitempty"`
}

// Direction says which way the host moves packets.
type Direction string

// Directions a Workload can take.
const (
	// RX: every port in use receives at line rate; the host only receives.
	RX Direction = "rx"
	// TX: every port in use sends at line rate; the host only sends.
	TX Direction = "tx"
	// Both: every port in use receives and sends at line rate at once, as
	// a router forwarding in both directions.
	Both Direction = "both"
	// Forward: one-way forwarding. Half the ports in use receive at line
	// rate and the other half send what was received, so the host receives
	// and sends Ports/2 ports' line rate each (docs/pcie-model.md §3.1, a_rx = a_tx = ½).
	// It needs Ports >= 2.
	Forward Direction = "forward"
)

// ParseDirection parses "rx", "tx", "both" or "forward".
func ParseDirection(s string) (Direction, error) {
	switch d := Direction(s); d {
	case RX, TX, Both, Forward:
		return d, nil
	}
	return "", fmt.Errorf("%w: direction %q (want rx, tx, both or forward)", ErrInvalidWorkload, s)
}

// Workload is the traffic whose ceiling is asked for.
type Workload struct {
	// FrameBytes is the Ethernet frame size, header and FCS included,
	// preamble and gap not; 0 means DefaultFrameBytes.
	FrameBytes int `json:"frame_bytes"`
	// Direction defaults to Both.
	Direction Direction `json:"direction"`
	// Ports is the number of ports in use, each running the workload. 0
	// means every port sharing the narrowest hop (the hop with the lowest
	// RawGbps; on a tie the one with the larger Shared): its Shared count,
	// or 1 if that is 0.
	Ports int `json:"ports"`
	// PortMbps is each port's Ethernet line rate in Mb/s (1000 for 1GbE).
	PortMbps float64 `json:"port_mbps"`
}

// DLLPMode says how the Ack and UpdateFC intervals of the spec tables, given
// in symbol times, become bytes.
type DLLPMode int

const (
	// DLLPScaled takes an interval of N symbol times as N × width bytes,
	// since a symbol time carries one byte per lane. It fits the X520 Gen2 x4
	// measurement; docs/pcie-model.md §2.2 recommends it.
	DLLPScaled DLLPMode = iota
	// DLLPPaper takes N symbol times as N bytes, as pcie-bench/pcie-model
	// does. Exact for x1; it overstates the tax on wide links.
	DLLPPaper
)

// Variant fixes the unknowns that move the answer by a few percent: how the
// root complex splits read completions, the address width and the DLLP mode.
type Variant struct {
	// DLLP is the DLLP tax mode.
	DLLP DLLPMode
	// Addr32 uses 3 DW request headers (buffers below 4 GiB); otherwise
	// 4 DW (64-bit addresses).
	Addr32 bool
	// RCBChunks has the completer return RCB-sized completions, as seen on
	// older chipsets; otherwise MPS-sized ones.
	RCBChunks bool
}

// The three variants Solve reports.
var (
	// Nominal is the default of docs/pcie-model.md §3.3: scaled DLLP, 64-bit, MPS chunks.
	Nominal = Variant{}
	// Pessimistic gives the low end: paper DLLP, 64-bit, RCB chunks.
	Pessimistic = Variant{DLLP: DLLPPaper, RCBChunks: true}
	// Optimistic gives the high end: scaled DLLP, 32-bit, MPS chunks.
	Optimistic = Variant{Addr32: true}
)

// Bound names the stage that sets the ceiling.
type Bound string

// Bounds.
const (
	BoundEthernet Bound = "ethernet"
	BoundPCIe     Bound = "pcie"
)

// LinkDir is a PCIe link direction as seen from the NIC.
type LinkDir string

// Link directions.
const (
	Upstream   LinkDir = "up"   // device to host: RX data, write-backs, read requests, MSI
	Downstream LinkDir = "down" // host to device: TX data, completions, doorbells
)

// Range is a value under the Pessimistic, Nominal and Optimistic variants.
type Range struct {
	Low     float64 `json:"low"`     // Pessimistic
	Nominal float64 `json:"nominal"` // Nominal
	High    float64 `json:"high"`    // Optimistic
}

// PacketCost is what one packet costs on a link, in bytes including TLP
// headers and framing, per PCIe direction, for a received and a sent packet.
type PacketCost struct {
	RXUp   float64 `json:"rx_up"`   // received packet, device to host
	RXDown float64 `json:"rx_down"` // received packet, host to device
	TXUp   float64 `json:"tx_up"`   // sent packet, device to host
	TXDown float64 `json:"tx_down"` // sent packet, host to device
}

// HopResult is one hop's share of the worked calculation, under the Nominal
// variant unless a field is a Range.
type HopResult struct {
	Index  int     `json:"index"`          // position in the links given
	Addr   string  `json:"addr,omitempty"` // LinkParams.Addr
	Gen    int     `json:"gen"`            // PCIe generation
	GTs    float64 `json:"gts"`            // speed solved for
	Width  int     `json:"width"`          // width solved for
	Shared int     `json:"shared"`         // LinkParams.Shared as given
	Busy   int     `json:"busy"`           // ports in use crossing the hop: min(Ports, Shared), or Ports
	// RawGbps is the bandwidth per direction after line encoding.
	RawGbps float64 `json:"raw_gbps"`
	// CapacityGbps is C_dir, what is left per direction for TLPs after the
	// DLLP and SKP tax (Low: paper mode; Nominal and High: scaled).
	CapacityGbps Range `json:"capacity_gbps"`
	// Cost is the per-packet cost on this hop.
	Cost PacketCost `json:"cost"`
	// UpBytes and DownBytes are the bytes one packet of the workload costs
	// in each direction (RX and TX costs weighted by the direction mix).
	UpBytes   float64 `json:"up_bytes"`
	DownBytes float64 `json:"down_bytes"`
	// PCIeMbps is the ceiling this hop alone sets on the whole workload,
	// in the units of Result.CeilingMbps.
	PCIeMbps Range `json:"pcie_mbps"`
	// Dir is the direction that binds at this hop.
	Dir LinkDir `json:"pcie_direction"`
}

// Result is the solved model for a workload on a path.
type Result struct {
	// Workload is the workload solved, with defaults filled in.
	Workload Workload `json:"workload"`
	// Profile names the DMA profile used.
	Profile string `json:"profile"`
	// MPS, MRRS and RCB are the path values used.
	MPS  int `json:"mps"`
	MRRS int `json:"mrrs"`
	RCB  int `json:"rcb"`
	// Assumptions lists the defaults the model had to take for this input.
	Assumptions []string `json:"assumptions,omitempty"`
	// EthernetMbps is the line-rate demand: Ethernet frame bits per second
	// (header and FCS, no preamble or gap) in each direction the workload
	// uses, summed over the ports in use.
	EthernetMbps float64 `json:"ethernet_mbps"`
	// PCIeMbps is what the path can carry, in the same units, ignoring the
	// Ethernet limit.
	PCIeMbps Range `json:"pcie_mbps"`
	// CeilingMbps is min(EthernetMbps, PCIeMbps): what the workload can
	// move in each direction it uses, summed over the ports in use.
	CeilingMbps Range `json:"ceiling_mbps"`
	// PacketsPerSec is the nominal ceiling in packets per second per
	// direction used.
	PacketsPerSec float64 `json:"packets_per_sec"`
	// Bound is the stage that sets the nominal ceiling.
	Bound Bound `json:"bound"`
	// Hop and Dir locate the tightest PCIe hop and direction (nominal),
	// whether or not PCIe is the bound; Hop indexes Hops.
	Hop int     `json:"hop_index"`
	Dir LinkDir `json:"pcie_direction"`
	// Hops holds the per-hop calculation, in the order given.
	Hops []HopResult `json:"hops"`
	// AtCapability is the same workload solved with every hop at the
	// speed and width both its ends support (MaxGTs, MaxWidth). Solve always
	// sets it; it is nil inside itself.
	AtCapability *Result `json:"at_capability,omitempty"`
}

// Headroom is the nominal PCIe capacity over the Ethernet demand: below 1
// the path cannot carry line rate.
func (r *Result) Headroom() float64 {
	if r.EthernetMbps == 0 {
		return 0
	}
	return r.PCIeMbps.Nominal / r.EthernetMbps
}

// TCPGoodputMbps converts Ethernet frame bits per second into the TCP
// payload they carry over IPv4 with timestamps (52 B of headers, 18 B of
// Ethernet header and FCS): 1448/1518 for MTU 1500, 8948/9018 for MTU 9000.
// It returns 0 for frames too small to carry a payload.
func TCPGoodputMbps(frameMbps float64, frameBytes int) float64 {
	payload := frameBytes - 18 - 52
	if payload <= 0 {
		return 0
	}
	return frameMbps * float64(payload) / float64(frameBytes)
}

// Solve works out the ceiling of workload w on the path links (hop 0 the
// NIC's own link) for a NIC with DMA profile p, under the Pessimistic,
// Nominal and Optimistic variants, and the same at the hops' capability.
func Solve(links []LinkParams, p Profile, w Workload) (Result, error) {
	return solveModel(links, p, w, [3]Variant{Pessimistic, Nominal, Optimistic}, true)
}

// SolveVariant is Solve under one variant: every Range in the result (and in
// its AtCapability) holds that variant's value three times.
func SolveVariant(links []LinkParams, p Profile, w Workload, v Variant) (Result, error) {
	return solveModel(links, p, w, [3]Variant{v, v, v}, true)
}

// LinkCapacityGbps is C_dir for one link: the Gb/s per direction left for
// TLPs (their framing included) after line encoding, Ack and UpdateFC
// DLLPs at the spec's recommended intervals for the link's MPS, and SKP
// ordered sets. MPS 0 means DefaultMPS.
func LinkCapacityGbps(l LinkParams, mode DLLPMode) (float64, error) {
	g, err := checkSpeedWidth(l.GTs, l.Width)
	if err != nil {
		return 0, err
	}
	mps := l.MPS
	if mps == 0 {
		mps = DefaultMPS
	}
	if !pow2In(mps, 128, 4096) {
		return 0, fmt.Errorf("%w: MPS %d", ErrInvalidLink, mps)
	}
	return capacityGbps(g, l.Width, mps, mode), nil
}

// LineRateFrame returns the smallest frame size, from 64 B up to
// MaxFrameBytes, at which workload w (its FrameBytes ignored) reaches line
// rate on the path under variant v; ok is false if none does.
func LineRateFrame(links []LinkParams, p Profile, w Workload, v Variant) (frame int, ok bool, err error) {
	w.FrameBytes = MinFrameBytes
	s, err := prepareModel(links, p, w)
	if err != nil {
		return 0, false, err
	}
	for f := MinFrameBytes; f <= MaxFrameBytes; f++ {
		s.w.FrameBytes = f
		e := s.solveOne(v, s.hops, nil)
		if e.pcieMbps >= s.ethernetMbps()*(1-1e-12) {
			return f, true, nil
		}
	}
	return 0, false, nil
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

// log2 of MPS/128, for a power of two from 128 to 4096.
func mpsCol(mps int) int {
	c := 0
	for v := 128; v < mps; v <<= 1 {
		c++
	}
	return c
}

func pow2In(v, lo, hi int) bool {
	return v >= lo && v <= hi && v&(v-1) == 0
}

// dllpEfficiency is the share of the encoded bandwidth left after Ack and
// UpdateFC DLLPs and SKP ordered sets. Gen6 FLIT mode carries DLLPs in the
// flit's own DLP bytes, already outside LaneGbps, so only SKP is taxed.
func dllpEfficiency(g pcie.Gen, width, mps int, mode DLLPMode) float64 {
	if g.Number >= 6 {
		return 1 - skpTax
	}
	gi := g.Number - 1
	if gi > 2 {
		gi = 2
	}
	t := float64(dllpInterval[gi][widthRow(width)][mpsCol(mps)])
	if mode == DLLPScaled {
		t *= float64(width)
	}
	return 1 - 2*dllpSz/t - skpTax
}

func capacityGbps(g pcie.Gen, width, mps int, mode DLLPMode) float64 {
	return g.RawGbps(width) * dllpEfficiency(g, width, mps, mode)
}

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

// modelHop is a validated link.
type modelHop struct {
	gen    pcie.Gen
	width  int
	shared int
	busy   int // ports in use crossing the hop
}

// modelSolver holds validated, defaulted input.
type modelSolver struct {
	hops, capHops []modelHop
	p             Profile // defaults applied
	w             Workload
	mps, mrrs     int
	rcb           int
	notes         []string
}

func (s *modelSolver) ethernetMbps() float64 {
	f := float64(s.w.FrameBytes)
	share := float64(s.w.Ports)
	if s.w.Direction == Forward {
		share /= 2
	}
	return share * s.w.PortMbps * f / (f + ethGap)
}

func prepareModel(links []LinkParams, p Profile, w Workload) (*modelSolver, error) {
	if p.Virtual {
		return nil, fmt.Errorf("%w (%s)", ErrVirtual, p.Name)
	}
	p, err := p.normalize()
	if err != nil {
		return nil, err
	}
	if len(links) == 0 {
		return nil, fmt.Errorf("%w: no hops", ErrInvalidLink)
	}
	s := &modelSolver{p: p, w: w}
	s.hops = make([]modelHop, len(links))
	s.capHops = make([]modelHop, len(links))
	narrow, narrowGbps := 0, math.Inf(1)
	for i, l := range links {
		g, err := checkSpeedWidth(l.GTs, l.Width)
		if err != nil {
			return nil, fmt.Errorf("hop %d: %w", i, err)
		}
		if l.MPS != 0 && !pow2In(l.MPS, 128, 4096) {
			return nil, fmt.Errorf("hop %d: %w: MPS %d", i, ErrInvalidLink, l.MPS)
		}
		if l.MRRS != 0 && !pow2In(l.MRRS, 128, 4096) {
			return nil, fmt.Errorf("hop %d: %w: MRRS %d", i, ErrInvalidLink, l.MRRS)
		}
		if l.RCB != 0 && l.RCB != 64 && l.RCB != 128 {
			return nil, fmt.Errorf("hop %d: %w: RCB %d", i, ErrInvalidLink, l.RCB)
		}
		if l.Shared < 0 || l.Shared > MaxPorts {
			return nil, fmt.Errorf("hop %d: %w: shared by %d ports", i, ErrInvalidLink, l.Shared)
		}
		cg, cw := g, l.Width
		if l.MaxGTs != 0 {
			mg, ok := pcie.GenBySpeed(l.MaxGTs)
			if !ok {
				return nil, fmt.Errorf("hop %d: %w: max speed %v GT/s", i, ErrInvalidLink, l.MaxGTs)
			}
			if mg.Number > cg.Number {
				cg = mg
			}
		}
		if l.MaxWidth != 0 {
			if widthRow(l.MaxWidth) < 0 {
				return nil, fmt.Errorf("hop %d: %w: max width x%d", i, ErrInvalidLink, l.MaxWidth)
			}
			cw = max(cw, l.MaxWidth)
		}
		s.hops[i] = modelHop{gen: g, width: l.Width, shared: l.Shared}
		s.capHops[i] = modelHop{gen: cg, width: cw, shared: l.Shared}
		if gb := g.RawGbps(l.Width); gb < narrowGbps || gb == narrowGbps && l.Shared > links[narrow].Shared {
			narrow, narrowGbps = i, gb
		}
		if l.MPS != 0 && (s.mps == 0 || l.MPS < s.mps) {
			s.mps = l.MPS
		}
		if l.MRRS != 0 && (s.mrrs == 0 || l.MRRS < s.mrrs) {
			s.mrrs = l.MRRS
		}
		if l.RCB != 0 && (s.rcb == 0 || l.RCB < s.rcb) {
			s.rcb = l.RCB
		}
	}
	if links[0].MRRS != 0 {
		s.mrrs = links[0].MRRS
	}
	if s.mps == 0 {
		s.mps = DefaultMPS
		s.notes = append(s.notes, "MPS unknown: assumed 128 B (the usual client root port value; pessimistic)")
	}
	if s.mrrs == 0 {
		s.mrrs = DefaultMRRS
		s.notes = append(s.notes, "MRRS unknown: assumed 512 B (the Linux default)")
	}
	if s.rcb == 0 {
		s.rcb = DefaultRCB
		s.notes = append(s.notes, "RCB unknown: assumed 64 B")
	}

	// Workload.
	if s.w.FrameBytes == 0 {
		s.w.FrameBytes = DefaultFrameBytes
	}
	if s.w.FrameBytes < MinFrameBytes || s.w.FrameBytes > MaxFrameBytes {
		return nil, fmt.Errorf("%w: frame %d B (want %d..%d)", ErrInvalidWorkload, s.w.FrameBytes, MinFrameBytes, MaxFrameBytes)
	}
	if s.w.Direction == "" {
		s.w.Direction = Both
	}
	if _, err := ParseDirection(string(s.w.Direction)); err != nil {
		return nil, err
	}
	if !(s.w.PortMbps > 0) || s.w.PortMbps > 1e7 {
		return nil, fmt.Errorf("%w: port speed %v Mb/s", ErrInvalidWorkload, s.w.PortMbps)
	}
	if s.w.Ports < 0 || s.w.Ports > MaxPorts {
		return nil, fmt.Errorf("%w: %d ports", ErrInvalidWorkload, s.w.Ports)
	}
	if s.w.Ports == 0 {
		s.w.Ports = max(1, links[narrow].Shared)
		s.notes = append(s.notes, fmt.Sprintf("ports in use: %d, every port sharing the narrowest hop (%d)", s.w.Ports, narrow))
	}
	for i := range s.hops {
		s.hops[i].busy = s.w.Ports
		if sh := s.hops[i].shared; sh > 0 && sh < s.w.Ports {
			s.hops[i].busy = sh
		}
		s.capHops[i].busy = s.hops[i].busy
	}
	if s.w.Direction == Forward && s.w.Ports < 2 {
		return nil, fmt.Errorf("%w: one-way forwarding needs 2 or more ports, got %d", ErrInvalidWorkload, s.w.Ports)
	}
	for _, h := range s.hops {
		if h.gen.Number >= 6 {
			s.notes = append(s.notes, "Gen6 FLIT mode is approximate (TLP headers as Gen5, DLLPs inside flits)")
			break
		}
	}
	return s, nil
}

// modelEstimate is one variant's answer.
type modelEstimate struct {
	pcieMbps float64
	pps      float64 // PCIe-limited packets/s per direction used
	hop      int
	dir      LinkDir
}

// modelHopEstimate is one variant's per-hop answer.
type modelHopEstimate struct {
	capGbps  float64
	cost     PacketCost
	up, down float64
	pcieMbps float64
	dir      LinkDir
}

func divUp(a, b int) int { return (a + b - 1) / b }

// completions counts the completion TLPs for a read of n bytes issued as
// requests of at most mrrs bytes, each answered in chunks of at most chunk.
func cplCount(n, mrrs, chunk int) int {
	full, rest := n/mrrs, n%mrrs
	c := full * divUp(mrrs, chunk)
	if rest > 0 {
		c += divUp(rest, chunk)
	}
	return c
}

// packetCost is docs/pcie-model.md §3: the bytes one received and one sent packet cost
// on a link with the given per-TLP framing.
func (s *modelSolver) packetCost(framing int, v Variant) PacketCost {
	p := &s.p
	l := s.w.FrameBytes - ethFCS
	mps, mrrs := s.mps, s.mrrs
	chunk := mps
	if v.RCBChunks {
		chunk = min(s.rcb, mps)
	}
	hw := hdr64 + framing
	if v.Addr32 {
		hw = hdr32 + framing
	}
	hr, hc := hw, hdrCpl+framing
	f := func(i int) float64 { return float64(i) }
	irq := 0.0
	if p.IRQEvery > 0 {
		irq = f(msiLen+hw) / f(p.IRQEvery)
	}
	// Write-backs of w records of c bytes, as MWr.
	wb := func(c, w int) float64 { return f(c*w+divUp(c*w, mps)*hw) / f(w) }

	var c PacketCost
	rxFetch := p.RxDescBytes * p.RxFetchBatch
	c.RXUp = f(l+divUp(l, mps)*hw) + // data MWr
		wb(p.RxWriteBackBytes, p.RxWriteBackBatch) + // descriptor write-back
		f(divUp(rxFetch, mrrs)*hr)/f(p.RxFetchBatch) + // descriptor read requests
		irq
	c.RXDown = f(p.RxDescBytes) + f(cplCount(rxFetch, mrrs, chunk)*hc)/f(p.RxFetchBatch) + // descriptor completions
		f(msiLen+hw)/f(p.RxDoorbellEvery) // RX tail doorbell
	txDesc := p.TxDescsPerPacket * p.TxDescBytes
	txFetch := txDesc * p.TxFetchBatch
	c.TXUp = f(divUp(l, mrrs)*hr) + // data read requests
		f(divUp(txFetch, mrrs)*hr)/f(p.TxFetchBatch) + // descriptor read requests
		wb(p.TxWriteBackBytes, p.TxWriteBackBatch) + // write-back (DD bit)
		irq
	c.TXDown = f(l+cplCount(l, mrrs, chunk)*hc) + // data completions
		f(txDesc) + f(cplCount(txFetch, mrrs, chunk)*hc)/f(p.TxFetchBatch) + // descriptor completions
		f(msiLen+hw)/f(p.TxDoorbellEvery) // TX tail doorbell
	return c
}

// solveOne solves one variant over hops; it fills out (if not nil, one
// entry per hop) with the per-hop numbers. It does not allocate.
func (s *modelSolver) solveOne(v Variant, hops []modelHop, out []modelHopEstimate) modelEstimate {
	arx, atx := 1.0, 1.0
	switch s.w.Direction {
	case RX:
		atx = 0
	case TX:
		arx = 0
	}
	fbits := float64(s.w.FrameBytes) * 8
	best := modelEstimate{pps: math.Inf(1)}
	var cost PacketCost
	lastFraming := -1
	for i, h := range hops {
		if h.gen.FramingBytes != lastFraming {
			cost = s.packetCost(h.gen.FramingBytes, v)
			lastFraming = h.gen.FramingBytes
		}
		up := arx*cost.RXUp + atx*cost.TXUp
		down := arx*cost.RXDown + atx*cost.TXDown
		dir, worst := Upstream, up
		if down > up {
			dir, worst = Downstream, down
		}
		capGbps := capacityGbps(h.gen, h.width, s.mps, v.DLLP)
		pps := capGbps * 1e9 / 8 / worst
		// The hop carries busy of the ports in use; the others run as fast.
		pps = pps * float64(s.w.Ports) / float64(h.busy)
		if out != nil {
			out[i] = modelHopEstimate{capGbps: capGbps, cost: cost, up: up, down: down, pcieMbps: pps * fbits / 1e6, dir: dir}
		}
		if pps < best.pps {
			best = modelEstimate{pps: pps, hop: i, dir: dir}
		}
	}
	best.pcieMbps = best.pps * fbits / 1e6
	return best
}

func solveModel(links []LinkParams, p Profile, w Workload, vs [3]Variant, withCap bool) (Result, error) {
	s, err := prepareModel(links, p, w)
	if err != nil {
		return Result{}, err
	}
	r := s.result(links, s.hops, vs)
	if withCap {
		c := s.result(links, s.capHops, vs)
		r.AtCapability = &c
	}
	return r, nil
}

func (s *modelSolver) result(links []LinkParams, hops []modelHop, vs [3]Variant) Result {
	r := Result{
		Workload:     s.w,
		Profile:      s.p.Name,
		MPS:          s.mps,
		MRRS:         s.mrrs,
		RCB:          s.rcb,
		Assumptions:  s.notes[:len(s.notes):len(s.notes)],
		EthernetMbps: s.ethernetMbps(),
		Hops:         make([]HopResult, len(hops)),
	}
	var per [3][]modelHopEstimate
	var buf [3][4]modelHopEstimate
	var est [3]modelEstimate
	for k, v := range vs {
		if len(hops) <= len(buf[k]) {
			per[k] = buf[k][:len(hops)]
		} else {
			per[k] = make([]modelHopEstimate, len(hops))
		}
		est[k] = s.solveOne(v, hops, per[k])
	}
	// Monotone by construction; guard the order against float ties.
	r.PCIeMbps = Range{
		Low:     min(est[0].pcieMbps, est[1].pcieMbps),
		Nominal: est[1].pcieMbps,
		High:    max(est[2].pcieMbps, est[1].pcieMbps),
	}
	e := r.EthernetMbps
	r.CeilingMbps = Range{Low: min(e, r.PCIeMbps.Low), Nominal: min(e, r.PCIeMbps.Nominal), High: min(e, r.PCIeMbps.High)}
	r.Bound = BoundEthernet
	if r.PCIeMbps.Nominal < e {
		r.Bound = BoundPCIe
	}
	r.PacketsPerSec = r.CeilingMbps.Nominal * 1e6 / (8 * float64(s.w.FrameBytes))
	r.Hop, r.Dir = est[1].hop, est[1].dir
	for i, h := range hops {
		n := per[1][i]
		r.Hops[i] = HopResult{
			Index:        i,
			Addr:         links[i].Addr,
			Gen:          h.gen.Number,
			GTs:          h.gen.GTs,
			Width:        h.width,
			Shared:       h.shared,
			Busy:         h.busy,
			RawGbps:      h.gen.RawGbps(h.width),
			CapacityGbps: Range{Low: per[0][i].capGbps, Nominal: n.capGbps, High: per[2][i].capGbps},
			Cost:         n.cost,
			UpBytes:      n.up,
			DownBytes:    n.down,
			PCIeMbps:     Range{Low: per[0][i].pcieMbps, Nominal: n.pcieMbps, High: per[2][i].pcieMbps},
			Dir:          n.dir,
		}
	}
	return r
}
