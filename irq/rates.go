package irq

import (
	"math"
	"slices"
)

// rates writes into out the Sample between readings a (earlier) and b,
// reusing out's storage (see NextInto).
func (s *Sampler) rates(a, b *reading, out *Sample) {
	dt := b.t.Sub(a.t).Seconds()
	out.Time, out.IntervalS, out.IRQTimeAccounted = b.t, dt, b.accounted
	out.Missing = append(out.Missing[:0], b.missing...)
	if dt <= 0 {
		// No time passed (or the clock stepped back): there is no rate to
		// report. Dividing by a tiny stand-in would turn a few counts into
		// billions per second; dividing by +Inf makes every rate 0, and the
		// sample weighs nothing in Summarize.
		out.IntervalS = 0
		dt = math.Inf(1)
	}
	out.Threads = threadRatesInto(a, b, dt, out.Threads[:0])
	out.PCIe = s.pcieStates(a.pcie, b.pcie, out.PCIe)
	nicIRQs := s.nicRates(a, b, dt, out)
	// CPUs online at both readings; one that came online in between has no
	// rate yet. Both lists ascend, as do the columns of b's
	// /proc/interrupts, /proc/softirqs and softnet_stat.
	old := out.CPUs[:cap(out.CPUs)]
	out.CPUs = out.CPUs[:0]
	i, j := 0, 0
	for _, ct := range b.stat {
		for i < len(a.stat) && a.stat[i].cpu < ct.cpu {
			i++
		}
		if i == len(a.stat) || a.stat[i].cpu != ct.cpu {
			continue
		}
		for j < len(b.ints.CPUs) && b.ints.CPUs[j] < ct.cpu {
			j++
		}
		irqs := 0.0
		if j < len(b.ints.CPUs) && b.ints.CPUs[j] == ct.cpu {
			irqs = nicIRQs[j]
		}
		var spare CPURate // the pointers of the CPURate this one overwrites
		if k := len(out.CPUs); k < len(old) {
			spare = old[k]
		}
		out.CPUs = append(out.CPUs, s.cpuRate(a, b, &a.stat[i].cpuTimes, &ct, dt, irqs, &spare))
	}
	s.clockRates(b, out.CPUs)
}

// queueRate is the interrupts of queue q (the qi-th of NIC n) between
// readings a and b, adding them to s.nicIRQs per CPU; o, when not nil, is
// the queue's rate in the Sample reused, whose pointers are reused.
func (s *Sampler) queueRate(a, b *reading, n, qi int, q QueueIRQ, o *QueueRate, same bool, dt float64) QueueRate {
	qr := QueueRate{IRQ: q.IRQ, Action: q.Action, Kind: q.Kind, Index: q.Index, CPU: -1, EffectiveCPUs: q.CPUs}
	if o != nil {
		qr.RXPacketsPerS, qr.RXBytesPerS, qr.TXPacketsPerS, qr.TXBytesPerS = o.RXPacketsPerS, o.RXBytesPerS, o.TXPacketsPerS, o.TXBytesPerS
	}
	var ok bool
	if same {
		ok = s.rowDeltas(&a.ints, &b.ints, s.qrow[n][qi])
	} else {
		ok = irqDeltas(&a.ints, &b.ints, s.acol, q.IRQ, s.d)
	}
	if !ok {
		return qr
	}
	var best uint64
	for j, d := range s.d {
		if d == 0 {
			continue
		}
		cpu := b.ints.CPUs[j]
		s.nicIRQs[j] += float64(d) / dt
		qr.IRQsPerS += float64(d) / dt
		if d > best || (d == best && cpu < qr.CPU) {
			best, qr.CPU = d, cpu
		}
	}
	return qr
}

// linkRates sets nr's packet and byte rates from the interface counters of
// readings an and bn, or its StatsError.
func linkRates(nr *NICRate, an, bn *nicReading, dt float64) {
	if bn.linkErr != nil {
		nr.StatsError = bn.linkErr.Error()
		return
	}
	if an.linkErr != nil {
		return
	}
	pc, cc := &an.link, &bn.link
	nr.RXPacketsPerS = float64(delta64(pc.RXPackets, cc.RXPackets)) / dt
	nr.TXPacketsPerS = float64(delta64(pc.TXPackets, cc.TXPackets)) / dt
	nr.RXBytesPerS = float64(delta64(pc.RXBytes, cc.RXBytes)) / dt
	nr.TXBytesPerS = float64(delta64(pc.TXBytes, cc.TXBytes)) / dt
	nr.RXDroppedPerS = float64(delta64(pc.RXDropped, cc.RXDropped)) / dt
}

