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
	pcieAll         []pcieUse                // every address, in sample order
	softnetDrops    float64                  // packets, every sample
}

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

// pcieUse is one PCI function's link over the run and its AER counts.
type pcieUse struct {
	addr                     string
	firstGTs, minGTs, maxGTs float64
	firstWidth, minW, maxW   int
	corr, nonfatal, fatal    uint64
	hasAER                   bool
	seen                     bool
	lastErr                  string
}

// frameBits is a NIC counter's traffic in the model's unit, Ethernet frame
// bits (header and FCS): Linux drivers count bytes without the FCS, so 4
// bytes are added per packet.
func frameBits(bytesPerS, pktsPerS float64) float64 { return (bytesPerS + 4*pktsPerS) * 8 }

// sampleTraffic is the sampled NICs' traffic in one sample: frame Mb/s and
// frames/s, both directions.
func sampleTraffic(x irq.Sample) (mbps, pps float64) {
	for _, n := range x.NICs {
		mbps += (frameBits(n.RXBytesPerS, n.RXPacketsPerS) + frameBits(n.TXBytesPerS, n.TXPacketsPerS)) / 1e6
		pps += n.RXPacketsPerS + n.TXPacketsPerS
	}
	return mbps, pps
}

// reduce builds the window of samples.
func reduce(samples []irq.Sample) *window {
	w := &window{samples: len(samples), accounted: true, pcie: map[string]irq.PCIeState{}}
	for _, x := range samples {
		m, p := sampleTraffic(x)
		w.peakMbps, w.peakPPS = math.Max(w.peakMbps, m), math.Max(w.peakPPS, p)
	}
	nics := map[string]*nicUse{}
	cpus := map[int]*cpuUse{}
	threads := map[int]*threadUse{}
	pcieIdx := map[string]int{}
	for _, x := range samples {
		dt := x.IntervalS
		if !(dt > 0) {
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
			u.rxPackets += n.RXPacketsPerS * dt
			for _, l := range n.Losses {
				i := slices.IndexFunc(u.losses, func(c lossCount) bool { return c.name == l.Name })
				if i < 0 {
					u.losses = append(u.losses, lossCount{name: l.Name, class: l.Class})
					i = len(u.losses) - 1
				}
				u.losses[i].count += l.PerS * dt
				u.losses[i].secs += dt
			}
			if active {
				u.rxPPS += n.RXPacketsPerS * dt
				u.txPPS += n.TXPacketsPerS * dt
				u.rxBPS += n.RXBytesPerS * dt
				u.txBPS += n.TXBytesPerS * dt
			}
		}
		for _, c := range x.CPUs {
			w.softnetDrops += c.SoftnetDroppedPerS * dt
		}
		for _, s := range x.PCIe {
			i, ok := pcieIdx[s.Address]
			if !ok {
				i = len(w.pcieAll)
				pcieIdx[s.Address] = i
				w.pcieAll = append(w.pcieAll, pcieUse{addr: s.Address})
			}
			w.pcieAll[i].add(s)
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
			u.busy += c.BusyPct * dt
			u.packet += c.PacketPct() * dt
			u.steal += c.StealPct * dt
			u.user += c.UserPct * dt
			u.system += c.SystemPct * dt
			u.softirq += c.SoftIRQPct * dt
			if c.IRQPct != nil {
				u.irq += *c.IRQPct * dt
			} else {
				u.irqKnown = false
			}
			u.netRX += c.NetRXPerS * dt
			u.netTX += c.NetTXPerS * dt
			u.nicIRQs += c.NICIRQsPerS * dt
			u.softnetP += c.SoftnetProcessedPerS * dt
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
			u.user += t.UserPct * dt
			u.system += t.SystemPct * dt
			u.onCPU[t.CPU] += t.BusyPct() * dt
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
		w.cpus = append(w.cpus, u)
	}
	slices.SortFunc(w.cpus, func(a, b *cpuUse) int { return a.cpu - b.cpu })
	for _, t := range w.threads {
		t.user, t.system = t.user/t.secs, t.system/t.secs
	}
	return w
}

func (p *pcieUse) add(s irq.PCIeState) {
	if s.Error != "" {
		p.lastErr = s.Error
	}
	if s.GTs > 0 && s.Width > 0 {
		if !p.seen {
			p.firstGTs, p.minGTs, p.maxGTs = s.GTs, s.GTs, s.GTs
			p.firstWidth, p.minW, p.maxW = s.Width, s.Width, s.Width
			p.seen = true
		}
		p.minGTs, p.maxGTs = math.Min(p.minGTs, s.GTs), math.Max(p.maxGTs, s.GTs)
		p.minW, p.maxW = min(p.minW, s.Width), max(p.maxW, s.Width)
	}
	for _, c := range []struct {
		v   *uint64
		dst *uint64
	}{{s.AERCorrectable, &p.corr}, {s.AERNonFatal, &p.nonfatal}, {s.AERFatal, &p.fatal}} {
		if c.v != nil {
			*c.dst += *c.v
			p.hasAER = true
		}
	}
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
