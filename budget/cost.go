package budget

// TLP sizes without framing, in bytes (Base Spec; docs/pcie-model.md §2.3).
const (
	hdr32  = 12 // MWr/MRd header with a 32-bit address (3 DW)
	hdr64  = 16 // MWr/MRd header with a 64-bit address (4 DW)
	hdrCpl = 12 // CplD header (3 DW)
	msiLen = 4  // MSI/MSI-X payload
)

// divUp is ⌈a/b⌉.
func divUp(a, b int) int { return (a + b - 1) / b }

// cplCount counts the completion TLPs for a read of n bytes issued as
// requests of at most mrrs bytes, each answered in chunks of at most chunk.
func cplCount(n, mrrs, chunk int) int {
	full, rest := n/mrrs, n%mrrs
	c := full * divUp(mrrs, chunk)
	if rest > 0 {
		c += divUp(rest, chunk)
	}
	return c
}

// packetCost is docs/pcie-model.md §3: the bytes one received and one sent
// packet cost on a link whose TLPs carry framing bytes each.
func (s *modelSolver) packetCost(framing int, v variant) PacketCost {
	p := &s.p
	l := s.w.FrameBytes - ethFCS
	mps, mrrs := s.mps, s.mrrs
	chunk := mps
	if v.rcbChunks {
		chunk = min(s.rcb, mps)
	}
	hw := hdr64 + framing
	if v.addr32 {
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
