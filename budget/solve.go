package budget

import (
	"fmt"
	"math"

	"github.com/nicdiag/nicdiag/pcie"
)

// variant fixes the unknowns that move the answer by a few percent: how the
// root complex splits read completions, the address width and the DLLP mode.
type variant struct {
	dllp dllpMode // how DLLP intervals become bytes
	// addr32 uses 3 DW request headers (buffers below 4 GiB); otherwise
	// 4 DW (64-bit addresses).
	addr32 bool
	// rcbChunks has the completer return RCB-sized completions, as seen on
	// older chipsets; otherwise MPS-sized ones.
	rcbChunks bool
}

// The three variants Solve reports (docs/pcie-model.md §3.3).
var (
	// nominal is the default of docs/pcie-model.md §3.3: scaled DLLP,
	// 64-bit, MPS chunks.
	nominal = variant{}
	// pessimistic gives the low end: paper DLLP, 64-bit, RCB chunks.
	pessimistic = variant{dllp: dllpPaper, rcbChunks: true}
	// optimistic gives the high end: scaled DLLP, 32-bit, MPS chunks.
	optimistic = variant{addr32: true}
)

// Solve works out the ceiling of workload w on the path links (hop 0 the
// NIC's own link) for a NIC with DMA profile p, as a Range over the low,
// nominal and high variants of docs/pcie-model.md §3.3, and the same with
// every hop at its capability.
func Solve(links []LinkParams, p Profile, w Workload) (Result, error) {
	return solveModel(links, p, w, [3]variant{pessimistic, nominal, optimistic})
}

// solveVariant is Solve under one variant: every Range in the result (and in
// its AtCapability) holds that variant's value three times.
func solveVariant(links []LinkParams, p Profile, w Workload, v variant) (Result, error) {
	return solveModel(links, p, w, [3]variant{v, v, v})
}

// lineRateFrame returns the smallest frame size, from 64 B up to
// maxFrameBytes, at which workload w (its FrameBytes ignored) reaches line
// rate on the path under variant v; ok is false if none does.
func lineRateFrame(links []LinkParams, p Profile, w Workload, v variant) (frame int, ok bool, err error) {
	w.FrameBytes = minFrameBytes
	s, err := prepareModel(links, p, w)
	if err != nil {
		return 0, false, err
	}
	for f := minFrameBytes; f <= maxFrameBytes; f++ {
		s.w.FrameBytes = f
		e := s.solveOne(v, s.hops, nil)
		if e.pcieMbps >= s.ethernetMbps()*(1-1e-12) {
			return f, true, nil
		}
	}
	return 0, false, nil
}

// modelHop is a validated link.
type modelHop struct {
	gen    pcie.Gen
	width  int
	shared int
	busy   int     // ports in use crossing the hop
	tunnel float64 // a tunnel's Gb/s per direction; 0 for a link
}

// rawGbps is the hop's bandwidth per direction after line encoding, or the
// tunnel's figure.
func (h modelHop) rawGbps() float64 {
	if h.tunnel > 0 {
		return h.tunnel
	}
	return h.gen.RawGbps(h.width)
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

// ethernetMbps is the line-rate demand (docs/pcie-model.md §3.1).
func (s *modelSolver) ethernetMbps() float64 { return s.w.ethernetMbps() }

// prepareModel validates the input and fills in its defaults.
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
	narrow, err := s.setLinks(links)
	if err != nil {
		return nil, err
	}
	ports := links[narrow].Shared
	if a := links[narrow].Active; a > 0 && a < ports {
		ports = a
	}
	if err := s.setWorkload(narrow, ports, links[narrow].Shared); err != nil {
		return nil, err
	}
	for _, h := range s.hops {
		if h.gen.Number >= 6 {
			s.notes = append(s.notes, "Gen6 FLIT mode is approximate (TLP headers as Gen5, DLLPs inside flits)")
			break
		}
	}
	return s, nil
}

// setLinks validates the links and takes the path's MPS, MRRS and RCB from
// them (docs/pcie-model.md §2.4). It returns the narrowest hop: the lowest
// RawGbps, on a tie the one more ports share.
func (s *modelSolver) setLinks(links []LinkParams) (int, error) {
	s.hops = make([]modelHop, len(links))
	s.capHops = make([]modelHop, len(links))
	narrow, narrowGbps := 0, math.Inf(1)
	for i, l := range links {
		var err error
		if s.hops[i], s.capHops[i], err = checkLink(l); err != nil {
			return 0, fmt.Errorf("hop %d: %w", i, err)
		}
		if gb := s.hops[i].rawGbps(); gb < narrowGbps || gb == narrowGbps && l.Shared > links[narrow].Shared {
			narrow, narrowGbps = i, gb
		}
		s.mps = minKnown(s.mps, l.MPS)
		s.mrrs = minKnown(s.mrrs, l.MRRS)
		s.rcb = minKnown(s.rcb, l.RCB)
	}
	if links[0].MRRS != 0 {
		s.mrrs = links[0].MRRS // the NIC's own: it issues the reads
	}
	if s.mps == 0 {
		s.mps = defaultMPS
		s.notes = append(s.notes, "MPS unknown: assumed 128 B (the usual client root port value; pessimistic)")
	}
	if s.mrrs == 0 {
		s.mrrs = defaultMRRS
		s.notes = append(s.notes, "MRRS unknown: assumed 512 B (the Linux default)")
	}
	if s.rcb == 0 {
		s.rcb = defaultRCB
		s.notes = append(s.notes, "RCB unknown: assumed 64 B")
	}
	return narrow, nil
}

