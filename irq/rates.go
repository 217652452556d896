package irq

import (
	"math"
	"slices"
)

// rates computes the Sample between readings a (earlier) and b.
func (s *Sampler) rates(a, b *reading) Sample {
	dt := b.t.Sub(a.t).Seconds()
	out := Sample{Time: b.t, IntervalS: dt, IRQTimeAccounted: b.accounted, Missing: slices.Clone(b.missing)}
	if dt <= 0 {
		// No time passed (or the clock stepped back): there is no rate to
		// report. Dividing by a tiny stand-in would turn a few counts into
		// billions per second; dividing by +Inf makes every rate 0, and the
		// sample weighs nothing in Summarize.
		out.IntervalS = 0
		dt = math.Inf(1)
	}
	out.Threads = threadRates(a, b, dt)
	out.PCIe = pcieStates(a.pcie, b.pcie)
	var nicIRQs map[int]float64
	out.NICs, nicIRQs = s.nicRates(a, b, dt)
	// CPUs online at both readings; one that came online in between has no
	// rate yet.
	for _, cpu := range sortedKeys(b.stat) {
		if _, ok := a.stat[cpu]; ok {
			out.CPUs = append(out.CPUs, cpuRate(a, b, cpu, dt, nicIRQs[cpu]))
		}
	}
	return out
}

// nicRates returns each sampled NIC's traffic and interrupts between
// readings a and b, and the interrupts of all their vectors per CPU.
func (s *Sampler) nicRates(a, b *reading, dt float64) ([]NICRate, map[int]float64) {
	acol, bcol := colIndex(a.ints.CPUs), colIndex(b.ints.CPUs)
	var out []NICRate
	nicIRQs := map[int]float64{}
	for _, nq := range s.queues {
		nr := NICRate{Name: nq.NIC}
		for _, q := range nq.Queues {
			qr := QueueRate{IRQ: q.IRQ, Action: q.Action, Kind: q.Kind, Index: q.Index, CPU: -1, EffectiveCPUs: q.CPUs}
			var best uint64
			for cpu, d := range irqDeltas(&a.ints, &b.ints, acol, bcol, q.IRQ) {
				nicIRQs[cpu] += float64(d) / dt
				qr.IRQsPerS += float64(d) / dt
				if d > best || (d == best && d > 0 && cpu < qr.CPU) {
					best, qr.CPU = d, cpu
				}
			}
			nr.IRQsPerS += qr.IRQsPerS
			queueTraffic(&qr, a.queues[nq.NIC], b.queues[nq.NIC], dt)
			nr.Queues = append(nr.Queues, qr)
		}
		if err := b.queueErr[nq.NIC]; err != nil {
			nr.QueueStatsError = err.Error()
		}
		if err := b.linkErr[nq.NIC]; err != nil {
			nr.StatsError = err.Error()
		} else if pc, ok := a.links[nq.NIC]; ok {
			cc := b.links[nq.NIC]
			nr.RXPacketsPerS = float64(delta64(pc.RXPackets, cc.RXPackets)) / dt
			nr.TXPacketsPerS = float64(delta64(pc.TXPackets, cc.TXPackets)) / dt
			nr.RXBytesPerS = float64(delta64(pc.RXBytes, cc.RXBytes)) / dt
			nr.TXBytesPerS = float64(delta64(pc.TXBytes, cc.TXBytes)) / dt
			nr.RXDroppedPerS = float64(delta64(pc.RXDropped, cc.RXDropped)) / dt
		}
		nr.Losses = lossRates(a.losses[nq.NIC], b.losses[nq.NIC], dt)
		out = append(out, nr)
	}
	return out, nicIRQs
}

