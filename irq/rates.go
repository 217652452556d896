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
	var nicIRQs []float64
	out.NICs, nicIRQs = s.nicRates(a, b, dt)
	// CPUs online at both readings; one that came online in between has no
	// rate yet.
	cpus := slices.DeleteFunc(sortedKeys(b.stat), func(cpu int) bool { _, ok := a.stat[cpu]; return !ok })
	if len(cpus) > 0 {
		out.CPUs = make([]CPURate, 0, len(cpus))
	}
	j := 0 // b's /proc/interrupts column of cpu
	for _, cpu := range cpus {
		for j < len(b.ints.CPUs) && b.ints.CPUs[j] < cpu {
			j++
		}
		irqs := 0.0
		if j < len(b.ints.CPUs) && b.ints.CPUs[j] == cpu {
			irqs = nicIRQs[j]
		}
		out.CPUs = append(out.CPUs, cpuRate(a, b, cpu, dt, irqs))
	}
	s.clockRates(b, out.CPUs)
	return out
}

// nicRates returns each sampled NIC's traffic and interrupts between
// readings a and b, and the interrupts of all their vectors per CPU, by
// column of b's /proc/interrupts.
func (s *Sampler) nicRates(a, b *reading, dt float64) ([]NICRate, []float64) {
	acol := colsOf(a.ints.CPUs, b.ints.CPUs)
	nicIRQs := make([]float64, len(b.ints.CPUs))
	d := make([]uint64, len(b.ints.CPUs))
	var out []NICRate
	if len(s.queues) > 0 {
		out = make([]NICRate, 0, len(s.queues))
	}
	for _, nq := range s.queues {
		nr := NICRate{Name: nq.NIC}
		if len(nq.Queues) > 0 {
			nr.Queues = make([]QueueRate, 0, len(nq.Queues))
		}
		for _, q := range nq.Queues {
			qr := QueueRate{IRQ: q.IRQ, Action: q.Action, Kind: q.Kind, Index: q.Index, CPU: -1, EffectiveCPUs: q.CPUs}
			var best uint64
			if irqDeltas(&a.ints, &b.ints, acol, q.IRQ, d) {
				for j, n := range d {
					if n == 0 {
						continue
					}
					cpu := b.ints.CPUs[j]
					nicIRQs[j] += float64(n) / dt
					qr.IRQsPerS += float64(n) / dt
					if n > best || (n == best && cpu < qr.CPU) {
						best, qr.CPU = n, cpu
					}
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

// colsOf returns, for each CPU id in b (ascending, as a /proc/interrupts
// header has them), its column in a (also ascending), or -1 when a has no
// such column: the CPU came online in between.
func colsOf(a, b []int) []int {
	out := make([]int, len(b))
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

// irqDeltas puts in d, by column of b, the interrupts of IRQ irq between
// readings a and b; acol is colsOf(a.CPUs, b.CPUs). A row whose action
// changed was re-requested: its counts restarted and count from 0. A CPU
// that came online in between, or a column the row does not have, is 0. It
// returns false when b has no row for irq.
func irqDeltas(a, b *Interrupts, acol []int, irq int, d []uint64) bool {
	clear(d)
	bi := b.Index(irq)
	if bi < 0 {
		return false
	}
	ai := a.Index(irq)
	reset := ai < 0 || a.Lines[ai].Actions != b.Lines[bi].Actions
	bc := b.Counts(bi)[:min(len(d), b.Lines[bi].Columns)]
	if reset {
		copy(d, bc)
		return true
	}
	ac := a.Counts(ai)
	for j, v := range bc {
		if i := acol[j]; i >= 0 {
			d[j] = delta32(ac[i], v)
		}
	}
	return true
}