// checkLink validates one link and returns it as trained and at capability
// (never below what it trained at).
func checkLink(l LinkParams) (now, capable modelHop, err error) {
	g, err := checkSpeedWidth(l.GTs, l.Width)
	if err != nil {
		return now, capable, err
	}
	switch {
	case l.MPS != 0 && !pow2In(l.MPS, 128, 4096):
		return now, capable, fmt.Errorf("%w: MPS %d", ErrInvalidLink, l.MPS)
	case l.MRRS != 0 && !pow2In(l.MRRS, 128, 4096):
		return now, capable, fmt.Errorf("%w: MRRS %d", ErrInvalidLink, l.MRRS)
	case l.RCB != 0 && l.RCB != 64 && l.RCB != 128:
		return now, capable, fmt.Errorf("%w: RCB %d", ErrInvalidLink, l.RCB)
	case l.Shared < 0 || l.Shared > maxPorts:
		return now, capable, fmt.Errorf("%w: shared by %d ports", ErrInvalidLink, l.Shared)
	}
	cg, cw := g, l.Width
	if l.MaxGTs != 0 {
		mg, ok := pcie.GenBySpeed(l.MaxGTs)
		if !ok {
			return now, capable, fmt.Errorf("%w: max speed %v GT/s", ErrInvalidLink, l.MaxGTs)
		}
		if mg.Number > cg.Number {
			cg = mg
		}
	}
	if l.MaxWidth != 0 {
		if widthRow(l.MaxWidth) < 0 {
			return now, capable, fmt.Errorf("%w: max width x%d", ErrInvalidLink, l.MaxWidth)
		}
		cw = max(cw, l.MaxWidth)
	}
	if l.TunnelGbps < 0 || l.TunnelGbps > 1e4 {
		return now, capable, fmt.Errorf("%w: tunnel %v Gb/s", ErrInvalidLink, l.TunnelGbps)
	}
	return modelHop{gen: g, width: l.Width, shared: l.Shared, tunnel: l.TunnelGbps},
		modelHop{gen: cg, width: cw, shared: l.Shared, tunnel: l.TunnelGbps}, nil
}

// setWorkload validates the workload, fills in its defaults
// (docs/pcie-model.md §3.1) and counts the ports in use that cross each hop.
// narrow is the narrowest hop, active the ports there that carry traffic
// and shared its Shared.
func (s *modelSolver) setWorkload(narrow, active, shared int) error {
	w := &s.w
	given := w.Ports
	if err := w.fill(active); err != nil {
		return err
	}
	switch {
	case given == 0 && active < shared:
		s.notes = append(s.notes, fmt.Sprintf("ports in use: %d, the ports sharing the narrowest hop (%d) that can carry traffic; %d of its %d have no carrier", w.Ports, narrow, shared-active, shared))
	case given == 0:
		s.notes = append(s.notes, fmt.Sprintf("ports in use: %d, every port sharing the narrowest hop (%d)", w.Ports, narrow))
	}
	for i := range s.hops {
		s.hops[i].busy = w.Ports
		if sh := s.hops[i].shared; sh > 0 && sh < w.Ports {
			s.hops[i].busy = sh
		}
		s.capHops[i].busy = s.hops[i].busy
	}
	return nil
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

// solveOne solves one variant over hops (docs/pcie-model.md §3.1); it fills
// out (if not nil, one entry per hop) with the per-hop numbers. It does not
// allocate.
func (s *modelSolver) solveOne(v variant, hops []modelHop, out []modelHopEstimate) modelEstimate {
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
		capGbps := capacityGbps(h.gen, h.width, s.mps, v.dllp)
		pps := capGbps * 1e9 / 8 / worst
		if h.tunnel > 0 {
			// A tunnel's published figure is PCIe data, not its bridges'
			// nominal link: it bounds the frame bytes carried directly.
			capGbps = h.tunnel
			pps = h.tunnel * 1e9 / fbits
		}
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

// solveModel solves the variants vs (low, nominal, high) as trained and at
// capability (docs/pcie-model.md §3.4).
func solveModel(links []LinkParams, p Profile, w Workload, vs [3]variant) (Result, error) {
	s, err := prepareModel(links, p, w)
	if err != nil {
		return Result{}, err
	}
	r := s.result(links, s.hops, vs)
	c := s.result(links, s.capHops, vs)
	r.AtCapability = &c
	return r, nil
}

// result solves the variants vs over hops and assembles the Result.
func (s *modelSolver) result(links []LinkParams, hops []modelHop, vs [3]variant) Result {
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
		if hops[est[1].hop].tunnel > 0 {
			r.Bound = BoundTunnel
		}
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
			RawGbps:      h.rawGbps(),
			TunnelGbps:   h.tunnel,
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