// cpuRate returns the load of cpu, online at both readings, between a and
// b; nicIRQs is the rate of the sampled NICs' interrupts it took.
func cpuRate(a, b *reading, cpu int, dt, nicIRQs float64) CPURate {
	pt, ct := a.stat[cpu], b.stat[cpu]
	r := CPURate{CPU: cpu}
	if tot := ct.total - pt.total; tot > 0 {
		pct := func(x, y float64) float64 { return clampPct((y - x) / tot * 100) }
		r.SoftIRQPct = pct(pt.softirq, ct.softirq)
		if b.accounted {
			v := pct(pt.irq, ct.irq)
			r.IRQPct = &v
		}
		r.UserPct, r.SystemPct = pct(pt.user, ct.user), pct(pt.system, ct.system)
		r.IdlePct, r.IOWaitPct, r.StealPct = pct(pt.idle, ct.idle), pct(pt.iowait, ct.iowait), pct(pt.steal, ct.steal)
		r.BusyPct = clampPct(100 - r.IdlePct - r.IOWaitPct - r.StealPct)
	} else if b.accounted {
		r.IRQPct = new(float64)
	}
	if v, ok := b.net.rx[cpu]; ok {
		if p, ok := a.net.rx[cpu]; ok {
			r.NetRXPerS = float64(delta32(p, v)) / dt
		}
	}
	if v, ok := b.net.tx[cpu]; ok {
		if p, ok := a.net.tx[cpu]; ok {
			r.NetTXPerS = float64(delta32(p, v)) / dt
		}
	}
	r.NICIRQsPerS = nicIRQs
	if v, ok := b.softnet[cpu]; ok {
		if p, ok := a.softnet[cpu]; ok {
			r.SoftnetProcessedPerS = float64(deltaU32(p.processed, v.processed)) / dt
			r.SoftnetDroppedPerS = float64(deltaU32(p.dropped, v.dropped)) / dt
			r.SoftnetSqueezedPerS = float64(deltaU32(p.squeezed, v.squeezed)) / dt
		}
	}
	return r
}

// queueTraffic fills q's per-queue packet and byte rates from the NIC's
// per-queue counters at readings a and b. A counter must be in both; one
// that went down was reset (driver reloaded, channels changed) and counts
// from 0.
func queueTraffic(q *QueueRate, a, b queueCounters, dt float64) {
	if q.Index < 0 {
		return
	}
	rate := func(am, bm map[int]queueCounter) (pkts, bytes *float64) {
		pc, ok := am[q.Index]
		if !ok {
			return nil, nil
		}
		cc, ok := bm[q.Index]
		if !ok {
			return nil, nil
		}
		if pc.HasPackets && cc.HasPackets {
			v := float64(delta64(pc.Packets, cc.Packets)) / dt
			pkts = &v
		}
		if pc.HasBytes && cc.HasBytes {
			v := float64(delta64(pc.Bytes, cc.Bytes)) / dt
			bytes = &v
		}
		return pkts, bytes
	}
	if q.Kind == KindRX || q.Kind == KindTxRx {
		q.RXPacketsPerS, q.RXBytesPerS = rate(a.RX, b.RX)
	}
	if q.Kind == KindTX || q.Kind == KindTxRx {
		q.TXPacketsPerS, q.TXBytesPerS = rate(a.TX, b.TX)
	}
}

func clampPct(v float64) float64 {
	switch {
	case v < 0:
		return 0
	case v > 100:
		return 100
	}
	return v
}

func colIndex(cpus []int) map[int]int {
	m := make(map[int]int, len(cpus))
	for i, c := range cpus {
		m[c] = i
	}
	return m
}

// irqDeltas returns, per CPU id present in both readings, the interrupts of
// IRQ irq in between. A row whose action changed was re-requested: its
// counts restarted and count from 0.
func irqDeltas(a, b *Interrupts, acol, bcol map[int]int, irq int) map[int]uint64 {
	bi := b.Index(irq)
	if bi < 0 {
		return nil
	}
	ai := a.Index(irq)
	reset := ai < 0 || a.Lines[ai].Actions != b.Lines[bi].Actions
	bc := b.Counts(bi)
	out := make(map[int]uint64, len(b.CPUs))
	for cpu, j := range bcol {
		if j >= b.Lines[bi].Columns {
			continue
		}
		i, ok := acol[cpu]
		switch {
		case reset:
			out[cpu] = bc[j]
		case !ok:
			// The CPU came online in between; its count since then is unknown.
		default:
			out[cpu] = delta32(a.Counts(ai)[i], bc[j])
		}
	}
	return out
}
