package monitor

import (
	"math"
	"slices"

	"github.com/nicdiag/nicdiag/irq"
)

// activeShare: a sample counts towards the verdict when the sampled NICs
// moved at least this share of the run's busiest sample. The idle seconds
// before a load generator starts and after it ends would otherwise dilute
// every mean, and a run that simply ended would read as one far from its
// ceilings.
const activeShare = 0.5

// window is the run reduced to what the verdict weighs: means over the
// active samples, loss counts over every sample.
type window struct {
	samples, active int
	seconds         float64 // of the active samples
	peakMbps        float64
	peakPPS         float64
	accounted       bool
	nics            []*nicUse // in sample order
	cpus            []*cpuUse // by CPU id
	threads         []*threadUse
	pcie            map[string]irq.PCIeState // the latest state seen while active
	pcieAll         []irq.PCIeSummary        // every address over the weighed samples
}

// usableInterval reports whether a sample's interval can weigh in the
// window: positive, at most a day (ReadRecord's bound).
func usableInterval(dt float64) bool { return dt > 0 && dt <= maxInterval }

// nicUse is one NIC over the window. Rates are means over the active
// samples; counts are over every sample.
type nicUse struct {
	name                       string
	rxPPS, txPPS, rxBPS, txBPS float64
	rxPackets                  float64 // every sample, for loss shares
	losses                     []lossCount
}

type lossCount struct {
	name  string
	class irq.LossClass
	count float64
	secs  float64 // seconds it was counted in
}

// cpuUse is one CPU's mean load over the active samples.
type cpuUse struct {
	cpu                                      int
	busy, packet, steal, user, system, irq   float64
	softirq, netRX, netTX, nicIRQs, softnetP float64
	secs                                     float64
	irqKnown                                 bool
	// mhz is the mean clock over the samples that read it (mhzSecs
	// long); maxMHz the CPU's maximum.
	mhz, mhzSecs, maxMHz float64
}

// threadUse is one task of the command over the active samples it was
// present in.
type threadUse struct {
	pid, tid     int
	comm         string
	user, system float64 // % of a CPU, mean over secs
	secs         float64
	onCPU        map[int]float64 // busy seconds per CPU
}

// cpu is where the thread spent most of its busy time.
func (t *threadUse) cpu() int {
	best, bestT := -1, -1.0
	for c, v := range t.onCPU {
		if v > bestT || (v == bestT && c < best) {
			best, bestT = c, v
		}
	}
	return best
}

func (t *threadUse) busy() float64 { return t.user + t.system }

// frameBits is a NIC counter's traffic in the model's unit, Ethernet frame
// bits (header and FCS): Linux drivers count bytes without the FCS, so 4
// bytes are added per packet.
func frameBits(bytesPerS, pktsPerS float64) float64 { return (bytesPerS + 4*pktsPerS) * 8 }

// FrameMbps is a NIC's byte and packet rates in the verdict's unit,
// Ethernet frame megabits per second (frameBits), for renderers.
func FrameMbps(bytesPerS, pktsPerS float64) float64 { return frameBits(bytesPerS, pktsPerS) / 1e6 }

// maxRate is the largest rate (bytes, packets or counts per second) a
// sample is taken to mean: above it, or negative, NaN or infinite, a rate
// is a broken counter, not traffic, and reads as 0. One such value would
// otherwise turn every mean and ceiling into NaN or Inf.
const maxRate = 1e15

// rate is v as a rate: 0 when it is not one (see maxRate).
func rate(v float64) float64 {
	if v >= 0 && v <= maxRate {
		return v
	}
	return 0
}

// pctOf is v as a percentage of one CPU: in [0, 100], 0 when NaN.
func pctOf(v float64) float64 {
	if v >= 0 {
		return math.Min(v, 100)
	}
	return 0
}

// nicRates are a NIC's rates in a sample, as rates (see rate).
func nicRates(n irq.NICRate) (rxPPS, txPPS, rxBPS, txBPS float64) {
	return rate(n.RXPacketsPerS), rate(n.TXPacketsPerS), rate(n.RXBytesPerS), rate(n.TXBytesPerS)
}

// sampleTraffic is the sampled NICs' traffic in one sample: frame Mb/s and
// frames/s, both directions.
func sampleTraffic(x irq.Sample) (mbps, pps float64) {
	for _, n := range x.NICs {
		rxP, txP, rxB, txB := nicRates(n)
		mbps += (frameBits(rxB, rxP) + frameBits(txB, txP)) / 1e6
		pps += rxP + txP
	}
	return mbps, pps
}