// nicRates writes into out.NICs each sampled NIC's traffic and interrupts
// between readings a and b, and returns the interrupts of all their
// vectors per CPU, by column of b's /proc/interrupts (storage of s,
// valid until the next call).
func (s *Sampler) nicRates(a, b *reading, dt float64, out *Sample) []float64 {
	ncol := len(b.ints.CPUs)
	s.nicIRQs = resize(s.nicIRQs, ncol)
	clear(s.nicIRQs)
	s.d = resize(s.d, ncol)
	same := a.gen == b.gen && slices.Equal(a.ints.CPUs, b.ints.CPUs)
	if !same {
		s.acol = colsOf(a.ints.CPUs, b.ints.CPUs, s.acol)
	}
	old := out.NICs[:cap(out.NICs)]
	out.NICs = out.NICs[:0]
	// A Sample without storage yet (Next's) gets its NICs' queues and
	// losses carved out of one slice each.
	var qslab []QueueRate
	var lslab []LossRate
	if len(old) == 0 {
		nq, nl := 0, 0
		for n := range s.queues {
			nq += len(s.queues[n].Queues)
			nl += len(b.nics[n].losses)
		}
		qslab, lslab = make([]QueueRate, 0, nq), make([]LossRate, 0, nl)
	}
	for n, nq := range s.queues {
		var spare NICRate
		if k := len(out.NICs); k < len(old) {
			spare = old[k]
		}
		if spare.Queues == nil && len(nq.Queues) > 0 && cap(qslab)-len(qslab) >= len(nq.Queues) {
			i := len(qslab)
			spare.Queues, qslab = qslab[i:i:i+len(nq.Queues)], qslab[:i+len(nq.Queues)]
		}
		if l := len(b.nics[n].losses); spare.Losses == nil && l > 0 && cap(lslab)-len(lslab) >= l {
			i := len(lslab)
			spare.Losses, lslab = lslab[i:i:i+l], lslab[:i+l]
		}
		nr := NICRate{Name: nq.NIC, Queues: spare.Queues[:0], Losses: spare.Losses[:0]}
		oldQ := spare.Queues[:cap(spare.Queues)]
		an, bn := &a.nics[n], &b.nics[n]
		for qi, q := range nq.Queues {
			var o *QueueRate
			if qi < len(oldQ) {
				o = &oldQ[qi]
			}
			qr := s.queueRate(a, b, n, qi, q, o, same, dt)
			nr.IRQsPerS += qr.IRQsPerS
			s.queueTraffic(&qr, &an.queues, &bn.queues, dt)
			nr.Queues = append(nr.Queues, qr)
		}
		if bn.queueErr != nil {
			nr.QueueStatsError = bn.queueErr.Error()
		}
		linkRates(&nr, an, bn, dt)
		nr.Losses = lossRates(an.losses, bn.losses, dt, nr.Losses)
		out.NICs = append(out.NICs, nr)
	}
	return s.nicIRQs
}

// cpuRate returns the load of a CPU online at both readings a and b, whose
// /proc/stat times there are pt and ct, between them; nicIRQs is the rate
// of the sampled NICs' interrupts it took. spare's pointers are reused.
func (s *Sampler) cpuRate(a, b *reading, pt *cpuTimes, ct *cpuStat, dt, nicIRQs float64, spare *CPURate) CPURate {
	cpu := ct.cpu
	r := CPURate{CPU: cpu, MHz: spare.MHz, MaxMHz: spare.MaxMHz} // clockRates sets or clears them
	if tot := ct.total - pt.total; tot > 0 {
		pct := func(x, y float64) float64 { return clampPct((y - x) / tot * 100) }
		r.SoftIRQPct = pct(pt.softirq, ct.softirq)
		if b.accounted {
			r.IRQPct = s.putF(spare.IRQPct, pct(pt.irq, ct.irq))
		}
		r.UserPct, r.SystemPct = pct(pt.user, ct.user), pct(pt.system, ct.system)
		r.IdlePct, r.IOWaitPct, r.StealPct = pct(pt.idle, ct.idle), pct(pt.iowait, ct.iowait), pct(pt.steal, ct.steal)
		r.BusyPct = clampPct(100 - r.IdlePct - r.IOWaitPct - r.StealPct)
	} else if b.accounted {
		r.IRQPct = s.putF(spare.IRQPct, 0)
	}
	if rx, tx, ok := b.net.at(cpu); ok {
		if prx, ptx, ok := a.net.at(cpu); ok {
			r.NetRXPerS = float64(delta32(prx, rx)) / dt
			r.NetTXPerS = float64(delta32(ptx, tx)) / dt
		}
	}
	r.NICIRQsPerS = nicIRQs
	if k := softnetOf(b.softnet, cpu); k >= 0 {
		if pk := softnetOf(a.softnet, cpu); pk >= 0 {
			p, v := &a.softnet[pk], &b.softnet[k]
			r.SoftnetProcessedPerS = float64(deltaU32(p.processed, v.processed)) / dt
			r.SoftnetDroppedPerS = float64(deltaU32(p.dropped, v.dropped)) / dt
			r.SoftnetSqueezedPerS = float64(deltaU32(p.squeezed, v.squeezed)) / dt
		}
	}
	return r
}