// reduce builds the window of samples.
func reduce(samples []irq.Sample) *window {
	w := &window{samples: len(samples), accounted: true, pcie: map[string]irq.PCIeState{}}
	for _, x := range samples {
		if !usableInterval(x.IntervalS) {
			continue // as below: a sample that is not weighed sets no peak
		}
		m, p := sampleTraffic(x)
		w.peakMbps, w.peakPPS = math.Max(w.peakMbps, m), math.Max(w.peakPPS, p)
	}
	nics := map[string]*nicUse{}
	cpus := map[int]*cpuUse{}
	threads := map[int]*threadUse{}
	var withPCIe []irq.Sample // the weighed samples that read a PCIe state
	for _, x := range samples {
		dt := x.IntervalS
		if !usableInterval(dt) {
			continue
		}
		m, p := sampleTraffic(x)
		active := w.peakMbps > 0 && m >= activeShare*w.peakMbps || w.peakMbps == 0 && p >= activeShare*w.peakPPS && p > 0
		for _, n := range x.NICs {
			u := nics[n.Name]
			if u == nil {
				u = &nicUse{name: n.Name}
				nics[n.Name] = u
				w.nics = append(w.nics, u)
			}
			rxP, txP, rxB, txB := nicRates(n)
			u.rxPackets += rxP * dt
			for _, l := range n.Losses {
				i := slices.IndexFunc(u.losses, func(c lossCount) bool { return c.name == l.Name })
				if i < 0 {
					u.losses = append(u.losses, lossCount{name: l.Name, class: l.Class})
					i = len(u.losses) - 1
				}
				u.losses[i].count += rate(l.PerS) * dt
				u.losses[i].secs += dt
			}
			if active {
				u.rxPPS += rxP * dt
				u.txPPS += txP * dt
				u.rxBPS += rxB * dt
				u.txBPS += txB * dt
			}
		}
		if len(x.PCIe) > 0 {
			withPCIe = append(withPCIe, x)
		}
		for _, s := range x.PCIe {
			if active && s.Error == "" && s.GTs > 0 {
				w.pcie[s.Address] = s
			}
		}
		if !active {
			continue
		}
		w.active++
		w.seconds += dt
		w.accounted = w.accounted && x.IRQTimeAccounted
		for _, c := range x.CPUs {
			u := cpus[c.CPU]
			if u == nil {
				u = &cpuUse{cpu: c.CPU, irqKnown: true}
				cpus[c.CPU] = u
			}
			u.secs += dt
			u.busy += pctOf(c.BusyPct) * dt
			packet := pctOf(c.SoftIRQPct)
			if c.IRQPct != nil {
				packet = math.Min(packet+pctOf(*c.IRQPct), 100)
			}
			u.packet += packet * dt
			u.steal += pctOf(c.StealPct) * dt
			u.user += pctOf(c.UserPct) * dt
			u.system += pctOf(c.SystemPct) * dt
			u.softirq += pctOf(c.SoftIRQPct) * dt
			if c.IRQPct != nil {
				u.irq += pctOf(*c.IRQPct) * dt
			} else {
				u.irqKnown = false
			}
			if c.MHz != nil && *c.MHz > 0 && *c.MHz < 1e6 {
				u.mhz += *c.MHz * dt
				u.mhzSecs += dt
				if c.MaxMHz != nil && *c.MaxMHz > 0 && *c.MaxMHz < 1e6 {
					u.maxMHz = *c.MaxMHz
				}
			}
			u.netRX += rate(c.NetRXPerS) * dt
			u.netTX += rate(c.NetTXPerS) * dt
			u.nicIRQs += rate(c.NICIRQsPerS) * dt
			u.softnetP += rate(c.SoftnetProcessedPerS) * dt
		}
		for _, t := range x.Threads {
			u := threads[t.TID]
			if u == nil {
				u = &threadUse{pid: t.PID, tid: t.TID, onCPU: map[int]float64{}}
				threads[t.TID] = u
				w.threads = append(w.threads, u)
			}
			u.comm = t.Comm
			u.secs += dt
			user, system := pctOf(t.UserPct), pctOf(t.SystemPct)
			u.user += user * dt
			u.system += system * dt
			u.onCPU[t.CPU] += (user + system) * dt
		}
	}
	if w.seconds > 0 {
		for _, u := range w.nics {
			u.rxPPS, u.txPPS, u.rxBPS, u.txBPS = u.rxPPS/w.seconds, u.txPPS/w.seconds, u.rxBPS/w.seconds, u.txBPS/w.seconds
		}
	}
	for _, u := range cpus {
		for _, p := range []*float64{&u.busy, &u.packet, &u.steal, &u.user, &u.system, &u.softirq, &u.irq,
			&u.netRX, &u.netTX, &u.nicIRQs, &u.softnetP} {
			*p /= u.secs
		}
		if u.mhzSecs > 0 {
			u.mhz /= u.mhzSecs
		}
		w.cpus = append(w.cpus, u)
	}
	slices.SortFunc(w.cpus, func(a, b *cpuUse) int { return a.cpu - b.cpu })
	w.pcieAll = irq.SummarizePCIe(withPCIe)
	for _, t := range w.threads {
		t.user, t.system = t.user/t.secs, t.system/t.secs
	}
	return w
}

// nic returns the window's use of the NIC called name, or nil.
func (w *window) nic(name string) *nicUse {
	for _, u := range w.nics {
		if u.name == name {
			return u
		}
	}
	return nil
}