// queueTraffic fills q's per-queue packet and byte rates from the NIC's
// per-queue counters at readings a and b, reusing the pointers q holds.
// A counter must be in both; one that went down was reset (driver
// reloaded, channels changed) and counts from 0.
func (s *Sampler) queueTraffic(q *QueueRate, a, b *queueCounters, dt float64) {
	rate := func(am, bm map[int]queueCounter, pkts, bytes **float64) {
		pp, bp := *pkts, *bytes
		*pkts, *bytes = nil, nil
		if q.Index < 0 {
			return
		}
		pc, ok := am[q.Index]
		if !ok {
			return
		}
		cc, ok := bm[q.Index]
		if !ok {
			return
		}
		if pc.HasPackets && cc.HasPackets {
			*pkts = s.putF(pp, float64(delta64(pc.Packets, cc.Packets))/dt)
		}
		if pc.HasBytes && cc.HasBytes {
			*bytes = s.putF(bp, float64(delta64(pc.Bytes, cc.Bytes))/dt)
		}
	}
	rx := q.Kind == KindRX || q.Kind == KindTxRx
	tx := q.Kind == KindTX || q.Kind == KindTxRx
	if rx {
		rate(a.RX, b.RX, &q.RXPacketsPerS, &q.RXBytesPerS)
	} else {
		q.RXPacketsPerS, q.RXBytesPerS = nil, nil
	}
	if tx {
		rate(a.TX, b.TX, &q.TXPacketsPerS, &q.TXBytesPerS)
	} else {
		q.TXPacketsPerS, q.TXBytesPerS = nil, nil
	}
}

// putF returns p, pointing at v: p itself, its storage reused, when it is
// not nil, else a new pointer.
func (s *Sampler) putF(p *float64, v float64) *float64 {
	if p == nil {
		if len(s.fslab) == 0 {
			s.fslab = make([]float64, slabLen)
		}
		p = &s.fslab[0]
		s.fslab = s.fslab[1:]
	}
	*p = v
	return p
}

// putU is putF of a uint64.
func (s *Sampler) putU(p *uint64, v uint64) *uint64 {
	if p == nil {
		if len(s.uslab) == 0 {
			s.uslab = make([]uint64, slabLen)
		}
		p = &s.uslab[0]
		s.uslab = s.uslab[1:]
	}
	*p = v
	return p
}

// slabLen is how many values the pointers of samples are handed out from
// at a time: one allocation for a sample's pointers, not one a pointer.
// Each value is handed out once, so no two pointers share one.
const slabLen = 512

func clampPct(v float64) float64 {
	switch {
	case v < 0:
		return 0
	case v > 100:
		return 100
	}
	return v
}

// resize returns s with length n, reusing its storage when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// colsOf returns in out's storage, for each CPU id in b (ascending, as a
// /proc/interrupts header has them), its column in a (also ascending), or
// -1 when a has no such column: the CPU came online in between.
func colsOf(a, b []int, out []int) []int {
	out = resize(out, len(b))
	i := 0
	for j, cpu := range b {
		for i < len(a) && a[i] < cpu {
			i++
		}
		out[j] = -1
		if i < len(a) && a[i] == cpu {
			out[j] = i
		}
	}
	return out
}

// rowDeltas puts in s.d the interrupts of layout row row between readings
// a and b of one layout and one CPU header: both kept its counts. It
// returns false when the queue has no row.
func (s *Sampler) rowDeltas(a, b *Interrupts, row int) bool {
	clear(s.d)
	if row < 0 {
		return false
	}
	ac, bc := a.Counts(row), b.Counts(row)
	if ac == nil || bc == nil { // not kept: cannot happen within one layout
		return false
	}
	bc = bc[:min(len(bc), b.Lines[row].Columns)]
	for j, v := range bc {
		s.d[j] = delta32(ac[j], v)
	}
	return true
}

// irqDeltas puts in d, by column of b, the interrupts of IRQ irq between
// readings a and b; acol is colsOf(a.CPUs, b.CPUs). A row whose action
// changed was re-requested: its counts restarted and count from 0. A CPU
// that came online in between, or a column the row does not have, is 0;
// so is every column of a row whose counts a did not keep (a NIC's vector
// that only a new layout maps: it has no rate in that interval). It
// returns false when b has no row for irq.
func irqDeltas(a, b *Interrupts, acol []int, irq int, d []uint64) bool {
	clear(d)
	bi := b.Index(irq)
	if bi < 0 {
		return false
	}
	bc := b.Counts(bi)
	if bc == nil {
		return false
	}
	bc = bc[:min(len(d), b.Lines[bi].Columns)]
	ai := a.Index(irq)
	if ai < 0 || a.Lines[ai].Actions != b.Lines[bi].Actions {
		copy(d, bc) // reset: counted from 0 since
		return true
	}
	ac := a.Counts(ai)
	if ac == nil {
		return true
	}
	for j, v := range bc {
		if i := acol[j]; i >= 0 {
			d[j] = delta32(ac[i], v)
		}
	}
	return true
}
